/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Our own requests, dht layer: PUT, GET and FIND started here, each with
 * a random request id and a deadline, routed like anyone's (we are their
 * first hop), and ended exactly once: by its answers, by a FAIL, or by
 * its timeout.
 */
#include "dht/dht_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

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
	}
	r->receipts = op->n_receipts;
	r->receipt = op->receipts;
	r->storer = op->storers;
	/* Out of the tables first: the callback may start new requests. */
	(void)map_remove(d->op_by_id, &op->req_id, sizeof(op->req_id));
	TAILQ_REMOVE(&d->ops, op, link);
	if (op->done != NULL)
		op->done(op->cls, r);
	buf_done(&op->later);
	free(op);
}

static struct dht_op *
dht_op_new(struct dht *d, uint16_t type, const struct dhtkey *key,
    dht_done_fn *done, void *cls)
{
	struct dht_op *op = calloc(1, sizeof(*op));

	if (op == NULL)
		return NULL;
	do
		randombytes_buf(&op->req_id, sizeof(op->req_id));
	while (dht_op_find(d, op->req_id) != NULL);
	if (map_put(d->op_by_id, &op->req_id, sizeof(op->req_id), op) < 0) {
		free(op);
		return NULL;
	}
	op->type = type;
	op->key = *key;
	op->done = done;
	op->cls = cls;
	op->deadline_us = dht_now(d) + d->cfg.timeout_us;
	buf_init(&op->later);
	TAILQ_INSERT_TAIL(&d->ops, op, link);
	(*d->c.requests_out)++;
	return op;
}

/* Routes req as its first hop, with our HELOs so that the peers that
 * answer can reach us. */
static void
dht_op_start(struct dht *d, struct dht_op *op, struct dhtmsg_req *req)
{
	uint8_t helo[DHTMSG_HELO_MAX];

	req->req_id = op->req_id;
	req->key = op->key;
	req->requester = d->self;
	req->hops_left = (uint8_t)d->cfg.hops_max;
	req->helo_len = d->env.own_helo(d->env.cls, helo, sizeof(helo));
	req->helo = helo;
	d->starting = true;
	dht_route_request(d, NULL, req);
	d->starting = false;
}

int
dht_put(struct dht *d, const void *data, size_t len, uint64_t expiry,
    unsigned replication, dht_done_fn *done, void *cls,
    struct dhtkey *ret_key)
{
	struct dhtmsg_req req;
	struct dht_op *op;
	struct dhtkey key;

	if (replication == 0)
		replication = d->cfg.replication;
	if (len == 0 || len > d->cfg.max_block ||
	    replication > DHTMSG_REPL_MAX || done == NULL ||
	    expiry <= d->env.wall_s(d->env.cls))
		return -EINVAL;
	dhtkey_of_block(data, len, &key);
	op = dht_op_new(d, FERRY_MSG_DHT_PUT, &key, done, cls);
	if (op == NULL)
		return -ENOMEM;
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_PUT;
	req.put.replication = (uint8_t)replication;
	req.put.expiry = expiry;
	req.put.block = data;
	req.put.block_len = len;
	dhtmsg_put_sign(d->env.ident, &key, &req.put);
	op->replication = replication;
	dhtmsg_put_hash(&key, &req.put, op->put_hash);
	*ret_key = key;
	dht_op_start(d, op, &req);
	return 0;
}

int
dht_get(struct dht *d, const struct dhtkey *key, dht_done_fn *done,
    void *cls)
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
	dht_op_start(d, op, &req);
	return 0;
}

static int
dht_find_start(struct dht *d, const struct dhtkey *key, unsigned want,
    dht_done_fn *done, void *cls)
{
	struct dhtmsg_req req;
	struct dht_op *op;

	if (want == 0 || want > DHTMSG_FIND_MAX)
		return -EINVAL;
	op = dht_op_new(d, FERRY_MSG_DHT_FIND, key, done, cls);
	if (op == NULL)
		return -ENOMEM;
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_FIND;
	req.want = (uint16_t)want;
	dht_op_start(d, op, &req);
	return 0;
}

