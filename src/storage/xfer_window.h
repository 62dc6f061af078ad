/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * How many blocks a transfer keeps in flight, and when a slow one is
 * asked again, storage layer (issue 13, "Transfers"). The window grows
 * by itself from XFER_WINDOW_START to the cap: doubling per round trip
 * (one more per block answered) until the first failure, then one more
 * per round trip; it halves on a failure (a timeout, a refusal, fewer
 * receipts than asked), once per round trip (AIMD, as TCP Reno). Latency
 * alone does not cut it: a DHT's blocks come from many peers, and one
 * slow peer among fast ones (a latency that is high, not climbing)
 * would otherwise hold every transfer back to a few blocks in flight.
 * The latency estimate is RFC 6298's, and a block still unanswered after
 * srtt + 4 rttvar (at least XFER_HEDGE_MIN_US) is asked again. Pure: no
 * clock of its own, no I/O.
 */
#ifndef FERRY_STORAGE_XFER_WINDOW_H
#define FERRY_STORAGE_XFER_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#define XFER_WINDOW_START  4u
#define XFER_HEDGE_MIN_US  (200u * 1000)  /* never ask again sooner */
#define XFER_HEDGE_INIT_US (2000u * 1000) /* before any latency is known */

struct xfer_window {
	double w;         /* blocks that may be in flight */
	double ssthresh;  /* doubling stops here */
	unsigned cap;     /* [storage] MAX_IN_FLIGHT */
	uint64_t srtt_us; /* smoothed latency, 0 before the first */
	uint64_t rttvar_us;
	uint64_t min_us; /* least latency seen */
	uint64_t cut_us; /* when the window was last cut */
};

/* A window starting at XFER_WINDOW_START (or cap, if smaller). */
void xfer_window_init(struct xfer_window *w, unsigned cap);
/* Blocks that may be in flight now: 1 to cap. */
unsigned xfer_window_allowed(const struct xfer_window *w);
/* A block was answered after lat_us, at now_us. */
void xfer_window_ok(struct xfer_window *w, uint64_t lat_us, uint64_t now_us);
/* A block failed (timeout, refusal, too few receipts), at now_us; cut
 * at most once per round trip. */
void xfer_window_fail(struct xfer_window *w, uint64_t now_us);
/* How long to wait for a block before asking again. */
uint64_t xfer_window_hedge_us(const struct xfer_window *w);

#endif /* FERRY_STORAGE_XFER_WINDOW_H */
