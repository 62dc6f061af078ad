/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * CSCC (src/dht/dht_cscc.c, seed 002 section 2.1) and the seam of the
 * DHT's congestion control (src/dht/dht_cc.c). First the window alone,
 * with the seed's constants: slow start, avoidance, loss from either
 * side of ssthresh, the RTT and error estimates and the timeout. Then
 * real DHT nodes (struct dht, its routing, wire encoding and attempts)
 * on this test's network in virtual time, each message taking a one-way
 * delay and, past 4 KiB, a transfer time: requests beyond the credits
 * wait their turn and the queue's bound refuses more; an attempt with no
 * ACK within the RTO is a loss and is sent again; an ACK goes ahead of a
 * large block, so the RTT is the request's; a relay whose next hop's
 * queue is full drops the request without an answer (none, the
 * baseline); a peer that answers two attempts of a request counts the
 * second. The network is this file's, not tests/lib/dhtsim's, which
 * delivers every message in order at one event's time: CSCC's timing
 * needs a one-way delay and, for the ACK, a transfer time by size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dht.h"
#include "dht/dht_cscc.h"
#include "dht/dht_int.h"
#include "lib/stats.h"
#include "unit.h"

/* --- the window alone --------------------------------------------------- */

static void
window_new(struct dht_cscc_window *w)
{
	struct dht_cscc_cfg cfg;

	dht_cscc_cfg_default(&cfg);
	ck_assert(dht_cscc_cfg_valid(&cfg));
	dht_cscc_window_init(w, &cfg);
}

/* Sends while the window is open: how many went. */
static unsigned
window_fill(struct dht_cscc_window *w)
{
	unsigned n = 0;

	while (dht_cscc_window_open(w)) {
		dht_cscc_window_send(w);
		n++;
	}
	return n;
}

START_TEST(test_window_defaults)
{
	struct dht_cscc_cfg cfg;

	dht_cscc_cfg_default(&cfg);
	ck_assert_uint_eq(cfg.loss_credits, 5);
	ck_assert(cfg.decrease == 0.8);
	ck_assert(cfg.rtt_gain == 0.125);
	ck_assert(cfg.err_gain == 0.25);
	ck_assert_uint_eq(cfg.rto_err_factor, 10);
	ck_assert_uint_eq(cfg.initial_credits, 5);
	cfg.decrease = 1;
	ck_assert(!dht_cscc_cfg_valid(&cfg));
	dht_cscc_cfg_default(&cfg);
	cfg.loss_credits = cfg.max_credits + 1;
	ck_assert(!dht_cscc_cfg_valid(&cfg));
}
END_TEST

/* Slow start: each ACK adds a credit, so the window doubles every round
 * trip (5 out, 5 ACKs: 10 may be out). */
START_TEST(test_window_slow_start)
{
	struct dht_cscc_window w;

	window_new(&w);
	ck_assert(w.credits == 5);
	ck_assert(w.ssthresh == 1000);
	ck_assert_uint_eq(window_fill(&w), 5);
	ck_assert(!dht_cscc_window_open(&w));
	for (int i = 0; i < 5; i++)
		dht_cscc_window_ack(&w, 20000);
	ck_assert(w.credits == 10);
	ck_assert_uint_eq(w.in_flight, 0);
	ck_assert_uint_eq(window_fill(&w), 10);
	for (int i = 0; i < 10; i++)
		dht_cscc_window_ack(&w, 20000);
	ck_assert(w.credits == 20);
	ck_assert_uint_eq(w.acks, 15);
	/* Never past MAX_CREDITS. */
	for (int i = 0; i < 2000; i++)
		dht_cscc_window_ack(&w, 20000);
	ck_assert(w.credits == 1000);
}
END_TEST

/* Loss above ssthresh: ssthresh = 0.8 c, c = 5; then slow start up to
 * ssthresh, and avoidance past it: c += 1/c per ACK, about one credit a
 * round trip. */