int
dht_find(struct dht *d, const struct dhtkey *key, unsigned want,
    dht_done_fn *done, void *cls)
{
	if (done == NULL)
		return -EINVAL;
	return dht_find_start(d, key, want, done, cls);
}

/* A lookup's answer: every peer in it we are not linked to is one to
 * link to, so that our buckets fill. */
static void
dht_lookup_done(void *cls, const struct dht_result *r)
{
	struct dht *d = cls;

	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct dht_node *n = &r->nodes[i];

		if (dhtkey_equal(&n->id, &d->self) ||
		    d->env.linked(d->env.cls, &n->id))
			continue;
		(void)d->env.link(d->env.cls, &n->id, n->helo, n->helo_len);
	}
}

void
dht_ops_lookup(struct dht *d, const struct dhtkey *key)
{
	d->filling = true;
	(void)dht_find_start(d, key, d->cfg.k < DHTMSG_FIND_MAX
	        ? d->cfg.k
	        : DHTMSG_FIND_MAX,
	    dht_lookup_done, d);
	d->filling = false;
}

/* Sends op's GET, under a new request id, to the peers closest to its
 * key that we know, but bad and ourselves; op->asked counts them. */
static void
dht_op_ask_closest(struct dht *d, struct dht_op *op, const struct dhtkey *bad)
{
	struct dhtkey ids[DHTMSG_REPL_MAX + 2];
	uint8_t helo[DHTMSG_HELO_MAX];
	struct dhtmsg_req req;
	struct buf out;
	size_t n;

	/* A new id: the peers on the first path have seen the old one and
	 * would drop these as duplicates. */
	(void)map_remove(d->op_by_id, &op->req_id, sizeof(op->req_id));
	do
		randombytes_buf(&op->req_id, sizeof(op->req_id));
	while (dht_op_find(d, op->req_id) != NULL);
	if (map_put(d->op_by_id, &op->req_id, sizeof(op->req_id), op) < 0)
		return; /* unreachable now: the timeout ends it */
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
		for (size_t i = 0; i < n; i++) {
			if (dhtkey_equal(&ids[i], bad) ||
			    dhtkey_equal(&ids[i], &d->self) ||
			    d->env.send(d->env.cls, &ids[i], req.type,
			        buf_head(&out), buf_size(&out)) < 0)
				continue;
			op->asked++;
		}
	buf_done(&out);
	(void)pathcache_add(d->paths, &d->self, op->req_id, NULL, dht_now(d));
}

void
dht_op_retry_get(struct dht *d, struct dht_op *op, const struct dhtkey *bad)
{
	(*d->c.retries)++;
	dht_op_ask_closest(d, op, bad);
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
	d->starting = true;
	dht_op_ask_closest(d, op, &d->self);
	d->starting = false;
	if (op->asked > 0)
		return 0;
	/* Nobody known to ask directly: routed, as dht_get() does. */
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_GET;
	dht_op_start(d, op, &req);
	return 0;
}

void
dht_ops_tick(struct dht *d)
{
	uint64_t now = dht_now(d);
	struct dht_op *op, *next;
	struct dht_result r;

	for (op = TAILQ_FIRST(&d->ops); op != NULL; op = next) {
		next = TAILQ_NEXT(op, link);
		if (buf_size(&op->later) > 0) {
			/* May finish op, and start others (at the tail). */
			dht_answer_later(d, op);
			next = TAILQ_FIRST(&d->ops);
			continue;
		}
		if (now < op->deadline_us)
			continue;
		/* A GET lost on the way (a hop gone silent) is asked once
		 * more, of the holders directly, before it fails. */
		if (op->type == FERRY_MSG_DHT_GET && op->asked == 0) {
			op->deadline_us = now + d->cfg.timeout_us;
			dht_op_retry_get(d, op, &d->self);
			if (op->asked > 0)
				continue;
		}
		(*d->c.timeouts)++;
		memset(&r, 0, sizeof(r));
		r.status = op->type == FERRY_MSG_DHT_PUT && op->n_receipts > 0
		    ? -EIO
		    : -ETIMEDOUT;
		dht_op_finish(d, op, &r);
		next = TAILQ_FIRST(&d->ops);
	}
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
