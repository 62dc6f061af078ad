/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's routing (src/dht/dht*.c) on a network of nodes in one
 * process: each node is a real struct dht with a real routing table,
 * path cache, wire encoding and signatures; only what is below the DHT,
 * links, message delivery, the clock and the block store, is the fake
 * network's (tests/lib/dhtsim.c), through struct dht_env. Messages
 * are delivered in order from one queue, store calls complete from it
 * too, and time is virtual. Checked: nodes that know one peer build
 * tables from which FIND returns the true closest, also when 64 of them
 * join one after another; a PUT reaches exactly
 * the REPLICATION closest nodes with that many valid receipts; every
 * node GETs it; an absent key and a lost holder end well; answers find
 * their way back along the path when no direct link can be made; forged
 * receipts, duplicates and malformed bodies are counted and dropped; a
 * PUT with a quorum ends without its slowest storer; a PUT made before
 * any link is up is placed as soon as the links come.
 */
/* unit-link: ferry_testlib */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "lib/log.h"
#include "core/identity.h"
#include "dht/dht.h"
#include "dht/dht_int.h"
#include "dhtsim.h"
#include "unit.h"

#define N_MAX 64

static struct dhtsim *sim;
static int drop_to = -1;   /* answers sent to this node are lost, */
static unsigned drop_left; /* this many more */
static int full_to = -1;   /* requests to this node find its queue full, */
static unsigned full_left; /* this many more */
static int hold_to = -1;   /* messages to this node are held */

static enum dhtsim_verdict
net_filter(void *arg, int from, int to, uint16_t type, size_t len)
{
	(void)arg;
	(void)from;
	(void)len;
	if (to == full_to && full_left > 0 && dhtmsg_is_request(type)) {
		full_left--;
		return DHTSIM_FULL;
	}
	/* Lost on the way, as the core's unreliable messages may be. */
	if (to == drop_to && drop_left > 0 && dhtmsg_is_answer(type)) {
		drop_left--;
		return DHTSIM_DROP;
	}
	return to == hold_to ? DHTSIM_HOLD : DHTSIM_DELIVER;
}

/* The messages held for hold_to go on their way, in order. */
static void
release_held(void)
{
	dhtsim_release(sim);
	hold_to = -1;
}

static int
node_of(const struct dhtkey *k)
{
	struct dhtsim_node *n = dhtsim_node_of(sim, k);

	return n != NULL ? n->idx : -1;
}

static void
make_link(int a, int b)
{
	ck_assert_int_eq(dhtsim_link(sim, a, b), 0);
}

static uint64_t
stat(int i, const char *name)
{
	return dhtsim_stat(sim, i, name);
}

static void
run_ms(uint64_t ms)
{
	dhtsim_run_ms(sim, ms);
}

static void
net_start(int n)
{
	struct dhtsim_cfg cfg;

	dhtsim_cfg_default(&cfg);
	cfg.seed = 0x77;
	/* These cases drive the attempts' own retries past dropped and
	 * refused sends, which the default congestion control (BPCC) would
	 * hold in its queues instead: they run without one. */
	cfg.dht.congestion = DHT_CC_NONE;
	ck_assert_int_eq(dhtsim_new(&cfg, n, &sim), 0);
	sim->filter = net_filter;
	drop_to = -1;
	drop_left = 0;
	full_to = -1;
	full_left = 0;
	hold_to = -1;
}

/* Everyone knows node 0 only; a minute of refreshes later the tables are
 * built. */
static void
net_join(void)
{
	for (int i = 1; i < sim->n; i++)
		make_link(i, 0);
	run_ms(60000);
}

static void
net_free(void)
{
	ck_assert_uint_eq(sim->c.bad_unlinks, 0);
	dhtsim_free(sim);
	sim = NULL;
}

/* What a request's callback saw. */
struct outcome {
	bool done;
	int status;
	unsigned hops, receipts;
	uint8_t block[4096];
	size_t block_len;
	struct dhtkey nodes[DHTMSG_FIND_MAX];
	size_t n_nodes;
	struct dhtkey storers[DHTMSG_REPL_MAX];
};

static void
on_done(void *cls, const struct dht_result *r)
{
	struct outcome *o = cls;

	ck_assert(!o->done);
	o->done = true;
	o->status = r->status;
	o->hops = r->hops;
	o->receipts = r->receipts;
	for (unsigned i = 0; i < r->receipts; i++)
		o->storers[i] = r->storer[i];
	if (r->block_len > 0) {
		ck_assert_uint_le(r->block_len, sizeof(o->block));
		memcpy(o->block, r->block, r->block_len);
		o->block_len = r->block_len;
	}
	for (size_t i = 0; i < r->n_nodes; i++)
		o->nodes[i] = r->nodes[i].id;
	o->n_nodes = r->n_nodes;
}

/* Waits (virtually) for o, at most 15 s. */
static void
wait_for(struct outcome *o)
{
	for (int i = 0; i < 150 && !o->done; i++)
		run_ms(100);
	ck_assert_msg(o->done, "no outcome in 15 s");
}

static struct dhtkey sort_key;

static int
by_dist(const void *a, const void *b)
{
	return dhtkey_closer(&sort_key, a, b);
}

/* The n live node ids closest to key, by brute force. */
static void
true_closest(const struct dhtkey *key, struct dhtkey *out, int n)
{
	struct dhtkey all[N_MAX];
	int m = 0;

	for (int i = 0; i < sim->n; i++)
		if (sim->nodes[i].alive)
			all[m++] = sim->nodes[i].id;
	sort_key = *key;
	qsort(all, (size_t)m, sizeof(all[0]), by_dist);
	memcpy(out, all, (size_t)(n < m ? n : m) * sizeof(*out));
}

START_TEST(test_find_true_closest)
{
	struct dhtkey key, want[8];
	struct outcome o;

	net_start(32);
	net_join();
	for (int round = 0; round < 20; round++) {
		int from = round % sim->n;

		dhtsim_random(sim, key.b, sizeof(key.b));
		memset(&o, 0, sizeof(o));
		ck_assert_int_eq(dht_find(sim->nodes[from].dht, &key, 8,
		                     on_done, &o),
		    0);
		wait_for(&o);
		ck_assert_int_eq(o.status, 0);
		ck_assert_uint_eq(o.n_nodes, 8);
		true_closest(&key, want, 8);
		for (int i = 0; i < 8; i++)
			ck_assert_msg(dhtkey_equal(&o.nodes[i], &want[i]),
			    "round %d: FIND from %d, place %d is not the true "
			    "closest",
			    round, from, i);
	}
	net_free();
}
END_TEST

static void
put_block(int from, const uint8_t *data, size_t len, unsigned replication,
    struct dhtkey *key, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	ck_assert_int_eq(dht_put(sim->nodes[from].dht, data, len, 1800000000,
	                     replication, on_done, o, key),
	    0);
	ck_assert(!o->done); /* never from inside the call */
	wait_for(o);
}

