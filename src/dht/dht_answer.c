/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Answers, dht layer: sent to the requester directly when it is linked,
 * and otherwise back along the request's path, hop by hop, through the
 * path cache (a link to the requester is asked for meanwhile, from the
 * HELOs its request carried, so that the next answer goes straight).
 * Answers to our own requests are checked here: a block must hash to
 * its key, a receipt must be signed by the peer it names, for our PUT.
 * An answer larger than DHTMSG_ACK_OVER goes behind an ACK, which the
 * requester's congestion control takes (dht_cc.c).
 */
#include "dht/dht_int.h"

#include <errno.h>
#include <string.h>

#include "core/identity.h"

void
dht_answer_init(const struct dht *d, const struct dhtmsg_req *req,
    uint16_t type, struct dhtmsg_ans *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->type = type;
	ret->req_id = req->req_id;
	ret->key = req->key;
	ret->requester = req->requester;
	ret->responder = d->self;
	ret->hops = req->hops;
}

/* The ACK ahead of a's large answer, to the same peer: it overtakes the
 * answer (a small message goes first, dhtnode_env.c), so that the
 * requester learns that the request got through one round trip after
 * it was sent, however long the answer takes to follow (seed 002,
 * 2.1). */
static void
dht_answer_ack(struct dht *d, const struct dhtkey *to,
    const struct dhtmsg_ans *a)
{
	struct dhtmsg_ans ack = *a;
	struct buf out;

	ack.type = FERRY_MSG_DHT_ACK;
	buf_init(&out);
	if (dhtmsg_ans_encode(&ack, &out) == 0 &&
	    d->env.send(d->env.cls, to, ack.type, buf_head(&out),
	        buf_size(&out)) == 0)
		(*d->c.acks_sent)++;
	buf_done(&out);
}

/* Sends a to to, and counts it; one of ours (ack_first) that is large
 * goes behind an ACK. */
static void
dht_answer_transmit(struct dht *d, const struct dhtkey *to,
    const struct dhtmsg_ans *a, uint64_t *counter, bool ack_first)
{
	struct buf out;
	int r;

	buf_init(&out);
	r = dhtmsg_ans_encode(a, &out);
	if (r == 0 && ack_first && buf_size(&out) > DHTMSG_ACK_OVER)
		dht_answer_ack(d, to, a);
	if (r == 0)
		r = d->env.send(d->env.cls, to, a->type, buf_head(&out),
		    buf_size(&out));
	buf_done(&out);
	if (r < 0)
		(*d->c.answers_lost)++;
	else
		(*counter)++;
}

void
dht_answer_send(struct dht *d, struct dhtmsg_ans *a,
    const struct dhtkey *prev, const uint8_t *helo, size_t helo_len)
{
	struct buf out;

	if (dhtkey_equal(&a->requester, &d->self)) {
		buf_init(&out);
		if (dhtmsg_ans_encode(a, &out) == 0)
			dht_answer_receive(d, NULL, a->type, buf_head(&out),
			    buf_size(&out));
		buf_done(&out);
		return;
	}
	if (d->env.linked(d->env.cls, &a->requester)) {
		a->flags = 0;
		dht_answer_transmit(d, &a->requester, a, d->c.answers_direct,
		    true);
		return;
	}
	if (helo_len > 0)
		(void)dht_links_ask(d, &a->requester, helo, helo_len);
	if (prev == NULL) {
		(*d->c.answers_lost)++;
		return;
	}
	a->flags = DHTMSG_F_ROUTED;
	a->hops_left = (uint8_t)d->cfg.hops_max;
	dht_answer_transmit(d, prev, a, d->c.answers_routed, true);
}

/* Someone else's answer that came to us on its way back. */
static void
dht_answer_pass_back(struct dht *d, struct dhtmsg_ans *a)
{
	struct dhtkey prev;

	if (!(a->flags & DHTMSG_F_ROUTED) || a->hops_left == 0 ||
	    pathcache_prev(d->paths, &a->requester, a->req_id, dht_now(d),
	        &prev) != 0) {
		(*d->c.answers_lost)++;
		return;
	}
	a->hops_left--;
	/* The last hop may be linked to the requester: straight there. */
	if (d->env.linked(d->env.cls, &a->requester)) {
		a->flags = 0;
		dht_answer_transmit(d, &a->requester, a, d->c.routed_back,
		    false);
		return;
	}
	dht_answer_transmit(d, &prev, a, d->c.routed_back, false);
}

