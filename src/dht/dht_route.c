/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Requests, dht layer: each hop passes a request to the linked peer
 * closest to its key, if one is closer than itself (seed 002, section
 * 2: recursive routing); the peer with none closer is where the request
 * ends. A GET ends earlier, at the first peer that holds the block. A
 * PUT ends at the closest peer, which stores it if it is among the
 * `replication` closest it knows and sends it, marked REPLICA, to the
 * others; or earlier, at the first hop that knows those peers, which
 * sends it to all of them at once, marked CANDIDATE (each checks that it
 * is one, and routes the PUT on if not). Every request ends in an answer
 * to the requester: a block, receipts, peers, or a FAIL that says why,
 * never silence.
 */
#include "dht/dht_int.h"
#include "dht/dht_bpcc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/identity.h"

struct dht_pending *
dht_pending_new(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *prev)
{
	struct dht_pending *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->d = d;
	p->req = *req;
	p->has_prev = prev != NULL;
	if (prev != NULL)
		p->prev = *prev;
	p->req.put.block = NULL;
	p->req.put.block_len = 0;
	p->req.rec.value = NULL;
	p->req.rec.value_len = 0;
	p->req.helo = NULL;
	p->req.helo_len = 0;
	if (req->helo_len > 0) {
		p->buf = malloc(req->helo_len);
		if (p->buf == NULL) {
			free(p);
			return NULL;
		}
		memcpy(p->buf, req->helo, req->helo_len);
		p->req.helo = p->buf;
		p->req.helo_len = req->helo_len;
	}
	return p;
}

void
dht_pending_free(struct dht_pending *p)
{
	free(p->buf);
	free(p);
}

void
dht_fail(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *prev, uint16_t code)
{
	struct dhtmsg_ans a;

	dht_answer_init(d, req, FERRY_MSG_DHT_FAIL, &a);
	a.code = code;
	dht_answer_send(d, &a, prev, req->helo, req->helo_len);
}

/* Passes req on to the next hop. 0, or -ENOENT if there is none. */
static int
dht_forward(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	struct dhtmsg_req fw = *req;
	struct dhtkey next, avoid[2];
	size_t n_avoid = 0;
	struct buf out;
	int r;

	/* Never back to the requester, where the request began: it would
	 * drop it as a duplicate. A lookup of ours that fills the table
	 * (the join's lookup of our own id, a bucket's refresh) asks the
	 * network even when nobody we know is closer to its key than we
	 * are, which is when it is needed (Kademlia's join): its first hop
	 * is then the closest peer we have, and it goes on from there. */
	avoid[n_avoid++] = req->requester;
	if (from != NULL)
		avoid[n_avoid++] = *from;
	if (dht_next_hop(d, &req->key, avoid, n_avoid, false, &next) < 0 &&
	    (from != NULL || d->starting == NULL || !d->starting->filling ||
	        dht_next_hop(d, &req->key, NULL, 0, true, &next) < 0))
		return -ENOENT;
	if (req->hops_left == 0) {
		(*d->c.no_route)++;
		dht_fail(d, req, from, DHTMSG_NO_ROUTE);
		return 0;
	}
	/* Our own request: the neighbour its attempt went to. */
	if (from == NULL && d->starting != NULL) {
		d->starting->hop[d->starting->attempts - 1] = next;
		d->starting->has_hop[d->starting->attempts - 1] = true;
	}
	fw.hops_left--;
	if (fw.hops < DHTMSG_HOPS_MAX)
		fw.hops++;
	buf_init(&out);
	r = dhtmsg_req_encode(&fw, &out);
	if (r == 0)
		r = dht_cc_forward(d, from, &next, fw.type, buf_head(&out),
		    buf_size(&out));
	buf_done(&out);
	/* Someone else's request that the next hop's full queue refused
	 * is dropped, as an IP router drops (seed 002, 2.1; counted in
	 * dht.cc_drops): a FAIL would add to the load where it is too
	 * high already, and the requester's attempt gives up. */
	if (r == -EAGAIN && from != NULL)
		return 0;
	/* BPCC's queue to the next hop at its bound (others' requests,
	 * counted in dht.bpcc_overflow), or our own requests' (-ENOBUFS):
	 * busy, not broken. The requester sends it again a little later,
	 * and counts no attempt for it (dht_attempt_busy_again). */
	if (r == -EBUSY || (r == -ENOBUFS && from == NULL)) {
		dht_fail(d, req, from, DHTMSG_BUSY);
		return 0;
	}
	if (r < 0) {
		/* A link just gone, a neighbour BPCC gave up on that
		 * still refuses, or our own request's first hop full: the
		 * requester hears of it now rather than at its timeout, and
		 * tries another way. */
		(*d->c.no_route)++;
		dht_fail(d, req, from, DHTMSG_NO_ROUTE);
		return 0;
	}
	(*d->c.forwarded)++;
	return 0;
}