START_TEST(test_window_loss_and_avoidance)
{
	struct dht_cscc_window w;
	double c;

	window_new(&w);
	for (int i = 0; i < 15; i++)
		dht_cscc_window_ack(&w, 20000);
	ck_assert(w.credits == 20);
	dht_cscc_window_loss(&w);
	ck_assert(w.credits == 5);
	ck_assert(w.ssthresh == 1000 * 0.8);
	/* c (20) was below ssthresh (1000): the loss cut ssthresh itself. */
	ck_assert_uint_eq(w.losses, 1);
	/* Grow past the new ssthresh would take long: a window that passed
	 * its ssthresh shows the other branch. */
	w.ssthresh = 12;
	for (int i = 0; i < 7; i++)
		dht_cscc_window_ack(&w, 20000);
	ck_assert(w.credits == 12);
	/* Avoidance: 12 + 1/12, then + 1/(12 + 1/12). */
	dht_cscc_window_ack(&w, 20000);
	ck_assert(w.credits == 12 + 1.0 / 12);
	c = w.credits;
	dht_cscc_window_ack(&w, 20000);
	ck_assert(w.credits == c + 1 / c);
	/* A round trip's worth of ACKs (12) adds about one credit. */
	for (int i = 0; i < 12; i++)
		dht_cscc_window_ack(&w, 20000);
	ck_assert(w.credits > 13 && w.credits < 14.2);
	/* c is above ssthresh now: the loss takes 0.8 c. */
	c = w.credits;
	dht_cscc_window_loss(&w);
	ck_assert(w.ssthresh == 0.8 * c);
	ck_assert(w.credits == 5);
	/* c (5) below ssthresh: the next loss takes 0.8 ssthresh. */
	dht_cscc_window_loss(&w);
	ck_assert(w.ssthresh == 0.8 * 0.8 * c);
	ck_assert(w.credits == 5);
	ck_assert_uint_eq(w.losses, 3);
	/* Five may be out again, whatever was out before. */
	ck_assert_uint_eq(window_fill(&w), 5);
	dht_cscc_window_release(&w);
	ck_assert_uint_eq(w.in_flight, 4);
	ck_assert(w.credits == 5);
}
END_TEST

/* RTT_est = 0.875 RTT_est + 0.125 RTT; err = 0.75 err + 0.25 |RTT -
 * RTT_est|; timeout = RTT_est + 10 err. The first sample sets RTT_est,
 * and err to half of it; before it, the timeout is INITIAL_RTO. */
START_TEST(test_window_rto)
{
	struct dht_cscc_window w;
	double rtt, err;

	window_new(&w);
	ck_assert_uint_eq(dht_cscc_window_rto_us(&w), 1000000);
	dht_cscc_window_send(&w);
	dht_cscc_window_ack(&w, 40000);
	ck_assert(w.rtt_us == 40000);
	ck_assert(w.err_us == 20000);
	ck_assert_uint_eq(dht_cscc_window_rto_us(&w), 40000 + 10 * 20000);
	dht_cscc_window_ack(&w, 80000);
	err = 0.75 * 20000 + 0.25 * 40000;
	rtt = 0.875 * 40000 + 0.125 * 80000;
	ck_assert(w.err_us == err);
	ck_assert(w.rtt_us == rtt);
	ck_assert_uint_eq(dht_cscc_window_rto_us(&w),
	    (uint64_t)(rtt + 10 * err));
	/* Steady round trips: the error fades, the timeout closes in. */
	for (int i = 0; i < 100; i++)
		dht_cscc_window_ack(&w, 30000);
	ck_assert(w.rtt_us > 29900 && w.rtt_us < 30100);
	ck_assert_uint_lt(dht_cscc_window_rto_us(&w), 31000);
	ck_assert_uint_gt(dht_cscc_window_rto_us(&w), 29900);
}
END_TEST

/* --- DHT nodes on a network in virtual time ----------------------------- */

#define N_MAX        4
#define DELAY_US     10000u /* one way */
#define BYTES_PER_MS 40u    /* past 4 KiB: 8 KiB take 200 ms more */
#define TICK_US      100000u
#define EV_MAX       4096

