/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * BPCC (see dht_bpcc.h), dht layer: seed 002, section 2.2. No request is
 * dropped because a next hop is busy: when the node below refuses one
 * (-EAGAIN) it waits in that neighbour's queue, in order, until the node
 * below says the neighbour drained (dht_drained); a queue that reaches
 * BPCC_QUEUE holds the neighbour whose request filled it (env.hold: the
 * core stops reading it), so that its own queue toward us fills and the
 * pressure travels hop by hop back to the requesters, whose own requests
 * then wait in their first hop's queue. The holds of a queue end when it
 * has drained to half of BPCC_QUEUE.
 *
 * A queue is in one of these states:
 *   IDLE     empty, its neighbour takes what we send;
 *   BLOCKED  the last send to it said -EAGAIN: what comes queues behind
 *            (blocked_since_us is when it stopped moving);
 *   STALLED  blocked for BPCC_BLOCK_MAX: given up.
 * IDLE -> BLOCKED on -EAGAIN; BLOCKED -> IDLE when a drain (or the tick's
 * retry) empties it; BLOCKED -> STALLED at BPCC_BLOCK_MAX; STALLED -> IDLE
 * on a drain or when the link goes down. Any send that goes restarts the
 * blocked time.
 *
 * Why the waits do not form a cycle (section 2.2.1: a back-pressured
 * network is deadlock-free if its buffer-waiting graph has none). A
 * request for key K waits in our queue toward n only because we passed it
 * to n, and we pass a request only to a linked peer closer to K than we
 * are (dht_next_hop: XOR distance, d(n, K) < d(self, K)), so that at
 * every hop its common prefix with K stays as long or grows and the rest
 * of its distance strictly shrinks. The queues one request waits in on
 * its way are therefore strictly ordered by distance to K, exactly as the
 * seed's ring (section 2.2.3) orders them by distance along the ring: it
 * never waits on a queue it has left, nor on a hop no closer to K; its
 * path is at most MAX_HOPS long; and its chain of waits ends at the peer
 * with no one closer, which answers and forwards nothing. Answers take no
 * buffer here (dht_answer.c sends them straight to the requester, or back
 * along the path, and counts one the node below refuses as lost): nobody
 * waits on an answer to move a request, so they add no edge, which is
 * what the seed's deadlock with routed answers (section 3.3) needs.
 * A hold is per neighbour, as the seed's TCP is per connection, so it
 * also stops that neighbour's requests for other keys; cycles through
 * such cross-key waits need routing tables that disagree with one
 * another, as they may while peers come and go or when a neighbour
 * misbehaves (section 3.3). The guarantee does not rest on the ordering
 * alone: a queue blocked for BPCC_BLOCK_MAX is given up, its requests go
 * to the next-closest hop or are answered FAIL, its holds end and its
 * neighbour counts a failure and is passed over until it drains, so that
 * any wait is bounded and a neighbour that stops reading for good (or
 * sends answers through the overlay) cannot wedge the others.
 *
 * A queue's requests of others are bounded (dht_bpcc_over): a held
 * neighbour's requests still under way when it was held queue up to
 * twice BPCC_QUEUE, and those past it are answered FAIL 8 (busy), which
 * their requester sends again a little later.
 */
#define LOG_TAG "dht"
#include "dht/dht_bpcc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dht/dht_int.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/stats.h"

/* A request waiting for its neighbour. */
struct dht_bpcc_msg {
	TAILQ_ENTRY(dht_bpcc_msg) link;
	struct dhtkey prev; /* the hop it came from */
	bool has_prev;      /* (none: our own) */
	uint64_t req_id;    /* ours: the attempt's request id */
	uint16_t type;
	size_t len;
	uint8_t body[]; /* the request as the neighbour gets it */
};
TAILQ_HEAD(dht_bpcc_list, dht_bpcc_msg);