static void
dht_got_block(void *arg, int status, const uint8_t *data, size_t len,
    uint64_t expiry)
{
	struct dht_pending *p = arg;
	struct dht *d = p->d;
	const struct dhtkey *prev = p->has_prev ? &p->prev : NULL;
	struct dhtmsg_ans a;

	(void)expiry;
	if (status < 0 || len == 0 || len > DHTMSG_BLOCK_MAX) {
		/* Gone (expired, evicted) between has() and get(). */
		(*d->c.not_found)++;
		dht_fail(d, &p->req, prev, DHTMSG_NOT_FOUND);
	} else {
		(*d->c.served)++;
		dht_answer_init(d, &p->req, FERRY_MSG_DHT_BLOCK, &a);
		a.block = data;
		a.block_len = len;
		dht_answer_send(d, &a, prev, p->req.helo, p->req.helo_len);
	}
	dht_pending_free(p);
}

static void
dht_route_get(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	struct dht_pending *p;
	bool held = d->env.store_has(d->env.cls, &req->key);

	if (held) {
		dht_cc_answering(d, req);
		p = dht_pending_new(d, req, from);
		if (p != NULL &&
		    d->env.store_get(d->env.cls, &req->key, dht_got_block, p) ==
		        0)
			return;
		if (p != NULL)
			dht_pending_free(p);
	}
	if (dht_forward(d, req, from) == 0)
		return;
	if (!held)
		dht_cc_answering(d, req);
	(*d->c.not_found)++;
	dht_fail(d, req, from, DHTMSG_NOT_FOUND);
}

static void
dht_route_find(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	struct dhtkey ids[DHTMSG_FIND_MAX];
	uint8_t helo[DHTMSG_HELO_MAX];
	struct dhtmsg_ans a;
	struct buf nodes;
	size_t n, len;

	if (dht_forward(d, req, from) == 0)
		return;
	dht_cc_answering(d, req);
	n = dht_closest_with_self(d, &req->key, req->want, ids);
	buf_init(&nodes);
	for (size_t i = 0; i < n; i++) {
		len = dhtkey_equal(&ids[i], &d->self)
		    ? d->env.own_helo(d->env.cls, helo, sizeof(helo))
		    : d->env.peer_helo(d->env.cls, &ids[i], helo, sizeof(helo));
		if (dhtmsg_nodes_put(&nodes, &ids[i], helo, len) < 0)
			break;
	}
	dht_answer_init(d, req, FERRY_MSG_DHT_NODES, &a);
	a.nodes = buf_head(&nodes);
	a.nodes_len = buf_size(&nodes);
	a.count = (uint16_t)n;
	dht_answer_send(d, &a, from, req->helo, req->helo_len);
	buf_done(&nodes);
}

static void
dht_stored(void *arg, int status)
{
	struct dht_pending *p = arg;
	struct dht *d = p->d;
	const struct dhtkey *prev = p->has_prev ? &p->prev : NULL;
	struct dhtmsg_ans a;

	if (status < 0) {
		(*d->c.store_fails)++;
		/* The block was fine: the disk was not (DHTMSG_REFUSED
		 * would blame the block). */
		dht_fail(d, &p->req, prev,
		    status == -ENOSPC ? DHTMSG_QUOTA : DHTMSG_STORE_FAILED);
	} else {
		/* Durable now: only now may a receipt promise it. */
		(*d->c.stored)++;
		dht_answer_init(d, &p->req, FERRY_MSG_DHT_RECEIPT, &a);
		dhtmsg_receipt_sign(d->env.ident, &p->req.key, p->put_hash,
		    p->req.put.expiry, &a.receipt);
		dht_answer_send(d, &a, prev, p->req.helo, p->req.helo_len);
	}
	dht_pending_free(p);
}

/* The storing peers a placed request wants. */
static unsigned
dht_replication(const struct dhtmsg_req *req)
{
	return req->type == FERRY_MSG_DHT_PUT ? req->put.replication
	                                      : req->replication;
}

/* Stores a checked PUT here and answers with a receipt once durable. */
static void
dht_store_block(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	struct dht_pending *p;

	dht_cc_answering(d, req);
	/* A block held already costs nothing more: a PUT again renews. */
	if (!d->env.store_has(d->env.cls, &req->key) &&
	    !dht_origin_charge(d, req->put.origin_pk, req->put.block_len)) {
		(*d->c.origin_refused)++;
		dht_fail(d, req, from, DHTMSG_ORIGIN_QUOTA);
		return;
	}
	p = dht_pending_new(d, req, from);
	if (p == NULL) {
		(*d->c.store_fails)++;
		dht_fail(d, req, from, DHTMSG_QUOTA);
		return;
	}
	dhtmsg_put_hash(&req->key, &req->put, p->put_hash);
	if (d->env.store_put(d->env.cls, &req->key, req->put.block,
	        req->put.block_len, req->put.expiry, dht_stored, p) < 0) {
		dht_pending_free(p);
		(*d->c.store_fails)++;
		dht_fail(d, req, from, DHTMSG_QUOTA);
	}
}