enum ev_kind { EV_MSG, EV_STORED, EV_GOT, EV_WAKE };

struct ev {
	uint64_t at;
	enum ev_kind kind;
	int from, to;
	uint16_t type;
	uint8_t *body;
	size_t len;
	dht_store_done_fn *done;
	dht_store_got_fn *got;
	void *arg;
};

struct node {
	int idx;
	struct identity *ident;
	struct dhtkey id;
	struct dht *dht;
	struct stats *stats;
	uint8_t *block; /* the one block it holds, or NULL */
	size_t block_len;
	struct dhtkey block_key;
	unsigned drop_requests; /* requests that come here are lost */
	unsigned drop_answers;  /* answers sent from here are lost */
	unsigned full;          /* sends of requests to here say -EAGAIN */
};

static struct node nodes[N_MAX];
static int n_nodes;
static bool linkm[N_MAX][N_MAX];
static struct ev evs[EV_MAX];
static size_t n_evs;
static uint64_t now_us;

static void
push(struct ev e)
{
	ck_assert_uint_lt(n_evs, EV_MAX);
	evs[n_evs++] = e;
}

static int
node_of(const struct dhtkey *k)
{
	for (int i = 0; i < n_nodes; i++)
		if (dhtkey_equal(&nodes[i].id, k))
			return i;
	return -1;
}

static int
env_send(void *cls, const struct dhtkey *peer, uint16_t type, const void *body,
    size_t len)
{
	struct node *n = cls;
	int to = node_of(peer);
	uint64_t delay = DELAY_US;

	if (to < 0 || !linkm[n->idx][to])
		return -ENOTCONN;
	if (dhtmsg_is_request(type) && nodes[to].full > 0) {
		nodes[to].full--;
		return -EAGAIN;
	}
	if (dhtmsg_is_request(type) && nodes[to].drop_requests > 0) {
		nodes[to].drop_requests--;
		return 0;
	}
	if (dhtmsg_is_answer(type) && n->drop_answers > 0) {
		n->drop_answers--;
		return 0;
	}
	if (len > DHTMSG_ACK_OVER)
		delay += (uint64_t)len * 1000 / BYTES_PER_MS;
	push((struct ev){ .at = now_us + delay,
	    .kind = EV_MSG,
	    .from = n->idx,
	    .to = to,
	    .type = type,
	    .body = malloc(len ? len : 1),
	    .len = len });
	ck_assert_ptr_nonnull(evs[n_evs - 1].body);
	memcpy(evs[n_evs - 1].body, body, len);
	return 0;
}

static bool
env_linked(void *cls, const struct dhtkey *peer)
{
	struct node *n = cls;
	int to = node_of(peer);

	return to >= 0 && linkm[n->idx][to];
}

static int
env_link(void *cls, const struct dhtkey *peer, const void *helo,
    size_t helo_len)
{
	(void)cls;
	(void)peer;
	(void)helo;
	(void)helo_len;
	return -ENOENT;
}

static size_t
env_helo(void *cls, uint8_t *buf, size_t size)
{
	(void)cls;
	(void)buf;
	(void)size;
	return 0;
}

static size_t
env_peer_helo(void *cls, const struct dhtkey *peer, uint8_t *buf, size_t size)
{
	(void)peer;
	return env_helo(cls, buf, size);
}

static uint64_t
env_now(void *cls)
{
	(void)cls;
	return now_us;
}

static uint64_t
env_wall(void *cls)
{
	(void)cls;
	return 1700000000 + now_us / 1000000;
}

static bool
env_has(void *cls, const struct dhtkey *key)
{
	struct node *n = cls;

	return n->block != NULL && dhtkey_equal(&n->block_key, key);
}

static int
env_put(void *cls, const struct dhtkey *key, const void *data, size_t len,
    uint64_t expiry, dht_store_done_fn *done, void *arg)
{
	struct node *n = cls;

	(void)key;
	(void)data;
	(void)len;
	(void)expiry;
	push((struct ev){ .at = now_us,
	    .kind = EV_STORED,
	    .to = n->idx,
	    .done = done,
	    .arg = arg });
	return 0;
}

