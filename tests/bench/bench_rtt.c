/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Round trips, seed 004 Fig. 5 (issue 4, benchmark 1): 1000 sequential
 * messages of 11, 407 and 1221 bytes between two daemons on loopback,
 * message i+1 after i came back, over UDP and TCP:
 *   raw    a plain UDP / TCP ping-pong between two processes (baseline)
 *   core   daemon to daemon: ferry_ping, timed by daemon A's core
 *   stack  client A -> daemon A -> daemon B -> client B and back
 *   chain  four plain processes in the stack's shape (raw.h), to tell
 *          what the platform charges for that shape from ferry's cost
 * Goals: core <= 1.3 x raw, stack <= 2.5 x raw.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bench.h"
#include "raw.h"

#define RTT_MAX_SIZES 8
#define RTT_PATHS     4

enum rtt_path { RTT_RAW, RTT_CORE, RTT_STACK, RTT_CHAIN };
static const char *const rtt_path_name[RTT_PATHS] = { "raw", "core", "stack",
	"chain" };

struct rtt_opts {
	unsigned count;  /* -n: round trips timed */
	unsigned warmup; /* -w: untimed ones before */
	unsigned sizes[RTT_MAX_SIZES];
	unsigned n_sizes;
	bool path_on[RTT_PATHS]; /* -m: which paths run */
};

/* Per-message times of every repetition, in microseconds. */
struct rtt_cell {
	double *us; /* reps values; NaN if the run failed */
};

struct rtt_ctx {
	struct bench_opts o;
	struct rtt_opts ro;
	struct bench_pair pair[2]; /* udp, tcp */
	bool have[2];
	FILE *runs;
	/* [place][transport][size][path] */
	struct rtt_cell cell[2][2][RTT_MAX_SIZES][RTT_PATHS];
};

static const char *const rtt_tname[2] = { "udp", "tcp" };

static int
rtt_opt(int opt, const char *arg, void *cls)
{
	struct rtt_opts *ro = cls;
	char *end;

	switch (opt) {
	case 'n':
		ro->count = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && ro->count > 0 ? 0 : -1;
	case 'w':
		ro->warmup = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' ? 0 : -1;
	case 'm':
		for (int k = 0; k < RTT_PATHS; k++)
			ro->path_on[k] = strstr(arg, rtt_path_name[k]) != NULL;
		return 0;
	case 's':
		ro->n_sizes = 0;
		for (const char *s = arg;
		     *s != '\0' && ro->n_sizes < RTT_MAX_SIZES;) {
			unsigned long v = strtoul(s, &end, 10);

			if (end == s || v > 60000)
				return -1;
			ro->sizes[ro->n_sizes++] = (unsigned)v;
			s = *end == ',' ? end + 1 : end;
			if (*end != ',' && *end != '\0')
				return -1;
		}
		return ro->n_sizes > 0 ? 0 : -1;
	default:
		return -1;
	}
}

/* Client B's side of the whole-stack round trip: echoes every message
 * back to its sender until killed. */
static _Noreturn void
rtt_echo_child(const struct harness_daemon *d, int ready_fd, int cpu)
{
	struct ferry_client *c;
	struct ferry_message m;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	(void)bench_pin(0, cpu);
	if (bench_client(d, true, &c) < 0)
		_exit(1);
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	(void)close(ready_fd);
	for (;;) {
		if (ferry_receive(c, &m, -1) < 0)
			_exit(2);
		/* The next ferry_receive writes it out before waiting. */
		if (ferry_send(c, &m.peer, m.type, m.data, m.len) < 0)
			_exit(3);
	}
}

static pid_t
rtt_echo_start(const struct harness_daemon *d, int cpu)
{
	int p[2];
	char b;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	(void)fflush(NULL);
	pid = fork();
	if (pid == 0) {
		(void)close(p[0]);
		rtt_echo_child(d, p[1], cpu);
	}
	(void)close(p[1]);
	if (pid > 0 && read(p[0], &b, 1) != 1) {
		(void)kill(pid, SIGKILL);
		(void)bench_wait_child(pid);
		pid = -1;
	}
	(void)close(p[0]);
	return pid;
}