/* A placed request reached one of its storing peers (this node): a PUT
 * or RPUT is stored, an RGET answered with the records held. */
static void
dht_store(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	if (req->type == FERRY_MSG_DHT_RGET)
		dht_records_serve(d, req, from);
	else if (req->type == FERRY_MSG_DHT_RPUT)
		dht_records_store(d, req, from);
	else
		dht_store_block(d, req, from);
}

/* Sends req (which came from from, NULL: ours) one hop on, flagged flag
 * (REPLICA or CANDIDATE), to each of the n peers of ids but this node;
 * how many it went to. The block is encoded once for all of them. */
static unsigned
dht_put_spread(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from, uint8_t flag, const struct dhtkey *ids,
    size_t n)
{
	struct dhtmsg_req rep = *req;
	unsigned sent = 0;
	struct buf out;
	int r;

	rep.flags = flag;
	/* A replica goes no further; a candidate may have to go on. */
	rep.hops_left = flag == DHTMSG_F_REPLICA ? 0 : req->hops_left - 1;
	if (rep.hops < DHTMSG_HOPS_MAX)
		rep.hops++;
	buf_init(&out);
	if (dhtmsg_req_encode(&rep, &out) == 0)
		for (size_t i = 0; i < n; i++) {
			if (dhtkey_equal(&ids[i], &d->self))
				continue;
			r = dht_cc_forward(d, from, &ids[i], rep.type,
			    buf_head(&out), buf_size(&out));
			if (r < 0) {
				/* The requester's count shows it (a full
				 * queue's drop counts as such too). */
				if (r != -EAGAIN)
					(*d->c.no_route)++;
				continue;
			}
			(*d->c.forwarded)++;
			sent++;
		}
	buf_done(&out);
	return sent;
}

/* Our own PUT's attempt being started (from NULL) went to n candidates,
 * the answers it may bring: fewer than its replication when sends
 * failed, so that it ends when those answered, not at its deadline. */
static void
dht_put_expect(struct dht *d, const struct dhtkey *from, unsigned n)
{
	struct dht_op *op = d->starting;

	if (from == NULL && op != NULL && op->attempts > 0)
		op->waiting[op->attempts - 1] = n;
}

/* The PUT ends here: the replication closest peers we know, ourselves
 * included, are the ones to hold it. */
static void
dht_place(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	struct dhtkey ids[DHTMSG_REPL_MAX];
	size_t n = dht_closest_with_self(d, &req->key, dht_replication(req),
	    ids);
	struct dht_op *op = d->starting;
	unsigned placed = 0;

	for (size_t i = 0; i < n; i++)
		if (dhtkey_equal(&ids[i], &d->self)) {
			dht_store(d, req, from);
			placed++;
		}
	/* Our own attempt still waits for replication answers: a peer may
	 * come up meanwhile, for the next attempt to place it on, at once
	 * if the attempt lacks storing peers (dht_attempts_link_up). */
	placed += dht_put_spread(d, req, from, DHTMSG_F_REPLICA, ids, n);
	if (from == NULL && op != NULL && op->attempts > 0)
		op->stranded = placed < dht_replication(req);
}

/*
 * The peers to send req to as candidates, into ids (how many; 0: none):
 * the replication closest to its key that we are linked to, when all of
 * them are closer to it than we are and our table knows every peer that
 * may be (rtable_knows_near). Then each is sent the block at once, as the
 * peer the PUT would end at would send it to them, one one-way delay
 * sooner; each checks for itself that it is among the closest it knows,
 * and routes the PUT on if not. A table can be wrong (a peer it was never
 * told of): we are never one of the candidates, and so do not store a
 * block on our view alone (a node that knows little would take it for
 * itself), and a wrong candidate costs a hop, not a misplaced block.
 */
static size_t
dht_put_candidates(struct dht *d, const struct dhtmsg_req *req,
    struct dhtkey *ids)
{
	size_t n;

	if (req->hops_left == 0 || !rtable_knows_near(d->rt, &req->key))
		return 0;
	n = dht_closest_with_self(d, &req->key, dht_replication(req), ids);
	if (n < dht_replication(req))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (dhtkey_equal(&ids[i], &d->self))
			return 0;
	return n;
}

