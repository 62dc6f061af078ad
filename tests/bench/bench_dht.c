/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT between real daemons (issue 12, "Benchmark"): 16 ferryd on
 * loopback, each on its own 127.0.0.N, building their DHT as test_dht's
 * do. Measured:
 *   latency     PUT and GET of 1 KiB and 256 KiB blocks one at a time
 *               (p50, p99, mean hops from dht.completed and
 *               dht.hops_total), without emulated delay and with 30 ms
 *               one-way delay on every daemon ([testing] DELAY), and
 *               GETs of the same blocks from leaves, daemons linked to
 *               one member only, whose answers come back along the
 *               path (the answers' way told by dht.answers_in_*);
 *   throughput  PUTs and GETs from one client process with many
 *               requests in flight through one daemon, with replication
 *               1 and 3, against ferry's own bulk link throughput
 *               between two of the same daemons, this run (flow.c);
 *   memory      VmRSS of idle DHT daemons, and of one daemon holding
 *               100 000 blocks of 1 KiB.
 * The goals of the issue are judged and printed; nothing is asserted.
 * Reporting is in dht_report.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dht_bench.h"
#include "dht_report.h"
#include "flow.h"
#include "procstat.h"

#define DB_BULK_MSG  (64u * 1024)
#define DB_WAIT_MS   120000 /* for the tables to fill */
#define DB_SETTLE_MS 3000   /* before an idle RSS reading */

static int
db_list(const char *arg, uint64_t *v, unsigned max, unsigned *ret_n,
    uint64_t lo, uint64_t hi)
{
	unsigned n = 0;
	char *end;

	for (const char *s = arg; *s != '\0';) {
		unsigned long long x = strtoull(s, &end, 10);

		if (end == s || n == max || x < lo || x > hi)
			return -1;
		v[n++] = x;
		if (*end != ',' && *end != '\0')
			return -1;
		s = *end == ',' ? end + 1 : end;
	}
	*ret_n = n;
	return n > 0 ? 0 : -1;
}

/* The options that take a list: sizes, delays, counts, replications. */
static int
db_opt_list(int opt, const char *arg, struct db_opts *p)
{
	uint64_t v[DB_MAX_SIZES];
	unsigned n;

	switch (opt) {
	case 's':
		if (db_list(arg, v, DB_MAX_SIZES, &n, DB_HDR_LEN,
		        FERRY_DHT_BLOCK_MAX) < 0)
			return -1;
		p->n_sizes = n;
		for (unsigned i = 0; i < n; i++)
			p->sizes[i] = (size_t)v[i];
		return 0;
	case 'l':
		if (db_list(arg, v, DB_MAX_DELAYS, &n, 0, 1000) < 0)
			return -1;
		p->n_delays = n;
		for (unsigned i = 0; i < n; i++)
			p->delays[i] = (unsigned)v[i];
		return 0;
	case 'k':
		if (db_list(arg, v, DB_MAX_SIZES, &n, 1, 10000000) < 0)
			return -1;
		for (unsigned i = 0; i < DB_MAX_SIZES; i++)
			p->counts[i] = v[i < n ? i : n - 1];
		return 0;
	default: /* 'R' */
		if (db_list(arg, v, DB_MAX_REPLS, &n, 1, FERRY_DHT_REPL_MAX) <
		    0)
			return -1;
		p->n_repls = n;
		for (unsigned i = 0; i < n; i++)
			p->repls[i] = (unsigned)v[i];
		return 0;
	}
}

static int
db_opt(int opt, const char *arg, void *cls)
{
	struct db_opts *p = cls;
	char *end;

	switch (opt) {
	case 'N':
		p->daemons = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && p->daemons >= 2 &&
		        p->daemons <= DB_MAX_DAEMONS
		    ? 0
		    : -1;
	case 'n':
		p->ops = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && p->ops > 0 && p->ops <= 100000 ? 0 : -1;
	case 'V':
		p->leaves = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && p->leaves <= DB_MAX_LEAVES ? 0 : -1;
	case 'L':
		p->lat_repl = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && p->lat_repl <= FERRY_DHT_REPL_MAX ? 0
		                                                         : -1;
	case 's':
	case 'l':
	case 'k':
	case 'R':
		return db_opt_list(opt, arg, p);
	case 'j':
		p->jobs = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && p->jobs >= 1 && p->jobs <= DB_MAX_JOBS
		    ? 0
		    : -1;
	case 'b':
		p->bulk_mib = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && p->bulk_mib <= 65536 ? 0 : -1;
	case 'S':
		p->rss_blocks = strtoull(arg, &end, 10);
		return *end == '\0' && p->rss_blocks <= 10000000 ? 0 : -1;
	case 'w':
		p->do_lat = strstr(arg, "latency") != NULL;
		p->do_tput = strstr(arg, "throughput") != NULL;
		p->do_rss = strstr(arg, "rss") != NULL;
		return p->do_lat || p->do_tput || p->do_rss ? 0 : -1;
	default:
		return -1;
	}
}

/* The latency runs on one network: reps rounds over the sizes. */
static int
db_latency(struct db_ctx *x, const struct dbnet *net, unsigned di)
{
	char tag[64];
	int r = 0;

	x->lat_load[di][0] = db_load();
	for (unsigned rep = 0; r == 0 && rep < x->o.reps; rep++)
		for (unsigned si = 0; r == 0 && si < x->p.n_sizes; si++) {
			struct db_lat_run *run = &x->lat[di][si][rep];

			(void)snprintf(tag, sizeof(tag), "%u,%zu,%u",
			    x->p.delays[di], x->p.sizes[si], rep + 1);
			r = db_latency_run(net, x->p.sizes[si], x->p.ops,
			    x->p.lat_repl, x->ops_csv, tag, run);
			if (r == 0)
				db_report_lat_run(x, di, si, rep);
		}
	x->lat_load[di][1] = db_load();
	return r;
}

/* ferry's bulk link throughput between d0 and d1 of the network, as
 * bench_throughput's bulk runs: 64 KiB messages as fast as accepted. */
static int
db_bulk(struct db_ctx *x, const struct dbnet *net, unsigned rep)
{
	uint64_t count = (uint64_t)x->p.bulk_mib * 1024 * 1024 / DB_BULK_MSG;
	struct ferry_client *c = NULL;
	struct flow_result fr;
	struct flow *f = NULL;
	double secs;
	int r;

	r = flow_new(net->d[1], BENCH_CPU_ANY, DB_BULK_MSG, count, 2000,
	    FLOW_MAX_NS, &f);
	if (r == 0)
		r = bench_client(net->d[0], false, &c);
	if (r == 0)
		r = flow_run(f, c, &net->d[1]->id, &fr);
	if (r == 0) {
		secs = flow_seconds(fr.start_ns, fr.last_ns);
		x->bulk[rep] = secs > 0 ? (double)fr.bytes / secs / 1e6 : NAN;
		x->bulk_loss[rep] =
		    100.0 * (double)(count - fr.received) / (double)count;
		bench_log(&x->o, "bulk rep %u: %.1f MB/s, %.3f %% lost",
		    rep + 1, x->bulk[rep], x->bulk_loss[rep]);
	}
	ferry_client_close(c);
	flow_free(f);
	return r;
}

/* The throughput phases: for each repetition, size and replication, the
 * PUTs and then the GETs of the same blocks, all through d0. */
static int
db_throughput(struct db_ctx *x, const struct dbnet *net)
{
	struct db_keys keys = { NULL, NULL, 0 };
	int r = 0;

	x->tput_load[0] = db_load();
	for (unsigned rep = 0; r == 0 && rep < x->o.reps; rep++)
		if (x->p.bulk_mib > 0)
			r = db_bulk(x, net, rep);
	for (unsigned rep = 0; r == 0 && rep < x->o.reps; rep++)
		for (unsigned si = 0; r == 0 && si < x->p.n_sizes; si++)
			for (unsigned ri = 0; r == 0 && ri < x->p.n_repls;
			     ri++) {
				for (int g = 0; r == 0 && g < 2; g++) {
					struct db_tput_run *t =
					    &x->tput[si][ri][g][rep];

					r = db_tput_run(net, 0, x->p.sizes[si],
					    x->p.counts[si], x->p.repls[ri],
					    x->p.jobs, g == 1, &keys, t);
					t->load = db_load();
					if (r == 0)
						db_report_tput_run(x, si, ri, g,
						    rep);
				}
			}
	db_keys_free(&keys);
	x->tput_load[1] = db_load();
	return r;
}

/* VmRSS of every daemon of net in rss[] (KiB); blocks[] (may be NULL)
 * what each holds. */
static void
db_rss_all(const struct dbnet *net, unsigned long *rss, uint64_t *blocks)
{
	for (unsigned i = 0; i < net->n; i++) {
		rss[i] = procstat_kib(net->d[i]->pid, "VmRSS");
		if (blocks != NULL)
			blocks[i] = dbnet_blocks(net->d[i]);
	}
}

/* One daemon alone (its DHT has no peers, so it stores every PUT): idle,
 * then with rss_blocks blocks of 1 KiB put into it, then restarted. */
static int
db_rss_many(struct db_ctx *x)
{
	struct db_keys keys = { NULL, NULL, 0 };
	struct harness_daemon *d;
	struct dbnet net;
	int r;

	r = dbnet_start(&net, "bench-dhtrss", 1, x->transport, 0, NULL, 10000);
	if (r < 0)
		return r;
	d = net.d[0];
	harness_sleep_ms(DB_SETTLE_MS);
	x->rss.alone_idle = procstat_kib(d->pid, "VmRSS");
	x->rss.load[0] = db_load();
	r = db_tput_run(&net, 0, 1024, x->p.rss_blocks, 1, x->p.jobs, false,
	    &keys, &x->rss.fill);
	db_keys_free(&keys);
	if (r == 0) {
		harness_sleep_ms(DB_SETTLE_MS);
		x->rss.many = procstat_kib(d->pid, "VmRSS");
		x->rss.many_hwm = procstat_kib(d->pid, "VmHWM");
		x->rss.many_blocks = dbnet_blocks(d);
		r = harness_daemon_restart(d);
	}
	if (r == 0) {
		harness_sleep_ms(DB_SETTLE_MS);
		x->rss.restarted = procstat_kib(d->pid, "VmRSS");
		x->rss.restarted_blocks = dbnet_blocks(d);
	}
	x->rss.load[1] = db_load();
	x->rss.many_done = r == 0;
	dbnet_free(&net);
	return r;
}

/* Everything measured on the network with delay delays[di]. */
static int
db_network(struct db_ctx *x, unsigned di)
{
	unsigned delay = x->p.delays[di];
	bool first = di == 0;
	struct dbnet net;
	uint64_t t0 = bench_now_ns();
	int r;

	bench_log(&x->o, "starting %u daemons, %u ms one-way delay",
	    x->p.daemons, delay);
	r = dbnet_start(&net, "bench-dht", x->p.daemons, x->transport, delay,
	    x->o.extra_cfg, DB_WAIT_MS + 100 * delay * x->p.daemons);
	if (r < 0)
		return r;
	bench_log(&x->o, "tables full after %.1f s",
	    (double)(bench_now_ns() - t0) / 1e9);
	if (first && x->p.do_rss) {
		harness_sleep_ms(DB_SETTLE_MS);
		db_rss_all(&net, x->rss.idle, NULL);
		x->rss.idle_n = net.n;
		x->rss.idle_delay = delay;
	}
	if (x->p.do_lat && x->p.leaves > 0) {
		r = dbnet_add_leaves(&net, x->p.leaves, x->transport,
		    x->o.extra_cfg);
		bench_log(&x->o, "%u leaves linked", x->p.leaves);
	}
	if (r == 0 && x->p.do_lat)
		r = db_latency(x, &net, di);
	/* Gone before the throughput runs: their blocks are random, and
	 * some would be placed on a leaf. */
	dbnet_stop_leaves(&net);
	if (r == 0 && first && x->p.do_tput) {
		x->tput_delay = delay;
		r = db_throughput(x, &net);
		if (r == 0) {
			db_rss_all(&net, x->rss.after, x->rss.after_blocks);
			x->rss.after_done = true;
		}
	}
	dbnet_free(&net);
	return r;
}

static void
db_defaults(struct db_ctx *x)
{
	struct db_opts *p = &x->p;

	p->daemons = 16;
	p->ops = 200;
	p->leaves = 4;
	p->n_sizes = 2;
	p->sizes[0] = 1024;
	p->sizes[1] = 256 * 1024;
	p->n_delays = 2;
	p->delays[0] = 0;
	p->delays[1] = 30;
	p->jobs = 32;
	p->counts[0] = 20000;
	p->counts[1] = 1000;
	for (unsigned i = 2; i < DB_MAX_SIZES; i++)
		p->counts[i] = 1000;
	p->n_repls = 2;
	p->repls[0] = 1;
	p->repls[1] = 3;
	p->bulk_mib = 256;
	p->rss_blocks = 100000;
	p->do_lat = p->do_tput = p->do_rss = true;
}

static const char db_usage[] =
    " [-N DAEMONS] [-n OPS] [-L REPL] [-V LEAVES] [-s SIZES] [-l DELAYS]\n"
    "       [-j JOBS] [-k COUNTS] [-R REPLS] [-b MIB] [-S BLOCKS] "
    "[-w PARTS]\n"
    "  -N N      daemons in the network (default 16)\n"
    "  -n N      latency: requests of each kind per size and run "
    "(default 200)\n"
    "  -L N      latency: replication of the PUTs (default 0: the "
    "daemons', 3)\n"
    "  -V N      latency: leaves, daemons linked to one member only, "
    "that GET\n"
    "            every block too (default 4; 0: none)\n"
    "  -s LIST   block sizes in bytes (default 1024,262144)\n"
    "  -l LIST   one-way delays in ms, each a network of its own "
    "(default 0,30);\n"
    "            throughput and idle memory are measured on the first\n"
    "  -j N      throughput: requests in flight, a connection each "
    "(default 32)\n"
    "  -k LIST   throughput: blocks per phase, one count per size "
    "(default 20000,1000)\n"
    "  -R LIST   throughput: replication of the PUTs (default 1,3)\n"
    "  -b MIB    bulk baseline volume in 64 KiB messages (default 256)\n"
    "  -S N      blocks of 1 KiB put into one daemon for its RSS "
    "(default 100000)\n"
    "  -w LIST   parts: latency,throughput,rss (default all)\n"
    "  (-r REPS runs of each measurement, default 3; -t the transport, "
    "default udp;\n"
    "   -p is ignored: nothing is pinned)";

int
main(int argc, char **argv)
{
	static struct db_ctx x;
	int r = 0;

	db_defaults(&x);
	bench_opts_parse(&x.o, argc, argv, "N:n:L:V:s:l:j:k:R:b:S:w:", db_opt,
	    &x.p, db_usage);
	if (x.o.reps == 5)
		x.o.reps = 3; /* the common default; 3 runs here */
	if (x.o.reps > DB_MAX_REPS)
		x.o.reps = DB_MAX_REPS;
	if (x.o.quick) {
		x.p.ops = 20;
		x.p.counts[0] = 2000;
		x.p.counts[1] = 100;
		x.p.bulk_mib = 32;
		x.p.rss_blocks = 5000;
		x.o.reps = 1;
	}
	/* The common default is "udp,tcp": one transport here, UDP unless
	 * -t names another. */
	(void)snprintf(x.transport, sizeof(x.transport), "%s",
	    strcmp(x.o.transports, "udp,tcp") == 0 ? "udp" : x.o.transports);
	bench_env_init();
	r = db_report_open(&x);
	for (unsigned di = 0; r == 0 && di < x.p.n_delays; di++)
		if (x.p.do_lat || (di == 0 && (x.p.do_tput || x.p.do_rss)))
			r = db_network(&x, di);
	if (r == 0 && x.p.do_rss && x.p.rss_blocks > 0)
		r = db_rss_many(&x);
	if (r < 0)
		fprintf(stderr, "bench_dht: %s\n", strerror(-r));
	db_report(&x);
	db_report_close(&x);
	return r < 0 ? 1 : 0;
}
