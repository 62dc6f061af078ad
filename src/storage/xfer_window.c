/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The adaptive window and the latency estimate (see xfer_window.h),
 * storage layer. */
#include "storage/xfer_window.h"

void
xfer_window_init(struct xfer_window *w, unsigned cap)
{
	w->cap = cap > 0 ? cap : 1;
	w->w = XFER_WINDOW_START < w->cap ? XFER_WINDOW_START : w->cap;
	w->srtt_us = 0;
	w->rttvar_us = 0;
	w->cut_us = 0;
	w->epoch_us = 0;
	w->done = 0;
	w->best_rate = 0;
	w->best_w = w->w;
	w->starting = true;
}

unsigned
xfer_window_allowed(const struct xfer_window *w)
{
	unsigned n = (unsigned)w->w;

	return n < 1 ? 1 : n > w->cap ? w->cap : n;
}

static void
xfer_window_set(struct xfer_window *w, double v)
{
	w->w = v < 1 ? 1 : v > w->cap ? w->cap : v;
}

/* An epoch ended at now_us: judge the window by what it delivered. */
static void
xfer_window_epoch(struct xfer_window *w, uint64_t now_us)
{
	double rate = (double)w->done * 1e6 / (double)(now_us - w->epoch_us);

	if (rate > w->best_rate * XFER_GAIN) {
		/* More delivered than any window lately: this one is the
		 * best, and a larger one is tried. */
		w->best_rate = rate;
		w->best_w = w->w;
		/* Doubling until the first window that did not pay (a far
		 * network wants many in flight soon), then by half. */
		xfer_window_set(w,
		    w->starting ? 2 * w->w
		                : w->w + (w->w / 2 > 1 ? w->w / 2 : 1));
	} else if (w->w > w->best_w) {
		/* Larger and no better: what it adds only waits in queues
		 * (or slows a busy machine). Back to the best. */
		xfer_window_set(w, w->best_w);
		w->starting = false;
	} else {
		/* At the best: it fades, so that a larger window is tried
		 * again before long, and a smaller one after a failure. */
		w->best_rate *= XFER_FADE;
		if (rate > w->best_rate)
			w->best_rate = rate;
	}
	w->epoch_us = now_us;
	w->done = 0;
}

void
xfer_window_ok(struct xfer_window *w, uint64_t lat_us, uint64_t now_us)
{
	uint64_t err, len;

	if (lat_us == 0)
		lat_us = 1;
	/* RFC 6298, section 2 */
	if (w->srtt_us == 0) {
		w->srtt_us = lat_us;
		w->rttvar_us = lat_us / 2;
	} else {
		err = lat_us > w->srtt_us ? lat_us - w->srtt_us
		                          : w->srtt_us - lat_us;
		w->rttvar_us = (3 * w->rttvar_us + err) / 4;
		w->srtt_us = (7 * w->srtt_us + lat_us) / 8;
	}
	if (w->epoch_us == 0 || now_us < w->epoch_us) {
		w->epoch_us = now_us;
		w->done = 0;
		return;
	}
	w->done++;
	len = 2 * w->srtt_us > XFER_EPOCH_MIN_US ? 2 * w->srtt_us
	                                         : XFER_EPOCH_MIN_US;
	if (now_us - w->epoch_us >= len && w->done >= (unsigned)w->w)
		xfer_window_epoch(w, now_us);
}

void
xfer_window_fail(struct xfer_window *w, uint64_t now_us)
{
	uint64_t rtt = w->srtt_us > 0 ? w->srtt_us : XFER_HEDGE_INIT_US;

	if (w->cut_us != 0 && now_us - w->cut_us < rtt)
		return;
	w->cut_us = now_us;
	xfer_window_set(w, w->w / 2);
	w->starting = false;
	/* What the old window delivered says nothing of the new one: its
	 * rate is measured afresh, and larger ones tried again if they
	 * pay. */
	w->best_w = w->w;
	w->best_rate = 0;
	w->epoch_us = now_us;
	w->done = 0;
}

uint64_t
xfer_window_hedge_us(const struct xfer_window *w)
{
	uint64_t d;

	if (w->srtt_us == 0)
		return XFER_HEDGE_INIT_US;
	d = w->srtt_us + 4 * w->rttvar_us;
	return d < XFER_HEDGE_MIN_US ? XFER_HEDGE_MIN_US : d;
}