/* Whether this node is among the replication closest to key it knows. */
static bool
dht_put_ours(struct dht *d, const struct dhtmsg_req *req)
{
	struct dhtkey ids[DHTMSG_REPL_MAX];
	size_t n =
	    dht_closest_with_self(d, &req->key, dht_replication(req), ids);

	for (size_t i = 0; i < n; i++)
		if (dhtkey_equal(&ids[i], &d->self))
			return true;
	return false;
}

/* Checks a PUT or RPUT where it is stored or spread, not at every hop:
 * a relay passes a forgery on, and the storing peer refuses it. Our own
 * is ours; an RGET has nothing to check. */
static bool
dht_put_checked(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	if (req->type == FERRY_MSG_DHT_RGET)
		return true;
	if (req->type == FERRY_MSG_DHT_RPUT)
		return dht_records_check(d, req, from);
	if (from == NULL || dhtmsg_put_verify(&req->key, &req->put) == 0)
		return true;
	(*d->c.refused)++;
	dht_log_drop(d, from, "PUT with a bad signature or hash");
	dht_fail(d, req, from, DHTMSG_REFUSED);
	return false;
}

static void dht_route_put(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from);

/* A PUT sent to us as a candidate: stored if we take ourselves for one
 * of its storing peers too, else routed on as any PUT (seen once, as any
 * request: a loop back here ends). */
static void
dht_route_candidate(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	struct dhtmsg_req on = *req;

	if (dht_put_ours(d, req)) {
		if (dht_put_checked(d, req, from))
			dht_store(d, req, from);
		return;
	}
	on.flags = 0;
	if (pathcache_add(d->paths, &on.requester, on.req_id, from,
	        dht_now(d)) == -EEXIST) {
		(*d->c.duplicates)++;
		return;
	}
	dht_route_put(d, &on, from);
}

static void
dht_route_put(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from)
{
	struct dhtkey ids[DHTMSG_REPL_MAX];
	size_t n;

	if (req->type == FERRY_MSG_DHT_PUT &&
	    (req->put.block_len > d->cfg.max_block ||
	        req->put.expiry <= d->env.wall_s(d->env.cls))) {
		(*d->c.refused)++;
		dht_fail(d, req, from, DHTMSG_REFUSED);
		return;
	}
	if (req->flags & DHTMSG_F_CANDIDATE) {
		dht_route_candidate(d, req, from);
		return;
	}
	if (req->flags & DHTMSG_F_REPLICA) {
		if (dht_put_checked(d, req, from))
			dht_store(d, req, from);
		return;
	}
	n = dht_put_candidates(d, req, ids);
	if (n > 0) {
		/* Checked before it is spread: a forgery is not sent on to
		 * replication peers, each of which would answer it. */
		if (!dht_put_checked(d, req, from))
			return;
		n = dht_put_spread(d, req, from, DHTMSG_F_CANDIDATE, ids, n);
		dht_put_expect(d, from, (unsigned)n);
		if (n == 0) {
			(*d->c.no_route)++;
			dht_fail(d, req, from, DHTMSG_NO_ROUTE);
		}
		return;
	}
	if (dht_forward(d, req, from) == 0)
		return;
	if (dht_put_checked(d, req, from))
		dht_place(d, req, from);
}

/* Routes req by its type, its path recorded. */
static void
dht_route_by_type(struct dht *d, const struct dhtkey *from,
    const struct dhtmsg_req *req)
{
	switch (req->type) {
	case FERRY_MSG_DHT_GET:
		dht_route_get(d, req, from);
		break;
	case FERRY_MSG_DHT_FIND:
		dht_route_find(d, req, from);
		break;
	default:
		dht_route_put(d, req, from);
		break;
	}
}

void
dht_route_resume(struct dht *d, const struct dhtkey *from,
    const struct dhtmsg_req *fw)
{
	struct dhtmsg_req req = *fw;

	/* As it came to us, before dht_forward passed it on. */
	req.hops_left++;
	if (req.hops > 0)
		req.hops--;
	dht_route_by_type(d, from, &req);
}

void
dht_route_request(struct dht *d, const struct dhtkey *from,
    const struct dhtmsg_req *req)
{
	bool replica = dht_is_placed(req->type) &&
	    (req->flags & (DHTMSG_F_REPLICA | DHTMSG_F_CANDIDATE)) != 0;

	/* A replica goes nowhere further, and its requester's path runs
	 * through the peer that sent it (which saw the PUT itself); so does
	 * a candidate's, unless it goes on (dht_route_candidate). */
	if (!replica && pathcache_add(d->paths, &req->requester, req->req_id,
	                    from, dht_now(d)) == -EEXIST) {
		(*d->c.duplicates)++;
		return;
	}
	dht_route_by_type(d, from, req);
}