START_TEST(test_put_get_everywhere)
{
	uint8_t data[3000];
	struct dhtkey key, want[3];
	struct dht_status st;
	struct outcome o;
	int holders = 0;

	net_start(24);
	net_join();
	dhtsim_random(sim, data, sizeof(data));
	put_block(5, data, sizeof(data), 0, &key, &o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 3);
	/* Exactly the three closest hold it, and signed for it. */
	true_closest(&key, want, 3);
	for (int i = 0; i < sim->n; i++) {
		bool has = dhtsim_block(sim, i, &key) != NULL;
		bool should = false;

		for (int j = 0; j < 3; j++)
			should =
			    should || dhtkey_equal(&want[j], &sim->nodes[i].id);
		ck_assert_msg(has == should, "node %d holds %d, should %d", i,
		    has, should);
		holders += has;
	}
	ck_assert_int_eq(holders, 3);
	/* With k = 20 and 24 nodes every bucket has room: each table holds
	 * every other node. */
	dht_get_status(sim->nodes[node_of(&want[0])].dht, &st);
	ck_assert_uint_eq(st.blocks, 1);
	ck_assert_uint_eq(st.bytes, sizeof(data));
	ck_assert_uint_eq(st.entries, (size_t)sim->n - 1);
	ck_assert_uint_eq(st.replication, 3);
	ck_assert_uint_eq(st.requests, 0);
	for (int i = 0; i < sim->n; i++) {
		memset(&o, 0, sizeof(o));
		ck_assert_int_eq(dht_get(sim->nodes[i].dht, &key, on_done, &o),
		    0);
		wait_for(&o);
		ck_assert_int_eq(o.status, 0);
		ck_assert_uint_eq(o.block_len, sizeof(data));
		ck_assert_int_eq(memcmp(o.block, data, sizeof(data)), 0);
		ck_assert_uint_le(o.hops, 6);
	}
	net_free();
}
END_TEST

START_TEST(test_absent_and_lost_holder)
{
	uint8_t data[100];
	struct dhtkey key, absent, want[3];
	struct outcome o;
	uint64_t t0, retries = 0;
	int silent;

	net_start(16);
	net_join();
	dhtsim_random(sim, absent.b, sizeof(absent.b));
	memset(&o, 0, sizeof(o));
	t0 = sim->now_us;
	ck_assert_int_eq(dht_get(sim->nodes[3].dht, &absent, on_done, &o), 0);
	wait_for(&o);
	ck_assert_int_eq(o.status, -ENOENT);
	/* Ended by an answer, not by the 10 s timeout. */
	ck_assert_uint_lt(sim->now_us - t0, 1000000);
	dhtsim_random(sim, data, sizeof(data));
	put_block(2, data, sizeof(data), 0, &key, &o);
	ck_assert_uint_eq(o.receipts, 3);
	/* The closest holder goes away; the others still serve. */
	true_closest(&key, want, 1);
	sim->nodes[node_of(&want[0])].alive = false;
	dhtsim_cut_all(sim, node_of(&want[0]), false);
	for (int i = 0; i < sim->n; i++) {
		if (!sim->nodes[i].alive)
			continue;
		memset(&o, 0, sizeof(o));
		ck_assert_int_eq(dht_get(sim->nodes[i].dht, &key, on_done, &o),
		    0);
		wait_for(&o);
		ck_assert_int_eq(o.status, 0);
		ck_assert_int_eq(memcmp(o.block, data, sizeof(data)), 0);
	}
	/* The next holder goes silent with its links still up, as a
	 * crashed peer looks until its links time out: GETs that went its
	 * way time out and ask the holders directly. */
	true_closest(&key, want, 1);
	silent = node_of(&want[0]);
	sim->nodes[silent].alive = false;
	for (int i = 0; i < sim->n; i++) {
		if (!sim->nodes[i].alive)
			continue;
		memset(&o, 0, sizeof(o));
		ck_assert_int_eq(dht_get(sim->nodes[i].dht, &key, on_done, &o),
		    0);
		wait_for(&o);
		ck_assert_int_eq(o.status, 0);
		ck_assert_int_eq(memcmp(o.block, data, sizeof(data)), 0);
		retries += stat(i, "retries");
	}
	ck_assert_uint_gt(retries, 0);
	net_free();
}
END_TEST

/* A star: every node is linked to node 0 only, and no node may link to
 * anyone new, so answers must travel back through node 0: blocks that
 * node 0 puts on the leaves, got by the other leaves. (Receipts routed
 * back to a leaf from a storer it cannot link to do not count: see
 * test_receipt_plausible.) */
START_TEST(test_answers_routed_back)
{
	uint8_t data[200];
	struct dhtkey key;
	struct outcome o;
	uint64_t routed = 0, back = 0, in_routed = 0;

	net_start(8);
	for (int i = 1; i < sim->n; i++)
		make_link(i, 0);
	sim->links_frozen = true;
	run_ms(5000);
	dhtsim_random(sim, data, sizeof(data));
	for (int from = 1; from < sim->n; from++) {
		data[0] = (uint8_t)from;
		put_block(0, data, sizeof(data), 2, &key, &o);
		ck_assert_int_eq(o.status, 0);
		ck_assert_uint_eq(o.receipts, 2);
		/* A GET from a leaf farther from the key than node 0 goes
		 * through node 0 (a closer leaf would end it at itself). */
		for (int g = 1; g < sim->n; g++) {
			if (dhtsim_block(sim, g, &key) != NULL ||
			    dhtkey_closer(&key, &sim->nodes[0].id,
			        &sim->nodes[g].id) > 0)
				continue;
			memset(&o, 0, sizeof(o));
			ck_assert_int_eq(dht_get(sim->nodes[g].dht, &key,
			                     on_done, &o),
			    0);
			wait_for(&o);
			ck_assert_int_eq(o.status, 0);
			ck_assert_int_eq(memcmp(o.block, data, sizeof(data)),
			    0);
		}
	}
	for (int i = 0; i < sim->n; i++) {
		routed += stat(i, "answers_routed");
		back += stat(i, "routed_back");
		if (i > 0)
			in_routed += stat(i, "answers_in_routed");
	}
	ck_assert_uint_gt(routed, 0);
	ck_assert_uint_gt(back, 0);
	/* The leaves saw them come through the hub. */
	ck_assert_uint_eq(in_routed, back);
	ck_assert_uint_eq(stat(0, "answers_lost"), 0);
	net_free();
}
END_TEST

/* A holder that serves wrong bytes is caught by the requester, which
 * gets the right block from another holder. A forged receipt, a
 * receipt for nothing asked and a cut body are counted and dropped. */