static int
env_get(void *cls, const struct dhtkey *key, dht_store_got_fn *got, void *arg)
{
	struct node *n = cls;

	(void)key;
	push((struct ev){ .at = now_us,
	    .kind = EV_GOT,
	    .to = n->idx,
	    .got = got,
	    .arg = arg });
	return 0;
}

static void
env_wake(void *cls)
{
	push((struct ev){ .at = now_us,
	    .kind = EV_WAKE,
	    .to = ((struct node *)cls)->idx });
}

static uint64_t *
env_stat(void *cls, const char *name)
{
	return stats_counter2(((struct node *)cls)->stats, "dht", name);
}

static uint64_t
stat(int i, const char *name)
{
	char full[64];

	(void)snprintf(full, sizeof(full), "dht.%s", name);
	return stats_get(nodes[i].stats, full);
}

static void
node_start(int i, uint8_t salt, enum dht_congestion cc, unsigned cc_queue)
{
	struct node *n = &nodes[i];
	struct dht_env env = {
		.cls = n,
		.send = env_send,
		.linked = env_linked,
		.link = env_link,
		.own_helo = env_helo,
		.peer_helo = env_peer_helo,
		.now_us = env_now,
		.wall_s = env_wall,
		.store_has = env_has,
		.store_put = env_put,
		.store_get = env_get,
		.stat = env_stat,
		.wake = env_wake,
	};
	struct dht_cfg cfg;
	uint8_t seed[32];

	memset(n, 0, sizeof(*n));
	n->idx = i;
	memset(seed, 0, sizeof(seed));
	seed[0] = (uint8_t)i;
	seed[1] = salt;
	ck_assert_int_eq(identity_from_seed(seed, &n->ident), 0);
	dhtkey_from_peer(&n->ident->id, &n->id);
	n->stats = stats_new();
	ck_assert_ptr_nonnull(n->stats);
	env.ident = n->ident;
	dht_cfg_default(&cfg);
	cfg.congestion = cc;
	cfg.cc_queue = cc_queue;
	cfg.timeout_us = 10u * 1000 * 1000;
	cfg.refresh_us = 3600ull * 1000 * 1000;
	ck_assert_int_eq(dht_new(&env, &cfg, &n->dht), 0);
}

static void
deliver(struct ev *e)
{
	struct node *to = &nodes[e->to];

	switch (e->kind) {
	case EV_MSG:
		if (linkm[e->from][e->to])
			dht_receive(to->dht, &nodes[e->from].id, e->type,
			    e->body, e->len);
		free(e->body);
		break;
	case EV_STORED:
		e->done(e->arg, 0);
		break;
	case EV_GOT:
		if (to->block != NULL)
			e->got(e->arg, 0, to->block, to->block_len, 0);
		else
			e->got(e->arg, -ENOENT, NULL, 0, 0);
		break;
	default:
		dht_tick(to->dht);
		break;
	}
}

/* Runs until end: events in the order of their time (and of their
 * sending), a tick of every node every 100 ms and at its deadlines. */
static void
run_until(uint64_t end)
{
	static uint64_t last_tick;

	while (now_us < end) {
		size_t first = n_evs;
		struct ev e;

		for (size_t i = 0; i < n_evs; i++)
			if (evs[i].at <= now_us &&
			    (first == n_evs || evs[i].at < evs[first].at))
				first = i;
		if (first < n_evs) {
			e = evs[first];
			memmove(&evs[first], &evs[first + 1],
			    (n_evs - first - 1) * sizeof(evs[0]));
			n_evs--;
			deliver(&e);
			continue;
		}
		now_us += 100;
		for (int i = 0; i < n_nodes; i++)
			if (now_us >= dht_next_deadline_us(nodes[i].dht) ||
			    now_us - last_tick >= TICK_US)
				dht_tick(nodes[i].dht);
		if (now_us - last_tick >= TICK_US)
			last_tick = now_us;
	}
}

