/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The raw baselines every benchmark measures in the same run: two plain
 * processes on loopback, no ferry in between (issue 4: "each measures its
 * raw baseline in the same run, so the result is a ratio"). The calling
 * process is side A; a forked child is side B, placed on
 * bench_side_cpu(place, 1). The caller places itself.
 */
#ifndef FERRY_BENCH_RAW_H
#define FERRY_BENCH_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

enum raw_proto { RAW_UDP, RAW_TCP };

/* One-way flow of messages from A to B. */
struct raw_flow {
	uint64_t sent;        /* messages A sent */
	uint64_t received;    /* messages B got */
	uint64_t bytes;       /* payload bytes B got */
	uint64_t start_ns;    /* A's first send */
	uint64_t send_end_ns; /* A's last send returned */
	uint64_t last_ns;     /* B's last arrival */
	uint64_t *arrival_ns; /* per message received, shared (may be NULL) */
};

/*
 * count sequential round trips of size bytes, message i+1 sent when the
 * echo of message i is back, after warmup untimed ones. UDP: one
 * datagram each way; TCP: one connection, TCP_NODELAY on both ends.
 * *ret_ns gets the time of the count timed ones. 0 or a negative errno
 * (-ETIMEDOUT: a datagram was lost).
 */
int raw_pingpong(enum raw_proto proto, size_t size, unsigned count,
    unsigned warmup, enum bench_place place, uint64_t *ret_ns);

/*
 * Like raw_pingpong, through four processes shaped like the whole ferry
 * stack: A1 (this process) -> A2 over a UNIX stream socket, A2 -> B2 over
 * UDP or TCP, B2 -> B1 over a UNIX socket, and the echo back the same
 * way; A1 and A2 on side A's CPU, B1 and B2 on side B's. It measures what
 * the platform charges for the stack's shape (six process hand-overs per
 * round trip instead of two) with no ferry code in it.
 */
int raw_chain(enum raw_proto proto, size_t size, unsigned count,
    unsigned warmup, enum bench_place place, uint64_t *ret_ns);

/*
 * A sends count datagrams of size bytes to B as fast as send() goes, one
 * message each; B receives with recv() until it has them all or drain_ms
 * passed after A finished. arrival may hold count entries for B's arrival
 * times (shared memory, bench_shared()), or be NULL. sockbuf sets both
 * sockets' SO_RCVBUF and SO_SNDBUF (forced past the system maximum when
 * allowed, as ferry's UDP transport does); 0 keeps the system default.
 */
int raw_udp_blast(size_t size, uint64_t count, unsigned drain_ms,
    size_t sockbuf, enum bench_place place, uint64_t *arrival,
    struct raw_flow *ret);

/*
 * A writes count messages of size bytes into one TCP connection, one
 * write() each (blocking); B reads in 256 KiB pieces until all bytes are
 * there. received counts whole messages.
 */
int raw_tcp_stream(size_t size, uint64_t count, enum bench_place place,
    struct raw_flow *ret);

#endif /* FERRY_BENCH_RAW_H */
