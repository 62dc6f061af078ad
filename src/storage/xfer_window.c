/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The adaptive window and the latency estimate (see xfer_window.h),
 * storage layer. */
#include "storage/xfer_window.h"

void
xfer_window_init(struct xfer_window *w, unsigned cap)
{
	w->cap = cap > 0 ? cap : 1;
	w->w = XFER_WINDOW_START < w->cap ? XFER_WINDOW_START : w->cap;
	w->ssthresh = w->cap;
	w->srtt_us = 0;
	w->rttvar_us = 0;
	w->min_us = 0;
	w->cut_us = 0;
}

unsigned
xfer_window_allowed(const struct xfer_window *w)
{
	unsigned n = (unsigned)w->w;

	return n < 1 ? 1 : n > w->cap ? w->cap : n;
}

/* Cuts the window to factor of itself, once per round trip. */
static void
xfer_window_cut(struct xfer_window *w, double factor, uint64_t now_us)
{
	uint64_t rtt = w->srtt_us > 0 ? w->srtt_us : XFER_HEDGE_INIT_US;

	if (w->cut_us != 0 && now_us - w->cut_us < rtt)
		return;
	w->cut_us = now_us;
	w->w *= factor;
	if (w->w < 1)
		w->w = 1;
	w->ssthresh = w->w;
}

void
xfer_window_ok(struct xfer_window *w, uint64_t lat_us, uint64_t now_us)
{
	uint64_t err;

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
	if (w->min_us == 0 || lat_us < w->min_us)
		w->min_us = lat_us;
	(void)now_us;
	if (w->w < w->ssthresh)
		w->w += 1;
	else
		w->w += 1 / w->w;
	if (w->w > w->cap)
		w->w = w->cap;
}

void
xfer_window_fail(struct xfer_window *w, uint64_t now_us)
{
	xfer_window_cut(w, 0.5, now_us);
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