/* Round trips through both daemons and both clients. */
static int
rtt_stack(struct ferry_client *c, const struct ferry_peer_id *peer,
    unsigned size, unsigned count, unsigned warmup, uint64_t *ret_ns)
{
	uint8_t *buf = calloc(1, size + 4);
	struct ferry_message m;
	uint64_t t0 = bench_now_ns();
	int r = 0;

	if (buf == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; r == 0 && i < count + warmup; i++) {
		uint32_t seq = 0;

		if (i == warmup)
			t0 = bench_now_ns();
		memcpy(buf, &i, size < 4 ? size : 4);
		r = ferry_send(c, peer, BENCH_APP_TYPE, buf, size);
		/* Skip stale echoes (a late one from an earlier run). */
		while (r == 0) {
			r = ferry_receive(c, &m, 3000);
			if (r < 0)
				break;
			memcpy(&seq, m.data, m.len < 4 ? m.len : 4);
			if (m.len == size && (size < 4 || seq == i))
				break;
		}
	}
	*ret_ns = bench_now_ns() - t0;
	free(buf);
	return r;
}

/* Core round trips: the daemon times them (ferry ping). */
static int
rtt_core(struct ferry_client *c, const struct ferry_peer_id *peer,
    unsigned size, const struct rtt_opts *ro, struct ferry_ping_result *pr)
{
	int r = 0;

	memset(pr, 0, sizeof(*pr));
	if (ro->warmup > 0)
		r = ferry_ping(c, peer, ro->warmup, (uint16_t)size, 60000, pr);
	if (r == 0)
		r = ferry_ping(c, peer, ro->count, (uint16_t)size, 120000, pr);
	if (r == 0 && pr->count != ro->count)
		r = -EIO;
	return r;
}

static void
rtt_record(struct rtt_ctx *x, int place, int t, unsigned si, int path,
    unsigned rep, int r, uint64_t total_ns, uint64_t min_ns, uint64_t max_ns)
{
	double us = r == 0 ? (double)total_ns / 1e3 / x->ro.count : NAN;

	x->cell[place][t][si][path].us[rep] = us;
	if (r < 0)
		fprintf(stderr, "bench_rtt: %s %s %s %u B rep %u failed: %s\n",
		    bench_place_name(place), rtt_tname[t], rtt_path_name[path],
		    x->ro.sizes[si], rep + 1, strerror(-r));
	if (x->runs == NULL)
		return;
	fprintf(x->runs, "%s,%s,%s,%u,%u,%u,%.3f,%.3f,",
	    bench_place_name(place), rtt_tname[t], rtt_path_name[path],
	    x->ro.sizes[si], rep + 1, x->ro.count, us * x->ro.count / 1e3, us);
	if (min_ns != 0)
		fprintf(x->runs, "%.3f,%.3f\n", min_ns / 1e3, max_ns / 1e3);
	else
		fprintf(x->runs, ",\n");
}

/* One repetition of everything for one transport and placement. */
static void
rtt_rep(struct rtt_ctx *x, int place, int t, unsigned rep,
    struct ferry_client *ca)
{
	struct bench_pair *p = &x->pair[t];
	const struct rtt_opts *ro = &x->ro;

	for (unsigned si = 0; si < ro->n_sizes; si++) {
		unsigned size = ro->sizes[si];
		struct ferry_ping_result pr;
		uint64_t ns = 0;
		int r;

		if (ro->path_on[RTT_RAW]) {
			r = raw_pingpong(t == 0 ? RAW_UDP : RAW_TCP, size,
			    ro->count, ro->warmup, place, &ns);
			rtt_record(x, place, t, si, RTT_RAW, rep, r, ns, 0, 0);
		}
		if (ro->path_on[RTT_CORE]) {
			r = rtt_core(ca, &p->d[1]->id, size, ro, &pr);
			rtt_record(x, place, t, si, RTT_CORE, rep, r,
			    pr.total_ns, pr.min_ns, pr.max_ns);
		}
		if (ro->path_on[RTT_STACK]) {
			r = rtt_stack(ca, &p->d[1]->id, size, ro->count,
			    ro->warmup, &ns);
			rtt_record(x, place, t, si, RTT_STACK, rep, r, ns, 0,
			    0);
		}
		if (ro->path_on[RTT_CHAIN]) {
			r = raw_chain(t == 0 ? RAW_UDP : RAW_TCP, size,
			    ro->count, ro->warmup, place, &ns);
			rtt_record(x, place, t, si, RTT_CHAIN, rep, r, ns, 0,
			    0);
		}
		bench_log(&x->o, "%s %s %u B rep %u done",
		    bench_place_name(place), rtt_tname[t], size, rep + 1);
	}
}