static void
run_ms(uint64_t ms)
{
	run_until(now_us + ms * 1000);
}

static void
link_nodes(int a, int b)
{
	linkm[a][b] = linkm[b][a] = true;
	dht_peer_up(nodes[a].dht, &nodes[b].id, 0);
	dht_peer_up(nodes[b].dht, &nodes[a].id, 0);
}

/* n nodes in a line (0 - 1 - ... - n-1), each running cc, each closer
 * to the last one's id than the one before it (identities are drawn
 * until they are), so that a request of node 0 for that key goes hop by
 * hop to the end; the joins' lookups are answered before it returns. */
static void
net_line(int n, enum dht_congestion cc, unsigned cc_queue)
{
	uint8_t salt = 0;
	bool ordered;

	n_evs = 0;
	now_us = 1000000;
	memset(linkm, 0, sizeof(linkm));
	n_nodes = n;
	do {
		for (int i = 0; i < n; i++) {
			if (salt > 0) {
				dht_free(nodes[i].dht);
				stats_free(nodes[i].stats);
				identity_free(nodes[i].ident);
			}
			node_start(i, salt, cc, cc_queue);
		}
		salt++;
		ordered = true;
		for (int i = 0; i + 2 < n; i++)
			if (dhtkey_closer(&nodes[n - 1].id, &nodes[i + 1].id,
			        &nodes[i].id) >= 0)
				ordered = false;
	} while (!ordered);
	for (int i = 0; i + 1 < n; i++)
		link_nodes(i, i + 1);
	run_ms(2000);
}

static void
net_free(void)
{
	for (size_t i = 0; i < n_evs; i++)
		free(evs[i].body);
	n_evs = 0;
	for (int i = 0; i < n_nodes; i++) {
		dht_free(nodes[i].dht);
		stats_free(nodes[i].stats);
		identity_free(nodes[i].ident);
		free(nodes[i].block);
		nodes[i].dht = NULL;
	}
}

/* What a request of the test's ended with. */
struct outcome {
	bool done;
	int status;
	uint64_t at; /* virtual time it ended */
	int order;   /* how many ended before it */
};

static int n_ended;

static void
on_done(void *cls, const struct dht_result *r)
{
	struct outcome *o = cls;

	ck_assert(!o->done);
	o->done = true;
	o->status = r->status;
	o->at = now_us;
	o->order = n_ended++;
}

/* Gives node i a block of len bytes (pattern b, and a last byte drawn
 * until the key is closer to node i than to any other, so that requests
 * for it end there), returns its key. */
static struct dhtkey
give_block(int i, size_t len, uint8_t b)
{
	struct node *n = &nodes[i];
	bool closest;

	n->block = malloc(len);
	ck_assert_ptr_nonnull(n->block);
	memset(n->block, b, len);
	n->block_len = len;
	do {
		n->block[len - 1]++;
		dhtkey_of_block(n->block, len, &n->block_key);
		closest = true;
		for (int j = 0; j < n_nodes; j++)
			if (j != i &&
			    dhtkey_closer(&n->block_key, &nodes[j].id,
			        &n->id) <= 0)
				closest = false;
	} while (!closest);
	return n->block_key;
}

static struct dht_cc_status
cc_status(int i)
{
	struct dht_status st;

	dht_get_status(nodes[i].dht, &st);
	return st.cc;
}

/* Twenty GETs at once from node 0 to its neighbour: five go (the first
 * credits), fifteen wait; each ACK brings a credit back and one more
 * (slow start), so that the rest start in rounds of growing size, first
 * come first started; all end well, the window at 25 (5 + 20 ACKs) and
 * the RTT estimate one round trip. A twenty-first is refused at once
 * with CC_QUEUE = 15 waiting. */
