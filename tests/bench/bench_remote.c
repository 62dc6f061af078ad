/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Thin clients against full peers, seed 001 Fig. 5 and Fig. 6 (issue 15,
 * "Benchmark"): 1 MB (1 MiB of random bytes) put at client round-trip
 * times of 10, 50, 100, 200 and 300 ms into a DHT of a few daemons on
 * loopback,
 *  (a) by a full ferry peer on the client's side, `ferry put` on a daemon
 *      whose every unit is delayed (issue 4's link emulation); cold: the
 *      daemon just restarted (its table on disk, no link up), warm: its
 *      links up and idle;
 *  (b) by the thin client through the intermediary on the DHT's first
 *      daemon, only its path to the intermediary delayed (a delaying TCP
 *      relay that plays the path's handshake, slow start and restart
 *      after idle); cold: `ferry remote put`, a new process and
 *      connection, and the library's first put on a new handle (no
 *      process start); warm: a second put on the same handle at once,
 *      and a third after an idle second (slow start again).
 * Timed until the URI is printed, which both do only once every block
 * has its receipts. RTT 0 gives the transmission time in the same run.
 * Goals: through the intermediary at 200 ms at most 1.6 s cold and
 * 0.6 s warm; the full peer within 5 RTT + transmission time at every
 * RTT. A program, not a test: it measures, it does not assert.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "delayrelay.h"
#include "remote/remote.h"
#include "remote_bench.h"

#define RB_MAX_RTTS 8
#define RB_MAX_REPS 50
#define RB_IDLE_MS  1000 /* the pause before a warm put after idle */

enum rb_series {
	RB_PEER_COLD,
	RB_PEER_WARM,
	RB_IMD_COLD,
	RB_IMD_LIB,
	RB_IMD_WARM,
	RB_IMD_IDLE,
	RB_NSERIES
};
static const char *const rb_name[RB_NSERIES] = { "peer-cold", "peer-warm",
	"imd-cold", "imd-cold-lib", "imd-warm", "imd-warm-idle" };

struct rb_sample {
	double s;
	double requests; /* HTTP requests the intermediary served */
	double conns;    /* connections the relay accepted */
};

struct rb_ctx {
	struct bench_opts o;
	unsigned rtts[RB_MAX_RTTS]; /* -l; row 0 of the results is RTT 0 */
	unsigned n_rtts;
	unsigned n_dht; /* -N */
	bool peer, imd; /* -m */
	struct rb_env env;
	struct harness_daemon *peer_d; /* (a)'s daemon */
	FILE *runs;
	struct rb_sample v[RB_MAX_RTTS + 1][RB_NSERIES][RB_MAX_REPS];
	unsigned n[RB_MAX_RTTS + 1][RB_NSERIES];
};

static int
rb_opt(int opt, const char *arg, void *cls)
{
	struct rb_ctx *x = cls;
	char *end;

	switch (opt) {
	case 'l':
		x->n_rtts = 0;
		for (const char *s = arg; *s != '\0';) {
			unsigned long v = strtoul(s, &end, 10);

			if (end == s || v == 0 || v > 5000 ||
			    x->n_rtts == RB_MAX_RTTS)
				return -1;
			x->rtts[x->n_rtts++] = (unsigned)v;
			if (*end != ',' && *end != '\0')
				return -1;
			s = *end == ',' ? end + 1 : end;
		}
		return x->n_rtts > 0 ? 0 : -1;
	case 'N':
		x->n_dht = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && x->n_dht >= 2 && x->n_dht <= RB_DHT_MAX
		    ? 0
		    : -1;
	case 'm':
		x->peer = strstr(arg, "peer") != NULL;
		x->imd = strstr(arg, "imd") != NULL;
		return x->peer || x->imd ? 0 : -1;
	default:
		return -1;
	}
}

static unsigned
rb_rtt(const struct rb_ctx *x, unsigned ri)
{
	return ri == 0 ? 0 : x->rtts[ri - 1];
}

