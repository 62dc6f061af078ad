/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One-way message flows through a daemon pair, for the throughput and
 * latency benchmarks (and bench_smtp's throughput over mail): a receiving
 * client on daemon B in a child process that notes every arrival, and the
 * sending client on daemon A in the calling process, timed from the first
 * ferry_send() to the last arrival.
 */
#ifndef FERRY_BENCH_FLOW_H
#define FERRY_BENCH_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench.h"

/* flow_new's cpu: leave the receiver on the caller's CPUs. */
#define FLOW_CPU_KEEP (-2)
/* A receiver's life at most, whatever happens: what the loopback
 * benchmarks give flow_new. */
#define FLOW_MAX_NS   (900ull * 1000000000u)

/* What a flow measured. */
struct flow_result {
	uint64_t count;             /* messages to send */
	uint64_t sent;              /* ferry_send() took */
	bool cut;                   /* flow_send's time limit stopped it */
	uint64_t received;          /* distinct messages that arrived intact */
	uint64_t bytes;             /* their payload bytes */
	uint64_t bad;               /* wrong size or index, or duplicates */
	uint64_t start_ns;          /* before the first ferry_send() */
	uint64_t send_end_ns;       /* ferry_flush() returned after the last */
	uint64_t first_ns;          /* first arrival */
	uint64_t last_ns;           /* last arrival */
	uint64_t recv_cpu_ns;       /* CPU time the receiving client used */
	const uint64_t *arrival_ns; /* per arrival, valid until flow_free */
};

struct flow;

/*
 * Starts the receiver: a child on cpu (a CPU, BENCH_CPU_ANY or
 * FLOW_CPU_KEEP) that connects to d (daemon B), registers for
 * BENCH_APP_TYPE and waits for up to count messages of size bytes. It
 * stops when it has them all, drain_ms after the sender reported it was
 * done, or max_ns after it started. 0 or a negative errno.
 */
int flow_new(const struct harness_daemon *d, int cpu, size_t size,
    uint64_t count, unsigned drain_ms, uint64_t max_ns, struct flow **ret);
/*
 * Sends the count messages through c (a client of daemon A) to peer as
 * fast as ferry_send() accepts them, then waits for the receiver and
 * fills *ret. Each message carries its index in its first 4 bytes.
 */
int flow_run(struct flow *f, struct ferry_client *c,
    const struct ferry_peer_id *peer, struct flow_result *ret);
/*
 * flow_run in two steps, for a sender with a time limit (a flow over
 * mail that crawls still ends and says how far it got) or one that must
 * act before the receiver drains. flow_send sends as flow_run does, but
 * with deadline_ns (bench_now_ns(); 0: none) stops handing messages to
 * ferry_send() once that has passed or a send timed out (the client's
 * timeout), and sets ret->cut: 0 then, else a negative errno as
 * flow_run's. flow_wait waits for the receiver and fills the rest of
 * *ret: 0, or a negative errno if the receiver failed.
 */
int flow_send(struct flow *f, struct ferry_client *c,
    const struct ferry_peer_id *peer, uint64_t deadline_ns,
    struct flow_result *ret);
int flow_wait(struct flow *f, struct flow_result *ret);
/* Kills the receiver if it still runs and frees everything. NULL ok. */
void flow_free(struct flow *f);

/* Samples a received-over-time curve from arrival times (a flow's, or
 * NULL) into points + 1 rows of ret: ms since start_ns, and the fraction
 * of count that had arrived; ms is NaN in every row if none did. */
void flow_series(const uint64_t *arrival_ns, uint64_t received, uint64_t count,
    uint64_t start_ns, unsigned points, double (*ret)[2]);

/* Seconds between two clock readings. */
static inline double
flow_seconds(uint64_t from_ns, uint64_t to_ns)
{
	return to_ns > from_ns ? (double)(to_ns - from_ns) / 1e9 : 0;
}

#endif /* FERRY_BENCH_FLOW_H */