/* Whether id is among the n of list. */
static bool
dht_key_in(const struct dhtkey *list, unsigned n, const struct dhtkey *id)
{
	for (unsigned i = 0; i < n; i++)
		if (dhtkey_equal(&list[i], id))
			return true;
	return false;
}

/* Takes id out of the n of list, if it is there. */
static void
dht_key_drop(struct dhtkey *list, unsigned *n, const struct dhtkey *id)
{
	for (unsigned i = 0; i < *n; i++)
		if (dhtkey_equal(&list[i], id)) {
			list[i] = list[--*n];
			return;
		}
}

/*
 * Whether storer, which signed a receipt that came from from (NULL: this
 * node), is a peer we can vouch for: one that takes part in the network
 * under that identity, not a name the peers the answer came through made
 * up (anyone can make keys and sign with them). That is a peer whose link
 * authenticated it: the receipt came over its own link, or we are linked
 * to it, or it is in our routing table, whose entries come from links
 * only (and hold at most PER_NETWORK of one network per bucket). An
 * answer that comes back along the path (the storer was not linked to
 * us) may come from a storer we do not know yet: it is held, and counts
 * if a link to the storer comes up before the request ends (the storer
 * asks for one as it answers). The peers on the path cannot vouch for
 * it, and neither can closeness to the key: we may not know the peers
 * around a distant key, or know some that left, and a made-up identity
 * can be as close as its maker likes.
 */
static bool
dht_storer_known(struct dht *d, const struct dhtkey *from,
    const struct dhtkey *storer)
{
	if (from == NULL)
		return dhtkey_equal(storer, &d->self);
	return dhtkey_equal(from, storer) ||
	    d->env.linked(d->env.cls, storer) ||
	    rtable_get(d->rt, storer) != NULL;
}

_Static_assert(DHT_ATTEMPTS_MAX <= 8, "storer_attempts holds 8 bits");

/* Counts storer's receipt for attempt i of op (which may end). */
static void
dht_receipt_take(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtmsg_receipt *receipt, const struct dhtkey *storer)
{
	struct dht_result r;

	(*d->c.receipts_in)++;
	op->receipts[op->n_receipts] = *receipt;
	op->storer_attempts[op->n_receipts] = (uint8_t)(1u << i);
	op->storers[op->n_receipts++] = *storer;
	dht_key_drop(op->refusers, &op->n_refusers, storer);
	if (op->n_receipts == op->quorum) {
		memset(&r, 0, sizeof(r));
		dht_op_finish(d, op, &r);
		return;
	}
	dht_attempt_answered(d, op, i, 1, NULL);
}

/* Keeps a receipt of a storer we cannot vouch for yet; it does not count
 * as an answer meanwhile (it may be made up). */
static void
dht_receipt_hold(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtmsg_ans *a)
{
	struct dht_held *h;

	for (unsigned j = 0; j < op->n_held; j++)
		if (dhtkey_equal(&op->held[j].storer, &a->responder))
			return;
	if (op->n_held == DHTMSG_REPL_MAX) {
		(*d->c.receipts_implausible)++;
		dht_log_drop(d, &a->responder,
		    "receipt of a storer nobody vouches for");
		return;
	}
	h = &op->held[op->n_held++];
	h->receipt = a->receipt;
	h->storer = a->responder;
	h->attempt = i;
}

static void
dht_answer_receipt(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtkey *from, const struct dhtmsg_ans *a)
{
	if (!dht_is_stored(op->type) ||
	    dhtmsg_receipt_verify(&op->key, &a->responder, op->put_hash,
	        &a->receipt) < 0) {
		(*d->c.receipts_bad)++;
		dht_log_drop(d, &a->responder, "forged or misdirected receipt");
		return;
	}
	/* One peer counts once, whichever attempts it answers; its answer
	 * to another attempt is one that attempt brought, a second to the
	 * same (a candidate that also got the PUT as a replica) is not. */
	for (unsigned j = 0; j < op->n_receipts; j++) {
		if (!dhtkey_equal(&op->storers[j], &a->responder))
			continue;
		if (!(op->storer_attempts[j] & (1u << i))) {
			op->storer_attempts[j] |= (uint8_t)(1u << i);
			dht_attempt_answered(d, op, i, 1, NULL);
		}
		return;
	}
	if (!dht_storer_known(d, from, &a->responder)) {
		dht_receipt_hold(d, op, i, a);
		return;
	}
	dht_receipt_take(d, op, i, &a->receipt, &a->responder);
}