/* One neighbour's queue. */
struct dht_bpcc_q {
	struct dhtkey peer; /* the neighbour; the map's key */
	struct dht_bpcc_list msgs;
	unsigned depth;
	unsigned others;           /* of them, requests of others (has_prev) */
	uint64_t blocked_since_us; /* 0: not blocked */
	bool stalled;              /* given up at BPCC_BLOCK_MAX */
	struct dhtkey *holding;    /* neighbours held for this queue */
	size_t n_holding, cap_holding;
};

/* A neighbour we hold, for how many queues. */
struct dht_bpcc_hold {
	struct dhtkey id; /* the map's key */
	unsigned refs;
};

/* The "dht.bpcc_*" counters. */
struct dht_bpcc_counters {
	uint64_t *bpcc_queued;         /* requests that waited in a queue */
	uint64_t *bpcc_sent_later;     /* and went on from it */
	uint64_t *bpcc_depth;          /* gauge: requests waiting now */
	uint64_t *bpcc_blocked;        /* gauge: queues blocked now */
	uint64_t *bpcc_held;           /* gauge: neighbours held now */
	uint64_t *bpcc_holds;          /* holds started */
	uint64_t *bpcc_releases;       /* holds ended */
	uint64_t *bpcc_blocked_ms;     /* time queues spent blocked, summed */
	uint64_t *bpcc_block_timeouts; /* queues given up at BLOCK_MAX */
	uint64_t *bpcc_failed_over;    /* their requests sent another way */
	uint64_t *bpcc_fails;          /* requests answered FAIL instead */
	uint64_t *bpcc_overflow;       /* refused: a queue at its hard bound */
	uint64_t *bpcc_drains;         /* drain notices from the node below */
	uint64_t *bpcc_withdrawn;      /* ours taken out: their attempt's
					* time was up, or they ended */
};

struct dht_bpcc {
	struct map *queues; /* neighbour -> struct dht_bpcc_q */
	struct map *holds;  /* neighbour -> struct dht_bpcc_hold */
	size_t depth;       /* requests in all queues */
	size_t own;         /* of them, this node's own */
	size_t blocked;     /* queues blocked now */
	struct dht_bpcc_counters c;
};

static int
dht_bpcc_counters_bind(struct dht *d, struct dht_bpcc_counters *c)
{
	static const struct stats_slot slots[] = {
#define C(f) STATS_SLOT(struct dht_bpcc_counters, f)
		C(bpcc_queued),
		C(bpcc_sent_later),
		C(bpcc_depth),
		C(bpcc_blocked),
		C(bpcc_held),
		C(bpcc_holds),
		C(bpcc_releases),
		C(bpcc_blocked_ms),
		C(bpcc_block_timeouts),
		C(bpcc_failed_over),
		C(bpcc_fails),
		C(bpcc_overflow),
		C(bpcc_drains),
		C(bpcc_withdrawn),
#undef C
	};

	return stats_bind(c, slots, sizeof(slots) / sizeof(slots[0]),
	    d->env.stat, d->env.cls);
}

int
dht_bpcc_new(struct dht *d)
{
	struct dht_bpcc *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return -ENOMEM;
	d->bpcc = b;
	b->queues = map_new();
	b->holds = map_new();
	if (b->queues == NULL || b->holds == NULL ||
	    dht_bpcc_counters_bind(d, &b->c) < 0)
		return -ENOMEM;
	return 0;
}

static void
dht_bpcc_gauges(struct dht_bpcc *b)
{
	*b->c.bpcc_depth = b->depth;
	*b->c.bpcc_blocked = b->blocked;
	*b->c.bpcc_held = map_size(b->holds);
}

static struct dht_bpcc_q *
dht_bpcc_q_find(const struct dht *d, const struct dhtkey *peer)
{
	return map_get(d->bpcc->queues, peer->b, sizeof(peer->b));
}

static struct dht_bpcc_q *
dht_bpcc_q_get(struct dht *d, const struct dhtkey *peer)
{
	struct dht_bpcc_q *q = dht_bpcc_q_find(d, peer);

	if (q != NULL)
		return q;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->peer = *peer;
	TAILQ_INIT(&q->msgs);
	if (map_put(d->bpcc->queues, q->peer.b, sizeof(q->peer.b), q) < 0) {
		free(q);
		return NULL;
	}
	return q;
}

