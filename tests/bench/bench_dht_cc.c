/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Congestion in the DHT (issue 14, "The experiments"; seed 002, section
 * 3): 16 real ferryd (or -N) on loopback building their DHT as
 * bench_dht's do, each peer's links emulated as the seed's network
 * ([testing]: 1 Mbit/s sent per peer, 30 ms one-way, no loss), and the
 * congestion scheme of [dht] CONGESTION, each of -C in turn:
 *   collapse  (Fig. 4) every peer issues L lookups of random keys
 *             (FIND) open-loop at an offered rate, swept; throughput
 *             achieved per peer, success, latency, retransmissions;
 *   cross     (Fig. 5) the same at one offered rate while each peer is
 *             stopped (SIGSTOP) for exponential times of mean 2 s, a
 *             fraction 0 to 15 % of the time, with a total buffer per
 *             peer of 100 and 400 messages written into the scheme's
 *             settings (-B).
 * Without emulation (-E off) the load is 50/50 PUT/GET of 1 KiB blocks
 * and the sweep higher: the limit is then the machine's CPU. The load is
 * in cc_load.c, the report in cc_report.c; nothing is asserted.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cc_report.h"

#define CC_WAIT_MS   120000 /* for the tables to fill */
#define CC_SETTLE_MS 2000   /* between runs: late answers, queues */
#define CC_CLIENT_MS 10000  /* the DHT's REQUEST_TIMEOUT */
#define CC_NET_TRIES 3      /* networks started for one that forms */

static int
cc_list(const char *arg, double *v, unsigned max, unsigned *ret_n, double lo,
    double hi)
{
	unsigned n = 0;
	char *end;

	for (const char *s = arg; *s != '\0';) {
		double x = strtod(s, &end);

		if (end == s || n == max || !(x >= lo && x <= hi))
			return -1;
		v[n++] = x;
		if (*end != ',' && *end != '\0')
			return -1;
		s = *end == ',' ? end + 1 : end;
	}
	*ret_n = n;
	return n > 0 ? 0 : -1;
}

static int
cc_opt_schemes(struct cc_opts *p, const char *arg)
{
	unsigned n = 0;

	for (const char *s = arg; *s != '\0';) {
		size_t len = strcspn(s, ",");

		if (len == 0 || len >= CC_SCHEME_LEN || n == CC_MAX_SCHEMES)
			return -1;
		memcpy(p->scheme[n], s, len);
		p->scheme[n][len] = '\0';
		p->tmpl[n][0] = '\0';
		n++;
		s += len + (s[len] == ',');
	}
	p->n_schemes = n;
	return n > 0 ? 0 : -1;
}

/* -B SCHEME:TEXT, the settings a buffer of -b becomes for SCHEME. Kept
 * aside until -C is known (the options may come in any order). */
static char cc_btext[CC_MAX_SCHEMES][CC_TMPL_LEN];
static char cc_bname[CC_MAX_SCHEMES][CC_SCHEME_LEN];
static unsigned cc_n_btext;

static int
cc_opt_tmpl(const char *arg)
{
	const char *colon = strchr(arg, ':');
	size_t len = colon != NULL ? (size_t)(colon - arg) : 0;

	if (colon == NULL || len == 0 || len >= CC_SCHEME_LEN ||
	    strlen(colon + 1) >= CC_TMPL_LEN || cc_n_btext == CC_MAX_SCHEMES)
		return -1;
	memcpy(cc_bname[cc_n_btext], arg, len);
	cc_bname[cc_n_btext][len] = '\0';
	(void)snprintf(cc_btext[cc_n_btext], CC_TMPL_LEN, "%s", colon + 1);
	cc_n_btext++;
	return 0;
}

static int
cc_opt_uint(const char *arg, unsigned lo, unsigned hi, unsigned *ret)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (end == arg || *end != '\0' || v < lo || v > hi)
		return -1;
	*ret = (unsigned)v;
	return 0;
}

