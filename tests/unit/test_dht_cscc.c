/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * CSCC (src/dht/dht_cscc.c, seed 002 section 2.1) and the seam of the
 * DHT's congestion control (src/dht/dht_cc.c). First the window alone,
 * with the seed's constants: slow start, avoidance, loss from either
 * side of ssthresh, the RTT and error estimates and the timeout. Then
 * real DHT nodes (struct dht, its routing, wire encoding and attempts)
 * on the fake network of tests/lib/dhtsim.h in virtual time, each way of
 * a link taking DELAY_US, events no time: requests beyond the credits
 * wait their turn and the queue's bound refuses more; an attempt with no
 * ACK within the RTO is a loss and is sent again; an ACK goes ahead of a
 * large block on a slow link, so the RTT is the request's; a relay whose
 * next hop's queue is full drops the request without an answer (none,
 * the baseline); a peer that answers two attempts of a request counts
 * the second.
 */
/* unit-link: ferry_testlib */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "dht/dht.h"
#include "dht/dht_cscc.h"
#include "dht/dht_int.h"
#include "dhtsim.h"
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

#define DELAY_US 10000u  /* one way */
#define BIG_LEN  65536u  /* a block that takes its time to cross */
#define BIG_RATE 320000u /* bytes a second: 64 KiB take 204.8 ms */

static struct dhtsim *sim;

/* What the network does to the messages of a node. */
struct fate {
	unsigned drop_requests; /* requests that come here are lost */
	unsigned drop_answers;  /* answers sent from here are lost */
	unsigned full;          /* sends of requests to here say -EAGAIN */
};

static struct fate fates[4];

static enum dhtsim_verdict
net_filter(void *arg, int from, int to, uint16_t type, size_t len)
{
	(void)arg;
	(void)len;
	if (dhtmsg_is_request(type) && fates[to].full > 0) {
		fates[to].full--;
		return DHTSIM_FULL;
	}
	if (dhtmsg_is_request(type) && fates[to].drop_requests > 0) {
		fates[to].drop_requests--;
		return DHTSIM_DROP;
	}
	if (dhtmsg_is_answer(type) && fates[from].drop_answers > 0) {
		fates[from].drop_answers--;
		return DHTSIM_DROP;
	}
	return DHTSIM_DELIVER;
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

/* n nodes of seed salt running cc, on links that take DELAY_US one way,
 * and whose messages take no other time; events take none either. */
static void
net_new(int n, uint8_t salt, enum dht_congestion cc, unsigned cc_queue)
{
	struct dhtsim_cfg cfg;

	dhtsim_cfg_default(&cfg);
	cfg.seed = salt;
	cfg.dht.congestion = cc;
	cfg.dht.cc_queue = cc_queue;
	cfg.dht.timeout_us = 10u * 1000 * 1000;
	cfg.dht.refresh_us = 3600ull * 1000 * 1000;
	cfg.deadline_ticks = true;
	cfg.srtt_us = 0;     /* the DHT's own measure of an attempt */
	cfg.no_helos = true; /* no links but the line's */
	cfg.event_us = 0;
	cfg.link.delay_us = DELAY_US;
	ck_assert_int_eq(dhtsim_new(&cfg, n, &sim), 0);
	sim->filter = net_filter;
	memset(fates, 0, sizeof(fates));
}

/* n nodes in a line (0 - 1 - ... - n-1), each running cc, each closer
 * to the last one's id than the one before it (seeds are tried until
 * they are), so that a request of node 0 for that key goes hop by hop
 * to the end; the joins' lookups are answered before it returns. */
static void
net_line(int n, enum dht_congestion cc, unsigned cc_queue)
{
	uint8_t salt = 0;
	bool ordered;

	ck_assert_int_le(n, 4);
	do {
		if (salt > 0)
			dhtsim_free(sim);
		net_new(n, salt++, cc, cc_queue);
		ordered = true;
		for (int i = 0; i + 2 < n; i++)
			if (dhtkey_closer(&sim->nodes[n - 1].id,
			        &sim->nodes[i + 1].id, &sim->nodes[i].id) >= 0)
				ordered = false;
	} while (!ordered);
	for (int i = 0; i + 1 < n; i++)
		ck_assert_int_eq(dhtsim_link(sim, i, i + 1), 0);
	run_ms(2000);
}

static void
net_free(void)
{
	dhtsim_free(sim);
	sim = NULL;
}

/* Both ways between a and b send rate bytes a second. */
static void
link_rate(int a, int b, uint64_t rate)
{
	struct dhtsim_link_cfg c = dhtsim_link_get(sim, a, b).cfg;

	c.rate = rate;
	ck_assert_int_eq(dhtsim_link_set(sim, a, b, &c), 0);
	ck_assert_int_eq(dhtsim_link_set(sim, b, a, &c), 0);
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
	o->at = sim->now_us;
	o->order = n_ended++;
}

/* Gives node i a block of len bytes (pattern b, and a last byte drawn
 * until the key is closer to node i than to any other, so that requests
 * for it end there), returns its key. */
static struct dhtkey
give_block(int i, size_t len, uint8_t b)
{
	uint8_t *block = malloc(len);
	uint64_t expiry = DHTSIM_WALL0_S + sim->now_us / 1000000 + 86400;
	struct dhtkey key;
	bool closest;

	ck_assert_ptr_nonnull(block);
	memset(block, b, len);
	do {
		block[len - 1]++;
		dhtkey_of_block(block, len, &key);
		closest = true;
		for (int j = 0; j < sim->n; j++)
			if (j != i &&
			    dhtkey_closer(&key, &sim->nodes[j].id,
			        &sim->nodes[i].id) <= 0)
				closest = false;
	} while (!closest);
	ck_assert_int_eq(dhtsim_store(sim, i, &key, block, len, expiry), 0);
	free(block);
	return key;
}

static struct dht_cc_status
cc_status(int i)
{
	struct dht_status st;

	dht_get_status(sim->nodes[i].dht, &st);
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
	cfg = *dht_config(sim->nodes[0].dht);
	cfg.cc_queue = 20 - (unsigned)cc.credits;
	ck_assert_int_eq(dht_set_cfg(sim->nodes[0].dht, &cfg), 0);
	t0 = sim->now_us;
	n_ended = 0;
	memset(o, 0, sizeof(o));
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done,
		                     &o[i]),
		    0);
	cc = cc_status(0);
	ck_assert_uint_eq(cc.scheme, DHT_CC_CSCC);
	ck_assert(cc.credits == 5 + (double)acks0);
	ck_assert_uint_eq(cc.in_flight, (uint64_t)cc.credits);
	ck_assert_uint_eq(cc.waiting, 20 - (uint64_t)cc.credits);
	ck_assert_uint_eq(stat(0, "cc_waiting"), cc.waiting);
	ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o[20]),
	    -EAGAIN);
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
		ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o),
		    0);
		run_ms(100);
		ck_assert(o.done);
	}
	cc = cc_status(0);
	ck_assert_uint_eq(cc.losses, 0);
	rto = cc.rto_us < 50000 ? 50000 : cc.rto_us;
	ck_assert_uint_lt(rto, 1000000);
	fates[1].drop_requests = 1;
	memset(&o, 0, sizeof(o));
	t0 = sim->now_us;
	ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o), 0);
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
	fates[1].drop_answers = 1;
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o), 0);
	run_ms(5000);
	ck_assert(o.done);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(stat(0, "cscc_retransmits"), 1);
	ck_assert_uint_eq(stat(0, "cscc_losses"), 1);
	ck_assert_uint_eq(stat(1, "cc_duplicates"), 1);
	net_free();
}
END_TEST