/* Whether we hold peer, for any queue: it sends us nothing new. */
static bool
dht_bpcc_is_held(const struct dht *d, const struct dhtkey *peer)
{
	return map_get(d->bpcc->holds, peer->b, sizeof(peer->b)) != NULL;
}

/* Holds peer for one more queue; the env hears of the first. False if
 * it could not be held (no memory, or the env said no). */
static bool
dht_bpcc_hold(struct dht *d, struct dht_bpcc_q *q, const struct dhtkey *peer)
{
	struct dht_bpcc *b = d->bpcc;
	struct dht_bpcc_hold *h;
	struct dhtkey *v;

	for (size_t i = 0; i < q->n_holding; i++)
		if (dhtkey_equal(&q->holding[i], peer))
			return true;
	if (q->n_holding == q->cap_holding) {
		size_t cap = q->cap_holding ? 2 * q->cap_holding : 4;

		v = realloc(q->holding, cap * sizeof(*v));
		if (v == NULL)
			return false; /* not held: the hard bound still holds */
		q->holding = v;
		q->cap_holding = cap;
	}
	h = map_get(b->holds, peer->b, sizeof(peer->b));
	if (h == NULL) {
		h = calloc(1, sizeof(*h));
		if (h == NULL)
			return false;
		h->id = *peer;
		if (map_put(b->holds, h->id.b, sizeof(h->id.b), h) < 0 ||
		    (d->env.hold != NULL &&
		        d->env.hold(d->env.cls, peer, true) < 0)) {
			(void)map_remove(b->holds, h->id.b, sizeof(h->id.b));
			free(h);
			return false;
		}
		(*b->c.bpcc_holds)++;
	}
	h->refs++;
	q->holding[q->n_holding++] = *peer;
	dht_bpcc_gauges(b);
	return true;
}

/* Ends q's holds; a neighbour still held for another queue stays held. */
static void
dht_bpcc_release(struct dht *d, struct dht_bpcc_q *q)
{
	struct dht_bpcc *b = d->bpcc;

	for (size_t i = 0; i < q->n_holding; i++) {
		const struct dhtkey *id = &q->holding[i];
		struct dht_bpcc_hold *h =
		    map_get(b->holds, id->b, sizeof(id->b));

		if (h == NULL || --h->refs > 0)
			continue;
		(void)map_remove(b->holds, h->id.b, sizeof(h->id.b));
		if (d->env.hold != NULL)
			(void)d->env.hold(d->env.cls, &h->id, false);
		(*b->c.bpcc_releases)++;
		free(h);
	}
	q->n_holding = 0;
	dht_bpcc_gauges(b);
}

static void
dht_bpcc_set_blocked(struct dht *d, struct dht_bpcc_q *q, bool blocked)
{
	struct dht_bpcc *b = d->bpcc;
	uint64_t now = dht_now(d);

	if (blocked && q->blocked_since_us == 0) {
		q->blocked_since_us = now > 0 ? now : 1;
		b->blocked++;
	} else if (!blocked && q->blocked_since_us != 0) {
		*b->c.bpcc_blocked_ms += (now - q->blocked_since_us) / 1000;
		q->blocked_since_us = 0;
		b->blocked--;
	}
	dht_bpcc_gauges(b);
}

static struct dht_bpcc_msg *
dht_bpcc_msg_new(uint16_t type, const void *body, size_t len,
    const struct dhtkey *prev)
{
	struct dht_bpcc_msg *m = malloc(sizeof(*m) + len);

	if (m == NULL)
		return NULL;
	m->type = type;
	m->len = len;
	memcpy(m->body, body, len);
	m->has_prev = prev != NULL;
	m->req_id = 0;
	if (prev != NULL) {
		m->prev = *prev;
	} else {
		struct dhtmsg_req req;

		/* Ours: our own encoding, it decodes. */
		if (dhtmsg_req_decode(type, body, len, &req) == 0)
			m->req_id = req.req_id;
	}
	return m;
}