static int
cc_opt(int opt, const char *arg, void *cls)
{
	struct cc_opts *p = cls;
	double v[CC_MAX_RATES];
	unsigned n, u;

	switch (opt) {
	case 'N':
		return cc_opt_uint(arg, 2, DB_MAX_DAEMONS, &p->daemons);
	case 'L':
		return cc_opt_uint(arg, 1, 1000000, &p->lookups);
	case 'C':
		return cc_opt_schemes(p, arg);
	case 'R':
		if (cc_list(arg, p->rates, CC_MAX_RATES, &p->n_rates, 0.1,
		        100000) < 0)
			return -1;
		return 0;
	case 'x':
		if (cc_list(arg, v, CC_MAX_CROSS, &n, 0, 90) < 0)
			return -1;
		p->n_cross = n;
		for (unsigned i = 0; i < n; i++)
			p->cross[i] = (unsigned)v[i];
		return 0;
	case 'X':
		p->cross_rate = strtod(arg, NULL);
		return p->cross_rate > 0 ? 0 : -1;
	case 'b':
		if (cc_list(arg, v, CC_MAX_BUFS, &n, 1, 1000000) < 0)
			return -1;
		p->n_bufs = n;
		for (unsigned i = 0; i < n; i++)
			p->bufs[i] = (unsigned)v[i];
		return 0;
	case 'B':
		return cc_opt_tmpl(arg);
	case 'Q':
		return cc_opt_uint(arg, 1, 256, &p->split);
	case 'E':
		p->emulate = strcmp(arg, "off") != 0;
		return strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0 ? 0
		                                                         : -1;
	case 'd':
		return cc_opt_uint(arg, 0, 10000, &p->delay_ms);
	case 'l':
		return cc_opt_uint(arg, 0, 10000000, &p->kbit);
	case 'K':
		return cc_opt_uint(arg, 0, 64, &p->k);
	case 'P':
		p->poisson = true;
		return 0;
	case 'm':
		return cc_opt_uint(arg, 1, 600000, &p->pause_ms);
	case 's':
		if (cc_opt_uint(arg, DB_HDR_LEN, FERRY_DHT_BLOCK_MAX, &u) < 0)
			return -1;
		p->block = u;
		return 0;
	case 'w':
		p->do_collapse = strstr(arg, "collapse") != NULL;
		p->do_cross = strstr(arg, "cross") != NULL;
		return p->do_collapse || p->do_cross ? 0 : -1;
	default:
		return -1;
	}
}

/* Expands a -B text for a total buffer of buf messages: "\n" a newline,
 * %b the total, %q its share of one of -Q queues (rounded up), %B that
 * share in bytes at 256 a message (at least 16 KiB, the least the core's
 * queues take), %% a per cent sign. */
static int
cc_expand(const struct cc_opts *p, const char *t, unsigned buf, char *out,
    size_t size)
{
	unsigned q = (buf + p->split - 1) / p->split;
	size_t o = 0;
	int n;

	for (; *t != '\0'; t++) {
		char tmp[32] = { t[0], '\0' };

		if (t[0] == '\\' && t[1] == 'n') {
			tmp[0] = '\n';
			t++;
		} else if (t[0] == '%' && t[1] != '\0') {
			t++;
			if (*t == 'b')
				(void)snprintf(tmp, sizeof(tmp), "%u", buf);
			else if (*t == 'q')
				(void)snprintf(tmp, sizeof(tmp), "%u", q);
			else if (*t == 'B')
				(void)snprintf(tmp, sizeof(tmp), "%u",
				    q * 256 < 16384 ? 16384 : q * 256);
			else if (*t == '%')
				tmp[0] = '%';
			else
				return -EINVAL;
		}
		n = snprintf(out + o, size - o, "%s", tmp);
		if (n < 0 || (size_t)n >= size - o)
			return -ENOSPC;
		o += (size_t)n;
	}
	return 0;
}

/* The configuration every daemon of scheme si gets besides the
 * network's: the scheme, the table, the emulated rate, the buffer (0:
 * the scheme's default), the -c file. */