static void
rb_note(struct rb_ctx *x, unsigned ri, enum rb_series sr, unsigned rep, int r,
    const struct rb_sample *smp)
{
	unsigned rtt = rb_rtt(x, ri), *n = &x->n[ri][sr];
	struct rb_sample s = *smp;

	if (r != 0) {
		fprintf(stderr, "bench_remote: %u ms %s rep %u failed: %s\n",
		    rtt, rb_name[sr], rep + 1,
		    r < 0 ? strerror(-r) : "ferry failed");
		s.s = NAN;
	}
	if (*n < RB_MAX_REPS)
		x->v[ri][sr][(*n)++] = s;
	if (x->runs != NULL)
		fprintf(x->runs, "%u,%s,%u,%.6f,%.3f,%.0f,%.0f\n", rtt,
		    rb_name[sr], rep + 1, s.s, rtt > 0 ? s.s * 1000 / rtt : NAN,
		    s.requests, s.conns);
	bench_log(&x->o,
	    "rtt %u ms %s rep %u: %.3f s (%.2f RTT), %.0f "
	    "requests, %.0f connections",
	    rtt, rb_name[sr], rep + 1, s.s, rtt > 0 ? s.s * 1000 / rtt : NAN,
	    s.requests, s.conns);
}

/* The full peer's counters that say where a put's time went. */
static const char *const rb_peer_counters[] = { "dht.requests_out",
	"dht.retries", "dht.timeouts", "storage.block_retries",
	"storage.put_hedges", "core.frames_lost", "core.frag_retx",
	"core.enc_unknown", "core.key_changes" };
#define RB_PEER_NCOUNTERS                                                      \
	(sizeof(rb_peer_counters) / sizeof(rb_peer_counters[0]))

/* ferry put of a new file on the full peer d; the URI's delay. */
static int
rb_peer_put(struct rb_ctx *x, struct harness_daemon *d, double *ret_s)
{
	char out[2048], line[512], *file = rb_file(&x->env);
	struct bench_counters c0 = { NULL, 0 }, c1 = { NULL, 0 };
	size_t off = 0;
	int r;

	if (file == NULL)
		return -ENOMEM;
	(void)bench_counters_get(d, &c0);
	r = rb_cli((const char *[]){ "--socket", d->socket, "put", file, NULL },
	    out, sizeof(out), ret_s);
	if (r == 0 && strncmp(out, "ferry:", 6) != 0)
		r = -EBADMSG;
	if (x->o.verbose && bench_counters_get(d, &c1) == 0) {
		line[0] = '\0';
		for (size_t i = 0; i < RB_PEER_NCOUNTERS && off < sizeof(line);
		     i++)
			off += (size_t)snprintf(line + off, sizeof(line) - off,
			    " %s %llu", rb_peer_counters[i],
			    (unsigned long long)bench_counter_delta(&c0, &c1,
			        rb_peer_counters[i]));
		bench_log(&x->o, "full peer's put:%s", line);
	}
	bench_counters_free(&c0);
	bench_counters_free(&c1);
	(void)unlink(file);
	free(file);
	return r;
}

/* (a): a warm put on the peer's links, then a cold one after a restart
 * (its table on disk, no link up). */
static int
rb_peer(struct rb_ctx *x, unsigned ri, unsigned rep)
{
	unsigned rtt = rb_rtt(x, ri);
	struct rb_sample s = { NAN, NAN, NAN };
	int r;

	rb_peer_wait_idle(x->peer_d, rtt);
	r = rb_peer_put(x, x->peer_d, &s.s);
	rb_note(x, ri, RB_PEER_WARM, rep, r, &s);
	r = harness_daemon_restart(x->peer_d);
	if (r == 0)
		r = rb_peer_put(x, x->peer_d, &s.s);
	rb_note(x, ri, RB_PEER_COLD, rep, r, &s);
	return r < 0 ? r : 0;
}

static int
rb_peer_rtt(struct rb_ctx *x, unsigned ri)
{
	int r = rb_peer_start(&x->env, rb_rtt(x, ri), &x->peer_d);

	for (unsigned rep = 0; r == 0 && rep < x->o.reps; rep++)
		r = rb_peer(x, ri, rep);
	return r;
}

/* The intermediary's request count, NAN if unknown. */
static double
rb_requests(const struct rb_ctx *x)
{
	struct bench_counters c;
	double v;

	if (bench_counters_get(x->env.d[0], &c) < 0)
		return NAN;
	v = (double)bench_counter(&c, "intermediary.requests");
	bench_counters_free(&c);
	return v;
}

struct rb_imd {
	struct rb_ctx *x;
	struct delayrelay *relay;
	char url[64];
	char dir[700]; /* the thin client's, one per relay: the
	                * intermediaries it knows are those of this one */
};