static void
dht_bpcc_push(struct dht *d, struct dht_bpcc_q *q, struct dht_bpcc_msg *m)
{
	TAILQ_INSERT_TAIL(&q->msgs, m, link);
	q->depth++;
	q->others += m->has_prev;
	d->bpcc->depth++;
	d->bpcc->own += !m->has_prev;
	(*d->bpcc->c.bpcc_queued)++;
	/* Full: the neighbour whose request filled it stops sending to us
	 * until it drained. Our own requests hold nobody: they wait. */
	if (q->depth >= d->cfg.bpcc_queue && m->has_prev)
		(void)dht_bpcc_hold(d, q, &m->prev);
	dht_bpcc_gauges(d->bpcc);
}

/*
 * Whether a request of others from prev is refused by q (NULL: none
 * yet), at its hard bound. Only requests a held neighbour had sent
 * already count against it, and only others' requests count in it (ours
 * are bounded apart, DHT_BPCC_OWN_MAX). A neighbour not held is held now
 * and its request queued, past the bound too: refused, it would be sent
 * again and again, never held, and its requester's attempts would all
 * end in these FAILs (FAIL 2, no route) and the lookup with them, lost
 * for good, while the queue was merely busy (issue 14: a flood on one
 * shared CPU lost lookups so, and queues of our own requests refused
 * everyone's). Held, it sends nothing new until the queue drained to
 * half, so that each neighbour adds at most one request past the bound
 * in all queues together.
 * A hold is not instant: the core closes the held neighbour's window,
 * and what it had sent before it heard of that (a window of frames in
 * flight, and what waits in our core) still comes, however many
 * requests that is. Those past the bound are refused with FAIL 8 (busy),
 * not FAIL 2: the requester sends the request again a little later and
 * counts no attempt for it (dht_attempt_busy_again), where FAIL 2 cost
 * it one of DHT_ATTEMPTS_MAX, and under load its next ones met the same
 * full queues at once, so that lookups failed for good within
 * milliseconds (integration.dht_bpcc on a loaded CPU: 140 refused, 6
 * lookups lost). The bound stays a count of requests, so that memory
 * stays bounded whatever the core's window holds.
 */
static bool
dht_bpcc_over(struct dht *d, struct dht_bpcc_q *q, const struct dhtkey *prev)
{
	if (q == NULL || q->others < DHT_BPCC_HARD_FACTOR * d->cfg.bpcc_queue)
		return false;
	return dht_bpcc_is_held(d, prev) || !dht_bpcc_hold(d, q, prev);
}

int
dht_bpcc_send(struct dht *d, const struct dhtkey *next, uint16_t type,
    const void *body, size_t len, const struct dhtkey *prev)
{
	struct dht_bpcc_q *q;
	struct dht_bpcc_msg *m;
	int r;

	if (d->cfg.congestion != DHT_CC_BPCC)
		return d->env.send(d->env.cls, next, type, body, len);
	q = dht_bpcc_q_find(d, next);
	if (q == NULL || q->depth == 0) {
		r = d->env.send(d->env.cls, next, type, body, len);
		if (r != -EAGAIN) {
			if (r == 0 && q != NULL) {
				q->stalled = false;
				dht_bpcc_set_blocked(d, q, false);
			}
			return r;
		}
		/* A neighbour given up on is not waited for again until it
		 * drains: the caller tries another way. */
		if (q != NULL && q->stalled)
			return -EAGAIN;
	}
	if (prev != NULL ? dht_bpcc_over(d, q, prev)
	                 : d->bpcc->own >= DHT_BPCC_OWN_MAX) {
		(*d->bpcc->c.bpcc_overflow)++;
		return prev != NULL ? -EBUSY : -ENOBUFS;
	}
	if (q == NULL && (q = dht_bpcc_q_get(d, next)) == NULL)
		return -ENOMEM;
	m = dht_bpcc_msg_new(type, body, len, prev);
	if (m == NULL)
		return -ENOMEM;
	dht_bpcc_set_blocked(d, q, true);
	dht_bpcc_push(d, q, m);
	return 0;
}

