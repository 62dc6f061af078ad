/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A delaying TCP relay for benchmarks and tests: it listens on a loopback
 * port and forwards each accepted connection to a target, every byte
 * arriving a fixed one-way delay after it was sent, in both directions,
 * so that one path (a thin client's to its intermediary, issue 15) has a
 * long round-trip time while everything else stays on plain loopback.
 * The kernel has no netem here, hence a relay.
 *
 * A relay splits the TCP connection in two, which by itself would hide
 * what a long path costs TCP: the client's kernel sees a loopback round
 * trip and sends everything at once. So that the emulated path costs
 * what a real one does, the relay also plays that path's sender window
 * and handshake:
 *  - each direction may have at most a window of bytes in flight (taken
 *    from one side, not yet acknowledged by the emulated other end, which
 *    happens one round trip after they were taken). The window starts at
 *    ten segments of 1448 bytes and grows by the bytes acknowledged, as
 *    TCP's slow start without loss (RFC 5681), up to a cap of 4 MiB;
 *  - it restarts from ten segments after an idle round trip, as Linux
 *    does (RFC 5681 4.1), so that a reused connection pays for its idle
 *    time;
 *  - the first bytes of a connection wait one round trip more, the
 *    SYN/SYN-ACK exchange the loopback connect() did not pay.
 * It runs in its own thread; a relay with delay 0 forwards at once.
 */
#ifndef FERRY_TESTS_DELAYRELAY_H
#define FERRY_TESTS_DELAYRELAY_H

#include <netinet/in.h>
#include <stdint.h>

struct delayrelay;

/* Starts a relay on 127.0.0.1 at a port of the kernel's choice toward
 * target (copied), delaying each direction by one_way_us. 0 or a
 * negative errno. */
int delayrelay_new(const struct sockaddr_in *target, uint64_t one_way_us,
    struct delayrelay **ret);
/* The port it listens on. */
uint16_t delayrelay_port(const struct delayrelay *r);
/* Connections it accepted so far. */
unsigned delayrelay_accepted(struct delayrelay *r);
/* Stops the thread, closes every connection, frees. NULL is allowed. */
void delayrelay_free(struct delayrelay *r);

#endif /* FERRY_TESTS_DELAYRELAY_H */