START_TEST(test_slow_start_and_queue)
{
	struct outcome o[21];
	struct dht_cc_status cc;
	struct dht_cfg cfg;
	struct dhtkey key;
	uint64_t acks0, t0;

	net_line(2, DHT_CC_CSCC, 16);
	key = give_block(1, 100, 0x11);
	/* The join's lookup was acknowledged already. */
	acks0 = stat(0, "cscc_acks");
	cc = cc_status(0);
	ck_assert_uint_eq(cc.in_flight, 0);
	ck_assert(cc.credits == 5 + (double)acks0);
	cfg = *dht_config(nodes[0].dht);
	cfg.cc_queue = 20 - (unsigned)cc.credits;
	ck_assert_int_eq(dht_set_cfg(nodes[0].dht, &cfg), 0);
	t0 = now_us;
	n_ended = 0;
	memset(o, 0, sizeof(o));
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o[i]),
		    0);
	cc = cc_status(0);
	ck_assert_uint_eq(cc.scheme, DHT_CC_CSCC);
	ck_assert(cc.credits == 5 + (double)acks0);
	ck_assert_uint_eq(cc.in_flight, (uint64_t)cc.credits);
	ck_assert_uint_eq(cc.waiting, 20 - (uint64_t)cc.credits);
	ck_assert_uint_eq(stat(0, "cc_waiting"), cc.waiting);
	ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o[20]), -EAGAIN);
	ck_assert_uint_eq(stat(0, "cc_refused"), 1);
	run_ms(1000);
	for (int i = 0; i < 20; i++) {
		ck_assert(o[i].done);
		ck_assert_int_eq(o[i].status, 0);
		ck_assert_int_eq(o[i].order, i);
	}
	ck_assert(!o[20].done);
	/* The first round took one round trip, the later ones more. */
	ck_assert_uint_lt(o[0].at - t0, 2 * DELAY_US + 5000);
	ck_assert_uint_ge(o[19].at - t0, 2 * (2 * DELAY_US));
	cc = cc_status(0);
	ck_assert_uint_eq(stat(0, "cscc_acks") - acks0, 20);
	ck_assert(cc.credits == 25 + (double)acks0);
	ck_assert_uint_eq(cc.in_flight, 0);
	ck_assert_uint_eq(cc.waiting, 0);
	ck_assert_uint_ge(cc.rtt_us, 2 * DELAY_US);
	ck_assert_uint_lt(cc.rtt_us, 2 * DELAY_US + 2000);
	ck_assert_uint_eq(cc.rto_us, stat(0, "cscc_rto_us"));
	ck_assert_uint_eq(stat(0, "cscc_retransmits"), 0);
	ck_assert_uint_eq(stat(0, "cscc_losses"), 0);
	net_free();
}
END_TEST

/* The neighbour loses the next requests: the attempt gets no ACK within
 * the RTO, which is a loss (c = 5, ssthresh = 0.8 of itself: c was
 * below it) and is sent again under the attempt's next id, counted as a
 * retransmission; that one is answered, the GET ends well, the neighbour
 * answered it once. The attempt waited the RTO CSCC had then, not the
 * DHT's own measure. */
START_TEST(test_timeout_loss_retransmit)
{
	struct dht_cc_status cc;
	struct outcome o;
	struct dhtkey key;
	uint64_t rto, t0;

	net_line(2, DHT_CC_CSCC, 16);
	key = give_block(1, 100, 0x22);
	/* A few round trips measured first. */
	for (int i = 0; i < 4; i++) {
		memset(&o, 0, sizeof(o));
		ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o), 0);
		run_ms(100);
		ck_assert(o.done);
	}
	cc = cc_status(0);
	ck_assert_uint_eq(cc.losses, 0);
	rto = cc.rto_us < 50000 ? 50000 : cc.rto_us;
	ck_assert_uint_lt(rto, 1000000);
	nodes[1].drop_requests = 1;
	memset(&o, 0, sizeof(o));
	t0 = now_us;
	ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o), 0);
	run_ms(5000);
	ck_assert(o.done);
	ck_assert_int_eq(o.status, 0);
	/* The RTO, then a round trip. */
	ck_assert_uint_ge(o.at - t0, rto);
	ck_assert_uint_lt(o.at - t0, rto + 2 * DELAY_US + 120000);
	cc = cc_status(0);
	ck_assert_uint_eq(cc.losses, 1);
	ck_assert_uint_eq(cc.retransmits, 1);
	ck_assert(cc.credits == 6); /* 5 after the loss, + its ACK */
	ck_assert(cc.ssthresh == 0.8 * 1000);
	ck_assert_uint_eq(stat(1, "cc_duplicates"), 0);
	ck_assert_uint_eq(cc.in_flight, 0);
	net_free();
}
END_TEST