bool
dht_bpcc_stalled(const struct dht *d, const struct dhtkey *peer)
{
	const struct dht_bpcc_q *q;

	if (d->cfg.congestion != DHT_CC_BPCC || d->bpcc == NULL)
		return false;
	q = dht_bpcc_q_find(d, peer);
	return q != NULL && q->stalled;
}

/* m could not go to its neighbour, which is passed over now: a
 * request routed by key is routed again as if peer were not there (to
 * the next-closest hop, or it ends here); one sent to a chosen storing
 * peer is answered FAIL. Frees m; may run our own requests' callbacks. */
static void
dht_bpcc_give_up(struct dht *d, struct dht_bpcc_msg *m)
{
	const struct dhtkey *prev = m->has_prev ? &m->prev : NULL;
	struct dhtmsg_req req;
	struct dhtmsg_ans a;

	/* Our own encoding: it decodes. */
	if (dhtmsg_req_decode(m->type, m->body, m->len, &req) < 0) {
		free(m);
		return;
	}
	if (req.flags == 0 && req.hops_left < UINT8_MAX) {
		(*d->bpcc->c.bpcc_failed_over)++;
		dht_route_resume(d, prev, &req);
		free(m);
		return;
	}
	(*d->bpcc->c.bpcc_fails)++;
	dht_answer_init(d, &req, FERRY_MSG_DHT_FAIL, &a);
	a.code = DHTMSG_NO_ROUTE;
	/* The answer points into m's body: freed after. */
	dht_answer_send(d, &a, prev, req.helo, req.helo_len);
	free(m);
}

/* Takes every request out of q (its holds end) and gives each up. */
static void
dht_bpcc_empty(struct dht *d, struct dht_bpcc_q *q)
{
	struct dht_bpcc_list list;
	struct dht_bpcc_msg *m;

	TAILQ_INIT(&list);
	TAILQ_CONCAT(&list, &q->msgs, link);
	d->bpcc->depth -= q->depth;
	q->depth = 0;
	q->others = 0;
	dht_bpcc_set_blocked(d, q, false);
	dht_bpcc_release(d, q);
	/* q may get new requests meanwhile (a callback's), never freed. */
	while ((m = TAILQ_FIRST(&list)) != NULL) {
		TAILQ_REMOVE(&list, m, link);
		d->bpcc->own -= !m->has_prev;
		dht_bpcc_give_up(d, m);
	}
	dht_bpcc_gauges(d->bpcc);
}

/* Sends what q's neighbour takes now, in order. */
static void
dht_bpcc_flush(struct dht *d, struct dht_bpcc_q *q)
{
	struct dht_bpcc_msg *m;
	bool moved = false;
	unsigned left = q->depth;
	int r = 0;

	/* Those queued now, at most: one routed again may come back here. */
	while (left-- > 0 && (m = TAILQ_FIRST(&q->msgs)) != NULL) {
		r = d->env.send(d->env.cls, &q->peer, m->type, m->body, m->len);
		if (r == -EAGAIN)
			break;
		TAILQ_REMOVE(&q->msgs, m, link);
		q->depth--;
		q->others -= m->has_prev;
		d->bpcc->depth--;
		d->bpcc->own -= !m->has_prev;
		if (r < 0) {
			dht_bpcc_give_up(d, m);
			continue;
		}
		(*d->bpcc->c.bpcc_sent_later)++;
		free(m);
		moved = true;
	}
	if (moved || q->depth == 0) {
		q->stalled = false;
		dht_bpcc_set_blocked(d, q, false);
		if (q->depth > 0)
			dht_bpcc_set_blocked(d, q, true);
	}
	if (q->depth <= d->cfg.bpcc_queue / 2)
		dht_bpcc_release(d, q);
	dht_bpcc_gauges(d->bpcc);
}

void
dht_drained(struct dht *d, const struct dhtkey *peer)
{
	struct dht_bpcc_q *q;

	if (d->bpcc == NULL)
		return;
	(*d->bpcc->c.bpcc_drains)++;
	q = dht_bpcc_q_find(d, peer);
	if (q == NULL)
		return;
	q->stalled = false;
	dht_bpcc_flush(d, q);
}

