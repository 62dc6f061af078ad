/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The seam of the congestion control (see dht_cc.h), dht layer: the
 * requests of ours waiting for their scheme, the dispatch of the events
 * to it, and the scheme none (seed 002, section 3.1: no control), whose
 * every call is the seam's default: requests start at once, go to
 * env.send, and a relay drops what its next hop's full queue refuses.
 */
#include "dht/dht_int.h"

#include <errno.h>
#include <string.h>

#include "dht/pathcache.h"

const struct dht_cc_scheme dht_cc_none = {
	.name = "none",
};

static const struct dht_cc_scheme *const dht_cc_schemes[DHT_CC_COUNT] = {
	[DHT_CC_NONE] = &dht_cc_none,
	[DHT_CC_CSCC] = &dht_cscc,
	[DHT_CC_BPCC] = &dht_cc_bpcc,
};

static const char *const dht_cc_names[DHT_CC_COUNT] = {
	[DHT_CC_NONE] = "none",
	[DHT_CC_CSCC] = "cscc",
	[DHT_CC_BPCC] = "bpcc",
};

const char *
dht_congestion_name(enum dht_congestion c)
{
	return (unsigned)c < DHT_CC_COUNT ? dht_cc_names[c] : "?";
}

int
dht_cc_init(struct dht *d)
{
	struct dht_cc *cc = &d->cc;

	TAILQ_INIT(&cc->wait);
	cc->scheme = dht_cc_schemes[d->cfg.congestion];
	/* A retry is seen within the requester's REQUEST_TIMEOUT, which
	 * the path cache's time outlasts. */
	cc->answered = pathcache_new(d->cfg.path_max, d->cfg.path_ttl_us);
	if (cc->answered == NULL)
		return -ENOMEM;
	if (cc->scheme->init != NULL)
		return cc->scheme->init(d);
	return 0;
}

void
dht_cc_done(struct dht *d)
{
	struct dht_cc *cc = &d->cc;

	/* The requests are gone (dht_ops_cancel_all). */
	if (cc->scheme != NULL && cc->scheme->done != NULL)
		cc->scheme->done(d);
	pathcache_free(cc->answered);
	cc->answered = NULL;
	cc->scheme = NULL;
}

static void
dht_cc_count_waiting(struct dht *d)
{
	*d->c.cc_waiting = d->cc.n_wait;
}

/* Starts op, which may start now. */
static void
dht_cc_start(struct dht *d, struct dht_op *op)
{
	op->started_us = dht_now(d);
	(*d->c.requests_out)++;
	if (d->cc.scheme->started != NULL)
		d->cc.scheme->started(d, op);
	dht_attempt_first(d, op);
	if (op->attempts > 0)
		return;
	/* Its first attempt could not be made (no memory): it fails at the
	 * next tick, not in here, where other requests' answers may be
	 * under way. */
	op->deadline_us = op->started_us;
	if (d->env.wake != NULL)
		d->env.wake(d->env.cls);
}

static bool
dht_cc_may_start(struct dht *d, const struct dht_op *op)
{
	return d->cc.scheme->may_start == NULL ||
	    d->cc.scheme->may_start(d, op);
}

int
dht_cc_submit(struct dht *d, struct dht_op *op)
{
	struct dht_cc *cc = &d->cc;

	/* First come, first started: none overtakes those waiting. */
	if (cc->n_wait == 0 && dht_cc_may_start(d, op)) {
		dht_cc_start(d, op);
		return 0;
	}
	if (cc->n_wait >= d->cfg.cc_queue) {
		(*d->c.cc_refused)++;
		return -EAGAIN;
	}
	op->cc_waiting = true;
	TAILQ_INSERT_TAIL(&cc->wait, op, wait_link);
	cc->n_wait++;
	op->attempt_deadline_us = UINT64_MAX;
	dht_cc_count_waiting(d);
	return 0;
}

static void
dht_cc_unwait(struct dht *d, struct dht_op *op)
{
	TAILQ_REMOVE(&d->cc.wait, op, wait_link);
	d->cc.n_wait--;
	op->cc_waiting = false;
	dht_cc_count_waiting(d);
}

/* Never runs inside itself: starting a request does not end another
 * (its own answers wait in op->later), but a scheme's call might. */
void
dht_cc_pump(struct dht *d)
{
	struct dht_cc *cc = &d->cc;
	struct dht_op *op;

	if (cc->pumping || cc->closing)
		return;
	cc->pumping = true;
	while ((op = TAILQ_FIRST(&cc->wait)) != NULL) {
		if (!dht_cc_may_start(d, op))
			break;
		dht_cc_unwait(d, op);
		/* Out of time while it waited: it fails at the next tick,
		 * unsent, and leaves its turn to the next. */
		if (dht_now(d) >= op->deadline_us) {
			if (d->env.wake != NULL)
				d->env.wake(d->env.cls);
			continue;
		}
		dht_cc_start(d, op);
	}
	cc->pumping = false;
}

