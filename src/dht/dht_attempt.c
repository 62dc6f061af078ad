/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The attempts of our own requests, dht layer (their order is listed at
 * struct dht_op in dht_int.h): an answer lost on the way, or a hop that
 * went silent, costs an attempt's time, a few round trips, rather than
 * the whole REQUEST_TIMEOUT, which stays the bound on the request.
 * Answers are unreliable messages of the core: each attempt goes under a
 * request id of its own and through another neighbour, so that it takes
 * another path as far as it can; its time is DHT_ATTEMPT_RTTS smoothed
 * round trips to that neighbour (the env's srtt_us), or what requests of
 * its type have been taking, whichever is longer, and never less than
 * DHT_ATTEMPT_MIN_US. Everything here runs on the env's clock.
 */
#include "dht/dht_int.h"
#include "dht/dht_bpcc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/map.h"

/* An attempt waits this many round trips to its neighbour (its hops
 * and the answer's way back), or the mean time its kind of request takes
 * and this many mean deviations (as TCP's RTO), and never less than the
 * minimum: a storing peer's disk sync under load. */
#define DHT_ATTEMPT_RTTS   8
#define DHT_ATTEMPT_DEVS   4
#define DHT_ATTEMPT_MIN_US (50u * 1000)

static struct dht_rtt *
dht_rtt_of(struct dht *d, uint16_t type)
{
	return &d->rtt[type - FERRY_MSG_DHT_PUT];
}

void
dht_attempt_sample(struct dht *d, const struct dht_op *op)
{
	struct dht_rtt *e = dht_rtt_of(d, op->type);
	uint64_t s = dht_now(d) - op->started_us, dev;

	/* An answer after an attempt that gave up may answer either. */
	if (op->attempts != 1)
		return;
	if (s == 0)
		s = 1;
	if (e->srtt_us == 0) {
		e->srtt_us = s;
		e->rttvar_us = s / 2;
		return;
	}
	dev = s > e->srtt_us ? s - e->srtt_us : e->srtt_us - s;
	e->rttvar_us = (3 * e->rttvar_us + dev) / 4;
	e->srtt_us = (7 * e->srtt_us + s) / 8;
	if (e->srtt_us == 0)
		e->srtt_us = 1;
}

/* How long an attempt of op sent through hop (NULL: to several peers, or
 * placed here) is given before the next starts. */
static uint64_t
dht_attempt_timeout(struct dht *d, const struct dht_op *op,
    const struct dhtkey *hop)
{
	const struct dht_rtt *e = dht_rtt_of(d, op->type);
	struct dhtkey near;
	uint64_t t = 0, est;

	/* Sent to the peers around the key: the round trip to the closest
	 * of them stands for theirs. */
	if (hop == NULL && dht_next_hop(d, &op->key, NULL, 0, true, &near) == 0)
		hop = &near;
	if (hop != NULL && d->env.srtt_us != NULL)
		t = DHT_ATTEMPT_RTTS * d->env.srtt_us(d->env.cls, hop);
	est = e->srtt_us + DHT_ATTEMPT_DEVS * e->rttvar_us;
	if (e->srtt_us > 0 && est > t)
		t = est;
	/* Nothing measured yet: the attempts share the request's time. */
	if (t == 0)
		t = d->cfg.timeout_us / DHT_ATTEMPTS_MAX;
	/* The congestion control has the last word (CSCC's RTO, BPCC's
	 * BLOCK_MAX), above the floor. */
	t = dht_cc_timeout_us(d, op, t);
	return t > DHT_ATTEMPT_MIN_US ? t : DHT_ATTEMPT_MIN_US;
}

int
dht_attempt_of(const struct dht_op *op, uint64_t req_id)
{
	for (unsigned i = 0; i < op->attempts; i++)
		if (op->ids[i] == req_id)
			return (int)i;
	return -1;
}

/* A new attempt of op under a fresh request id, the latest: its index,
 * or -1 (none left, no number left, or no memory). The request's id_base
 * is random with the low bits clear and kept in d->op_by_id while op
 * lives, so that no other request of ours draws it; each attempt's id
 * is it with the next number there. */
static int
dht_attempt_add(struct dht *d, struct dht_op *op)
{
	unsigned i = op->attempts;

	if (i == DHT_ATTEMPTS_MAX || op->n_ids == DHT_ATTEMPT_ID_BITS)
		return -1;
	if (op->id_base == 0) {
		do {
			randombytes_buf(&op->id_base, sizeof(op->id_base));
			op->id_base &= ~(uint64_t)DHT_ATTEMPT_ID_BITS;
		} while (
		    op->id_base == 0 || dht_op_find(d, op->id_base) != NULL);
		if (map_put(d->op_by_id, &op->id_base, sizeof(op->id_base),
		        op) < 0) {
			op->id_base = 0;
			return -1;
		}
	}
	op->ids[i] = op->id_base | (op->n_ids + 1);
	if (map_put(d->op_by_id, &op->ids[i], sizeof(op->ids[i]), op) < 0)
		return -1;
	op->n_ids++;
	op->attempts++;
	op->req_id = op->ids[i];
	op->waiting[i] = 0;
	op->has_hop[i] = false;
	op->stranded = false;
	op->busy_wait = false;
	return (int)i;
}

/* Takes back the latest attempt; spent: its number is not used again
 * (it went out, and hops on its way took note of it). */
static void
dht_attempt_take_back(struct dht *d, struct dht_op *op, bool spent)
{
	unsigned i = --op->attempts;

	(void)map_remove(d->op_by_id, &op->ids[i], sizeof(op->ids[i]));
	if (!spent)
		op->n_ids--;
	op->req_id = i > 0 ? op->ids[i - 1] : 0;
	op->waiting[i] = 0;
	op->has_hop[i] = false;
}

/* Takes back the latest attempt, which could not be sent. */
static void
dht_attempt_drop(struct dht *d, struct dht_op *op)
{
	dht_attempt_take_back(d, op, false);
}

/* The answers one attempt of op may bring: a placed request's storing
 * peers'. */
static unsigned
dht_attempt_answers(const struct dht_op *op)
{
	return dht_is_placed(op->type) ? op->replication : 1;
}

/* The timeout of op's latest attempt (of the first, if none is out). */
static uint64_t
dht_attempt_latest_timeout(struct dht *d, const struct dht_op *op)
{
	unsigned i = op->attempts > 0 ? op->attempts - 1 : 0;

	return dht_attempt_timeout(d, op,
	    op->attempts > 0 && op->has_hop[i] ? &op->hop[i] : NULL);
}

/* op's next attempt is due t from now (never past its deadline); the
 * owner is told if that is sooner than it knows of. */
static void
dht_attempt_wake_in(struct dht *d, struct dht_op *op, uint64_t t)
{
	op->attempt_deadline_us = dht_now(d) + t;
	if (op->attempt_deadline_us > op->deadline_us)
		op->attempt_deadline_us = op->deadline_us;
	/* Sooner than the owner's next tick may be: it is told. */
	if (op->attempt_deadline_us < d->deadline_told_us) {
		d->deadline_told_us = op->attempt_deadline_us;
		if (d->env.schedule != NULL)
			d->env.schedule(d->env.cls, op->attempt_deadline_us);
	}
}

/* The latest attempt of op waits its timeout from now. */
static void
dht_attempt_arm(struct dht *d, struct dht_op *op)
{
	dht_attempt_wake_in(d, op, dht_attempt_latest_timeout(d, op));
}

/* The latest attempt of op went out now: the scheme hears of it, and
 * it waits its timeout. */
static void
dht_attempt_set_deadline(struct dht *d, struct dht_op *op)
{
	dht_cc_sent(d, op, op->attempts - 1);
	dht_attempt_arm(d, op);
}

void
dht_attempt_rearm(struct dht *d, struct dht_op *op)
{
	if (op->attempts > 0 && !op->busy_wait)
		dht_attempt_arm(d, op);
}

/* Routes req as anyone's, we its first hop (which dht_forward records
 * in op's latest attempt). */
static void
dht_attempt_route_here(struct dht *d, struct dht_op *op, struct dhtmsg_req *req)
{
	struct dht_op *was = d->starting;

	op->waiting[op->attempts - 1] = dht_attempt_answers(op);
	d->starting = op;
	dht_route_request(d, NULL, req);
	d->starting = was;
}

static bool dht_attempt_ask(struct dht *d, struct dht_op *op,
    const struct dhtkey *bad);

int
dht_attempt_prepare(struct dht *d, struct dht_op *op, struct dhtmsg_req *req)
{
	uint8_t helo[DHTMSG_HELO_MAX];

	/* Each attempt sets its own req_id (dht_attempt_request). */
	req->req_id = 0;
	req->key = op->key;
	req->requester = d->self;
	req->hops_left = (uint8_t)d->cfg.hops_max;
	req->helo_len = d->env.own_helo(d->env.cls, helo, sizeof(helo));
	req->helo = helo;
	return dhtmsg_req_encode(req, &op->msg);
}

static int dht_attempt_request(const struct dht_op *op, struct dhtmsg_req *ret);

void
dht_attempt_first(struct dht *d, struct dht_op *op)
{
	struct dhtmsg_req req;

	/* dht_get_wide(): the holders directly, at once; routed as any
	 * request when none is known. */
	if (op->wide && dht_attempt_ask(d, op, NULL)) {
		dht_attempt_set_deadline(d, op);
		return;
	}
	if (dht_attempt_add(d, op) < 0)
		return;
	if (dht_attempt_request(op, &req) < 0) {
		dht_attempt_drop(d, op);
		return;
	}
	dht_attempt_route_here(d, op, &req);
	dht_attempt_set_deadline(d, op);
}

/* The first attempt's request again, under the latest attempt's id. */
static int
dht_attempt_request(const struct dht_op *op, struct dhtmsg_req *ret)
{
	int r = dhtmsg_req_decode(op->type, buf_head(&op->msg),
	    buf_size(&op->msg), ret);

	if (r == 0)
		ret->req_id = op->req_id;
	return r;
}

/* ROUTED again: through the neighbour closest to the key that no
 * attempt went through yet, farther from it than we are if need be (we
 * may be next to the key, with one neighbour closer still). 0, -ENOENT
 * (no way, no attempt left), or the congestion control's refusal
 * (dht_attempt_busy()) or another error of its send. */
static int
dht_attempt_route(struct dht *d, struct dht_op *op)
{
	struct dhtkey avoid[DHT_ATTEMPTS_MAX], next;
	struct dhtmsg_req req;
	size_t n = 0;
	struct buf out;
	int i, r;

	for (unsigned j = 0; j < op->attempts; j++)
		if (op->has_hop[j])
			avoid[n++] = op->hop[j];
	if (dht_next_hop(d, &op->key, avoid, n, false, &next) < 0 &&
	    dht_next_hop(d, &op->key, avoid, n, true, &next) < 0)
		return -ENOENT;
	i = dht_attempt_add(d, op);
	if (i < 0)
		return -ENOENT;
	buf_init(&out);
	r = dht_attempt_request(op, &req);
	if (r == 0) {
		/* As dht_forward passes it on: we were its first hop. */
		req.hops_left--;
		req.hops = 1;
		r = dhtmsg_req_encode(&req, &out);
	}
	if (r == 0)
		r = dht_cc_forward(d, NULL, &next, req.type, buf_head(&out),
		    buf_size(&out));
	buf_done(&out);
	if (r < 0) {
		dht_attempt_drop(d, op);
		return r;
	}
	(*d->c.forwarded)++;
	(void)pathcache_add(d->paths, &d->self, op->req_id, NULL, dht_now(d));
	op->hop[i] = next;
	op->has_hop[i] = true;
	op->waiting[i] = dht_attempt_answers(op);
	return 0;
}

/* A PUT that ended here (we knew no peer closer to its key): placed
 * again, through a hop if one has come up since. */
static bool
dht_attempt_place_again(struct dht *d, struct dht_op *op)
{
	struct dhtmsg_req req;

	if (dht_attempt_add(d, op) < 0)
		return false;
	if (dht_attempt_request(op, &req) < 0) {
		dht_attempt_drop(d, op);
		return false;
	}
	dht_attempt_route_here(d, op, &req);
	return true;
}

/* ASKED: a GET sent to the peers closest to its key that we know, each
 * directly and with no hop left, but bad. It may have ended at a peer
 * that lied, or that does not know the holders, or a hop on the way
 * went silent. */
static bool
dht_attempt_ask(struct dht *d, struct dht_op *op, const struct dhtkey *bad)
{
	struct dhtkey ids[DHTMSG_REPL_MAX + 2];
	uint8_t helo[DHTMSG_HELO_MAX];
	unsigned asked = 0;
	struct dhtmsg_req req;
	struct buf out;
	size_t n;
	int i = dht_attempt_add(d, op);

	if (i < 0)
		return false;
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_GET;
	req.req_id = op->req_id;
	req.key = op->key;
	req.requester = d->self;
	req.helo_len = d->env.own_helo(d->env.cls, helo, sizeof(helo));
	req.helo = helo;
	n = dht_closest_with_self(d, &op->key, d->cfg.replication + 2, ids);
	buf_init(&out);
	if (dhtmsg_req_encode(&req, &out) == 0)
		for (size_t j = 0; j < n; j++) {
			if ((bad != NULL && dhtkey_equal(&ids[j], bad)) ||
			    dhtkey_equal(&ids[j], &d->self) ||
			    dht_cc_forward(d, NULL, &ids[j], req.type,
			        buf_head(&out), buf_size(&out)) < 0)
				continue;
			asked++;
		}
	buf_done(&out);
	if (asked == 0) {
		dht_attempt_drop(d, op);
		return false;
	}
	(void)pathcache_add(d->paths, &d->self, op->req_id, NULL, dht_now(d));
	op->asked_at = (unsigned)i + 1;
	op->waiting[i] = asked;
	return true;
}

int
dht_attempt_next(struct dht *d, struct dht_op *op, const struct dhtkey *bad)
{
	int r;

	if (op->attempts == DHT_ATTEMPTS_MAX)
		return -ENOENT;
	if (op->type == FERRY_MSG_DHT_GET && op->asked_at == 0 &&
	    dht_attempt_ask(d, op, bad))
		r = 0;
	else if (dht_is_placed(op->type) && !op->has_hop[0])
		r = dht_attempt_place_again(d, op) ? 0 : -ENOENT;
	else
		r = dht_attempt_route(d, op);
	if (r < 0)
		return r;
	(*d->c.retries)++;
	dht_attempt_set_deadline(d, op);
	return 0;
}

/*
 * Whether r, dht_attempt_next()'s, says only that the neighbour the
 * attempt was for refused it for now (its link's send queue full,
 * -EAGAIN, or BPCC's bound on our own queued requests, -ENOBUFS): no
 * attempt was used, and one may go once the attempt's time is up again.
 * Taken for the end of the request, it lost lookups for good under a
 * flood with CSCC, whose requester is where the congestion is to be
 * absorbed (issue 14): every neighbour's link was full for a moment, and
 * the request failed at once (FAIL 2, no route) or, from the tick, sat
 * with nothing sent until REQUEST_TIMEOUT.
 */
static bool
dht_attempt_busy(int r)
{
	return r == -EAGAIN || r == -ENOBUFS;
}

/*
 * A busy hop's FAIL 8 (dht_bpcc.c: its queue toward the next hop was at
 * its bound, with requests its held neighbour had sent before it heard
 * of the hold) says that the attempt went no further and that the way is
 * congested, not broken. Counted as an attempt, as FAIL 2 was, it lost
 * lookups for good: under load the next attempts met the same congestion
 * at once, and all DHT_ATTEMPTS_MAX were spent within milliseconds of a
 * REQUEST_TIMEOUT of seconds (integration.dht_bpcc on a loaded CPU). So
 * it is taken back and sent again after a wait, first
 * DHT_ATTEMPT_MIN_US, doubled with each refusal of the request, at most
 * the attempt's timeout, which leaves the queue time to drain to half,
 * when its holds end; the request's deadline bounds the whole. Only an
 * attempt that went one way and brought nothing yet is taken back (a
 * PUT's sent to several candidates may have receipts coming).
 */
#define DHT_BUSY_SHIFT_MAX 10

bool
dht_attempt_busy_again(struct dht *d, struct dht_op *op, unsigned i)
{
	uint64_t wait, most;

	if (i + 1 != op->attempts || op->asked_at == i + 1 ||
	    op->waiting[i] < dht_attempt_answers(op) ||
	    op->n_ids == DHT_ATTEMPT_ID_BITS)
		return false;
	most = dht_attempt_latest_timeout(d, op);
	wait = (uint64_t)DHT_ATTEMPT_MIN_US
	    << (op->busy < DHT_BUSY_SHIFT_MAX ? op->busy : DHT_BUSY_SHIFT_MAX);
	op->busy++;
	(*d->c.busy_again)++;
	dht_attempt_take_back(d, op, true);
	op->busy_wait = true;
	dht_attempt_wake_in(d, op, wait < most ? wait : most);
	return true;
}

/* Whether any attempt of op may still bring an answer. */
static bool
dht_attempt_any_waiting(const struct dht_op *op)
{
	for (unsigned j = 0; j < op->attempts; j++)
		if (op->waiting[j] > 0)
			return true;
	return false;
}

void
dht_attempt_answered(struct dht *d, struct dht_op *op, unsigned i, unsigned n,
    const struct dhtkey *bad)
{
	unsigned left = 0;
	int r;

	op->waiting[i] = n == 0 || n >= op->waiting[i] ? 0 : op->waiting[i] - n;
	for (unsigned j = 0; j < op->attempts; j++)
		left += op->waiting[j];
	/* One taken back for a busy hop goes at its time. */
	if (left > 0 || op->busy_wait)
		return;
	r = dht_attempt_next(d, op, bad);
	if (r == 0)
		return;
	if (dht_attempt_busy(r)) {
		/* Tried again when this attempt's time is up. */
		dht_attempt_arm(d, op);
		return;
	}
	dht_op_fail(d, op);
}

/*
 * The latest attempt of op gave up with no answer at all. If it went to
 * the neighbour closest to the key that we know, which was to answer it
 * itself, that neighbour failed once more: max_fails failures in a row
 * take it out of the table (unless it is our only linked neighbour,
 * dht_entry_failed), and any message from it since (a late answer too,
 * dht_receive) clears them. An attempt through another
 * neighbour blames nobody: that one passed it on toward the closest, and
 * the silence may be anyone's on the way (a relay that forwards to a
 * dead peer is alive). Nor does one that had answers, or went to
 * several peers.
 */
static void
dht_attempt_blame(struct dht *d, struct dht_op *op)
{
	unsigned i = op->attempts - 1;
	struct dhtkey closest;

	if (op->attempts == 0 || op->blamed == op->attempts ||
	    !op->has_hop[i] || op->waiting[i] < dht_attempt_answers(op))
		return;
	op->blamed = op->attempts;
	if (dht_next_hop(d, &op->key, NULL, 0, true, &closest) == 0 &&
	    dhtkey_equal(&closest, &op->hop[i]))
		(void)dht_entry_failed(d, &op->hop[i]);
}

uint64_t
dht_next_deadline_us(struct dht *d)
{
	uint64_t next = UINT64_MAX;
	struct dht_op *op;

	TAILQ_FOREACH(op, &d->ops, link) {
		if (buf_size(&op->later) > 0)
			next = 0;
		if (op->attempt_deadline_us < next)
			next = op->attempt_deadline_us;
		if (op->deadline_us < next)
			next = op->deadline_us;
	}
	d->deadline_told_us = next;
	return next;
}

/*
 * A daemon just started has its table from disk and no link up: the PUTs
 * its clients make at once end here, stored here alone for want of a
 * linked neighbour (dht_place), and would wait out the attempt's time
 * (REQUEST_TIMEOUT / 4 while no round trip is measured), although the
 * links the table asked for come up a round trip later. Each link that
 * comes up while such an attempt still lacks storing peers starts the
 * next attempt at once, placed or routed as the links now allow (at
 * most one per storing peer it lacked). What went out of the first went
 * nowhere, so the congestion control hears of no loss and nobody is
 * blamed.
 */
void
dht_attempts_link_up(struct dht *d)
{
	struct dht_op *op;
	int r;

	TAILQ_FOREACH(op, &d->ops, link) {
		if (!op->stranded || op->cc_waiting || op->attempts == 0)
			continue;
		op->stranded = false;
		/* Starting an attempt ends no request (its answers from
		 * here wait in op->later for the tick): the list holds. */
		r = dht_attempt_next(d, op, NULL);
		if (dht_attempt_busy(r))
			dht_attempt_arm(d, op);
	}
}

void
dht_attempts_tick(struct dht *d)
{
	uint64_t now = dht_now(d);
	struct dht_op *op, *next;

	for (op = TAILQ_FIRST(&d->ops); op != NULL; op = next) {
		next = TAILQ_NEXT(op, link);
		/* Waiting to start: only its deadline counts. */
		if (op->cc_waiting && now < op->deadline_us)
			continue;
		if (buf_size(&op->later) > 0) {
			/* May finish op, and start others (at the tail). */
			dht_answer_later(d, op);
			next = TAILQ_FIRST(&d->ops);
			continue;
		}
		if (now >= op->deadline_us) {
			dht_attempt_blame(d, op);
			(*d->c.timeouts)++;
			dht_op_fail(d, op);
			next = TAILQ_FIRST(&d->ops);
			continue;
		}
		/* An RGET that some storing peers answered ends with
		 * their records, rather than wait for the others. */
		if (now >= op->attempt_deadline_us && dht_records_some(op)) {
			dht_records_finish(d, op);
			next = TAILQ_FIRST(&d->ops);
			continue;
		}
		/* One taken back for a busy hop goes again (it is not
		 * the latest, which is blamed for nothing); if it cannot,
		 * the request waits for what the others may bring, or
		 * ends with none. */
		if (op->busy_wait && now >= op->attempt_deadline_us) {
			int r;

			op->busy_wait = false;
			r = dht_attempt_next(d, op, NULL);
			if (dht_attempt_busy(r)) {
				/* Our own way is full: again later. */
				op->busy_wait = true;
				dht_attempt_arm(d, op);
			} else if (r < 0 && !dht_attempt_any_waiting(op)) {
				dht_op_fail(d, op);
				next = TAILQ_FIRST(&d->ops);
			} else if (r < 0) {
				op->attempt_deadline_us = op->deadline_us;
			}
			continue;
		}
		/* The latest attempt gave up: the next, or, with none
		 * left, the answers of those sent until the deadline. */
		if (now >= op->attempt_deadline_us) {
			int r;

			dht_attempt_blame(d, op);
			dht_cc_expired(d, op);
			r = dht_attempt_next(d, op, NULL);
			if (dht_attempt_busy(r))
				dht_attempt_arm(d, op);
			else if (r < 0)
				op->attempt_deadline_us = op->deadline_us;
		}
	}
}