START_TEST(test_forgeries)
{
	uint8_t data[300], body[1024];
	struct dhtkey key, want[1];
	struct dhtmsg_ans a;
	struct dhtmsg_req req;
	struct outcome o;
	struct buf out;
	int holder, other, third;
	uint64_t bad = 0, unsolicited, taken;

	net_start(16);
	net_join();
	dhtsim_random(sim, data, sizeof(data));
	put_block(1, data, sizeof(data), 0, &key, &o);
	true_closest(&key, want, 1);
	holder = node_of(&want[0]);
	sim->nodes[holder].corrupt = true;
	/* From every node: the ones whose GET reaches the bad holder first
	 * get its wrong bytes, refuse them and ask the others. */
	for (int i = 0; i < sim->n; i++) {
		if (i == holder)
			continue;
		memset(&o, 0, sizeof(o));
		ck_assert_int_eq(dht_get(sim->nodes[i].dht, &key, on_done, &o),
		    0);
		wait_for(&o);
		ck_assert_int_eq(o.status, 0);
		ck_assert_uint_eq(o.block_len, sizeof(data));
		ck_assert_int_eq(memcmp(o.block, data, sizeof(data)), 0);
		bad += stat(i, "blocks_bad");
	}
	ck_assert_uint_gt(bad, 0);
	/* A receipt for a PUT nobody made, signed by one node and claiming
	 * to be from another. */
	other = (holder + 1) % sim->n;
	memset(&a, 0, sizeof(a));
	a.type = FERRY_MSG_DHT_RECEIPT;
	a.req_id = 42;
	a.key = key;
	a.requester = sim->nodes[0].id;
	a.responder = sim->nodes[other].id;
	dhtmsg_receipt_sign(sim->nodes[holder].ident, &key, body, 1800000000,
	    &a.receipt);
	buf_init(&out);
	ck_assert_int_eq(dhtmsg_ans_encode(&a, &out), 0);
	unsolicited = stat(0, "unsolicited");
	dht_receive(sim->nodes[0].dht, &sim->nodes[other].id, a.type,
	    buf_head(&out), buf_size(&out));
	ck_assert_uint_eq(stat(0, "unsolicited"), unsolicited + 1);
	/* The same request twice (a loop, or a replay): dropped once
	 * seen. */
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_GET;
	req.req_id = 7;
	req.key = key;
	req.requester = sim->nodes[0].id;
	req.hops_left = 5;
	buf_reset(&out);
	ck_assert_int_eq(dhtmsg_req_encode(&req, &out), 0);
	for (int i = 0; i < 2; i++)
		dht_receive(sim->nodes[other].dht, &sim->nodes[0].id, req.type,
		    buf_head(&out), buf_size(&out));
	ck_assert_uint_eq(stat(other, "duplicates"), 1);
	buf_reset(&out);
	ck_assert_int_eq(dhtmsg_ans_encode(&a, &out), 0);
	/* A flood from one neighbour: past its burst it is dropped and
	 * counted, and another neighbour's request still goes through. */
	taken = stat(other, "requests_in");
	for (uint64_t id = 100; id < 5100; id++) {
		req.req_id = id;
		buf_reset(&out);
		ck_assert_int_eq(dhtmsg_req_encode(&req, &out), 0);
		dht_receive(sim->nodes[other].dht, &sim->nodes[0].id, req.type,
		    buf_head(&out), buf_size(&out));
	}
	ck_assert_uint_ge(stat(other, "rate_limited"), 2500);
	ck_assert_uint_le(stat(other, "requests_in") - taken, 2100);
	/* Not answered in kind: a quarter of REQUEST_RATE got a FAIL, the
	 * rest nothing. */
	ck_assert_uint_eq(stat(other, "rate_fails") +
	        stat(other, "rate_fails_held"),
	    stat(other, "rate_limited"));
	ck_assert_uint_ge(stat(other, "rate_fails"), 250);
	ck_assert_uint_le(stat(other, "rate_fails"), 260);
	memset(&o, 0, sizeof(o));
	third = (other + 1) % sim->n == 0 ? 1 : (other + 1) % sim->n;
	ck_assert_int_eq(dht_get(sim->nodes[third].dht, &key, on_done, &o), 0);
	wait_for(&o);
	ck_assert_int_eq(o.status, 0);
	buf_reset(&out);
	ck_assert_int_eq(dhtmsg_ans_encode(&a, &out), 0);
	/* Cut short: malformed. */
	dht_receive(sim->nodes[0].dht, &sim->nodes[other].id, FERRY_MSG_DHT_GET,
	    buf_head(&out), 10);
	ck_assert_uint_eq(stat(0, "malformed"), 1);
	buf_done(&out);
	net_free();
}
END_TEST

/* Lines about a peer's bad input come in a burst of 5, then one a
 * second, which says how many were held back since the last. */
START_TEST(test_drop_log_rate)
{
	static const uint8_t junk[3];
	struct unit_log log;
	size_t lines = 0;

	net_start(2);
	net_join();
	unit_log_capture(&log, FERRY_LOG_INFO);
	for (int i = 0; i < 20; i++)
		dht_receive(sim->nodes[1].dht, &sim->nodes[0].id,
		    FERRY_MSG_DHT_FIND, junk, sizeof(junk));
	run_ms(1000);
	dht_receive(sim->nodes[1].dht, &sim->nodes[0].id, FERRY_MSG_DHT_FIND,
	    junk, sizeof(junk));
	unit_log_release();
	for (size_t i = 0; i < log.n; i++)
		lines += strstr(log.line[i],
		             "malformed DHT request, dropped") != NULL;
	ck_assert_uint_eq(lines, 6);
	ck_assert(unit_log_has(&log, "(15 more such lines suppressed)"));
	ck_assert_uint_eq(stat(1, "malformed"), 21);
	net_free();
}
END_TEST

/*
 * The closest holder of a block lies that it has none: every GET goes
 * to it first (the tables are complete) and ends there in a FAIL
 * not-found. The requester does not take that for the answer: it asks
 * the other holders directly, and gets the block (a lying not-found used
 * to end the GET; test_dht_hostile's peer found it).
 */
START_TEST(test_lying_not_found)
{
	uint8_t data[500];
	struct dhtkey key, want[3];
	struct outcome o;
	uint64_t retries = 0;
	int liar, asked = 0;

	net_start(16);
	net_join();
	dhtsim_random(sim, data, sizeof(data));
	put_block(4, data, sizeof(data), 0, &key, &o);
	ck_assert_int_eq(o.status, 0);
	true_closest(&key, want, 3);
	liar = node_of(&want[0]);
	sim->nodes[liar].liar = true;
	for (int i = 0; i < sim->n; i++) {
		if (i == liar || dhtsim_block(sim, i, &key) != NULL)
			continue;
		memset(&o, 0, sizeof(o));
		ck_assert_int_eq(dht_get(sim->nodes[i].dht, &key, on_done, &o),
		    0);
		wait_for(&o);
		ck_assert_msg(o.status == 0, "GET from %d: %d", i, o.status);
		ck_assert_uint_eq(o.block_len, sizeof(data));
		ck_assert_int_eq(memcmp(o.block, data, sizeof(data)), 0);
		retries += stat(i, "retries");
		asked++;
	}
	ck_assert_int_eq(asked, sim->n - 3);
	/* Each was told not-found by the liar first. */
	ck_assert_uint_eq(retries, (uint64_t)asked);
	ck_assert_uint_eq(stat(liar, "not_found"), (uint64_t)asked);
	net_free();
}
END_TEST

/* 100 FINDs of node x's id from node r, all sent to x at once, with
 * every node's REQUEST_RATE at 40; their outcomes into o. */
static void
find_flood(int r, int x, struct outcome *o)
{
	struct dht_cfg cfg;

	for (int i = 0; i < sim->n; i++) {
		cfg = *dht_config(sim->nodes[i].dht);
		cfg.request_rate = 40;
		ck_assert_int_eq(dht_set_cfg(sim->nodes[i].dht, &cfg), 0);
	}
	for (int i = 0; i < 100; i++) {
		memset(&o[i], 0, sizeof(o[i]));
		ck_assert_int_eq(dht_find(sim->nodes[r].dht, &sim->nodes[x].id,
		                     4, on_done, &o[i]),
		    0);
	}
}

/*
 * A neighbour over its REQUEST_RATE says so: x takes its burst (2 x 40)
 * of r's 100 FINDs, and answers 10 of the rest at once with FAIL (rate),
 * its allowance of FAILs (a quarter of the rate); r, which has no other
 * neighbour to try, ends those with -EAGAIN at once. The last 10 get no
 * answer (counted), so that a flood is not answered in kind, and end at
 * their timeout.
 */
START_TEST(test_over_rate_fails)
{
	static struct outcome o[100];
	unsigned ok = 0, again = 0;

	net_start(2);
	net_join();
	find_flood(0, 1, o);
	run_ms(20);
	for (int i = 0; i < 100; i++) {
		if (!o[i].done)
			continue;
		ok += o[i].status == 0;
		again += o[i].status == -EAGAIN;
	}
	ck_assert_uint_eq(stat(1, "rate_limited"), 20);
	ck_assert_uint_eq(stat(1, "rate_fails"), 10);
	ck_assert_uint_eq(stat(1, "rate_fails_held"), 10);
	ck_assert_uint_eq(ok, 80);
	ck_assert_uint_eq(again, 10);
	run_ms(10000 + 2 * DHTSIM_TICK_US / 1000);
	for (int i = 0; i < 100; i++)
		ck_assert(o[i].done);
	net_free();
}
END_TEST

