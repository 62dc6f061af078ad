/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Our own requests, dht layer: PUT, GET and FIND started here, each with
 * a deadline, tried in attempts (dht_attempt.c) routed like anyone's
 * requests (we are their first hop), and ended exactly once: by their
 * answers, by FAILs, or by their timeout.
 */
#include "dht/dht_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/identity.h"
#include "lib/map.h"

struct dht_op *
dht_op_find(struct dht *d, uint64_t req_id)
{
	return map_get(d->op_by_id, &req_id, sizeof(req_id));
}

void
dht_op_finish(struct dht *d, struct dht_op *op, struct dht_result *r)
{
	r->key = op->key;
	r->hops = op->hops;
	if (r->status == 0) {
		(*d->c.completed)++;
		(*d->c.hops_total) += op->hops;
		dht_attempt_sample(d, op);
	}
	r->receipts = op->n_receipts;
	r->receipt = op->receipts;
	r->storer = op->storers;
	dht_answer_unvouched(d, op);
	/* Out of the tables first: the callback may start new requests. */
	for (unsigned i = 0; i < op->attempts; i++)
		(void)map_remove(d->op_by_id, &op->ids[i], sizeof(op->ids[i]));
	if (op->id_base != 0)
		(void)map_remove(d->op_by_id, &op->id_base,
		    sizeof(op->id_base));
	TAILQ_REMOVE(&d->ops, op, link);
	/* Its credit back, and those waiting for one start before the
	 * callback asks for more. */
	dht_cc_ended(d, op);
	if (op->done != NULL)
		op->done(op->cls, r);
	dht_records_free(op->recs);
	buf_done(&op->later);
	buf_done(&op->msg);
	free(op);
}