/* The neighbour's answer is lost, not the request: the retransmission
 * reaches it a second time, which it counts as a duplicate (the attempt
 * bits of req_id tell it), and answers again (a GET is idempotent). */
START_TEST(test_duplicate_at_responsible_peer)
{
	struct outcome o;
	struct dhtkey key;

	net_line(2, DHT_CC_CSCC, 16);
	key = give_block(1, 100, 0x33);
	nodes[1].drop_answers = 1;
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o), 0);
	run_ms(5000);
	ck_assert(o.done);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(stat(0, "cscc_retransmits"), 1);
	ck_assert_uint_eq(stat(0, "cscc_losses"), 1);
	ck_assert_uint_eq(stat(1, "cc_duplicates"), 1);
	net_free();
}
END_TEST

/* A block of 8 KiB takes 200 ms to cross, behind the ACK its holder
 * sends first: the requester's RTT estimate is the request's round trip
 * (20 ms), not the block's, and no attempt was sent again meanwhile. */
START_TEST(test_ack_ahead_of_large_block)
{
	struct dht_cc_status cc;
	struct outcome o;
	struct dhtkey key;
	uint64_t t0;

	net_line(2, DHT_CC_CSCC, 16);
	key = give_block(1, 8192, 0x44);
	for (int i = 0; i < 3; i++) {
		memset(&o, 0, sizeof(o));
		t0 = now_us;
		ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o), 0);
		run_ms(1000);
		ck_assert(o.done);
		ck_assert_int_eq(o.status, 0);
		ck_assert_uint_ge(o.at - t0, 8192 * 1000 / BYTES_PER_MS);
	}
	ck_assert_uint_eq(stat(1, "acks_sent"), 3);
	cc = cc_status(0);
	ck_assert_uint_lt(cc.rtt_us, 2 * DELAY_US + 2000);
	ck_assert_uint_eq(cc.retransmits, 0);
	ck_assert_uint_eq(cc.losses, 0);
	ck_assert_uint_eq(stat(0, "retries"), 0);
	/* Small answers ride on no ACK of their own. */
	free(nodes[1].block);
	key = give_block(1, 100, 0x45);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o), 0);
	run_ms(1000);
	ck_assert(o.done);
	ck_assert_uint_eq(stat(1, "acks_sent"), 3);
	net_free();
}
END_TEST

/* none, the baseline: a relay whose next hop's queue is full drops the
 * request, counted, and sends no FAIL; the requester hears nothing and
 * its attempt gives up at its own time, then goes another way (here the
 * holders asked directly: the relay, which says no). */
START_TEST(test_relay_drops_when_full)
{
	struct outcome o;
	struct dhtkey key;
	uint64_t fails, direct, routed, t0;

	net_line(3, DHT_CC_NONE, 16);
	key = nodes[2].id;
	nodes[2].full = 1;
	fails = stat(1, "no_route");
	direct = stat(1, "answers_direct");
	routed = stat(1, "answers_routed");
	memset(&o, 0, sizeof(o));
	t0 = now_us;
	ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o), 0);
	run_ms(200);
	ck_assert_uint_eq(nodes[2].full, 0);
	ck_assert_uint_eq(stat(1, "cc_drops"), 1);
	ck_assert_uint_eq(stat(1, "no_route"), fails);
	ck_assert_uint_eq(stat(1, "answers_direct"), direct);
	ck_assert_uint_eq(stat(1, "answers_routed"), routed);
	run_ms(10000);
	ck_assert(o.done);
	ck_assert_int_eq(o.status, -ENOENT);
	ck_assert_uint_gt(o.at - t0, 50000);
	ck_assert_uint_eq(stat(0, "retries"), 1);
	/* none keeps no window. */
	ck_assert_uint_eq(stat(0, "cscc_acks"), 0);
	ck_assert_uint_eq(stat(0, "cscc_retransmits"), 0);
	net_free();
}
END_TEST

