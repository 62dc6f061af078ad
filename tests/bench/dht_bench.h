/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What bench_dht's parts share (issue 12, "Benchmark"): a network of real
 * ferryd processes running the DHT, each on its own 127.0.0.N, with the
 * core's links left to the DHT as in tests/integration/test_dht.c; the
 * DHT counters summed over it; blocks of unique bytes; and the two kinds
 * of load: one request at a time (latency, dht_lat.c) and many in flight
 * from one client process (throughput, dht_tput.c). Beside the network,
 * "leaves": daemons that take one link only ([core] MAX_PEERS = 1), to
 * one member, so that the peers that answer their requests cannot link
 * to them and answer back along the path (issue 12: "measure both").
 */
#ifndef FERRY_BENCH_DHT_BENCH_H
#define FERRY_BENCH_DHT_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ferry/client.h>

#include "bench.h"

#define DB_MAX_DAEMONS  64
#define DB_MAX_JOBS     64 /* a connection each: threads of one client */
#define DB_HDR_LEN      16 /* a throughput block's unique header */
#define DB_MAX_LEAVES   16
#define DB_HOP_CLASSES  3 /* requests of 0, 1, and 2 or more hops */
/* The classes of requests reported: by lookup length (0, 1, 2+), and by
 * the way their answers came, straight from the peer that gave them or
 * through others (the origin's dht.answers_in_direct/_routed). */
#define DB_CLASS_DIRECT (DB_HOP_CLASSES)
#define DB_CLASS_ROUTED (DB_HOP_CLASSES + 1)
#define DB_CLASSES      (DB_HOP_CLASSES + 2)

/* How a request's answers came to its origin. */
enum db_path {
	DB_PATH_UNKNOWN = -1,
	DB_PATH_LOCAL,  /* from the origin itself, no answer over a link */
	DB_PATH_DIRECT, /* all straight from the peers that gave them */
	DB_PATH_ROUTED, /* at least one through another peer */
};

/* The daemons of one network. */
struct dbnet {
	struct harness *h;
	struct harness_daemon *d[DB_MAX_DAEMONS];
	unsigned n;
	unsigned delay_ms; /* [testing] DELAY on every daemon; 0: none */
	struct harness_daemon *leaf[DB_MAX_LEAVES]; /* running, or NULL */
	unsigned n_leaves;
	unsigned entry[DB_MAX_LEAVES]; /* the member each leaf links to */
};

/* The DHT counters of a network, summed over its daemons (or of one). */
struct dbnet_counts {
	uint64_t completed;    /* dht.completed: our requests that ended well */
	uint64_t hops;         /* dht.hops_total: their hops */
	uint64_t requests_out; /* dht.requests_out */
	uint64_t timeouts;     /* dht.timeouts */
	uint64_t retries;      /* dht.retries */
	uint64_t rate_limited; /* dht.rate_limited */
	uint64_t no_route;     /* dht.no_route */
	uint64_t direct;       /* dht.answers_direct */
	uint64_t routed;       /* dht.answers_routed */
	uint64_t stored;       /* dht.stored */
	uint64_t store_failed; /* dht.store_fails */
	uint64_t answers_lost; /* dht.answers_lost */
	uint64_t frames_lost;  /* core.frames_lost */
	uint64_t cpu_ns;       /* CPU time of the daemons */
};

/*
 * Starts n daemons (1: a daemon alone, whose DHT stores every PUT
 * itself) on transport (each on its own 127.0.0.N; the first
 * alone, the others with its HELO as bootstrap) with the DHT choosing
 * their links, delay_ms of emulated one-way delay on every daemon's
 * units (0: none) and extra configuration text (may be NULL), and waits
 * up to wait_ms until every routing table holds every other daemon.
 * Then turns the tables' refresh lookups off (a reload), so that the
 * DHT counters count the benchmark's requests only. 0 or a negative
 * errno (logs dumped).
 */
int dbnet_start(struct dbnet *net, const char *name, unsigned n,
    const char *transport, unsigned delay_ms, const char *extra,
    unsigned wait_ms);
/* Adds n leaves (at most DB_MAX_LEAVES), the i-th linked to member
 * i * net->n / n only, and waits until each has its link; with their
 * refresh lookups off, as the members'. 0 or a negative errno. */
int dbnet_add_leaves(struct dbnet *net, unsigned n, const char *transport,
    const char *extra);
/* Stops the leaves (the members' tables keep them, unlinked). */
void dbnet_stop_leaves(struct dbnet *net);
/* Stops the daemons and removes their directories. */
void dbnet_free(struct dbnet *net);
/* True if every routing table holds every daemon its buckets have room
 * for, as dbnet_start() left them (a table loses entries that fail to
 * answer, under overload too). */
bool dbnet_tables_full(const struct dbnet *net);
/* Peers in d's routing table, or 0 if it does not answer. */
uint32_t dbnet_table_size(const struct harness_daemon *d);
/* Blocks d stores, or 0 if it does not answer. */
uint64_t dbnet_blocks(const struct harness_daemon *d);
/* The counters of daemon i (i < 0: summed over all). 0 or -errno. */
int dbnet_counts(const struct dbnet *net, int i, struct dbnet_counts *ret);
/* after - before, field by field. */
void dbnet_counts_sub(const struct dbnet_counts *after,
    const struct dbnet_counts *before, struct dbnet_counts *ret);