static int
cc_config(const struct cc_ctx *x, unsigned si, unsigned buf, char *out,
    size_t size)
{
	const struct cc_opts *p = &x->p;
	char b[CC_TMPL_LEN * 2] = "";
	int n;

	if (buf > 0) {
		if (p->tmpl[si][0] == '\0') {
			fprintf(stderr,
			    "bench_dht_cc: no -B %s:TEXT says what a buffer "
			    "of %u messages is for scheme %s\n",
			    p->scheme[si], buf, p->scheme[si]);
			return -EINVAL;
		}
		if (cc_expand(p, p->tmpl[si], buf, b, sizeof(b)) < 0)
			return -EINVAL;
	}
	/* CONGESTION is written for none too: a ferryd without the key
	 * ignores it (logged) and runs as none. */
	n = snprintf(out, size, "[dht]\nCONGESTION = %s\n", p->scheme[si]);
	if (n >= 0 && (size_t)n < size && p->k > 0)
		n += snprintf(out + n, size - (size_t)n, "K = %u\n", p->k);
	if (n >= 0 && (size_t)n < size && p->emulate && p->kbit > 0)
		n += snprintf(out + n, size - (size_t)n,
		    "[testing]\nENABLE = yes\nRATE = %u\n", p->kbit * 125);
	if (n >= 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, "%s\n%s\n", b,
		    x->o.extra_cfg != NULL ? x->o.extra_cfg : "");
	return n >= 0 && (size_t)n < size ? 0 : -ENOSPC;
}

static int
cc_network(struct cc_ctx *x, unsigned si, unsigned buf, struct dbnet *net)
{
	unsigned delay = x->p.emulate ? x->p.delay_ms : 0;
	char cfg[4096];
	uint64_t t0 = bench_now_ns();
	int r = cc_config(x, si, buf, cfg, sizeof(cfg));

	if (r < 0)
		return r;
	bench_log(&x->o, "starting %u daemons, scheme %s, buffer %u",
	    x->p.daemons, x->p.scheme[si], buf);
	/* With K = 1 a table waits for the one peer of a deep bucket that
	 * the others' lookups may not find in time: seen once in about 30
	 * networks (3 of 4 peers after 168 s). Another network, other ids. */
	for (unsigned t = 0; t < CC_NET_TRIES; t++) {
		r = dbnet_start(net, "bench-dhtcc", x->p.daemons, x->transport,
		    delay, cfg, CC_WAIT_MS + 100 * delay * x->p.daemons);
		if (r != -ETIMEDOUT)
			break;
		bench_log(&x->o, "the tables did not fill: another network");
	}
	if (r < 0)
		return r;
	bench_log(&x->o, "tables full after %.1f s",
	    (double)(bench_now_ns() - t0) / 1e9);
	if (strcmp(x->p.scheme[si], "none") != 0 &&
	    harness_daemon_log_has(net->d[0], "unknown key CONGESTION")) {
		fprintf(stderr,
		    "bench_dht_cc: this ferryd has no [dht] CONGESTION: "
		    "scheme %s would run as none\n",
		    x->p.scheme[si]);
		dbnet_free(net);
		return -ENOTSUP;
	}
	return 0;
}

/* A run starts on full tables: an overloaded run before may have cost
 * some their entries (dht.entries_failed), and with refreshes off they
 * do not come back, so the network is started again. */
static int
cc_fresh(struct cc_ctx *x, unsigned si, unsigned buf, struct dbnet *net)
{
	if (dbnet_tables_full(net))
		return 0;
	bench_log(&x->o, "routing tables lost entries: a new network");
	x->restarts++;
	dbnet_free(net);
	return cc_network(x, si, buf, net);
}

static void
cc_load_cfg(const struct cc_ctx *x, double rate, unsigned cross,
    struct cc_load_cfg *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->rate = rate;
	ret->lookups = x->p.lookups;
	ret->poisson = x->p.poisson;
	ret->putget = !x->p.emulate;
	ret->block = x->p.block;
	ret->cross = cross / 100.0;
	ret->pause_ms = x->p.pause_ms;
	ret->client_ms = CC_CLIENT_MS;
}

/* Experiment 1: for each scheme a network, reps sweeps of the rates. */
static int
cc_collapse(struct cc_ctx *x)
{
	struct cc_load_cfg lc;
	struct cc_run run;
	struct dbnet net;
	int r = 0;

	for (unsigned si = 0; r == 0 && si < x->p.n_schemes; si++) {
		memset(&net, 0, sizeof(net));
		r = cc_network(x, si, 0, &net);
		for (unsigned rep = 0; r == 0 && rep < x->o.reps; rep++)
			for (unsigned ri = 0; r == 0 && ri < x->p.n_rates;
			     ri++) {
				cc_load_cfg(x, x->p.rates[ri], 0, &lc);
				r = cc_fresh(x, si, 0, &net);
				if (r == 0)
					r = cc_load_run(&net, &lc, &run);
				if (r == 0)
					cc_report_run(x, si, -1, ri, rep, &run);
				harness_sleep_ms(CC_SETTLE_MS);
			}
		if (net.h != NULL)
			dbnet_free(&net);
	}
	return r;
}

