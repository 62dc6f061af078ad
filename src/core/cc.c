/* SPDX-License-Identifier: GPL-3.0-or-later */
/* NewReno in bytes with RFC 9002 loss and RTT rules (see cc.h). */
#include "core/cc.h"

#include <string.h>

#define CC_INITIAL_RTT_US 100000 /* before the first sample */
#define CC_MIN_WINDOW(c) (2 * (c)->mss)

void
cc_init(struct cc *c, uint64_t initial_window, uint64_t mss,
    uint64_t peer_rwnd, uint64_t max_ack_delay_us)
{
	memset(c, 0, sizeof(*c));
	c->mss = mss;
	c->max_ack_delay_us = max_ack_delay_us;
	c->initial = initial_window;
	c->cwnd = initial_window > CC_MIN_WINDOW(c) ? initial_window
						   : CC_MIN_WINDOW(c);
	c->ssthresh = UINT64_MAX;
	c->peer_rwnd = peer_rwnd;
}

uint64_t
cc_room(const struct cc *c, uint64_t bytes_in_flight)
{
	uint64_t limit = c->cwnd < c->peer_rwnd ? c->cwnd : c->peer_rwnd;

	return bytes_in_flight < limit ? limit - bytes_in_flight : 0;
}

void
cc_on_rtt(struct cc *c, uint64_t rtt_us, uint64_t ack_delay_us)
{
	uint64_t adjusted = rtt_us;

	c->latest_rtt_us = rtt_us;
	c->pto_count = 0;
	if (!c->have_rtt) {
		c->have_rtt = true;
		c->min_rtt_us = rtt_us;
		c->srtt_us = rtt_us;
		c->rttvar_us = rtt_us / 2;
		return;
	}
	if (rtt_us < c->min_rtt_us)
		c->min_rtt_us = rtt_us;
	/* The receiver's own delay is not path delay, but never take away
	 * more than makes the sample fall below the minimum seen. */
	if (ack_delay_us > c->max_ack_delay_us)
		ack_delay_us = c->max_ack_delay_us;
	if (adjusted >= c->min_rtt_us + ack_delay_us)
		adjusted -= ack_delay_us;
	c->rttvar_us = (3 * c->rttvar_us +
			   (c->srtt_us > adjusted ? c->srtt_us - adjusted
						  : adjusted - c->srtt_us)) /
	    4;
	c->srtt_us = (7 * c->srtt_us + adjusted) / 8;
}

void
cc_on_acked(struct cc *c, uint64_t bytes, uint64_t sent_us)
{
	if (sent_us < c->recovery_start_us)
		return; /* sent before the last loss: no growth */
	if (c->cwnd < c->ssthresh)
		c->cwnd += bytes;
	else
		c->cwnd += c->mss * bytes / c->cwnd;
	/* Growing past what the receiver allows only builds a burst. */
	if (c->cwnd > 2 * c->peer_rwnd && c->peer_rwnd > 0)
		c->cwnd = 2 * c->peer_rwnd;
}

void
cc_on_lost(struct cc *c, uint64_t sent_us, uint64_t now_us)
{
	c->losses++;
	/* One reduction per round trip: losses of frames sent before the
	 * last reduction belong to the same congestion event. */
	if (sent_us < c->recovery_start_us)
		return;
	c->recovery_start_us = now_us;
	c->ssthresh = c->cwnd / 2;
	if (c->ssthresh < CC_MIN_WINDOW(c))
		c->ssthresh = CC_MIN_WINDOW(c);
	c->cwnd = c->ssthresh;
}

uint64_t
cc_loss_delay(const struct cc *c)
{
	uint64_t base = c->have_rtt ? c->srtt_us : CC_INITIAL_RTT_US;
	uint64_t d;

	if (c->latest_rtt_us > base)
		base = c->latest_rtt_us;
	d = base * 9 / 8;
	if (c->unordered) {
		/* Mail comes in any order, and one mail can lag those sent
		 * after it by far more than a packet ever lags another: a
		 * frame is given up only when its ACK is later than the RTT
		 * varies, with the MTA's queueing on top. */
		uint64_t var = c->have_rtt ? 4 * c->rttvar_us
					   : 2 * CC_INITIAL_RTT_US;
		uint64_t slow = base + var + CC_REORDER_SLACK_SLOW_US;

		if (slow > d)
			d = slow;
	}
	return d > CC_MIN_RTT_GRANULARITY_US ? d : CC_MIN_RTT_GRANULARITY_US;
}

uint64_t
cc_pto(const struct cc *c)
{
	uint64_t srtt = c->have_rtt ? c->srtt_us : CC_INITIAL_RTT_US;
	uint64_t var = c->have_rtt ? 4 * c->rttvar_us : CC_INITIAL_RTT_US * 2;
	uint64_t pto;

	if (var < CC_MIN_RTT_GRANULARITY_US)
		var = CC_MIN_RTT_GRANULARITY_US;
	pto = srtt + var + c->max_ack_delay_us;
	return pto << (c->pto_count < 10 ? c->pto_count : 10);
}

void
cc_collapse(struct cc *c)
{
	c->ssthresh = c->cwnd / 2 > CC_MIN_WINDOW(c) ? c->cwnd / 2
						     : CC_MIN_WINDOW(c);
	c->cwnd = CC_MIN_WINDOW(c);
}