/* Where r has other neighbours, the FINDs x refused, and those it
 * dropped, go again through the next closest: all 100 succeed, within a
 * few attempts' time. */
START_TEST(test_over_rate_elsewhere)
{
	static struct outcome o[100];

	net_start(8);
	net_join();
	find_flood(2, 5, o);
	run_ms(300);
	for (int i = 0; i < 100; i++) {
		ck_assert_msg(o[i].done, "FIND %d not done in 300 ms", i);
		ck_assert_int_eq(o[i].status, 0);
	}
	ck_assert_uint_eq(stat(5, "rate_limited"), 20);
	ck_assert_uint_eq(stat(2, "retries"), 20);
	net_free();
}
END_TEST

/* Starts a request by r (its kind: 'p' PUT of data, 'g' GET of key, 'f'
 * FIND of key) with the first drop answers to r lost; the time it took. */
static uint64_t
lossy(int r, char kind, const uint8_t *data, size_t len, struct dhtkey *key,
    unsigned drop, struct outcome *o)
{
	uint64_t t0 = sim->now_us;

	drop_to = r;
	drop_left = drop;
	memset(o, 0, sizeof(*o));
	if (kind == 'p')
		ck_assert_int_eq(dht_put(sim->nodes[r].dht, data, len,
		                     1800000000, 0, on_done, o, key),
		    0);
	else if (kind == 'g')
		ck_assert_int_eq(dht_get(sim->nodes[r].dht, key, on_done, o),
		    0);
	else
		ck_assert_int_eq(dht_find(sim->nodes[r].dht, key, 8, on_done,
		                     o),
		    0);
	while (!o->done)
		run_ms(1);
	drop_left = 0;
	return sim->now_us - t0;
}

/* Random bytes into data until node r is at rank (0: the closest) among
 * the nodes closest to their key or, rank -1, not among the 4 closest. */
static void
block_ranked(int r, int rank, uint8_t *data, size_t len)
{
	struct dhtkey key, w[4];
	int at;

	do {
		dhtsim_random(sim, data, len);
		dhtkey_of_block(data, len, &key);
		true_closest(&key, w, 4);
		for (at = 0;
		     at < 4 && !dhtkey_equal(&w[at], &sim->nodes[r].id);)
			at++;
	} while (at != (rank < 0 ? 4 : rank));
}

/*
 * Answers lost on the way cost an attempt's time (a few round trips,
 * here DHT_ATTEMPT_MIN_US, 50 ms, and a tick), not the whole
 * REQUEST_TIMEOUT: a PUT whose receipts are all lost, or one of them, a
 * PUT that ended at its requester, a FIND's and a GET's answers, are
 * sent again under a new request id through the next closest neighbour
 * (a GET: to the holders directly, the PUT: placed again) and succeed;
 * receipts that come twice count once. With every answer lost, a
 * request still ends at REQUEST_TIMEOUT, after its 4 attempts.
 */
START_TEST(test_lost_answers_retried)
{
	uint8_t data[700];
	struct dhtkey key, other;
	struct outcome o;
	uint64_t took, in0, retries0;
	int r = 6;

	net_start(16);
	net_join();
	for (int drop = 3; drop >= 1; drop -= 2) {
		block_ranked(r, -1, data, sizeof(data));
		in0 = stat(r, "receipts_in");
		retries0 = stat(r, "retries");
		took = lossy(r, 'p', data, sizeof(data), &key, (unsigned)drop,
		    &o);
		ck_assert_int_eq(o.status, 0);
		ck_assert_uint_eq(o.receipts, 3);
		ck_assert_uint_le(took, 200000);
		/* The second attempt's receipts: those that came already
		 * count once. */
		ck_assert_uint_eq(stat(r, "receipts_in") - in0, 3);
		ck_assert_uint_eq(stat(r, "retries") - retries0, 1);
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < i; j++)
				ck_assert(!dhtkey_equal(&o.storers[i],
				    &o.storers[j]));
	}
	/* Placed by r itself, the closest: placed again. */
	block_ranked(r, 0, data, sizeof(data));
	took = lossy(r, 'p', data, sizeof(data), &key, 1, &o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 3);
	ck_assert_uint_le(took, 200000);
	block_ranked(r, -1, data, sizeof(data));
	dhtkey_of_block(data, sizeof(data), &key);
	took = lossy(r, 'f', NULL, 0, &key, 1, &o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.n_nodes, 8);
	ck_assert_uint_le(took, 200000);
	put_block(r, data, sizeof(data), 0, &key, &o);
	took = lossy(r, 'g', NULL, 0, &key, 1, &o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(memcmp(o.block, data, sizeof(data)), 0);
	ck_assert_uint_le(took, 200000);
	/* Nothing comes back: the bound is REQUEST_TIMEOUT. */
	block_ranked(r, -1, data, sizeof(data));
	dhtkey_of_block(data, sizeof(data), &other);
	took = lossy(r, 'f', NULL, 0, &other, 1000000, &o);
	ck_assert_int_eq(o.status, -ETIMEDOUT);
	ck_assert_uint_ge(took, 10000000);
	ck_assert_uint_le(took, 10000000 + DHTSIM_TICK_US + 1000);
	net_free();
}
END_TEST

/* A receipt for the PUT of leaf l under way, signed by an identity made
 * up for it, as a peer on its path could send it back. */
static void
receipt_made_up(int l, int via)
{
	struct identity *fake;
	struct dhtmsg_ans a;
	struct dht_op *op;
	uint8_t seed[32];
	struct buf out;

	TAILQ_FOREACH(op, &sim->nodes[l].dht->ops, link)
		if (op->type == FERRY_MSG_DHT_PUT)
			break;
	ck_assert_ptr_nonnull(op);
	dhtsim_random(sim, seed, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &fake), 0);
	memset(&a, 0, sizeof(a));
	a.type = FERRY_MSG_DHT_RECEIPT;
	a.flags = DHTMSG_F_ROUTED;
	a.req_id = op->req_id;
	a.key = op->key;
	a.requester = sim->nodes[l].id;
	dhtkey_from_peer(&fake->id, &a.responder);
	dhtmsg_receipt_sign(fake, &op->key, op->put_hash, 1800000000,
	    &a.receipt);
	buf_init(&out);
	ck_assert_int_eq(dhtmsg_ans_encode(&a, &out), 0);
	dht_receive(sim->nodes[l].dht, &sim->nodes[via].id, a.type,
	    buf_head(&out), buf_size(&out));
	buf_done(&out);
	identity_free(fake);
}

/*
 * A receipt counts only from a storer the requester can vouch for: one
 * that sent it over its own link, one it is linked to or has in its
 * table (entries come from links), or one a link to comes up before the
 * PUT ends. In a star whose links are frozen, leaf l puts a block whose
 * key is closest to leaf s, then to the hub: the hub passes the PUT to
 * s, which stores it and has the hub store it too. The hub's receipt comes over its own
 * link and counts; s's comes back through the hub, from a peer l does
 * not know, and is held, as is one signed by an identity made up on the
 * way. The PUT ends when l links to s; the made-up one never counts
 * (dht.receipts_implausible).
 */