/* Experiment 2: for each scheme and buffer a network, reps sweeps of
 * the cross-loads at one offered rate. */
static int
cc_crossload(struct cc_ctx *x)
{
	struct cc_load_cfg lc;
	struct cc_run run;
	struct dbnet net;
	int r = 0;

	for (unsigned si = 0; r == 0 && si < x->p.n_schemes; si++)
		for (unsigned bi = 0; r == 0 && bi < x->p.n_bufs; bi++) {
			memset(&net, 0, sizeof(net));
			r = cc_network(x, si, x->p.bufs[bi], &net);
			for (unsigned rep = 0; r == 0 && rep < x->o.reps; rep++)
				for (unsigned ci = 0;
				     r == 0 && ci < x->p.n_cross; ci++) {
					cc_load_cfg(x, x->p.cross_rate,
					    x->p.cross[ci], &lc);
					r = cc_fresh(x, si, x->p.bufs[bi],
					    &net);
					if (r == 0)
						r = cc_load_run(&net, &lc,
						    &run);
					if (r == 0)
						cc_report_run(x, si, (int)bi,
						    ci, rep, &run);
					harness_sleep_ms(CC_SETTLE_MS);
				}
			if (net.h != NULL)
				dbnet_free(&net);
		}
	return r;
}

/* The defaults of a full run: the seed's constants. */
static void
cc_defaults(struct cc_opts *p)
{
	static const double rates[] = { 15, 30, 60, 80, 100, 150, 200 };
	static const unsigned cross[] = { 0, 5, 10, 15 };

	memset(p, 0, sizeof(*p));
	p->daemons = 16;
	p->lookups = 2000;
	(void)cc_opt_schemes(p, "none");
	p->n_rates = sizeof(rates) / sizeof(rates[0]);
	memcpy(p->rates, rates, sizeof(rates));
	p->n_cross = sizeof(cross) / sizeof(cross[0]);
	memcpy(p->cross, cross, sizeof(cross));
	p->cross_rate = 100;
	p->n_bufs = 2;
	p->bufs[0] = 100;
	p->bufs[1] = 400;
	p->split = 4;
	p->emulate = true;
	p->delay_ms = 30;
	p->kbit = 1000;
	p->k = 1;
	p->pause_ms = 2000;
	p->block = 1024;
	p->do_collapse = p->do_cross = true;
}

/* What the options left open once all are read: the sweep without
 * emulation, quick counts, the -B texts by scheme. */
static void
cc_settle_opts(struct cc_ctx *x, bool rates_given, bool xrate_given)
{
	static const double cpu_rates[] = { 50, 100, 200, 400, 600, 800, 1200,
		1600 };
	struct cc_opts *p = &x->p;

	if (!p->emulate && !rates_given) {
		p->n_rates = sizeof(cpu_rates) / sizeof(cpu_rates[0]);
		memcpy(p->rates, cpu_rates, sizeof(cpu_rates));
	}
	if (!p->emulate && !xrate_given)
		p->cross_rate = 200;
	if (x->o.quick) {
		if (p->lookups == 2000)
			p->lookups = 600;
		if (x->o.reps == 5)
			x->o.reps = 2;
	}
	if (x->o.reps > CC_MAX_REPS)
		x->o.reps = CC_MAX_REPS;
	/* Today's DHT has one bounded queue per neighbour, the core's
	 * control queue of each link, in bytes. */
	for (unsigned si = 0; si < p->n_schemes; si++)
		if (strcmp(p->scheme[si], "none") == 0)
			(void)snprintf(p->tmpl[si], CC_TMPL_LEN,
			    "[core]\\nCONTROL_QUEUE_BYTES = %%B\\n");
	for (unsigned i = 0; i < cc_n_btext; i++)
		for (unsigned si = 0; si < p->n_schemes; si++)
			if (strcmp(cc_bname[i], p->scheme[si]) == 0)
				memcpy(p->tmpl[si], cc_btext[i], CC_TMPL_LEN);
}