/* Before and after one put through the relay. */
static void
rb_imd_begin(struct rb_imd *m, struct rb_sample *s)
{
	s->requests = rb_requests(m->x);
	s->conns = delayrelay_accepted(m->relay);
}

static void
rb_imd_end(struct rb_imd *m, struct rb_sample *s)
{
	s->requests = rb_requests(m->x) - s->requests;
	s->conns = delayrelay_accepted(m->relay) - s->conns;
}

static int
rb_imd_cli(struct rb_imd *m, struct rb_sample *s)
{
	char out[2048], *file = rb_file(&m->x->env);
	int r;

	if (file == NULL)
		return -ENOMEM;
	rb_imd_begin(m, s);
	r = rb_cli((const char *[]){ "remote", "put", file, "--intermediary",
	               m->url, "--config-dir", m->dir, "--cacert",
	               m->x->env.cert, NULL },
	    out, sizeof(out), &s->s);
	rb_imd_end(m, s);
	if (r == 0 && strncmp(out, "ferry:", 6) != 0)
		r = -EBADMSG;
	(void)unlink(file);
	free(file);
	return r;
}

/* One put of file on the handle. The counters read after it are the
 * next put's start (*mark), so that nothing but the bench's bookkeeping
 * lies between two puts: a gap over a round trip would restart the
 * relay's slow start, which a warm put is not to pay. */
static int
rb_imd_lib(struct rb_imd *m, struct remote *rc, const char *file,
    struct rb_sample *mark, struct rb_sample *s)
{
	struct ferry_file_result res;
	uint64_t t0 = bench_now_ns();
	int r;

	r = remote_put(rc, file, 0, NULL, NULL, &res);
	s->s = (double)(bench_now_ns() - t0) / 1e9;
	s->requests = mark->requests;
	s->conns = mark->conns;
	rb_imd_begin(m, mark);
	s->requests = mark->requests - s->requests;
	s->conns = mark->conns - s->conns;
	if (r < 0)
		fprintf(stderr, "bench_remote: remote_put: %s\n",
		    remote_error(rc));
	return r;
}

/* (b): one put by ferry remote put, then three on one library handle. */
static int
rb_imd(struct rb_ctx *x, struct rb_imd *m, unsigned ri, unsigned rep)
{
	const char *urls[] = { m->url };
	struct remote_opts ro = { .dir = m->dir,
		.urls = urls,
		.n_urls = 1,
		.cacert = x->env.cert };
	struct rb_sample s = { NAN, NAN, NAN }, mark;
	unsigned rtt = rb_rtt(x, ri);
	struct remote *rc = NULL;
	char *files[3] = { NULL, NULL, NULL };
	int r;

	r = rb_imd_cli(m, &s);
	rb_note(x, ri, RB_IMD_COLD, rep, r, &s);
	/* The files first: nothing but the puts between the puts. */
	r = 0;
	for (int i = 0; i < 3; i++)
		if ((files[i] = rb_file(&x->env)) == NULL)
			r = -ENOMEM;
	if (r == 0 && (r = remote_open(&ro, &rc)) < 0)
		fprintf(stderr, "bench_remote: remote_open: %s\n",
		    remote_open_error());
	if (r < 0)
		goto out;
	rb_imd_begin(m, &mark);
	r = rb_imd_lib(m, rc, files[0], &mark, &s);
	rb_note(x, ri, RB_IMD_LIB, rep, r, &s);
	r = rb_imd_lib(m, rc, files[1], &mark, &s);
	rb_note(x, ri, RB_IMD_WARM, rep, r, &s);
	harness_sleep_ms(RB_IDLE_MS > 2 * rtt ? RB_IDLE_MS : 2 * rtt);
	rb_imd_begin(m, &mark);
	r = rb_imd_lib(m, rc, files[2], &mark, &s);
	rb_note(x, ri, RB_IMD_IDLE, rep, r, &s);
	remote_free(rc);
out:
	for (int i = 0; i < 3; i++) {
		if (files[i] != NULL)
			(void)unlink(files[i]);
		free(files[i]);
	}
	return r == -ENOMEM ? r : 0;
}