START_TEST(test_receipt_plausible)
{
	struct dhtkey key, w[2];
	uint8_t data[300];
	struct outcome o;
	int l = 1, s;

	net_start(8);
	for (int i = 1; i < sim->n; i++)
		make_link(i, 0);
	sim->links_frozen = true;
	run_ms(5000);
	do {
		dhtsim_random(sim, data, sizeof(data));
		dhtkey_of_block(data, sizeof(data), &key);
		true_closest(&key, w, 2);
		s = node_of(&w[0]);
	} while (s == 0 || s == l || node_of(&w[1]) != 0);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_put(sim->nodes[l].dht, data, sizeof(data),
	                     1800000000, 2, on_done, &o, &key),
	    0);
	receipt_made_up(l, 0);
	run_ms(300);
	ck_assert_msg(!o.done, "PUT ended with %d", o.status);
	ck_assert_uint_eq(stat(l, "receipts_in"), 1);
	ck_assert_ptr_nonnull(dhtsim_block(sim, s, &key));
	ck_assert_ptr_nonnull(dhtsim_block(sim, 0, &key));
	sim->links_frozen = false;
	make_link(l, s);
	run_ms(1);
	ck_assert(o.done);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 2);
	ck_assert(dhtkey_equal(&o.storers[0], &sim->nodes[0].id));
	ck_assert(dhtkey_equal(&o.storers[1], &sim->nodes[s].id));
	ck_assert_uint_eq(stat(l, "receipts_implausible"), 1);
	ck_assert_uint_eq(stat(l, "receipts_bad"), 0);
	net_free();
}
END_TEST

/* A PUT whose first hop's queue is full (the send fails) goes through
 * the next closest neighbour at once: the FAIL (no route) it gives
 * itself ends that attempt, it is no storing peer's refusal. */
START_TEST(test_first_hop_full)
{
	uint8_t data[400];
	struct dhtkey key, w[1];
	struct outcome o;
	uint64_t t0;
	int r = 3;

	net_start(16);
	net_join();
	block_ranked(r, -1, data, sizeof(data));
	dhtkey_of_block(data, sizeof(data), &key);
	true_closest(&key, w, 1);
	full_to = node_of(&w[0]);
	full_left = 1;
	t0 = sim->now_us;
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_put(sim->nodes[r].dht, data, sizeof(data),
	                     1800000000, 0, on_done, &o, &key),
	    0);
	while (!o.done && sim->now_us - t0 < 15000000)
		run_ms(1);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 3);
	ck_assert_uint_eq(full_left, 0);
	ck_assert_uint_eq(stat(r, "retries"), 1);
	ck_assert_uint_le(sim->now_us - t0, 20000);
	net_free();
}
END_TEST

/* A storing node takes at most ORIGIN_QUOTA bytes from one signer: a
 * second block over it is refused by every storer, and the PUT says
 * why (-EDQUOT), a block held already costs nothing more. */
START_TEST(test_origin_quota)
{
	uint8_t a[3000], b[3000];
	struct dhtkey ka, kb;
	struct dht_cfg cfg;
	struct outcome o;
	uint64_t refused = 0;

	net_start(8);
	net_join();
	for (int i = 0; i < sim->n; i++) {
		cfg = *dht_config(sim->nodes[i].dht);
		cfg.origin_quota = 5000;
		ck_assert_int_eq(dht_set_cfg(sim->nodes[i].dht, &cfg), 0);
	}
	dhtsim_random(sim, a, sizeof(a));
	dhtsim_random(sim, b, sizeof(b));
	/* Both go to the same three: every node is within reach of both. */
	put_block(1, a, sizeof(a), 8, &ka, &o);
	ck_assert_int_eq(o.status, 0);
	put_block(1, a, sizeof(a), 8, &ka, &o);
	ck_assert_int_eq(o.status, 0);
	put_block(1, b, sizeof(b), 8, &kb, &o);
	ck_assert_int_eq(o.status, -EDQUOT);
	ck_assert_uint_eq(o.receipts, 0);
	for (int i = 0; i < sim->n; i++)
		refused += stat(i, "origin_refused");
	ck_assert_uint_eq(refused, 8);
	/* A block that would be gone already is refused at once. */
	ck_assert_int_eq(dht_put(sim->nodes[1].dht, a, sizeof(a), 1000, 0,
	                     on_done, &o, &ka),
	    -EINVAL);
	net_free();
}
END_TEST

/* Storing peers whose disks fail (not for space) say so: the PUT ends
 * with -EREMOTEIO, not with a refusal that would blame the block; a
 * full one still says -ENOSPC. */
START_TEST(test_store_disk_fails)
{
	static const int status[] = { -EIO, -EROFS, -ENOSPC };
	static const int want[] = { -EREMOTEIO, -EREMOTEIO, -ENOSPC };
	uint8_t a[3000];
	struct dhtkey ka;
	struct outcome o;

	net_start(8);
	net_join();
	for (size_t i = 0; i < sizeof(status) / sizeof(status[0]); i++) {
		uint64_t fails = 0;

		sim->cfg.store_status = status[i];
		dhtsim_random(sim, a, sizeof(a));
		put_block(1, a, sizeof(a), 3, &ka, &o);
		ck_assert_int_eq(o.status, want[i]);
		ck_assert_uint_eq(o.receipts, 0);
		for (int j = 0; j < sim->n; j++)
			fails += stat(j, "store_fails");
		ck_assert_uint_eq(fails, 3 * (i + 1));
	}
	net_free();
}
END_TEST

/* Runs the network 1 ms at a time until a periodic tick has just
 * happened: what waits for the next one then waits 100 ms. */
static void
run_past_tick(void)
{
	do
		run_ms(1);
	while (sim->now_us - sim->last_tick_us >= 1000);
}

/* Runs the network 50 us (one event) at a time until o is done; the
 * time that took. */
static uint64_t
time_to_done(struct outcome *o)
{
	uint64_t t0 = sim->now_us;

	for (int i = 0; i < 300000 && !o->done; i++)
		dhtsim_run_until(sim, sim->now_us + 50);
	ck_assert(o->done);
	return sim->now_us - t0;
}

/*
 * Requests a node answers itself, in the call that starts them, are
 * answered as soon as the call has returned, not at the next tick: a
 * FIND of a node's own id (nobody is closer to it), and a GET and a FIND
 * on a node with no link (no route, not found).
 */
START_TEST(test_local_answer_at_once)
{
	struct outcome o;
	struct dhtkey key;
	uint64_t took;

	net_start(8);
	net_join();
	for (int i = 0; i < sim->n; i++) {
		run_past_tick();
		memset(&o, 0, sizeof(o));
		ck_assert_int_eq(dht_find(sim->nodes[i].dht, &sim->nodes[i].id,
		                     4, on_done, &o),
		    0);
		ck_assert(!o.done);
		took = time_to_done(&o);
		ck_assert_msg(took <= 1000, "FIND of its own id by %d: %llu us",
		    i, (unsigned long long)took);
		ck_assert_int_eq(o.status, 0);
		ck_assert_uint_eq(o.n_nodes, 4);
		ck_assert(dhtkey_equal(&o.nodes[0], &sim->nodes[i].id));
	}
	net_free();
	net_start(1);
	dhtsim_random(sim, key.b, sizeof(key.b));
	run_past_tick();
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o), 0);
	ck_assert(!o.done);
	took = time_to_done(&o);
	ck_assert_int_eq(o.status, -ENOENT);
	ck_assert_uint_le(took, 1000);
	run_past_tick();
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_find(sim->nodes[0].dht, &key, 4, on_done, &o), 0);
	took = time_to_done(&o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.n_nodes, 1);
	ck_assert_uint_le(took, 1000);
	net_free();
}
END_TEST

/* No more refresh lookups (their requests and answers mix with the
 * test's); those under way are over a second later. */