void
dht_op_fail(struct dht *d, struct dht_op *op)
{
	struct dht_result r;

	/* An RGET some storing peers answered ends with their records. */
	if (dht_records_some(op)) {
		dht_records_finish(d, op);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.status = op->fail_status;
	/* A GET asked of the holders directly: none of them has it, unless
	 * all that answered were over their rates. */
	if (op->type == FERRY_MSG_DHT_GET && op->not_found)
		r.status = -ENOENT;
	/* A PUT with some receipts says how many; with none, why. */
	if (dht_is_stored(op->type) && op->n_receipts > 0)
		r.status = -EIO;
	dht_op_finish(d, op, &r);
}

static struct dht_op *
dht_op_new(struct dht *d, uint16_t type, const struct dhtkey *key,
    dht_done_fn *done, void *cls)
{
	struct dht_op *op = calloc(1, sizeof(*op));

	if (op == NULL)
		return NULL;
	op->type = type;
	op->key = *key;
	op->done = done;
	op->cls = cls;
	op->started_us = dht_now(d);
	op->deadline_us = op->started_us + d->cfg.timeout_us;
	op->attempt_deadline_us = UINT64_MAX; /* none until it starts */
	op->fail_status = -ETIMEDOUT;
	buf_init(&op->later);
	buf_init(&op->msg);
	TAILQ_INSERT_TAIL(&d->ops, op, link);
	return op;
}

/* Starts op with req, or queues it for the congestion control (which
 * may refuse it, -EAGAIN), or frees it: 0 or a negative errno. */
static int
dht_op_start(struct dht *d, struct dht_op *op, struct dhtmsg_req *req)
{
	struct dht_result r;
	int err = dht_attempt_prepare(d, op, req);

	if (err == 0)
		err = dht_cc_submit(d, op);
	if (err == 0)
		return 0;
	/* Never started: nobody is called back. */
	op->done = NULL;
	memset(&r, 0, sizeof(r));
	r.status = err;
	dht_op_finish(d, op, &r);
	return err;
}

int
dht_put(struct dht *d, const void *data, size_t len, uint64_t expiry,
    unsigned replication, dht_done_fn *done, void *cls, struct dhtkey *ret_key)
{
	struct dhtkey key;
	int r;

	if (data == NULL || len == 0)
		return -EINVAL;
	dhtkey_of_block(data, len, &key);
	r = dht_put_keyed(d, &key, data, len, expiry, replication, done, cls);
	if (r == 0)
		*ret_key = key;
	return r;
}

int
dht_put_keyed(struct dht *d, const struct dhtkey *key, const void *data,
    size_t len, uint64_t expiry, unsigned replication, dht_done_fn *done,
    void *cls)
{
	return dht_put_quorum(d, key, data, len, expiry, replication, 0, done,
	    cls);
}

/* Starts a PUT of put (signed already) for key: 0 or a negative errno,
 * done never called then. */
static int
dht_put_start(struct dht *d, const struct dhtkey *key,
    const struct dhtmsg_put *put, unsigned quorum, dht_done_fn *done, void *cls)
{
	struct dhtmsg_req req;
	struct dht_op *op;

	op = dht_op_new(d, FERRY_MSG_DHT_PUT, key, done, cls);
	if (op == NULL)
		return -ENOMEM;
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_PUT;
	req.put = *put;
	op->replication = put->replication;
	op->quorum = quorum;
	dhtmsg_put_hash(key, &req.put, op->put_hash);
	return dht_op_start(d, op, &req);
}

int
dht_put_quorum(struct dht *d, const struct dhtkey *keyp, const void *data,
    size_t len, uint64_t expiry, unsigned replication, unsigned quorum,
    dht_done_fn *done, void *cls)
{
	struct dhtmsg_put put;
	struct dhtkey key = *keyp;

	if (replication == 0)
		replication = d->cfg.replication;
	if (quorum == 0)
		quorum = replication;
	if (len == 0 || len > d->cfg.max_block ||
	    replication > DHTMSG_REPL_MAX || quorum > replication ||
	    done == NULL || expiry <= d->env.wall_s(d->env.cls))
		return -EINVAL;
	memset(&put, 0, sizeof(put));
	put.replication = (uint8_t)replication;
	put.expiry = expiry;
	put.block = data;
	put.block_len = len;
	dhtmsg_put_sign(d->env.ident, &key, &put);
	return dht_put_start(d, &key, &put, quorum, done, cls);
}

int
dht_put_signed(struct dht *d, const struct dhtmsg_put *put, dht_done_fn *done,
    void *cls, struct dhtkey *ret_key)
{
	if (put->block_len == 0 || put->block_len > d->cfg.max_block)
		return -EINVAL;
	dhtkey_of_block(put->block, put->block_len, ret_key);
	if (put->replication == 0 || put->replication > DHTMSG_REPL_MAX ||
	    done == NULL || put->expiry <= d->env.wall_s(d->env.cls))
		return -EINVAL;
	/* Checked here as every storing peer will: a forgery relayed would
	 * cost the network its routing for nothing, and it would come back
	 * as a refusal anyway. When this node is one of the storing peers,
	 * its own store takes it unchecked (dht_put_checked trusts requests
	 * of ours), so this check is also that one. The key is the block's
	 * own, just computed: only the signature is left to check. */
	if (dhtmsg_put_verify_sig(ret_key, put) < 0) {
		(*d->c.refused)++;
		return -EBADMSG;
	}
	return dht_put_start(d, ret_key, put, put->replication, done, cls);
}

int
dht_get(struct dht *d, const struct dhtkey *key, dht_done_fn *done, void *cls)
{
	struct dhtmsg_req req;
	struct dht_op *op;

	if (done == NULL)
		return -EINVAL;
	op = dht_op_new(d, FERRY_MSG_DHT_GET, key, done, cls);
	if (op == NULL)
		return -ENOMEM;
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_GET;
	return dht_op_start(d, op, &req);
}

int
dht_get_wide(struct dht *d, const struct dhtkey *key, dht_done_fn *done,
    void *cls)
{
	struct dhtmsg_req req;
	struct dht_op *op;

	if (done == NULL)
		return -EINVAL;
	op = dht_op_new(d, FERRY_MSG_DHT_GET, key, done, cls);
	if (op == NULL)
		return -ENOMEM;
	/* Its first attempt is the ASKED one (dht_attempt_first). */
	op->wide = true;
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_GET;
	return dht_op_start(d, op, &req);
}

/* An RPUT of rec, checked but for its signature. */
static int
dht_rput_start(struct dht *d, const struct dhtrec *rec, dht_done_fn *done,
    void *cls)
{
	uint64_t now = d->env.wall_s(d->env.cls);
	struct dhtmsg_req req;
	struct dht_op *op;

	if (done == NULL || rec->value_len > DHTREC_VALUE_MAX ||
	    (rec->value_len > 0 && rec->value == NULL) || rec->expiry <= now ||
	    rec->expiry - now > d->cfg.record_lifetime_s)
		return -EINVAL;
	op = dht_op_new(d, FERRY_MSG_DHT_RPUT, &rec->topic, done, cls);
	if (op == NULL)
		return -ENOMEM;
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_RPUT;
	req.replication = (uint8_t)d->cfg.replication;
	req.rec = *rec;
	op->replication = d->cfg.replication;
	op->quorum = op->replication;
	dhtrec_hash(rec, req.replication, op->put_hash);
	return dht_op_start(d, op, &req);
}

int
dht_announce(struct dht *d, const struct dhtkey *topic, const void *value,
    size_t len, uint64_t expiry, dht_done_fn *done, void *cls)
{
	struct dhtrec rec;
	uint64_t seq;

	if (len > DHTREC_VALUE_MAX || (len > 0 && value == NULL))
		return -EINVAL;
	/* The wall clock in microseconds orders a signer's records across
	 * restarts; within one second, and if the clock steps back, one
	 * more than the last orders them here. */
	seq = d->env.wall_s(d->env.cls) * 1000000;
	if (seq <= d->last_seq)
		seq = d->last_seq + 1;
	memset(&rec, 0, sizeof(rec));
	rec.topic = *topic;
	rec.seq = seq;
	rec.expiry = expiry;
	rec.value = len > 0 ? value : NULL;
	rec.value_len = len;
	dhtrec_sign(d->env.ident, &rec);
	d->last_seq = seq;
	return dht_rput_start(d, &rec, done, cls);
}

int
dht_record_put(struct dht *d, const struct dhtrec *rec, dht_done_fn *done,
    void *cls)
{
	if (rec->value_len > DHTREC_VALUE_MAX)
		return -EINVAL;
	if (dhtrec_verify(rec) < 0)
		return -EBADMSG;
	return dht_rput_start(d, rec, done, cls);
}

int
dht_records(struct dht *d, const struct dhtkey *topic, dht_done_fn *done,
    void *cls)
{
	struct dht_recset *rs;
	struct dhtmsg_req req;
	struct dht_op *op;

	if (done == NULL)
		return -EINVAL;
	rs = dht_records_new();
	if (rs == NULL)
		return -ENOMEM;
	op = dht_op_new(d, FERRY_MSG_DHT_RGET, topic, done, cls);
	if (op == NULL) {
		dht_records_free(rs);
		return -ENOMEM;
	}
	op->recs = rs;
	op->replication = d->cfg.replication;
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_RGET;
	req.replication = (uint8_t)d->cfg.replication;
	return dht_op_start(d, op, &req);
}

static int
dht_find_start(struct dht *d, const struct dhtkey *key, unsigned want,
    bool filling, dht_done_fn *done, void *cls)
{
	struct dhtmsg_req req;
	struct dht_op *op;

	if (want == 0 || want > DHTMSG_FIND_MAX)
		return -EINVAL;
	op = dht_op_new(d, FERRY_MSG_DHT_FIND, key, done, cls);
	if (op == NULL)
		return -ENOMEM;
	op->filling = filling;
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_FIND;
	req.want = (uint16_t)want;
	return dht_op_start(d, op, &req);
}

int
dht_find(struct dht *d, const struct dhtkey *key, unsigned want,
    dht_done_fn *done, void *cls)
{
	if (done == NULL)
		return -EINVAL;
	return dht_find_start(d, key, want, false, done, cls);
}

/* A lookup's answer: every peer in it we are not linked to and that
 * would have a place in our table is one to link to, so that our buckets
 * fill; the others would only be surplus links (dht_links.c). */
static void
dht_lookup_done(void *cls, const struct dht_result *r)
{
	struct dht *d = cls;

	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct dht_node *n = &r->nodes[i];

		if (dhtkey_equal(&n->id, &d->self) ||
		    !rtable_has_room(d->rt, &n->id))
			continue;
		(void)dht_links_ask(d, &n->id, n->helo, n->helo_len);
	}
}

void
dht_ops_lookup(struct dht *d, const struct dhtkey *key)
{
	(void)dht_find_start(d, key,
	    d->cfg.k < DHTMSG_FIND_MAX ? d->cfg.k : DHTMSG_FIND_MAX, true,
	    dht_lookup_done, d);
}

void
dht_ops_cancel_all(struct dht *d)
{
	struct dht_op *op;
	struct dht_result r;

	while ((op = TAILQ_FIRST(&d->ops)) != NULL) {
		memset(&r, 0, sizeof(r));
		r.status = -ECANCELED;
		dht_op_finish(d, op, &r);
	}
}