static int
rb_imd_rtt(struct rb_ctx *x, unsigned ri)
{
	struct rb_imd m = { .x = x };
	int r;

	r = delayrelay_new(&x->env.imd_addr, rb_rtt(x, ri) * 1000ull / 2,
	    &m.relay);
	if (r < 0)
		return r;
	(void)snprintf(m.url, sizeof(m.url), "https://127.0.0.1:%u",
	    delayrelay_port(m.relay));
	(void)snprintf(m.dir, sizeof(m.dir), "%s/client-%u",
	    harness_dir(x->env.h), rb_rtt(x, ri));
	for (unsigned rep = 0; r == 0 && rep < x->o.reps; rep++)
		r = rb_imd(x, &m, ri, rep);
	delayrelay_free(m.relay);
	return r;
}

/* -------------------------------------------------------------------- */

/* The seconds of series sr at RTT ri into s and, when req and conns are
 * not NULL, the medians of the requests and connections a put took. */
static void
rb_summary(const struct rb_ctx *x, unsigned ri, enum rb_series sr,
    struct bench_summary *s, double *req, double *conns)
{
	double v[RB_MAX_REPS], q[RB_MAX_REPS], c[RB_MAX_REPS];
	struct bench_summary t;
	unsigned n = x->n[ri][sr];

	for (unsigned i = 0; i < n; i++) {
		v[i] = x->v[ri][sr][i].s;
		q[i] = isnan(v[i]) ? NAN : x->v[ri][sr][i].requests;
		c[i] = isnan(v[i]) ? NAN : x->v[ri][sr][i].conns;
	}
	bench_summarize(v, n, s);
	if (req != NULL) {
		bench_summarize(q, n, &t);
		*req = t.median;
	}
	if (conns != NULL) {
		bench_summarize(c, n, &t);
		*conns = t.median;
	}
}

/* The goal of a series at rtt, NAN if it has none there. */
static double
rb_goal(enum rb_series sr, unsigned rtt, double tx)
{
	switch (sr) {
	case RB_PEER_COLD:
	case RB_PEER_WARM:
		return rtt > 0 ? 5.0 * rtt / 1000 + tx : NAN;
	case RB_IMD_COLD:
	case RB_IMD_LIB:
		return rtt == 200 ? 1.6 : NAN;
	case RB_IMD_WARM:
	case RB_IMD_IDLE:
		return rtt == 200 ? 0.6 : NAN;
	default:
		return NAN;
	}
}

/* The figure's data: a row per RTT (0 first) with, per series, the
 * median, min and max seconds and the median in RTTs; then the
 * transmission times (RTT 0) of each series. */
static void
rb_write_dat(const struct rb_ctx *x)
{
	FILE *f = bench_csv_open(&x->o, "remote_fig.dat",
	    "# rtt_ms {peer-cold,peer-warm,imd-cold,imd-cold-lib,imd-warm,"
	    "imd-warm-idle} x {median_s,min_s,max_s,rtts} tx_s x 6");
	struct bench_summary s;

	if (f == NULL)
		return;
	for (unsigned ri = 0; ri <= x->n_rtts; ri++) {
		unsigned rtt = rb_rtt(x, ri);

		fprintf(f, "%u", rtt);
		for (int sr = 0; sr < RB_NSERIES; sr++) {
			rb_summary(x, ri, (enum rb_series)sr, &s, NULL, NULL);
			fprintf(f, " %.6f %.6f %.6f %.3f", s.median, s.min,
			    s.max, rtt > 0 ? s.median * 1000 / rtt : NAN);
		}
		for (int sr = 0; sr < RB_NSERIES; sr++) {
			rb_summary(x, 0, (enum rb_series)sr, &s, NULL, NULL);
			fprintf(f, " %.6f", s.median);
		}
		fputc('\n', f);
	}
	(void)fclose(f);
}

