/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The congestion control of DHT requests, dht layer (seed 002; [dht]
 * CONGESTION): the seam between routing (dht_route.c, dht_attempt.c,
 * dht_answer.c) and the schemes, none, CSCC (dht_cscc.c) and BPCC
 * (dht_bpcc.c).
 *
 * The seam keeps what every scheme shares: a FIFO of requests of ours
 * that the scheme does not let start yet (at most cfg.cc_queue; more are
 * refused with -EAGAIN), every request sent to a next hop, ours or
 * relayed, going through one call (dht_cc_forward), the drops of full
 * queues, and the requests a responsible peer answers more than once.
 * A scheme is a table of calls, each of which may be NULL (then the
 * seam does what none does). For one request of ours they come in this
 * order:
 *   may_start  may op, the oldest waiting or a new one, start now?
 *              (else it waits its turn)
 *   started    it starts; its first attempt is sent next
 *   sent       attempt i went out (at op->sent_us[i])
 *   acked      the first answer came to attempt i, from another peer
 *              (or its ACK ahead of a large answer), rtt_us after the
 *              attempt went out; or from this node (here: the request
 *              ended here, nothing was measured); once per request
 *   lost       an attempt gave up with no ACK, or a hop was over its
 *              REQUEST_RATE (FAIL 4): a sign of congestion
 *   expired    the latest attempt's time is up, ACKed or not (after
 *              lost, if it was one): the next attempt comes next
 *   ended      it ended, acknowledged or not
 * and for every request sent to a next hop:
 *   forward    sends it (none: env.send; -EAGAIN is a drop, counted)
 * and when a neighbour's link goes down:
 *   peer_down  (what waits for it has no way on)
 */
#ifndef FERRY_DHT_DHT_CC_H
#define FERRY_DHT_DHT_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "dht/dht.h"

struct dht_op;
struct dhtmsg_ans;
struct dhtmsg_req;
struct pathcache;

/* One scheme. cls-free: its state is d->cc.state, made by init. */
struct dht_cc_scheme {
	const char *name; /* as [dht] CONGESTION spells it */
	/* Makes d->cc.state. 0 or -ENOMEM; done frees it (also after a
	 * failed init). */
	int (*init)(struct dht *d);
	void (*done)(struct dht *d);
	bool (*may_start)(struct dht *d, const struct dht_op *op);
	void (*started)(struct dht *d, struct dht_op *op);
	void (*sent)(struct dht *d, struct dht_op *op, unsigned i);
	void (*acked)(struct dht *d, struct dht_op *op, uint64_t rtt_us,
	    bool here);
	void (*lost)(struct dht *d, struct dht_op *op);
	void (*expired)(struct dht *d, struct dht_op *op);
	void (*ended)(struct dht *d, struct dht_op *op);
	/* How long op's latest attempt waits before the next starts, given
	 * dht_us, the DHT's own measure (dht_attempt.c); NULL: that. */
	uint64_t (*timeout_us)(struct dht *d, const struct dht_op *op,
	    uint64_t dht_us);
	/* Sends a request's body to next (from: the neighbour it came
	 * from, NULL for ours). 0, or env.send's errors; -EAGAIN: refused
	 * by a full queue, which the seam counts as a drop. */
	int (*forward)(struct dht *d, const struct dhtkey *from,
	    const struct dhtkey *next, uint16_t type, const void *body,
	    size_t len);
	void (*peer_down)(struct dht *d, const struct dhtkey *peer);
	void (*tick)(struct dht *d);
	/* Fills the scheme's part of ret (the seam's is filled). */
	void (*status)(struct dht *d, struct dht_cc_status *ret);
};

/* The schemes, by enum dht_congestion. */
extern const struct dht_cc_scheme dht_cc_none;
extern const struct dht_cc_scheme dht_cscc;
extern const struct dht_cc_scheme dht_cc_bpcc; /* dht_bpcc.c */

/* The seam's state, in struct dht. */
struct dht_cc {
	const struct dht_cc_scheme *scheme;
	void *state; /* the scheme's own */
	/* Ours waiting to start, oldest first. */
	TAILQ_HEAD(, dht_op) wait;
	size_t n_wait;
	struct pathcache *answered; /* requests answered here lately,
					 * by requester and request (the
					 * attempt bits cleared) */
	bool pumping;               /* dht_cc_pump runs */
	bool closing;               /* dht_free runs: nothing starts */
};

/* Sets up d->cc for cfg.congestion (after the counters). 0 or -ENOMEM;
 * dht_cc_done() cleans up either way. */
int dht_cc_init(struct dht *d);
void dht_cc_done(struct dht *d);

/* A new request of ours, its request encoded in op->msg: started now,
 * or queued behind those waiting. 0, or -EAGAIN with op untouched (the
 * queue holds cfg.cc_queue requests; counted). */
int dht_cc_submit(struct dht *d, struct dht_op *op);
/* Starts the requests waiting while the scheme lets them. */
void dht_cc_pump(struct dht *d);
/* Sends a request toward next, through the scheme: see forward above.
 * A full queue's -EAGAIN is counted in dht.cc_drops here. */
int dht_cc_forward(struct dht *d, const struct dhtkey *from,
    const struct dhtkey *next, uint16_t type, const void *body, size_t len);
/* Attempt i of op went out now. */
void dht_cc_sent(struct dht *d, struct dht_op *op, unsigned i);
/* An answer a to attempt i of op, before it is taken (a->responder is
 * this node for its own answers): true if it was an ACK, which has
 * nothing more to take. */
bool dht_cc_answered(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtmsg_ans *a);
/* op's latest attempt gave up unanswered. */
void dht_cc_expired(struct dht *d, struct dht_op *op);
/* op ends (waiting or started); the requests waiting may start. */
void dht_cc_ended(struct dht *d, struct dht_op *op);
/* The timeout of op's latest attempt: the scheme's, given dht_us, the
 * DHT's own measure. */
uint64_t dht_cc_timeout_us(struct dht *d, const struct dht_op *op,
    uint64_t dht_us);
/* This node answers req as its responsible peer: counted in
 * dht.cc_duplicates if it answered another attempt of it lately. */
void dht_cc_answering(struct dht *d, const struct dhtmsg_req *req);
/* The link to peer went down: the scheme hears of it. */
void dht_cc_peer_down(struct dht *d, const struct dhtkey *peer);
/* The scheme's tick, and the requests waiting that may start. (Those
 * that reach their deadline waiting end in dht_attempts_tick, as any
 * request of ours.) */
void dht_cc_tick(struct dht *d);
void dht_cc_status(struct dht *d, struct dht_cc_status *ret);

#endif /* FERRY_DHT_DHT_CC_H */