int
dht_cc_forward(struct dht *d, const struct dhtkey *from,
    const struct dhtkey *next, uint16_t type, const void *body, size_t len)
{
	int r = d->cc.scheme->forward != NULL
	    ? d->cc.scheme->forward(d, from, next, type, body, len)
	    : d->env.send(d->env.cls, next, type, body, len);

	if (r == -EAGAIN)
		(*d->c.cc_drops)++;
	return r;
}

void
dht_cc_sent(struct dht *d, struct dht_op *op, unsigned i)
{
	op->sent_us[i] = dht_now(d);
	if (d->cc.scheme->sent != NULL)
		d->cc.scheme->sent(d, op, i);
}

static void
dht_cc_lost(struct dht *d, struct dht_op *op)
{
	if (d->cc.scheme->lost != NULL)
		d->cc.scheme->lost(d, op);
}

/*
 * The first answer is the request's ACK (seed 002, 2.1: the responsible
 * peer acknowledges it; small answers ride on the ACK, large ones follow
 * one): it got through. One from this node (the request ended here, or
 * we are among a PUT's storers) measured nothing of the network, but the
 * request no longer waits on it. A FAIL 4 says a hop was over its rate,
 * a FAIL 8 that a hop's queue was full: the request got nowhere, a loss,
 * and the attempts go on.
 */
bool
dht_cc_answered(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtmsg_ans *a)
{
	bool ack_only = a->type == FERRY_MSG_DHT_ACK;
	bool here = dhtkey_equal(&a->responder, &d->self);

	if (!here && a->type == FERRY_MSG_DHT_FAIL &&
	    (a->code == DHTMSG_RATE || a->code == DHTMSG_BUSY)) {
		if (!op->cc_acked)
			dht_cc_lost(d, op);
		return false;
	}
	/* Our own FAIL 2 or 8: the attempt could not even leave (its first
	 * hop went, or its queue was full); nothing came back. */
	if (here && a->type == FERRY_MSG_DHT_FAIL &&
	    (a->code == DHTMSG_NO_ROUTE || a->code == DHTMSG_BUSY))
		return false;
	if (op->cc_acked)
		return ack_only;
	op->cc_acked = true;
	if (d->cc.scheme->acked != NULL)
		d->cc.scheme->acked(d, op, dht_now(d) - op->sent_us[i], here);
	dht_cc_pump(d);
	return ack_only;
}

void
dht_cc_expired(struct dht *d, struct dht_op *op)
{
	if (!op->cc_acked && op->attempts > 0)
		dht_cc_lost(d, op);
	if (d->cc.scheme->expired != NULL)
		d->cc.scheme->expired(d, op);
}

void
dht_cc_ended(struct dht *d, struct dht_op *op)
{
	if (op->cc_waiting) {
		dht_cc_unwait(d, op);
		return;
	}
	if (d->cc.scheme->ended != NULL)
		d->cc.scheme->ended(d, op);
	dht_cc_pump(d);
}

uint64_t
dht_cc_timeout_us(struct dht *d, const struct dht_op *op, uint64_t dht_us)
{
	return d->cc.scheme->timeout_us != NULL
	    ? d->cc.scheme->timeout_us(d, op, dht_us)
	    : dht_us;
}

void
dht_cc_answering(struct dht *d, const struct dhtmsg_req *req)
{
	uint64_t id = req->req_id & ~(uint64_t)DHT_ATTEMPT_ID_BITS;

	if (pathcache_add(d->cc.answered, &req->requester, id, NULL,
	        dht_now(d)) == -EEXIST)
		(*d->c.cc_duplicates)++;
}

void
dht_cc_peer_down(struct dht *d, const struct dhtkey *peer)
{
	if (d->cc.scheme->peer_down != NULL)
		d->cc.scheme->peer_down(d, peer);
}

void
dht_cc_tick(struct dht *d)
{
	pathcache_expire(d->cc.answered, dht_now(d));
	if (d->cc.scheme->tick != NULL)
		d->cc.scheme->tick(d);
	dht_cc_pump(d);
}

void
dht_cc_status(struct dht *d, struct dht_cc_status *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->scheme = d->cfg.congestion;
	ret->waiting = d->cc.n_wait;
	ret->drops = *d->c.cc_drops;
	ret->duplicates = *d->c.cc_duplicates;
	ret->refused = *d->c.cc_refused;
	if (d->cc.scheme->status != NULL)
		d->cc.scheme->status(d, ret);
}