void
dht_bpcc_peer_down(struct dht *d, const struct dhtkey *peer)
{
	struct dht_bpcc_q *q = dht_bpcc_q_find(d, peer);

	if (q == NULL)
		return;
	q->stalled = false;
	dht_bpcc_empty(d, q);
}

/* Blocked for BPCC_BLOCK_MAX: given up. */
static void
dht_bpcc_timeout(struct dht *d, struct dht_bpcc_q *q)
{
	char hex[2 * DHTKEY_LEN + 1];

	(*d->bpcc->c.bpcc_block_timeouts)++;
	dhtkey_hex(&q->peer, hex);
	log_info("peer %.16s: took none of %u requests for %llu ms, "
	         "passed over until it drains",
	    hex, q->depth,
	    (unsigned long long)(dht_now(d) - q->blocked_since_us) / 1000);
	(void)dht_entry_failed(d, &q->peer);
	q->stalled = true;
	dht_bpcc_empty(d, q);
}

struct dht_bpcc_walk {
	struct dht_bpcc_q **v;
	size_t n, max;
};

static bool
dht_bpcc_collect(void *cls, const void *key, size_t len, void *value)
{
	struct dht_bpcc_walk *w = cls;

	(void)key;
	(void)len;
	if (w->n < w->max)
		w->v[w->n++] = value;
	return w->n < w->max;
}

/* The queues now, into a malloc'd array (the map may change while they
 * are served). NULL with *n 0 if there are none or no memory. */
static struct dht_bpcc_q **
dht_bpcc_all(const struct dht *d, size_t *n)
{
	struct dht_bpcc_walk w = { .n = 0, .max = map_size(d->bpcc->queues) };

	*n = 0;
	if (w.max == 0 || (w.v = calloc(w.max, sizeof(*w.v))) == NULL)
		return NULL;
	map_foreach(d->bpcc->queues, dht_bpcc_collect, &w);
	*n = w.n;
	return w.v;
}

/*
 * Our own requests of op that still wait in a queue are taken out, none
 * of them sent: op's latest attempt's time is up (dht_bpcc_expired) or
 * op ended (dht_bpcc_ended). Issue 14: a neighbour that died (SIGKILL,
 * over UDP) takes nothing more, the core refuses what we send it once
 * its window toward it is full, and our request waited in its queue; the
 * attempt that gave up on it sent the next one another way, but the old
 * one stayed, counted against DHT_BPCC_OWN_MAX, and at BPCC_BLOCK_MAX was
 * routed again as a duplicate of an attempt given up on. Waiting in our
 * own queue it is not on its way: it is the attempt layer's to retry, on
 * its own time, and the next attempt avoids that hop (dht_attempt_next),
 * so that taking it out loses nothing. The neighbour is not declared
 * failed, and its queue goes on for the others' requests, which keep
 * BPCC_BLOCK_MAX: their requesters are upstream, and to them the wait is
 * the back-pressure; ours hold nobody (dht_bpcc_push). A queue emptied
 * so is no longer blocked (nothing waits on its neighbour), and its holds
 * end once it is down to half, as after a drain.
 */
static void
dht_bpcc_withdraw(struct dht *d, const struct dht_op *op)
{
	struct dht_bpcc *b = d->bpcc;
	struct dht_bpcc_q **v;
	size_t n;

	if (b == NULL || b->own == 0 || op->attempts == 0)
		return;
	v = dht_bpcc_all(d, &n);
	for (size_t i = 0; i < n; i++) {
		struct dht_bpcc_q *q = v[i];
		struct dht_bpcc_msg *m, *next;
		bool took = false;

		for (m = TAILQ_FIRST(&q->msgs); m != NULL; m = next) {
			next = TAILQ_NEXT(m, link);
			if (m->has_prev || dht_attempt_of(op, m->req_id) < 0)
				continue;
			TAILQ_REMOVE(&q->msgs, m, link);
			q->depth--;
			b->depth--;
			b->own--;
			(*b->c.bpcc_withdrawn)++;
			free(m);
			took = true;
		}
		if (!took)
			continue;
		if (q->depth == 0)
			dht_bpcc_set_blocked(d, q, false);
		if (q->depth <= d->cfg.bpcc_queue / 2)
			dht_bpcc_release(d, q);
	}
	free(v);
	dht_bpcc_gauges(b);
}