static void
no_refresh(void)
{
	for (int i = 0; i < sim->n; i++) {
		struct dht_cfg cfg = *dht_config(sim->nodes[i].dht);

		cfg.refresh_us = 3600u * 1000 * 1000;
		ck_assert_int_eq(dht_set_cfg(sim->nodes[i].dht, &cfg), 0);
	}
	run_ms(1000);
}

/*
 * An attempt gives up at its own deadline, not at the next periodic
 * tick: the DHT says when it needs one (dht_next_deadline_us, and the
 * env's schedule() for a deadline that comes up before it), and the
 * owner ticks then, as ferryd arms its timer. A GET whose answer is lost
 * starts its second attempt DHT_ATTEMPT_MIN_US (50 ms) after the first
 * and ends a few events later; with the periodic tick alone it waited
 * for the next one, 100 ms after it started.
 */
START_TEST(test_deadline_ticks)
{
	uint8_t data[600];
	struct dhtkey key;
	struct outcome o;
	uint64_t t0, took;
	int r = 5;

	net_start(16);
	net_join();
	sim->cfg.deadline_ticks = true;
	/* The answer lost is the GET's. */
	no_refresh();
	block_ranked(r, -1, data, sizeof(data));
	put_block(r, data, sizeof(data), 0, &key, &o);
	ck_assert_int_eq(o.status, 0);
	run_ms(200);
	ck_assert_uint_eq(dht_next_deadline_us(sim->nodes[r].dht), UINT64_MAX);
	run_past_tick();
	drop_to = r;
	drop_left = 1;
	memset(&o, 0, sizeof(o));
	t0 = sim->now_us;
	ck_assert_int_eq(dht_get(sim->nodes[r].dht, &key, on_done, &o), 0);
	/* Its first attempt gives up before the next periodic tick, and
	 * the node was told. */
	ck_assert_uint_le(sim->nodes[r].tick_at, t0 + 50000);
	ck_assert_uint_lt(sim->nodes[r].tick_at,
	    sim->last_tick_us + DHTSIM_TICK_US);
	ck_assert_uint_eq(dht_next_deadline_us(sim->nodes[r].dht), t0 + 50000);
	took = time_to_done(&o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(memcmp(o.block, data, sizeof(data)), 0);
	ck_assert_uint_eq(drop_left, 0);
	ck_assert_uint_eq(stat(r, "retries"), 1);
	ck_assert_msg(took >= 50000 && took <= 52000, "took %llu us",
	    (unsigned long long)took);
	ck_assert_uint_eq(dht_next_deadline_us(sim->nodes[r].dht), UINT64_MAX);
	net_free();
}
END_TEST

/* A key whose closest node is node i: its id with the last bit
 * flipped. */
static void
key_near(int i, struct dhtkey *ret)
{
	*ret = sim->nodes[i].id;
	ret->b[DHTKEY_LEN - 1] ^= 1;
}

static bool
in_table(int i, int j)
{
	return rtable_get(dht_rtable(sim->nodes[i].dht), &sim->nodes[j].id) !=
	    NULL;
}

/*
 * A neighbour that went silent with its link up (crashed, its link not
 * timed out yet) leaves the routing table once max_fails (3) attempts in
 * a row that went to it, the closest peer to their key, gave up without
 * an answer; no other neighbour is blamed for it. A live neighbour whose
 * answers come late (after the attempt gave up) stays: each answer
 * clears its failures. The requests themselves are not the point here
 * (through a dead closest peer a FIND has no way to end well): each is
 * left after its first attempt gave up.
 */
START_TEST(test_dead_neighbour_leaves)
{
	static struct outcome o[8];
	struct dhtkey key;
	int r = 2, slow = 12, dead = 9, n = 0;

	net_start(16);
	net_join();
	sim->cfg.deadline_ticks = true;
	/* Only the test's requests may blame anyone. */
	no_refresh();
	for (int i = 0; i < sim->n; i++)
		ck_assert(i == r || in_table(r, i));
	for (int round = 0; round < 4; round++, n++) {
		key_near(slow, &key);
		hold_to = slow;
		memset(&o[n], 0, sizeof(o[n]));
		ck_assert_int_eq(dht_find(sim->nodes[r].dht, &key, 4, on_done,
		                     &o[n]),
		    0);
		run_ms(60);
		ck_assert(!o[n].done);
		release_held();
		run_ms(5);
		ck_assert_msg(o[n].done, "round %d: no late answer", round);
		ck_assert_int_eq(o[n].status, 0);
		ck_assert(in_table(r, slow));
	}
	sim->nodes[dead].alive = false;
	for (int round = 0; round < 3; round++, n++) {
		ck_assert_msg(in_table(r, dead), "gone after %d", round);
		key_near(dead, &key);
		memset(&o[n], 0, sizeof(o[n]));
		ck_assert_int_eq(dht_find(sim->nodes[r].dht, &key, 4, on_done,
		                     &o[n]),
		    0);
		run_ms(60);
	}
	ck_assert(!in_table(r, dead));
	ck_assert_uint_eq(stat(r, "entries_failed"), 1);
	for (int i = 0; i < sim->n; i++)
		ck_assert_msg(i == r || i == dead || in_table(r, i),
		    "node %d left too", i);
	net_free();
}
END_TEST

/* Whether node i holds key. */
static bool
holds(int i, const struct dhtkey *key)
{
	return dhtsim_block(sim, i, key) != NULL;
}

/*
 * A requester whose table knows the peers around a key sends its PUT to
 * the replication closest at once, as candidates, rather than to the
 * closest, which sent the replicas on after it (a one-way delay more):
 * each stores it and signs straight back, one hop; the closest sends
 * nothing on.
 */
START_TEST(test_put_candidates)
{
	uint64_t fw_r, fw_c, direct[3], direct_r, routed_r;
	struct dhtkey key, w[3];
	uint8_t data[800];
	struct outcome o;
	int r = 7, c[3];

	net_start(16);
	net_join();
	no_refresh();
	block_ranked(r, -1, data, sizeof(data));
	dhtkey_of_block(data, sizeof(data), &key);
	true_closest(&key, w, 3);
	for (int i = 0; i < 3; i++) {
		c[i] = node_of(&w[i]);
		direct[i] = stat(c[i], "answers_direct");
	}
	fw_r = stat(r, "forwarded");
	fw_c = stat(c[0], "forwarded");
	direct_r = stat(r, "answers_in_direct");
	routed_r = stat(r, "answers_in_routed");
	put_block(r, data, sizeof(data), 0, &key, &o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 3);
	ck_assert_uint_eq(o.hops, 1);
	ck_assert_uint_eq(stat(r, "forwarded") - fw_r, 3);
	ck_assert_uint_eq(stat(c[0], "forwarded") - fw_c, 0);
	ck_assert_uint_eq(stat(r, "answers_in_direct") - direct_r, 3);
	ck_assert_uint_eq(stat(r, "answers_in_routed"), routed_r);
	for (int i = 0; i < 3; i++) {
		ck_assert(holds(c[i], &key));
		ck_assert_uint_eq(stat(c[i], "answers_direct") - direct[i], 1);
	}
	for (int i = 0; i < sim->n; i++)
		ck_assert(
		    holds(i, &key) == (i == c[0] || i == c[1] || i == c[2]));
	net_free();
}
END_TEST

/*
 * A requester's table may miss a peer: here r has lost its link to s,
 * the closest to the key, and s has left its table, so r takes the 2nd,
 * 3rd and 4th closest for the storing peers. The 4th knows s and is not
 * among the 3 closest it knows: it routes the PUT on, to s, which
 * places it as the closest does. The block ends at the true 3 closest,
 * not at the 4th, and the PUT has their 3 receipts.
 */
START_TEST(test_put_candidate_routes_on)
{
	struct dhtkey key, w[4];
	uint8_t data[900];
	struct outcome o;
	uint64_t fw4;
	int r = 4, s, fourth;

	net_start(16);
	net_join();
	no_refresh();
	block_ranked(r, -1, data, sizeof(data));
	dhtkey_of_block(data, sizeof(data), &key);
	true_closest(&key, w, 4);
	s = node_of(&w[0]);
	fourth = node_of(&w[3]);
	dhtsim_cut(sim, r, s, false);
	rtable_remove(sim->nodes[r].dht->rt, &sim->nodes[s].id);
	fw4 = stat(fourth, "forwarded");
	put_block(r, data, sizeof(data), 0, &key, &o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 3);
	/* The 2nd and 3rd signed twice (as candidates, and for s as
	 * replicas): once is what the attempt waited for, and it needed no
	 * other. */
	ck_assert_uint_eq(stat(r, "retries"), 0);
	ck_assert_uint_ge(stat(fourth, "forwarded") - fw4, 1);
	ck_assert(!holds(fourth, &key));
	for (int i = 0; i < 3; i++)
		ck_assert(holds(node_of(&w[i]), &key));
	for (int i = 0; i < 3; i++)
		ck_assert(dhtkey_equal(&o.storers[i], &w[0]) ||
		    dhtkey_equal(&o.storers[i], &w[1]) ||
		    dhtkey_equal(&o.storers[i], &w[2]));
	net_free();
}
END_TEST

/* The limits are kept for the DHT_LIMIT_PEERS neighbours and signers
 * seen last: one more makes the least recently seen forgotten, the most
 * recently seen kept. */
START_TEST(test_limit_tables_bounded)
{
	uint8_t pk[FERRY_PUBKEY_LEN];
	struct dhtkey peer;
	struct dht_cfg cfg;
	struct dht *d;

	net_start(1);
	d = sim->nodes[0].dht;
	cfg = *dht_config(d);
	cfg.origin_quota = 100;
	cfg.request_rate = 1;
	ck_assert_int_eq(dht_set_cfg(d, &cfg), 0);
	memset(pk, 0, sizeof(pk));
	memset(&peer, 0, sizeof(peer));
	ck_assert(dht_origin_charge(d, pk, 100));
	ck_assert(!dht_origin_charge(d, pk, 1));
	for (int i = 0; i < 2; i++)
		ck_assert(dht_limit_take(d, &peer) == DHT_LIMIT_TAKEN);
	ck_assert(dht_limit_take(d, &peer) != DHT_LIMIT_TAKEN);
	for (unsigned i = 1; i < DHT_LIMIT_PEERS; i++) {
		pk[0] = (uint8_t)(i >> 8);
		pk[1] = (uint8_t)i;
		peer.b[0] = pk[0];
		peer.b[1] = pk[1];
		ck_assert(dht_origin_charge(d, pk, 1));
		ck_assert(dht_limit_take(d, &peer) == DHT_LIMIT_TAKEN);
	}
	/* Full: the first ones are still known. */
	memset(pk, 0, sizeof(pk));
	memset(&peer, 0, sizeof(peer));
	ck_assert(!dht_origin_charge(d, pk, 1));
	ck_assert(dht_limit_take(d, &peer) != DHT_LIMIT_TAKEN);
	/* One more pushes out the least recently seen, key 1, not key 0,
	 * just used. */
	pk[0] = peer.b[0] = 0xff;
	ck_assert(dht_origin_charge(d, pk, 100));
	ck_assert(dht_limit_take(d, &peer) == DHT_LIMIT_TAKEN);
	pk[0] = peer.b[0] = 0;
	ck_assert(!dht_origin_charge(d, pk, 1));
	ck_assert(dht_limit_take(d, &peer) != DHT_LIMIT_TAKEN);
	pk[1] = peer.b[1] = 1;
	ck_assert(dht_origin_charge(d, pk, 100));
	net_free();
}
END_TEST

/* Entries missing from node i's table: per bucket, min(k, the nodes that
 * belong there) less what it holds. */
static unsigned
table_missing(int i)
{
	unsigned cand[DHTKEY_BITS + 1] = { 0 }, have[DHTKEY_BITS + 1] = { 0 };
	const struct rtable *rt = dht_rtable(sim->nodes[i].dht);
	const struct rtable_entry *e[N_MAX];
	struct dhtkey self = sim->nodes[i].id;
	unsigned missing = 0, k = rtable_k(rt);
	size_t n = rtable_closest(rt, &self, N_MAX, e);

	for (int j = 0; j < sim->n; j++)
		if (j != i)
			cand[dhtkey_common_prefix(&self, &sim->nodes[j].id)]++;
	for (size_t j = 0; j < n; j++)
		have[dhtkey_common_prefix(&self, &e[j]->id)]++;
	for (unsigned p = 0; p <= DHTKEY_BITS; p++) {
		unsigned want = cand[p] < k ? cand[p] : k;

		missing += have[p] < want ? want - have[p] : 0;
	}
	return missing;
}

/*
 * 64 nodes join one after another, each knowing node 0 only, as the
 * daemons of test_dht_large do. With k = 20 a node's farthest bucket
 * cannot hold the other half of the network, so a joining node on the
 * other side of node 0 learns its own neighbourhood only if its lookup
 * of its own id leaves it (it used to end at once: nobody is closer to
 * our id than we are), and no later joiner's neighbours learn of it.
 * Every table then holds all it can, no lookup is lost, and FIND from
 * every node returns the true closest.
 */
START_TEST(test_join_one_by_one)
{
	struct dhtkey key, want[8];
	struct outcome o;

	net_start(N_MAX);
	for (int i = 1; i < sim->n; i++) {
		make_link(i, 0);
		run_ms(60);
	}
	run_ms(60000);
	for (int i = 0; i < sim->n; i++) {
		ck_assert_msg(table_missing(i) == 0,
		    "node %d's table misses %u entries", i, table_missing(i));
		ck_assert_uint_eq(stat(i, "timeouts"), 0);
	}
	for (int from = 0; from < sim->n; from++) {
		dhtsim_random(sim, key.b, sizeof(key.b));
		memset(&o, 0, sizeof(o));
		ck_assert_int_eq(dht_find(sim->nodes[from].dht, &key, 8,
		                     on_done, &o),
		    0);
		wait_for(&o);
		ck_assert_int_eq(o.status, 0);
		ck_assert_uint_eq(o.n_nodes, 8);
		true_closest(&key, want, 8);
		for (int i = 0; i < 8; i++)
			ck_assert_msg(dhtkey_equal(&o.nodes[i], &want[i]),
			    "FIND from %d: place %d is not the true closest",
			    from, i);
	}
	net_free();
}
END_TEST

/*
 * A PUT asked of four peers with a quorum of three (dht_put_quorum, the
 * storage layer's hedges): one of the four closest is silent with its
 * link up, as a crashed peer looks until its link times out. Asking for
 * all four receipts, the PUT waits for the silent one's until it gives
 * up (-EIO, three receipts); with a quorum of three it ends as soon as
 * the other three sent theirs. A quorum above the replication is
 * refused.
 */
/* A node that comes back with its table and no link up (a daemon just
 * restarted) is asked for a PUT at once: with no neighbour linked, the
 * PUT ends there and is stored there alone. When its links come up, the
 * PUT is placed on them then, not once its attempt gives up
 * (REQUEST_TIMEOUT / 4 with no round trip measured, 2.5 s). */
START_TEST(test_put_before_links)
{
	uint8_t data[2000];
	struct dhtkey key, want[3];
	struct outcome o;
	uint64_t t0;
	int x = 5;

	net_start(16);
	net_join();
	sim->links_frozen = true;
	dhtsim_cut_all(sim, x, true);
	dhtsim_random(sim, data, sizeof(data));
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_put(sim->nodes[x].dht, data, sizeof(data),
	                     1800000000, 0, on_done, &o, &key),
	    0);
	run_ms(100);
	ck_assert(!o.done);
	ck_assert_ptr_nonnull(dhtsim_block(sim, x, &key));
	sim->links_frozen = false;
	t0 = sim->now_us;
	for (int i = 0; i < sim->n; i++)
		if (i != x)
			make_link(x, i);
	wait_for(&o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 3);
	ck_assert_uint_lt(sim->now_us - t0, 500 * 1000);
	ck_assert_uint_eq(stat(x, "dht.timeouts"), 0);
	true_closest(&key, want, 3);
	for (int j = 0; j < 3; j++)
		ck_assert_ptr_nonnull(
		    dhtsim_block(sim, node_of(&want[j]), &key));
	net_free();
}
END_TEST