void
dht_answer_vouch(struct dht *d, const struct dhtkey *peer)
{
	struct dht_op *op, *next;
	struct dht_held h;

	for (op = TAILQ_FIRST(&d->ops); op != NULL; op = next) {
		next = TAILQ_NEXT(op, link);
		for (unsigned j = 0; j < op->n_held; j++) {
			if (!dhtkey_equal(&op->held[j].storer, peer))
				continue;
			h = op->held[j];
			op->held[j] = op->held[--op->n_held];
			/* May end op; its callback may start others, at
			 * the tail. */
			dht_receipt_take(d, op, h.attempt, &h.receipt,
			    &h.storer);
			break;
		}
	}
}

void
dht_answer_unvouched(struct dht *d, struct dht_op *op)
{
	if (op->n_held == 0)
		return;
	(*d->c.receipts_implausible) += op->n_held;
	dht_log_drop(d, &op->held[0].storer,
	    "receipt of a storer nobody vouches for");
	op->n_held = 0;
}

static int
dht_fail_status(uint16_t code)
{
	switch (code) {
	case DHTMSG_NOT_FOUND:
		return -ENOENT;
	case DHTMSG_NO_ROUTE:
		return -EHOSTUNREACH;
	case DHTMSG_QUOTA:
		return -ENOSPC;
	case DHTMSG_RATE:
	case DHTMSG_BUSY:
		return -EAGAIN;
	case DHTMSG_ORIGIN_QUOTA:
		return -EDQUOT;
	case DHTMSG_STALE:
		return -ESTALE;
	case DHTMSG_STORE_FAILED:
		return -EREMOTEIO;
	default: /* refused, or a code newer than ours */
		return -EBADMSG;
	}
}

/* A FAIL that says the request went no further than its responder
 * (which, for a PUT, may also be a storing peer over its rate). */
static bool
dht_fail_on_path(uint16_t code)
{
	return code == DHTMSG_RATE || code == DHTMSG_NO_ROUTE ||
	    code == DHTMSG_BUSY;
}

static void
dht_answer_fail(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtmsg_ans *a)
{
	op->fail_status = dht_fail_status(a->code);
	/* A busy hop on the way: sent again a little later, if it went
	 * that way only (dht_attempt_busy_again). */
	if (a->code == DHTMSG_BUSY && dht_attempt_busy_again(d, op, i))
		return;
	/* A GET's peers asked directly answer each for itself: with no hop
	 * left, one without the block says no route or not found. */
	if (op->asked_at == i + 1 && a->code != DHTMSG_RATE &&
	    a->code != DHTMSG_BUSY)
		op->not_found = true;
	/* A PUT's FAIL from the hop its attempt went to (or from us, when
	 * it could not be sent there), over its rate for us or with no
	 * route, says the attempt reached no storing peer and nothing more
	 * will come of it, as does a busy hop's anywhere on the way (only a
	 * hop that forwards sends one). Any other is one storing peer's
	 * refusal, which counts once and leaves the others to answer. */
	if (dht_is_placed(op->type) && a->code != DHTMSG_BUSY &&
	    !(dht_fail_on_path(a->code) &&
	        (dhtkey_equal(&a->responder, &d->self) ||
	            (op->has_hop[i] &&
	                dhtkey_equal(&a->responder, &op->hop[i]))))) {
		/* An RGET's storing peer that says no holds none for us. */
		if (op->type == FERRY_MSG_DHT_RGET) {
			dht_records_refused(d, op, i, &a->responder);
			return;
		}
		if (!dht_key_in(op->refusers, op->n_refusers, &a->responder) &&
		    !dht_key_in(op->storers, op->n_receipts, &a->responder))
			op->refusers[op->n_refusers++] = a->responder;
		if (op->n_receipts + op->n_refusers >= op->replication) {
			dht_op_fail(d, op);
			return;
		}
		dht_attempt_answered(d, op, i, 1, &a->responder);
		return;
	}
	/* A GET's or FIND's attempt ended there; a placed one's went no
	 * further. */
	dht_attempt_answered(d, op, i, dht_is_placed(op->type) ? 0 : 1,
	    &a->responder);
}