/* A block of 64 KiB takes 205 ms to cross a link of 320 kB/s, behind
 * the ACK its holder sends first on it: the requester has the ACK while
 * the block is on its way, its RTT estimate is the request's round trip
 * (20 ms and the transfer of two small messages), not the block's, and
 * no attempt was sent again meanwhile. */
START_TEST(test_ack_ahead_of_large_block)
{
	const uint64_t transfer = (uint64_t)BIG_LEN * 1000000 / BIG_RATE;
	const struct dhtsim_msg *m;
	struct dht_cc_status cc;
	struct outcome o;
	struct dhtkey key;
	uint64_t t0, acks0;

	net_line(2, DHT_CC_CSCC, 16);
	link_rate(0, 1, BIG_RATE);
	key = give_block(1, BIG_LEN, 0x44);
	for (int i = 0; i < 3; i++) {
		memset(&o, 0, sizeof(o));
		t0 = sim->now_us;
		acks0 = stat(0, "cscc_acks");
		ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o),
		    0);
		run_ms(30);
		ck_assert(!o.done);
		ck_assert_uint_eq(stat(0, "cscc_acks"), acks0 + 1);
		m = dhtsim_link_msgs(sim, 1, 0);
		ck_assert_ptr_nonnull(m);
		ck_assert_uint_eq(m->type, FERRY_MSG_DHT_BLOCK);
		ck_assert_uint_gt(m->at_us, t0 + transfer);
		run_ms(1000);
		ck_assert(o.done);
		ck_assert_int_eq(o.status, 0);
		ck_assert_uint_ge(o.at - t0, transfer + 2 * DELAY_US);
	}
	ck_assert_uint_eq(stat(1, "acks_sent"), 3);
	cc = cc_status(0);
	ck_assert_uint_lt(cc.rtt_us, 2 * DELAY_US + 2000);
	ck_assert_uint_eq(cc.retransmits, 0);
	ck_assert_uint_eq(cc.losses, 0);
	ck_assert_uint_eq(stat(0, "retries"), 0);
	/* Small answers ride on no ACK of their own. */
	key = give_block(1, 100, 0x45);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o), 0);
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
	key = sim->nodes[2].id;
	fates[2].full = 1;
	fails = stat(1, "no_route");
	direct = stat(1, "answers_direct");
	routed = stat(1, "answers_routed");
	memset(&o, 0, sizeof(o));
	t0 = sim->now_us;
	ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o), 0);
	run_ms(200);
	ck_assert_uint_eq(fates[2].full, 0);
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
	fates[1].drop_requests = 1000;
	n_ended = 0;
	memset(o, 0, sizeof(o));
	cc = cc_status(0);
	n = (int)cc.credits + 3;
	ck_assert_int_le(n, 64);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done,
		                     &o[i]),
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
	fates[1].full = 1;
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_get(sim->nodes[0].dht, &key, on_done, &o), 0);
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