/* Mean hops of the requests counted: hops / completed (NaN if none). */
double dbnet_mean_hops(const struct dbnet_counts *delta);

/* The one-minute load average now. */
double db_load(void);

/* Fills buf with len bytes that only (seed, idx) gives. */
void db_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t idx);
/* A random seed for a run. */
uint64_t db_seed(void);
/* The value at fraction q (0.5, 0.99) of v[0..n), nearest rank; sorts v.
 * NaN if n is 0. */
double db_quantile(double *v, size_t n, double q);

/* One timed request of the latency part. */
struct db_op {
	unsigned origin;   /* daemon whose client asked (a leaf's index for a
			  * leaf's request) */
	double ms;         /* from the call to its return */
	int status;        /* 0 or the negative errno it returned */
	int hops;          /* its lookup length (origin's dht.hops_total
			  * before and after), -1 if unknown */
	enum db_path path; /* how its answers came */
};

/* The requests of one lookup length in a run. */
struct db_lat_class {
	unsigned n;      /* successful requests of that many hops */
	double p50, p99; /* ms */
	double hops;     /* their mean hops */
};

/* The phases of a latency run: the members' PUTs, their GETs, and the
 * leaves' GETs of the same blocks. */
enum db_lat_op { DB_OP_PUT, DB_OP_GET, DB_OP_LGET, DB_OPS };

/* One phase of a latency run. */
struct db_lat_phase {
	double p50, p99; /* ms, successful requests */
	double hops;     /* mean lookup length: of the requests' own, else
			  * from the network's counters */
	unsigned fail;
	unsigned n; /* requests made (0: the phase did not run) */
	struct db_lat_class cls[DB_CLASSES]; /* by class (DB_CLASS_*) */
	struct dbnet_counts c;               /* the members' counter deltas */
};

/* What one latency run measured for one block size. */
struct db_lat_run {
	struct db_lat_phase op[DB_OPS];
	double p2g_p50; /* a block's PUT plus its GET, median */
};

/*
 * A latency run: n PUTs of size-byte blocks of unique bytes, one at a
 * time, from daemon j % N for the j-th (replication: the count each PUT
 * asks for; 0 the daemons' default), then a GET of each from another
 * daemon, one at a time, then, with leaves, a GET of each from a leaf.
 * With leaves, a block's bytes are drawn until no leaf is among the
 * replication + 2 ids closest to its key (the members then neither store
 * it on a leaf nor route to one) and the leaf that GETs it has its one
 * neighbour closer to the key than itself (else its GET ends at once, at
 * itself). Each request's hops are the difference of its origin's
 * dht.hops_total around it (refresh lookups are off, so the request is
 * the origin's only one), its answers' way the same of its
 * dht.answers_in_direct and _routed. Fills *ret; every request goes to
 * ops_csv (may be NULL) as a row "tag,op,j,origin,hops,path,ms,status".
 * 0 or a negative errno when the run could not be made (a failed request
 * is counted, not an error).
 */
int db_latency_run(const struct dbnet *net, size_t size, unsigned n,
    unsigned replication, FILE *ops_csv, const char *tag,
    struct db_lat_run *ret);

/* What one throughput phase measured. */
struct db_tput_run {
	uint64_t ok;     /* requests that succeeded */
	uint64_t failed; /* and the others */
	int first_error; /* the first failure's status */
	double secs;     /* from the start of the first to the last end */
	double blocks_s; /* ok / secs */
	double mb_s;     /* ok * size / secs / 10^6: unique data */
	double p50_ms;   /* per request, under this load */
	double p99_ms;
	double cpu;  /* CPU used by daemons and client / (CPUs x secs) */
	double load; /* the load average after it */
	struct dbnet_counts c; /* the network's counter deltas */
};

/* The keys of a throughput phase's blocks, for the GETs after it. */
struct db_keys {
	struct ferry_dht_key *k; /* n of them */
	uint8_t *ok;             /* whether block i was stored */
	uint64_t n;
};

/*
 * A throughput phase through daemon entry: count requests kept jobs in
 * flight, from jobs threads of this process with a connection each
 * (libferry is blocking, one request at a time per connection). With
 * get false, PUTs of count size-byte blocks (a unique 16-byte header on
 * shared random bytes) asking replication storers each, whose keys go
 * to keys (allocated here; free with db_keys_free); with get true,
 * GETs of the blocks of keys that were stored (the others are not
 * asked for, and counted as failed). 0 or a negative errno when the
 * phase could not run.
 */
int db_tput_run(const struct dbnet *net, unsigned entry, size_t size,
    uint64_t count, unsigned replication, unsigned jobs, bool get,
    struct db_keys *keys, struct db_tput_run *ret);
void db_keys_free(struct db_keys *keys);

#endif /* FERRY_BENCH_DHT_BENCH_H */