static void
dht_answer_ours(struct dht *d, struct dht_op *op, const struct dhtkey *from,
    const struct dhtmsg_ans *a)
{
	struct dht_node nodes[DHTMSG_FIND_MAX];
	int i = dht_attempt_of(op, a->req_id);
	struct dhtmsg_node n;
	struct dht_result r;
	struct dhtkey k;
	size_t off = 0;

	/* The congestion control's ACK first; an ACK alone ends there. */
	if (dht_cc_answered(d, op, (unsigned)i, a))
		return;
	if (a->hops > op->hops)
		op->hops = a->hops;
	memset(&r, 0, sizeof(r));
	switch (a->type) {
	case FERRY_MSG_DHT_RECEIPT:
		dht_answer_receipt(d, op, (unsigned)i, from, a);
		return;
	case FERRY_MSG_DHT_FAIL:
		dht_answer_fail(d, op, (unsigned)i, a);
		return;
	case FERRY_MSG_DHT_RECORDS:
		dht_records_answer(d, op, (unsigned)i, a);
		return;
	case FERRY_MSG_DHT_BLOCK:
		dhtkey_of_block(a->block, a->block_len, &k);
		if (op->type != FERRY_MSG_DHT_GET) {
			(*d->c.unsolicited)++;
			return;
		}
		if (!dhtkey_equal(&k, &op->key)) {
			/* A wrong block ends nothing: the holders are asked
			 * (if they were not), and a right answer or the
			 * timeout ends it. */
			(*d->c.blocks_bad)++;
			dht_log_drop(d, &a->responder,
			    "block that does not hash to its key");
			op->fail_status = -EBADMSG;
			dht_attempt_answered(d, op, (unsigned)i, 1,
			    &a->responder);
			return;
		}
		r.block = a->block;
		r.block_len = a->block_len;
		r.responder = &a->responder;
		break;
	default: /* NODES */
		if (op->type != FERRY_MSG_DHT_FIND) {
			(*d->c.unsolicited)++;
			return;
		}
		while (r.n_nodes < DHTMSG_FIND_MAX &&
		    dhtmsg_nodes_next(a, &off, &n) == 1) {
			nodes[r.n_nodes].id = n.id;
			nodes[r.n_nodes].helo = n.helo;
			nodes[r.n_nodes++].helo_len = n.helo_len;
		}
		r.nodes = nodes;
		break;
	}
	dht_op_finish(d, op, &r);
}

void
dht_answer_receive(struct dht *d, const struct dhtkey *from, uint16_t type,
    const void *body, size_t len)
{
	struct dhtmsg_ans a;
	struct dht_op *op;

	if (dhtmsg_ans_decode(type, body, len, &a) < 0) {
		(*d->c.malformed)++;
		if (from != NULL)
			dht_log_drop(d, from, "malformed DHT answer");
		return;
	}
	if (!dhtkey_equal(&a.requester, &d->self)) {
		dht_answer_pass_back(d, &a);
		return;
	}
	op = dht_op_find(d, a.req_id);
	/* An id no attempt holds: op's id_base, never sent. */
	if (op == NULL || !dhtkey_equal(&op->key, &a.key) ||
	    dht_attempt_of(op, a.req_id) < 0) {
		(*d->c.unsolicited)++;
		return;
	}
	/* Straight from the peer that answered, or back along the path
	 * (ferry-protocol(7), "Routing"): what the requester sees of it. */
	if (from != NULL && type != FERRY_MSG_DHT_ACK)
		(*(dhtkey_equal(from, &a.responder)
		        ? d->c.answers_in_direct
		        : d->c.answers_in_routed))++;
	if (d->starting != NULL) {
		/* Our own answer to a request still being started: kept for
		 * dht_tick, which the owner calls as soon as we return, so
		 * that no callback runs inside dht_put(). */
		if (buf_size(&op->later) == 0 &&
		    buf_append(&op->later, body, len) == 0) {
			op->later_type = type;
			if (d->env.wake != NULL)
				d->env.wake(d->env.cls);
		}
		return;
	}
	dht_answer_ours(d, op, from, &a);
}

void
dht_answer_later(struct dht *d, struct dht_op *op)
{
	struct buf kept = op->later; /* ours now: op may end below */
	struct dhtmsg_ans a;

	/* Taken out first, so that it is delivered once (an answer that
	 * does not end op, a PUT's FAIL, would otherwise count again at
	 * every tick). */
	buf_init(&op->later);
	/* Kept answers are this node's own (only those come while a
	 * request starts). */
	if (dhtmsg_ans_decode(op->later_type, buf_head(&kept),
	        buf_size(&kept), &a) == 0)
		dht_answer_ours(d, op, NULL, &a);
	buf_done(&kept);
}