static int
rtt_place(struct rtt_ctx *x, enum bench_place place)
{
	struct ferry_client *ca[2] = { NULL, NULL };
	pid_t echo[2] = { -1, -1 };
	int r = 0;

	(void)bench_pin(0, bench_side_cpu(place, 0));
	for (int t = 0; t < 2; t++) {
		if (!x->have[t])
			continue;
		r = bench_pair_place(&x->pair[t], place);
		if (r == 0)
			r = bench_client(x->pair[t].d[0], true, &ca[t]);
		if (r == 0) {
			echo[t] = rtt_echo_start(x->pair[t].d[1],
			    bench_side_cpu(place, 1));
			if (echo[t] < 0)
				r = -ECHILD;
		}
		if (r < 0)
			goto out;
	}
	/* Repetitions outermost: drift hits every cell alike. */
	for (unsigned rep = 0; rep < x->o.reps; rep++)
		for (int t = 0; t < 2; t++)
			if (x->have[t])
				rtt_rep(x, place, t, rep, ca[t]);
out:
	for (int t = 0; t < 2; t++) {
		if (echo[t] > 0) {
			(void)kill(echo[t], SIGKILL);
			(void)bench_wait_child(echo[t]);
		}
		ferry_client_close(ca[t]);
	}
	return r;
}

/* The figure's data, one file per placement (rtt_fig5_pinned.dat),
 * one row per size: for udp raw, core, stack, chain, then tcp alike, the
 * median, min and max of ms per 1000 round trips (for a gnuplot
 * histogram with error bars). */
static void
rtt_write_dat(struct rtt_ctx *x, const bool *places)
{
	for (int pl = 0; pl < 2; pl++) {
		char name[64];
		FILE *f;

		if (!places[pl])
			continue;
		(void)snprintf(name, sizeof(name), "rtt_fig5_%s.dat",
		    bench_place_name(pl));
		f = bench_csv_open(&x->o, name,
		    "# size {udp,tcp} x {raw,core,stack,chain} x "
		    "{median,min,max} ms per 1000 round trips");
		if (f == NULL)
			continue;
		for (unsigned si = 0; si < x->ro.n_sizes; si++) {
			fprintf(f, "%u", x->ro.sizes[si]);
			for (int t = 0; t < 2; t++)
				for (int k = 0; k < RTT_PATHS; k++) {
					struct bench_summary s;

					/* us per round trip is ms per 1000 */
					bench_summarize(x->cell[pl][t][si][k]
					                    .us,
					    x->o.reps, &s);
					fprintf(f, " %.3f %.3f %.3f", s.median,
					    s.min, s.max);
				}
			fprintf(f, "\n");
		}
		(void)fclose(f);
	}
}

/* Median and spread over the repetitions of path a / path b. */
static void
rtt_ratio(struct rtt_ctx *x, int pl, int t, unsigned si, int a, int b,
    struct bench_summary *ret)
{
	double v[1000];
	unsigned n = x->o.reps < 1000 ? x->o.reps : 1000;

	for (unsigned i = 0; i < n; i++)
		v[i] =
		    x->cell[pl][t][si][a].us[i] / x->cell[pl][t][si][b].us[i];
	bench_summarize(v, n, ret);
}

/* One row of the table and of rtt_summary.csv. */
static void
rtt_report_row(struct rtt_ctx *x, int pl, int t, unsigned si, FILE *f)
{
	struct bench_summary s[RTT_PATHS], rr[3];
	static const int ratio[3][2] = { { RTT_CORE, RTT_RAW },
		{ RTT_STACK, RTT_RAW }, { RTT_STACK, RTT_CHAIN } };
	static const double goal[3] = { 1.3, 2.5, NAN };

	for (int k = 0; k < RTT_PATHS; k++)
		bench_summarize(x->cell[pl][t][si][k].us, x->o.reps, &s[k]);
	for (int i = 0; i < 3; i++)
		rtt_ratio(x, pl, t, si, ratio[i][0], ratio[i][1], &rr[i]);
	printf("%-8s %-4s %5u |", bench_place_name(pl), rtt_tname[t],
	    x->ro.sizes[si]);
	for (int k = 0; k < RTT_PATHS; k++)
		printf(" %6.1f [%6.1f-%6.1f] |", s[k].median, s[k].min,
		    s[k].max);
	for (int i = 0; i < 3; i++)
		printf(" %5.2f [%5.2f-%5.2f] %s", rr[i].median, rr[i].min,
		    rr[i].max,
		    isnan(goal[i])                ? ""
		        : rr[i].median <= goal[i] ? "ok |"
		                                  : "-- |");
	printf("\n");
	if (f == NULL)
		return;
	fprintf(f, "%s,%s,%u,%u,%u", bench_place_name(pl), rtt_tname[t],
	    x->ro.sizes[si], x->ro.count, x->o.reps);
	for (int k = 0; k < RTT_PATHS; k++)
		fprintf(f, ",%.3f,%.3f,%.3f", s[k].median, s[k].min, s[k].max);
	for (int i = 0; i < 3; i++)
		fprintf(f, ",%.3f,%.3f,%.3f", rr[i].median, rr[i].min,
		    rr[i].max);
	fprintf(f, "\n");
}

