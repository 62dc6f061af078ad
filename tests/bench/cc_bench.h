/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What bench_dht_cc's parts share (issue 14, "The experiments"; seed 002,
 * section 3, Fig. 4 and 5): a DHT of real daemons (dht_net.c) with each
 * peer's link emulated as the seed's (1 Mbit/s, 30 ms, no loss) and a
 * congestion scheme ([dht] CONGESTION), an open-loop load of lookups
 * from every peer at an offered rate through libferry's asynchronous
 * requests (cc_load.c), peers that pause routing (SIGSTOP) for a
 * fraction of the time, and the report (cc_report.c).
 */
#ifndef FERRY_BENCH_CC_BENCH_H
#define FERRY_BENCH_CC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dht_bench.h"

#define CC_MAX_SCHEMES  4
#define CC_SCHEME_LEN   16
#define CC_MAX_RATES    16
#define CC_MAX_CROSS    8
#define CC_MAX_BUFS     4
#define CC_MAX_REPS     25
#define CC_MAX_COUNTERS 160 /* distinct dht.* counters kept per run */
#define CC_CTR_NAME     48

/* One point of a run: the counters of the network summed, by name. */
struct cc_ctrs {
	char name[CC_MAX_COUNTERS][CC_CTR_NAME];
	uint64_t value[CC_MAX_COUNTERS];
	unsigned n;
};

/* What the load of one run is. */
struct cc_load_cfg {
	double rate;        /* offered lookups a second per peer */
	unsigned lookups;   /* per peer */
	bool poisson;       /* exponential gaps, else evenly spaced */
	bool putget;        /* 50/50 PUT/GET of blocks, else FINDs */
	size_t block;       /* PUT size with putget */
	double cross;       /* fraction of the time each peer is paused */
	unsigned pause_ms;  /* mean pause */
	unsigned client_ms; /* client timeout: requests end by this + 5 s */
};

/* What one run measured. */
struct cc_run {
	bool done;
	uint64_t issued;   /* requests due (lookups x peers) */
	uint64_t ok;       /* that ended well */
	uint64_t refused;  /* none sent: every connection had 64 in flight */
	uint64_t timeouts; /* -ETIMEDOUT, from the daemon or libferry */
	uint64_t no_route; /* -EHOSTUNREACH (today: a full next-hop queue) */
	uint64_t other;    /* any other failure */
	int first_other;   /* its status */
	double window_s;   /* from the first due time to the last */
	double span_s;     /* from the first due time to the last success */
	double tput;       /* ok / span / peers: lookups/s per peer */
	double tput_win;   /* the same of those that ended while the load
			    * was offered, over its time: the rate under
			    * load, without the answers that came after */
	double offered;    /* issued / window / peers */
	double success;    /* ok / issued */
	double p50_ms;     /* from a request's due time to its end */
	double p99_ms;
	double retx_pct;    /* retransmission counters / issued x 100 */
	double paused_pct;  /* time the peers were stopped, measured */
	double late_ms;     /* the most a request was sent after its due
			    * time (the load generator falling behind) */
	double cpu;         /* daemons' CPU / (CPUs x span) */
	double load;        /* load average after */
	struct cc_ctrs ctr; /* deltas of the run */
};

/* Sums the counters dht.* and core.emu_dropped, core.frames_lost over
 * the network. 0 or a negative errno. */
int cc_ctrs_get(const struct dbnet *net, struct cc_ctrs *ret);
/* after - before into ret (names of after). */
void cc_ctrs_sub(const struct cc_ctrs *after, const struct cc_ctrs *before,
    struct cc_ctrs *ret);
/* A counter's value, 0 if absent. */
uint64_t cc_ctr(const struct cc_ctrs *c, const char *name);
/* The retransmissions the counters tell of: dht.retries (today's DHT
 * tries a request again through another neighbour) and every counter
 * whose name holds "retrans" (the schemes'). */
uint64_t cc_ctr_retx(const struct cc_ctrs *c);

/*
 * One run on net: every daemon's lookups issued open-loop at cfg->rate
 * (each request at its due time, whatever the others do, on one of
 * enough client connections of the daemon to keep them in flight),
 * with the daemons paused at random (cfg->cross), until every request
 * has ended. 0 or a negative errno when the run could not be made
 * (failed requests are counted, not errors).
 */
int cc_load_run(const struct dbnet *net, const struct cc_load_cfg *cfg,
    struct cc_run *ret);

#endif /* FERRY_BENCH_CC_BENCH_H */