START_TEST(test_put_quorum)
{
	uint8_t data[600];
	struct dhtkey key, w[4];
	struct outcome o;
	uint64_t t0;
	int r = 5, silent;

	net_start(16);
	net_join();
	no_refresh();
	block_ranked(r, -1, data, sizeof(data));
	dhtkey_of_block(data, sizeof(data), &key);
	true_closest(&key, w, 4);
	silent = node_of(&w[1]);
	sim->nodes[silent].alive = false;
	memset(&o, 0, sizeof(o));
	t0 = sim->now_us;
	ck_assert_int_eq(dht_put_quorum(sim->nodes[r].dht, &key, data, sizeof(data),
	                     1800000000, 4, 0, on_done, &o),
	    0);
	wait_for(&o);
	ck_assert_int_eq(o.status, -EIO);
	ck_assert_uint_eq(o.receipts, 3);
	ck_assert_uint_ge(sim->now_us - t0, 1000000);
	memset(&o, 0, sizeof(o));
	t0 = sim->now_us;
	ck_assert_int_eq(dht_put_quorum(sim->nodes[r].dht, &key, data, sizeof(data),
	                     1800000000, 4, 3, on_done, &o),
	    0);
	ck_assert(!o.done);
	while (!o.done && sim->now_us - t0 < 15000000)
		run_ms(1);
	ck_assert(o.done);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 3);
	ck_assert_uint_lt(sim->now_us - t0, 100000);
	for (unsigned i = 0; i < o.receipts; i++)
		ck_assert(!dhtkey_equal(&o.storers[i], &sim->nodes[silent].id));
	ck_assert_int_eq(dht_put_quorum(sim->nodes[r].dht, &key, data, sizeof(data),
	                     1800000000, 3, 4, on_done, &o),
	    -EINVAL);
	net_free();
}
END_TEST

