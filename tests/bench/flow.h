/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One-way message flows through a daemon pair, for the throughput and
 * latency benchmarks: a receiving client on daemon B in a child process
 * that notes every arrival, and the sending client on daemon A in the
 * calling process, timed from the first ferry_send() to the last arrival.
 */
#ifndef FERRY_BENCH_FLOW_H
#define FERRY_BENCH_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench.h"

/* What a flow measured. */
struct flow_result {
	uint64_t count;             /* messages sent */
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
 * Starts the receiver: a child on cpu that connects to d (daemon B),
 * registers for BENCH_APP_TYPE and waits for up to count messages of
 * size bytes. It stops when it has them all, or drain_ms after the
 * sender reported it was done. 0 or a negative errno.
 */
int flow_new(const struct harness_daemon *d, int cpu, size_t size,
    uint64_t count, unsigned drain_ms, struct flow **ret);
/*
 * Sends the count messages through c (a client of daemon A) to peer as
 * fast as ferry_send() accepts them, then waits for the receiver and
 * fills *ret. Each message carries its index in its first 4 bytes.
 */
int flow_run(struct flow *f, struct ferry_client *c,
    const struct ferry_peer_id *peer, struct flow_result *ret);
/* Kills the receiver if it still runs and frees everything. NULL ok. */
void flow_free(struct flow *f);

/* Seconds between two clock readings. */
static inline double
flow_seconds(uint64_t from_ns, uint64_t to_ns)
{
	return to_ns > from_ns ? (double)(to_ns - from_ns) / 1e9 : 0;
}

#endif /* FERRY_BENCH_FLOW_H */