static void
dht_bpcc_q_free(struct dht_bpcc_q *q)
{
	struct dht_bpcc_msg *m;

	while ((m = TAILQ_FIRST(&q->msgs)) != NULL) {
		TAILQ_REMOVE(&q->msgs, m, link);
		free(m);
	}
	free(q->holding);
	free(q);
}

void
dht_bpcc_tick(struct dht *d)
{
	uint64_t now = dht_now(d);
	struct dht_bpcc_q **v;
	size_t n;

	v = dht_bpcc_all(d, &n);
	for (size_t i = 0; i < n; i++) {
		struct dht_bpcc_q *q = v[i];

		/* A drain notice may not come (an env without them): the
		 * neighbour is asked again once a tick. */
		if (q->depth > 0)
			dht_bpcc_flush(d, q);
		if (q->depth > 0 && q->blocked_since_us != 0 &&
		    now - q->blocked_since_us >= d->cfg.bpcc_block_max_us)
			dht_bpcc_timeout(d, q);
	}
	/* Idle queues go; the given up stay marked until they drain. */
	for (size_t i = 0; i < n; i++) {
		struct dht_bpcc_q *q = v[i];

		if (q->depth > 0 || q->stalled || q->n_holding > 0 ||
		    q->blocked_since_us != 0)
			continue;
		(void)map_remove(d->bpcc->queues, q->peer.b, sizeof(q->peer.b));
		dht_bpcc_q_free(q);
	}
	free(v);
}

void
dht_bpcc_free(struct dht *d)
{
	struct dht_bpcc *b = d->bpcc;
	struct dht_bpcc_q **v;
	size_t n;

	if (b == NULL)
		return;
	if (b->queues != NULL && b->holds != NULL) {
		v = dht_bpcc_all(d, &n);
		for (size_t i = 0; i < n; i++) {
			dht_bpcc_release(d, v[i]);
			dht_bpcc_q_free(v[i]);
		}
		free(v);
	}
	map_free(b->queues);
	map_free(b->holds);
	free(b);
	d->bpcc = NULL;
}

void
dht_bpcc_get_status(struct dht *d, struct dht_bpcc_status *ret)
{
	struct dht_bpcc *b = d->bpcc;

	memset(ret, 0, sizeof(*ret));
	ret->on = d->cfg.congestion == DHT_CC_BPCC;
	ret->queue = d->cfg.bpcc_queue;
	ret->block_max_us = d->cfg.bpcc_block_max_us;
	ret->queues = map_size(b->queues);
	ret->depth = b->depth;
	ret->blocked = b->blocked;
	ret->held = map_size(b->holds);
	ret->holds = *b->c.bpcc_holds;
	ret->releases = *b->c.bpcc_releases;
	ret->block_timeouts = *b->c.bpcc_block_timeouts;
	ret->failed_over = *b->c.bpcc_failed_over;
	ret->fails = *b->c.bpcc_fails;
	ret->overflow = *b->c.bpcc_overflow;
}

static int
dht_bpcc_deeper(const void *x, const void *y)
{
	const struct dht_bpcc_peer *a = x, *b = y;

	if (a->depth != b->depth)
		return a->depth > b->depth ? -1 : 1;
	return memcmp(a->id.b, b->id.b, sizeof(a->id.b));
}

struct dht_bpcc_held_walk {
	const struct dht *d;
	struct dht_bpcc_peer *ret;
	size_t got, max;
};

/* A neighbour we hold that has no queue of its own. */
static bool
dht_bpcc_held_visit(void *cls, const void *key, size_t len, void *value)
{
	struct dht_bpcc_held_walk *w = cls;
	const struct dht_bpcc_hold *h = value;

	(void)key;
	(void)len;
	if (w->got == w->max)
		return false;
	if (dht_bpcc_q_find(w->d, &h->id) == NULL) {
		memset(&w->ret[w->got], 0, sizeof(w->ret[w->got]));
		w->ret[w->got].id = h->id;
		w->ret[w->got++].held = true;
	}
	return true;
}