static void
rb_report(const struct rb_ctx *x)
{
	FILE *f = bench_csv_open(&x->o, "remote_summary.csv",
	    "rtt_ms,series,n,median_s,min_s,max_s,rtts,requests,connections,"
	    "tx_s,goal_s,goal_met,paper_udp_s,paper_hybrid_s");
	struct bench_summary s, tx;
	double req, conns;

	printf("\nThin client vs full peer (seed 001 Fig. 5-6): 1 MiB put "
	       "into %u daemons at emulated client RTTs, median [min-max] of "
	       "%u runs\n",
	    x->n_dht, x->o.reps);
	printf("%6s %-13s | %-26s | %6s | %4s %4s | %7s | %s\n", "rtt ms",
	    "series", "seconds", "RTTs", "req", "conn", "goal s", "verdict");
	for (unsigned ri = 0; ri <= x->n_rtts; ri++) {
		unsigned rtt = rb_rtt(x, ri);

		for (int sr = 0; sr < RB_NSERIES; sr++) {
			double goal;
			bool ok;

			if (x->n[ri][sr] == 0)
				continue;
			rb_summary(x, ri, (enum rb_series)sr, &s, &req, &conns);
			/* The transmission time: the same put at RTT 0. */
			rb_summary(x, 0, (enum rb_series)sr, &tx, NULL, NULL);
			goal = rb_goal((enum rb_series)sr, rtt, tx.median);
			ok = !isnan(goal) && s.median <= goal;
			printf("%6u %-13s | %7.3f [%7.3f-%7.3f] | %6.2f | "
			       "%4.0f %4.0f | %7.3f | %s\n",
			    rtt, rb_name[sr], s.median, s.min, s.max,
			    rtt > 0 ? s.median * 1000 / rtt : NAN, req, conns,
			    goal,
			    isnan(goal) ? "-"
			        : ok    ? "met"
			                : "MISSED");
			if (f != NULL)
				fprintf(f,
				    "%u,%s,%u,%.6f,%.6f,%.6f,%.3f,%.1f,%.1f,"
				    "%.6f,%.6f,%s,%s,%s\n",
				    rtt, rb_name[sr], s.n, s.median, s.min,
				    s.max,
				    rtt > 0 ? s.median * 1000 / rtt : NAN, req,
				    conns, tx.median, goal,
				    isnan(goal) ? ""
				        : ok    ? "met"
				                : "MISSED",
				    rtt == 10        ? "5.24"
				        : rtt == 200 ? "78"
				                     : "",
				    rtt == 10        ? "0.36"
				        : rtt == 200 ? "2"
				                     : "");
		}
	}
	rb_write_dat(x);
	printf("(req: HTTP requests the intermediary served for the put, "
	       "conn: connections the relay accepted; goals: the full peer "
	       "5 RTT + its time at RTT 0, the intermediary at 200 ms 1.6 s "
	       "cold and 0.6 s warm. The paper, 1 MB as 8 KB: UDP 5.24 s at "
	       "10 ms, 78 s at 200 ms; its hybrid 0.36 s and 2 s)\n");
	if (f != NULL)
		(void)fclose(f);
}

int
main(int argc, char **argv)
{
	static struct rb_ctx x;
	int r = 0;

	x.rtts[0] = 10;
	x.rtts[1] = 50;
	x.rtts[2] = 100;
	x.rtts[3] = 200;
	x.rtts[4] = 300;
	x.n_rtts = 5;
	x.n_dht = 4;
	x.peer = x.imd = true;
	bench_opts_parse(&x.o, argc, argv, "l:N:m:", rb_opt, &x,
	    " [-l RTTS] [-N DAEMONS] [-m peer,imd]\n"
	    "  -l LIST    client round-trip times in ms (default "
	    "10,50,100,200,300; RTT 0 is always measured too)\n"
	    "  -N COUNT   daemons in the DHT, the first the intermediary "
	    "(default 4)\n"
	    "  -m LIST    peer (a full peer's ferry put), imd (the thin "
	    "client through the intermediary) or both\n"
	    "  (-r REPS runs per RTT, default 5; -p and -t are ignored: "
	    "UDP, unpinned)");
	if (x.o.reps > RB_MAX_REPS)
		x.o.reps = RB_MAX_REPS;
	if (x.o.quick) {
		x.n_rtts = 2;
		x.rtts[0] = 10;
		x.rtts[1] = 200;
		x.o.reps = 1;
	}
	bench_env_init();
	r = rb_env_start(&x.env, x.n_dht, x.o.extra_cfg);
	if (r < 0)
		return 1;
	x.runs = bench_csv_open(&x.o, "remote_runs.csv",
	    "rtt_ms,series,sample,seconds,rtts,requests,connections");
	for (unsigned ri = 0; r == 0 && ri <= x.n_rtts; ri++) {
		if (x.peer)
			r = rb_peer_rtt(&x, ri);
		if (r == 0 && x.imd)
			r = rb_imd_rtt(&x, ri);
	}
	if (x.runs != NULL)
		(void)fclose(x.runs);
	if (r == 0)
		rb_report(&x);
	else
		fprintf(stderr, "bench_remote: %s\n", strerror(-r));
	rb_env_free(&x.env);
	return r < 0 ? 1 : 0;
}