static const char cc_usage[] =
    " [-N DAEMONS] [-L LOOKUPS] [-C SCHEMES] [-R RATES] [-x CROSS]\n"
    "       [-X RATE] [-b BUFFERS] [-B SCHEME:TEXT]... [-Q N] [-E on|off]\n"
    "       [-d MS] [-l KBIT] [-K K] [-P] [-m MS] [-s BYTES] [-w PARTS]\n"
    "  -N N      daemons (default 16; 64 for the seed's larger network)\n"
    "  -L N      requests of each peer per run (default 2000; -q: 600)\n"
    "  -C LIST   schemes, [dht] CONGESTION of each network in turn "
    "(default none;\n"
    "            none,cscc,bpcc once the schemes exist)\n"
    "  -R LIST   collapse: offered requests a second per peer (default\n"
    "            15,30,60,80,100,150,200; -E off: 50,100,200,400,600,800,"
    "\n            1200,1600)\n"
    "  -x LIST   cross: % of the time each peer is stopped (default "
    "0,5,10,15)\n"
    "  -X RATE   cross: offered requests a second per peer (default 100;"
    "\n            -E off: 200)\n"
    "  -b LIST   cross: total buffer per peer in messages (default "
    "100,400)\n"
    "  -B S:TEXT the settings a buffer is for scheme S, '\\n' between "
    "lines,\n"
    "            %b the total, %q its share of one of -Q queues, %B that "
    "share\n"
    "            x 256 bytes, >= 16384 (built in for none: "
    "[core]\\nCONTROL_QUEUE_BYTES = %B)\n"
    "  -Q N      queues a buffer is split over for %q (default 4, the "
    "seed's)\n"
    "  -E off    no link emulation: plain loopback, 50/50 PUT/GET of "
    "blocks\n"
    "  -d MS     emulated one-way delay of every peer (default 30)\n"
    "  -l KBIT   emulated sending rate of every peer, kbit/s (default "
    "1000; 0: none)\n"
    "  -K K      [dht] K, bucket size: 1 (default) keeps about log2(N) "
    "peers\n"
    "            per table, as Chord's fingers, so lookups take hops; "
    "0: the\n"
    "            daemons' default (20: one hop among 16)\n"
    "  -P        Poisson arrivals (default: evenly spaced, random phase "
    "per peer)\n"
    "  -m MS     cross: mean pause (default 2000)\n"
    "  -s BYTES  -E off: PUT block size (default 1024)\n"
    "  -w LIST   parts: collapse,cross (default both)\n"
    "  (-r REPS runs of each point, default 5, -q 2; -t the transport, "
    "default udp;\n"
    "   -c FILE more configuration for every daemon; -p is ignored)";

int
main(int argc, char **argv)
{
	static struct cc_ctx x;
	bool rates_given = false, xrate_given = false;
	struct rlimit rl;
	int r;

	cc_defaults(&x.p);
	for (int i = 1; i < argc; i++) {
		rates_given = rates_given || strcmp(argv[i], "-R") == 0;
		xrate_given = xrate_given || strcmp(argv[i], "-X") == 0;
	}
	bench_opts_parse(&x.o, argc, argv,
	    "N:L:C:R:x:X:b:B:Q:E:d:l:K:Pm:s:w:", cc_opt, &x.p, cc_usage);
	cc_settle_opts(&x, rates_given, xrate_given);
	(void)snprintf(x.transport, sizeof(x.transport), "%s",
	    strcmp(x.o.transports, "udp,tcp") == 0 ? "udp" : x.o.transports);
	/* Up to 128 connections per daemon. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	bench_env_init();
	x.load0 = db_load();
	r = cc_report_open(&x);
	if (r == 0 && x.p.do_collapse)
		r = cc_collapse(&x);
	if (r == 0 && x.p.do_cross)
		r = cc_crossload(&x);
	if (r < 0)
		fprintf(stderr, "bench_dht_cc: %s\n", strerror(-r));
	cc_report(&x);
	cc_report_close(&x);
	return r < 0 ? 1 : 0;
}