/*
 * Two daemons linked to each other only, as two linked by mail: node 1's
 * answers to three of node 0's requests come too late (lost here), and
 * each of node 0's attempts, through node 1, the closest peer to its
 * key, gives up. Node 1 is linked all the while: slow, not dead, and
 * node 0's only neighbour. It stays in node 0's table, so that node 0
 * still finds the blocks node 1 holds and places on node 1 the blocks
 * closest to it; taken out, node 0 knew nobody, and its GET of node 1's
 * block ended at once, not found, its PUT stored at home alone, where
 * node 1 does not look. (With other neighbours a silent one still
 * leaves: test_dead_neighbour_leaves.)
 */
START_TEST(test_only_neighbour_stays)
{
	static struct outcome o[5];
	uint8_t data[64];
	struct dhtkey key;
	uint64_t t0;

	net_start(2);
	make_link(1, 0);
	run_ms(60000);
	sim->cfg.deadline_ticks = true;
	no_refresh();
	ck_assert(in_table(0, 1) && in_table(1, 0));
	for (int round = 0; round < 3; round++) {
		key_near(1, &key);
		key.b[0] ^= (uint8_t)(round << 4);
		drop_to = 0;
		drop_left = 1;
		memset(&o[round], 0, sizeof(o[round]));
		ck_assert_int_eq(dht_find(sim->nodes[0].dht, &key, 4, on_done,
		                     &o[round]),
		    0);
		run_ms(60);
		ck_assert_uint_eq(drop_left, 0);
	}
	ck_assert(dhtsim_linked(sim, 0, 1));
	ck_assert_msg(in_table(0, 1), "node 0 dropped its only neighbour");
	ck_assert_uint_eq(stat(0, "entries_failed"), 0);

	/* GET: node 1's block, found there. */
	memset(data, 0x5a, sizeof(data));
	dhtkey_of_block(data, sizeof(data), &key);
	ck_assert_int_eq(dhtsim_store(sim, 1, &key, data, sizeof(data),
	                     1800000000),
	    0);
	t0 = sim->now_us;
	ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o[3]), 0);
	wait_for(&o[3]);
	ck_assert_msg(o[3].status == 0, "GET: status %d after %llu us",
	    o[3].status, (unsigned long long)(sim->now_us - t0));
	ck_assert_uint_eq(o[3].block_len, sizeof(data));

	/* PUT: a block closer to node 1 than to node 0 is stored there. */
	do {
		data[0]++;
		dhtkey_of_block(data, sizeof(data), &key);
	} while (
	    dhtkey_closer(&key, &sim->nodes[1].id, &sim->nodes[0].id) >= 0);
	ck_assert_int_eq(dht_put_keyed(sim->nodes[0].dht, &key, data,
	                     sizeof(data), 1800000000, 1, on_done, &o[4]),
	    0);
	wait_for(&o[4]);
	ck_assert_int_eq(o[4].status, 0);
	ck_assert_uint_eq(o[4].receipts, 1);
	ck_assert(dhtkey_equal(&o[4].storers[0], &sim->nodes[1].id));
	ck_assert_ptr_nonnull(dhtsim_block(sim, 1, &key));
	ck_assert_ptr_null(dhtsim_block(sim, 0, &key));
	net_free();
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_net");
	TCase *tc = tcase_create("net");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_find_true_closest);
	tcase_add_test(tc, test_put_get_everywhere);
	tcase_add_test(tc, test_absent_and_lost_holder);
	tcase_add_test(tc, test_answers_routed_back);
	tcase_add_test(tc, test_forgeries);
	tcase_add_test(tc, test_drop_log_rate);
	tcase_add_test(tc, test_lying_not_found);
	tcase_add_test(tc, test_over_rate_fails);
	tcase_add_test(tc, test_over_rate_elsewhere);
	tcase_add_test(tc, test_lost_answers_retried);
	tcase_add_test(tc, test_receipt_plausible);
	tcase_add_test(tc, test_first_hop_full);
	tcase_add_test(tc, test_origin_quota);
	tcase_add_test(tc, test_store_disk_fails);
	tcase_add_test(tc, test_limit_tables_bounded);
	tcase_add_test(tc, test_local_answer_at_once);
	tcase_add_test(tc, test_join_one_by_one);
	tcase_add_test(tc, test_deadline_ticks);
	tcase_add_test(tc, test_dead_neighbour_leaves);
	tcase_add_test(tc, test_put_candidates);
	tcase_add_test(tc, test_put_candidate_routes_on);
	tcase_add_test(tc, test_put_quorum);
	tcase_add_test(tc, test_put_before_links);
	tcase_add_test(tc, test_only_neighbour_stays);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
