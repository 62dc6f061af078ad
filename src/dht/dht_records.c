/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Signed records at a topic (dhtrec.h), dht layer: RPUT and RGET are
 * placed as PUTs are (dht_route.c), at the replication peers closest to
 * the topic. A storing peer checks an RPUT's signature and expiry, keeps
 * it by the keeping rule (dhtrec_admit, in the env's records store) and
 * answers with a receipt once durable, or FAIL 3 (no room), 5 (refused)
 * or 7 (a newer record of that signer is held); it answers an RGET with
 * the records it holds. Our RGET merges the storing peers' answers, one
 * record per signer (the highest seq), each checked here: a storing
 * peer can withhold records, not forge or revive them.
 */
#include "dht/dht_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/identity.h"

/* What our RGET has so far. */
struct dht_recset {
	unsigned n_answered;                     /* storing peers that did */
	struct dhtkey answered[DHTMSG_REPL_MAX]; /* which */
	size_t n;                                /* records merged */
	struct dhtrec recs[DHTMSG_RECORDS_MAX];
	uint8_t values[DHTMSG_RECORDS_MAX][DHTREC_VALUE_MAX]; /* theirs */
};

bool
dht_records_check(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	uint64_t now = d->env.wall_s(d->env.cls);
	const struct dhtrec *r = &req->rec;

	if (r->expiry > now && r->expiry - now <= d->cfg.record_lifetime_s &&
	    (from == NULL || dhtrec_verify(r) == 0))
		return true;
	(*d->c.records_refused)++;
	if (from != NULL)
		dht_log_drop(d, from,
		    "RPUT with a bad signature, expired or expiring too late");
	dht_fail(d, req, from, DHTMSG_REFUSED);
	return false;
}

static void
dht_records_stored(void *arg, int status)
{
	struct dht_pending *p = arg;
	struct dht *d = p->d;
	const struct dhtkey *prev = p->has_prev ? &p->prev : NULL;
	struct dhtmsg_ans a;

	if (status == 0) {
		/* Durable now: only now may a receipt promise it. */
		(*d->c.records_stored)++;
		dht_answer_init(d, &p->req, FERRY_MSG_DHT_RECEIPT, &a);
		dhtmsg_receipt_sign(d->env.ident, &p->req.key, p->put_hash,
		    p->req.rec.expiry, &a.receipt);
		dht_answer_send(d, &a, prev, p->req.helo, p->req.helo_len);
	} else if (status == -ESTALE) {
		(*d->c.records_stale)++;
		dht_fail(d, &p->req, prev, DHTMSG_STALE);
	} else {
		(*(status == -ENOSPC ? d->c.records_full : d->c.store_fails))++;
		dht_fail(d, &p->req, prev, DHTMSG_QUOTA);
	}
	dht_pending_free(p);
}

void
dht_records_store(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	struct dht_pending *p = NULL;

	dht_cc_answering(d, req);
	if (d->env.record_put != NULL)
		p = dht_pending_new(d, req, from);
	if (p != NULL) {
		dhtrec_hash(&req->rec, req->replication, p->put_hash);
		if (d->env.record_put(d->env.cls, &req->rec,
		        d->env.wall_s(d->env.cls), d->cfg.records_per_topic,
		        d->cfg.records_max, dht_records_stored, p) == 0)
			return;
		dht_pending_free(p);
	}
	(*d->c.records_full)++;
	dht_fail(d, req, from, DHTMSG_QUOTA);
}

/* Answers p's RGET with the n records of recs. */
static void
dht_records_send(struct dht_pending *p, const struct dhtrec *recs, size_t n)
{
	struct dht *d = p->d;
	struct dhtmsg_ans a;
	struct buf out;
	size_t sent = 0;

	buf_init(&out);
	for (size_t i = 0; i < n && sent < DHTMSG_RECORDS_MAX; i++)
		if (dhtmsg_records_put(&out, &recs[i]) == 0)
			sent++;
	dht_answer_init(d, &p->req, FERRY_MSG_DHT_RECORDS, &a);
	a.count = (uint16_t)sent;
	a.records = buf_head(&out);
	a.records_len = buf_size(&out);
	(*d->c.records_served) += sent;
	dht_answer_send(d, &a, p->has_prev ? &p->prev : NULL, p->req.helo,
	    p->req.helo_len);
	buf_done(&out);
}

static void
dht_records_listed(void *arg, int status, const struct dhtrec *recs, size_t n)
{
	struct dht_pending *p = arg;

	if (status < 0) {
		(*p->d->c.store_fails)++;
		dht_fail(p->d, &p->req, p->has_prev ? &p->prev : NULL,
		    DHTMSG_NOT_FOUND);
	} else {
		dht_records_send(p, recs, n);
	}
	dht_pending_free(p);
}

void
dht_records_serve(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	struct dht_pending *p;

	dht_cc_answering(d, req);
	p = dht_pending_new(d, req, from);
	if (p == NULL) {
		dht_fail(d, req, from, DHTMSG_NOT_FOUND);
		return;
	}
	if (d->env.record_list == NULL) {
		dht_records_send(p, NULL, 0);
		dht_pending_free(p);
		return;
	}
	if (d->env.record_list(d->env.cls, &req->key, d->env.wall_s(d->env.cls),
	        d->cfg.records_per_topic, dht_records_listed, p) < 0) {
		(*d->c.store_fails)++;
		dht_fail(d, req, from, DHTMSG_NOT_FOUND);
		dht_pending_free(p);
	}
}

/* Copies r into place i of rs (its value into rs's own). */
static void
dht_recset_set(struct dht_recset *rs, size_t i, const struct dhtrec *r)
{
	rs->recs[i] = *r;
	if (r->value_len > 0)
		memcpy(rs->values[i], r->value, r->value_len);
	rs->recs[i].value = r->value_len > 0 ? rs->values[i] : NULL;
}

/* Merges a checked record into rs: its signer's place if newer, else a
 * new place, else the place of the one expiring first if r outlives
 * it. */
static void
dht_recset_merge(struct dht_recset *rs, const struct dhtrec *r)
{
	size_t first = 0;

	for (size_t i = 0; i < rs->n; i++) {
		if (memcmp(rs->recs[i].signer, r->signer, FERRY_PUBKEY_LEN) ==
		    0) {
			if (r->seq > rs->recs[i].seq)
				dht_recset_set(rs, i, r);
			return;
		}
		if (rs->recs[i].expiry < rs->recs[first].expiry)
			first = i;
	}
	if (rs->n < DHTMSG_RECORDS_MAX)
		dht_recset_set(rs, rs->n++, r);
	else if (rs->recs[first].expiry < r->expiry)
		dht_recset_set(rs, first, r);
}

/* Notes that responder answered op; false if it had already. */
static bool
dht_recset_answered(struct dht_recset *rs, const struct dhtkey *responder)
{
	for (unsigned i = 0; i < rs->n_answered; i++)
		if (dhtkey_equal(&rs->answered[i], responder))
			return false;
	if (rs->n_answered < DHTMSG_REPL_MAX)
		rs->answered[rs->n_answered++] = *responder;
	return true;
}

/* A storing peer's answer (first or not) to attempt i of op counted:
 * op ends once all its storing peers answered. */
static void
dht_records_counted(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtkey *bad)
{
	if (op->recs->n_answered >= op->replication) {
		dht_records_finish(d, op);
		return;
	}
	dht_attempt_answered(d, op, i, 1, bad);
}

void
dht_records_answer(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtmsg_ans *a)
{
	uint64_t now = d->env.wall_s(d->env.cls);
	unsigned bad = 0;
	struct dhtrec r;
	size_t off = 0;

	if (op->type != FERRY_MSG_DHT_RGET || op->recs == NULL) {
		(*d->c.unsolicited)++;
		return;
	}
	/* The decoder gave each the answer's key, which is op's. */
	while (dhtmsg_records_next(a, &off, &r) == 1) {
		if (r.expiry <= now || dhtrec_verify(&r) < 0) {
			bad++;
			continue;
		}
		(*d->c.records_in)++;
		dht_recset_merge(op->recs, &r);
	}
	if (bad > 0) {
		(*d->c.records_bad) += bad;
		dht_log_drop(d, &a->responder, "forged or expired record");
	}
	(void)dht_recset_answered(op->recs, &a->responder);
	dht_records_counted(d, op, i, NULL);
}

void
dht_records_refused(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtkey *responder)
{
	(void)dht_recset_answered(op->recs, responder);
	dht_records_counted(d, op, i, responder);
}

bool
dht_records_some(const struct dht_op *op)
{
	return op->type == FERRY_MSG_DHT_RGET && op->recs != NULL &&
	    op->recs->n_answered > 0;
}

static int
dht_recset_cmp(const void *a, const void *b)
{
	const struct dhtrec *x = a, *y = b;

	/* The latest expiring first. */
	return x->expiry < y->expiry ? 1 : x->expiry > y->expiry ? -1 : 0;
}

void
dht_records_finish(struct dht *d, struct dht_op *op)
{
	struct dht_recset *rs = op->recs;
	struct dht_result r;

	if (!dht_records_some(op)) {
		dht_op_fail(d, op);
		return;
	}
	/* Sorting moves records, not their values: each still points at
	 * its own. */
	qsort(rs->recs, rs->n, sizeof(rs->recs[0]), dht_recset_cmp);
	memset(&r, 0, sizeof(r));
	r.records = rs->recs;
	r.n_records = rs->n;
	r.answered = rs->n_answered;
	dht_op_finish(d, op, &r);
}

struct dht_recset *
dht_records_new(void)
{
	return calloc(1, sizeof(struct dht_recset));
}

void
dht_records_free(struct dht_recset *rs)
{
	free(rs);
}
