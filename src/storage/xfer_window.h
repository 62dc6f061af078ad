/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * How many blocks a transfer keeps in flight, and when a slow one is
 * asked again, storage layer (issue 13, "Transfers").
 *
 * The window follows the rate it delivers, not a latency target: in each
 * epoch (at least XFER_EPOCH_MIN_US and two round trips, and a window's
 * blocks) it counts the blocks done. While a larger window delivers more
 * (by XFER_GAIN), it grows: doubling until the first larger window that
 * does not pay or the first failure, by half after that; when a larger one
 * delivers no more than the best window did, it goes back to that one;
 * at the best it holds, and the best rate it remembers fades a little
 * each epoch, so that it probes upwards again now and then. A failure (a timeout, a
 * refusal, too few receipts) halves it, once per round trip. Neither a
 * latency that is merely high (one slow peer among fast ones: more in
 * flight still delivers more) nor one that climbs (queues filling: more
 * in flight delivers no more) misleads it, and a CPU-bound machine, where
 * more blocks in flight only slow every daemon down, finds its best
 * window by itself (measured: tests/integration/test_storage_large.c).
 *
 * The latency estimate is RFC 6298's, and a block still unanswered after
 * srtt + 4 rttvar (at least XFER_HEDGE_MIN_US) is asked again. Pure: no
 * clock of its own, no I/O.
 */
#ifndef FERRY_STORAGE_XFER_WINDOW_H
#define FERRY_STORAGE_XFER_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#define XFER_WINDOW_START  4u
#define XFER_EPOCH_MIN_US  (200u * 1000)  /* rate measured over at least */
#define XFER_GAIN          1.05           /* "delivers more": by 5 % */
#define XFER_FADE          0.98           /* the best rate, per epoch */
#define XFER_HEDGE_MIN_US  (200u * 1000)  /* never ask again sooner */
#define XFER_HEDGE_INIT_US (2000u * 1000) /* before any latency is known */

struct xfer_window {
	double w;         /* blocks that may be in flight */
	unsigned cap;     /* [storage] MAX_IN_FLIGHT */
	uint64_t srtt_us; /* smoothed latency, 0 before the first */
	uint64_t rttvar_us;
	uint64_t cut_us;   /* when the window was last cut */
	uint64_t epoch_us; /* when this epoch began, 0 none yet */
	unsigned done;     /* blocks done in it */
	double best_rate;  /* blocks/s of the best window lately */
	double best_w;     /* that window */
	bool starting;     /* no window has failed to pay yet: doubling */
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
