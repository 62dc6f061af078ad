/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * CSCC, credit-system congestion control (seed 002, section 2.1), dht
 * layer: the window of dht_cscc.h, and the scheme (dht_cc.h) that holds
 * our requests to it. A request takes a credit when it starts and gives
 * it back at its ACK (the first answer from another peer, or the ACK
 * ahead of a large one) or when it ends; an attempt that gets no ACK
 * within the RTO is a loss, and the DHT's next attempt (dht_attempt.c)
 * is its retransmission, under a req_id of its own. Relays drop what a
 * full queue refuses, as with none.
 */
#include "dht/dht_cscc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dht/dht_int.h"

void
dht_cscc_cfg_default(struct dht_cscc_cfg *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->initial_credits = DHT_CSCC_INITIAL_CREDITS;
	ret->max_credits = DHT_CSCC_MAX_CREDITS;
	ret->loss_credits = DHT_CSCC_LOSS_CREDITS;
	ret->decrease = DHT_CSCC_DECREASE;
	ret->rtt_gain = DHT_CSCC_RTT_GAIN;
	ret->err_gain = DHT_CSCC_ERR_GAIN;
	ret->rto_err_factor = DHT_CSCC_RTO_ERR_FACTOR;
	ret->initial_rto_us = DHT_CSCC_INITIAL_RTO_US;
}

bool
dht_cscc_cfg_valid(const struct dht_cscc_cfg *c)
{
	return c->max_credits >= 1 && c->max_credits <= DHT_CSCC_CREDITS_MAX &&
	    c->initial_credits >= 1 && c->initial_credits <= c->max_credits &&
	    c->loss_credits >= 1 && c->loss_credits <= c->max_credits &&
	    c->decrease > 0 && c->decrease < 1 && c->rtt_gain > 0 &&
	    c->rtt_gain <= 1 && c->err_gain > 0 && c->err_gain <= 1 &&
	    c->initial_rto_us > 0;
}

void
dht_cscc_window_init(struct dht_cscc_window *w, const struct dht_cscc_cfg *cfg)
{
	memset(w, 0, sizeof(*w));
	w->cfg = *cfg;
	w->credits = cfg->initial_credits;
	w->ssthresh = cfg->max_credits;
}

bool
dht_cscc_window_open(const struct dht_cscc_window *w)
{
	/* An integer is at most floor(c) when it is at most c. */
	return (double)(w->in_flight + 1) <= w->credits;
}

void
dht_cscc_window_send(struct dht_cscc_window *w)
{
	w->in_flight++;
}

void
dht_cscc_window_release(struct dht_cscc_window *w)
{
	if (w->in_flight > 0)
		w->in_flight--;
}

/* 2.1.2: RTT_est := 0.875 RTT_est + 0.125 RTT, errorEst := 0.75
 * errorEst + 0.25 |RTT - RTT_est|; the first sample starts both, the
 * error at half of it (as TCP, RFC 6298). */
static void
dht_cscc_window_sample(struct dht_cscc_window *w, uint64_t rtt_us)
{
	double s = rtt_us > 0 ? (double)rtt_us : 1.0;
	double err;

	if (w->rtt_us == 0) {
		w->rtt_us = s;
		w->err_us = s / 2;
		return;
	}
	err = s > w->rtt_us ? s - w->rtt_us : w->rtt_us - s;
	w->err_us = (1 - w->cfg.err_gain) * w->err_us + w->cfg.err_gain * err;
	w->rtt_us = (1 - w->cfg.rtt_gain) * w->rtt_us + w->cfg.rtt_gain * s;
}

void
dht_cscc_window_ack(struct dht_cscc_window *w, uint64_t rtt_us)
{
	dht_cscc_window_release(w);
	w->acks++;
	/* 2.1.1: if (c < ssthresh) c := c + 1; else c := c + 1/c. */
	if (w->credits < w->ssthresh)
		w->credits += 1;
	else
		w->credits += 1 / w->credits;
	if (w->credits > w->cfg.max_credits)
		w->credits = w->cfg.max_credits;
	dht_cscc_window_sample(w, rtt_us);
}

void
dht_cscc_window_loss(struct dht_cscc_window *w)
{
	w->losses++;
	/* 2.1.1: if (c > ssthresh) ssthresh := 0.8 c; else ssthresh :=
	 * 0.8 ssthresh; c := 5. */
	if (w->credits > w->ssthresh)
		w->ssthresh = w->cfg.decrease * w->credits;
	else
		w->ssthresh = w->cfg.decrease * w->ssthresh;
	w->credits = w->cfg.loss_credits;
}