/* Requests waiting for credit count toward REQUEST_TIMEOUT: with the
 * neighbour silent, the ones that never got a credit end with
 * -ETIMEDOUT at their deadline, like those out, and the queue is empty
 * after. */
START_TEST(test_waiting_times_out)
{
	struct outcome o[64];
	struct dht_cc_status cc;
	struct dhtkey key;
	int n;

	net_line(2, DHT_CC_CSCC, 16);
	key = give_block(1, 100, 0x55);
	nodes[1].drop_requests = 1000;
	n_ended = 0;
	memset(o, 0, sizeof(o));
	cc = cc_status(0);
	n = (int)cc.credits + 3;
	ck_assert_int_le(n, 64);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o[i]),
		    0);
	cc = cc_status(0);
	ck_assert_uint_eq(cc.waiting, 3);
	run_ms(10500);
	for (int i = 0; i < n; i++) {
		ck_assert(o[i].done);
		ck_assert_int_eq(o[i].status, -ETIMEDOUT);
	}
	cc = cc_status(0);
	ck_assert_uint_eq(cc.waiting, 0);
	ck_assert_uint_eq(cc.in_flight, 0);
	ck_assert_uint_gt(cc.losses, 0);
	ck_assert(cc.credits == 5);
	net_free();
}
END_TEST

/* Our own first hop's queue is full: the attempt cannot leave (counted
 * as a drop) and the next goes at once, the request keeping its credit;
 * the neighbour's answer to that one is its ACK, which grows c. */
START_TEST(test_own_first_hop_full)
{
	struct dht_cc_status before, cc;
	struct outcome o;
	struct dhtkey key;
	uint64_t acks0;

	net_line(2, DHT_CC_CSCC, 16);
	key = give_block(1, 100, 0x66);
	before = cc_status(0);
	acks0 = stat(0, "cscc_acks");
	nodes[1].full = 1;
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_get(nodes[0].dht, &key, on_done, &o), 0);
	ck_assert_uint_eq(stat(0, "cc_drops"), 1);
	run_ms(5);
	cc = cc_status(0);
	ck_assert_uint_eq(cc.in_flight, 1);
	run_ms(1000);
	ck_assert(o.done);
	ck_assert_int_eq(o.status, 0);
	cc = cc_status(0);
	ck_assert_uint_eq(cc.in_flight, 0);
	ck_assert(cc.credits == before.credits + 1);
	ck_assert_uint_eq(stat(0, "cscc_acks"), acks0 + 1);
	ck_assert_uint_eq(cc.retransmits, 1);
	ck_assert_uint_eq(cc.losses, 0);
	net_free();
}
END_TEST

static Suite *
dht_cscc_suite(void)
{
	Suite *s = suite_create("dht_cscc");
	TCase *tc = tcase_create("window");

	tcase_add_test(tc, test_window_defaults);
	tcase_add_test(tc, test_window_slow_start);
	tcase_add_test(tc, test_window_loss_and_avoidance);
	tcase_add_test(tc, test_window_rto);
	suite_add_tcase(s, tc);
	tc = tcase_create("net");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_slow_start_and_queue);
	tcase_add_test(tc, test_timeout_loss_retransmit);
	tcase_add_test(tc, test_duplicate_at_responsible_peer);
	tcase_add_test(tc, test_ack_ahead_of_large_block);
	tcase_add_test(tc, test_relay_drops_when_full);
	tcase_add_test(tc, test_waiting_times_out);
	tcase_add_test(tc, test_own_first_hop_full);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(dht_cscc_suite());
}