size_t
dht_bpcc_get_peers(struct dht *d, struct dht_bpcc_peer *ret, size_t max)
{
	struct dht_bpcc_held_walk w = { .d = d, .ret = ret, .max = max };
	uint64_t now = dht_now(d);
	struct dht_bpcc_q **v;
	size_t n;

	v = dht_bpcc_all(d, &n);
	for (size_t i = 0; i < n && w.got < max; i++) {
		struct dht_bpcc_q *q = v[i];
		struct dht_bpcc_peer *p = &ret[w.got++];

		memset(p, 0, sizeof(*p));
		p->id = q->peer;
		p->depth = q->depth;
		p->blocked = q->blocked_since_us != 0;
		p->blocked_us = p->blocked ? now - q->blocked_since_us : 0;
		p->stalled = q->stalled;
		p->held = map_get(d->bpcc->holds, q->peer.b,
		              sizeof(q->peer.b)) != NULL;
	}
	free(v);
	map_foreach(d->bpcc->holds, dht_bpcc_held_visit, &w);
	qsort(ret, w.got, sizeof(*ret), dht_bpcc_deeper);
	return w.got;
}

/* --- BPCC as a scheme of the congestion control's seam (dht_cc.h) ----- */

/* Every request sent to a next hop goes through the neighbour queues. A
 * refusal (-EAGAIN: a neighbour given up at BPCC_BLOCK_MAX that still
 * refuses) is answered to the requester, never a silent drop: BPCC loses
 * nothing. */
static int
dht_bpcc_forward(struct dht *d, const struct dhtkey *from,
    const struct dhtkey *next, uint16_t type, const void *body, size_t len)
{
	int r = dht_bpcc_send(d, next, type, body, len, from);

	return r == -EAGAIN ? -ENOBUFS : r;
}

/*
 * Nothing is dropped for congestion: a request waits in queues, and one
 * whose hop stopped taking any is routed again after BPCC_BLOCK_MAX.
 * Sent again sooner, it would only add to the load that delays it (the
 * seed's BPCC sends nothing twice): an attempt waits BPCC_BLOCK_MAX at
 * least, but never more than its share of REQUEST_TIMEOUT (one of
 * DHT_ATTEMPTS_MAX). Issue 14: with REQUEST_TIMEOUT at or below
 * BPCC_BLOCK_MAX (3 s against 4 s in integration.dht) the first attempt
 * took the request's whole time, and a GET whose first hop was a holder
 * just killed timed out, where without control its next attempt asks
 * the other holders directly; a request of ours has the attempt layer's
 * retries as its only way around a dead peer, and they must fit in its
 * time. What of ours still waits in a queue then is taken out
 * (dht_bpcc_expired).
 */
static uint64_t
dht_bpcc_timeout_us(struct dht *d, const struct dht_op *op, uint64_t dht_us)
{
	uint64_t least = d->cfg.bpcc_block_max_us,
	         share = d->cfg.timeout_us / DHT_ATTEMPTS_MAX;

	(void)op;
	if (least > share)
		least = share;
	return dht_us > least ? dht_us : least;
}

/* op's latest attempt's time is up: what of it still waits here goes
 * (dht_bpcc_withdraw); the next attempt takes another way. */
static void
dht_bpcc_expired(struct dht *d, struct dht_op *op)
{
	dht_bpcc_withdraw(d, op);
}

/* op ended: what of it still waits here has nobody to answer. */
static void
dht_bpcc_ended(struct dht *d, struct dht_op *op)
{
	dht_bpcc_withdraw(d, op);
}

const struct dht_cc_scheme dht_cc_bpcc = {
	.name = "bpcc",
	.forward = dht_bpcc_forward,
	.timeout_us = dht_bpcc_timeout_us,
	.expired = dht_bpcc_expired,
	.ended = dht_bpcc_ended,
	.peer_down = dht_bpcc_peer_down,
	.tick = dht_bpcc_tick,
};