uint64_t
dht_cscc_window_rto_us(const struct dht_cscc_window *w)
{
	double t;

	if (w->rtt_us == 0)
		return w->cfg.initial_rto_us;
	t = w->rtt_us + w->cfg.rto_err_factor * w->err_us;
	return t < (double)UINT64_MAX / 2 ? (uint64_t)t : UINT64_MAX / 2;
}

/* --- the scheme -------------------------------------------------------- */

static struct dht_cscc_window *
dht_cscc_of(struct dht *d)
{
	return d->cc.state;
}

/* The gauges of ferryd(8), after every change. */
static void
dht_cscc_publish(struct dht *d)
{
	const struct dht_cscc_window *w = dht_cscc_of(d);

	*d->c.cscc_credits = (uint64_t)w->credits;
	*d->c.cscc_ssthresh = (uint64_t)w->ssthresh;
	*d->c.cscc_in_flight = w->in_flight;
	*d->c.cscc_rtt_us = (uint64_t)w->rtt_us;
	*d->c.cscc_rto_us = dht_cscc_window_rto_us(w);
	*d->c.cscc_acks = w->acks;
	*d->c.cscc_losses = w->losses;
}

static int
dht_cscc_init(struct dht *d)
{
	struct dht_cscc_window *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return -ENOMEM;
	dht_cscc_window_init(w, &d->cfg.cscc);
	d->cc.state = w;
	dht_cscc_publish(d);
	return 0;
}

static void
dht_cscc_done(struct dht *d)
{
	free(d->cc.state);
	d->cc.state = NULL;
}

static bool
dht_cscc_may_start(struct dht *d, const struct dht_op *op)
{
	(void)op; /* no state per destination (2.1.1) */
	return dht_cscc_window_open(dht_cscc_of(d));
}

static void
dht_cscc_started(struct dht *d, struct dht_op *op)
{
	dht_cscc_window_send(dht_cscc_of(d));
	op->cc_credit = true;
	dht_cscc_publish(d);
}

/* An attempt after the first, its request not acknowledged yet: a
 * retransmission (its credit is the request's). */
static void
dht_cscc_sent(struct dht *d, struct dht_op *op, unsigned i)
{
	if (i > 0 && !op->cc_acked)
		(*d->c.cscc_retransmits)++;
}

/* An answer of our own gives the credit back without growing c or
 * taking a sample: it says nothing of the network's capacity. */
static void
dht_cscc_acked(struct dht *d, struct dht_op *op, uint64_t rtt_us, bool here)
{
	if (op->cc_credit) {
		op->cc_credit = false;
		if (here)
			dht_cscc_window_release(dht_cscc_of(d));
		else
			dht_cscc_window_ack(dht_cscc_of(d), rtt_us);
		dht_cscc_publish(d);
	}
	/* What it still waits for (a large answer, more receipts) is
	 * timed as the DHT times it, not by the RTO. */
	dht_attempt_rearm(d, op);
}

static void
dht_cscc_lost(struct dht *d, struct dht_op *op)
{
	(void)op;
	dht_cscc_window_loss(dht_cscc_of(d));
	dht_cscc_publish(d);
}

static void
dht_cscc_ended(struct dht *d, struct dht_op *op)
{
	if (!op->cc_credit)
		return;
	op->cc_credit = false;
	dht_cscc_window_release(dht_cscc_of(d));
	dht_cscc_publish(d);
}

/* An attempt of a request not acknowledged waits the RTO (2.1.2); what
 * an acknowledged one still waits for is timed as the DHT times it. */
static uint64_t
dht_cscc_timeout_us(struct dht *d, const struct dht_op *op, uint64_t dht_us)
{
	return op->cc_acked ? dht_us : dht_cscc_window_rto_us(dht_cscc_of(d));
}

static void
dht_cscc_status(struct dht *d, struct dht_cc_status *ret)
{
	const struct dht_cscc_window *w = dht_cscc_of(d);

	ret->in_flight = w->in_flight;
	ret->credits = w->credits;
	ret->ssthresh = w->ssthresh;
	ret->rtt_us = (uint64_t)w->rtt_us;
	ret->err_us = (uint64_t)w->err_us;
	ret->rto_us = dht_cscc_window_rto_us(w);
	ret->retransmits = *d->c.cscc_retransmits;
	ret->losses = w->losses;
}

const struct dht_cc_scheme dht_cscc = {
	.name = "cscc",
	.init = dht_cscc_init,
	.done = dht_cscc_done,
	.may_start = dht_cscc_may_start,
	.started = dht_cscc_started,
	.sent = dht_cscc_sent,
	.acked = dht_cscc_acked,
	.lost = dht_cscc_lost,
	.ended = dht_cscc_ended,
	.timeout_us = dht_cscc_timeout_us,
	.status = dht_cscc_status,
};