static void
rtt_report(struct rtt_ctx *x, const bool *places)
{
	FILE *f = bench_csv_open(&x->o, "rtt_summary.csv",
	    "place,transport,size,count,reps,"
	    "raw_us,raw_min_us,raw_max_us,core_us,core_min_us,core_max_us,"
	    "stack_us,stack_min_us,stack_max_us,"
	    "chain_us,chain_min_us,chain_max_us,"
	    "core_ratio,core_ratio_min,core_ratio_max,"
	    "stack_ratio,stack_ratio_min,stack_ratio_max,"
	    "stack_chain_ratio,stack_chain_ratio_min,stack_chain_ratio_max");

	printf("\nRound trips (seed 004 Fig. 5): %u sequential messages, "
	       "median of %u runs [min-max]\n",
	    x->ro.count, x->o.reps);
	printf("%-8s %-4s %5s | %-21s | %-21s | %-21s | %-21s | %-22s| "
	       "%-22s| %s\n",
	    "place", "tr", "bytes", "raw", "core", "stack", "chain",
	    "core/raw (goal 1.3)", "stack/raw (goal 2.5)", "stack/chain");
	for (int pl = 0; pl < 2; pl++) {
		if (!places[pl])
			continue;
		for (int t = 0; t < 2; t++) {
			if (!x->have[t])
				continue;
			for (unsigned si = 0; si < x->ro.n_sizes; si++)
				rtt_report_row(x, pl, t, si, f);
		}
	}
	printf("(times in ms per 1000 round trips, which is us per round "
	       "trip. pinned: daemon A, client A and the raw A sides on "
	       "CPU 0, the B sides on CPU 1. chain: 4 plain processes "
	       "shaped like the stack)\n");
	if (f != NULL)
		(void)fclose(f);
	rtt_write_dat(x, places);
}

int
main(int argc, char **argv)
{
	static struct rtt_ctx x;
	bool places[2];
	int r = 0;

	x.ro = (struct rtt_opts){ .count = 1000,
		.warmup = 50,
		.sizes = { 11, 407, 1221 },
		.n_sizes = 3,
		.path_on = { true, true, true, true } };
	bench_opts_parse(&x.o, argc, argv, "n:w:s:m:", rtt_opt, &x.ro,
	    " [-n COUNT] [-w WARMUP] [-s SIZES] [-m PATHS]\n"
	    "  -m LIST   paths to measure (default raw,core,stack,chain)\n"
	    "  -n COUNT  round trips per run (default 1000)\n"
	    "  -w N      untimed round trips before each run (default 50)\n"
	    "  -s LIST   message sizes (default 11,407,1221)");
	if (x.o.quick) {
		x.ro.count = 100;
		x.ro.warmup = 10;
		if (x.o.reps > 2)
			x.o.reps = 2;
	}
	bench_env_init();
	places[BENCH_UNPINNED] = x.o.unpinned;
	places[BENCH_PINNED] = x.o.pinned;
	for (int pl = 0; pl < 2; pl++)
		for (int t = 0; t < 2; t++)
			for (unsigned si = 0; si < x.ro.n_sizes; si++)
				for (int k = 0; k < RTT_PATHS; k++) {
					double *v =
					    calloc(x.o.reps, sizeof(double));

					for (unsigned i = 0; v && i < x.o.reps;
					     i++)
						v[i] = NAN;
					x.cell[pl][t][si][k].us = v;
				}
	for (int t = 0; t < 2; t++) {
		if (!bench_want_transport(&x.o, rtt_tname[t]))
			continue;
		r = bench_pair_start(&x.pair[t], "rtt", rtt_tname[t], NULL);
		if (r < 0)
			goto out;
		x.have[t] = true;
	}
	x.runs = bench_csv_open(&x.o, "rtt_runs.csv",
	    "place,transport,path,size,rep,count,total_ms,per_msg_us,"
	    "min_us,max_us");
	/* Pinned first: the "two hosts" model is the headline figure. */
	for (int pl = BENCH_PINNED; r == 0 && pl >= 0; pl--)
		if (places[pl])
			r = rtt_place(&x, (enum bench_place)pl);
	if (x.runs != NULL)
		(void)fclose(x.runs);
	if (r == 0)
		rtt_report(&x, places);
out:
	for (int t = 0; t < 2; t++)
		if (x.have[t])
			bench_pair_free(&x.pair[t]);
	if (r < 0)
		fprintf(stderr, "bench_rtt: %s\n", strerror(-r));
	return r < 0 ? 1 : 0;
}
