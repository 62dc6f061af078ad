/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The fake network of the DHT's tests (tests/lib/dhtsim.c), on its own:
 * its identities and random numbers come from the seed alone; a link
 * asked for through the env needs the peer's HELO or a known address,
 * never comes up to a dead or unreachable node, and not at all while
 * links are frozen; the DHT may drop only a link it asked for and no
 * client pinned; messages pass the filter (dropped, refused, held and
 * released in order); the store serves what was put, with a byte
 * flipped at a corrupt node, none at a liar, and a frozen node's store
 * calls are cancelled at the end. Each way of a link: its messages due
 * after their transfer at its rate, one after the other, and its delay;
 * its cap refusing sends (answers with room of their own) and the drain
 * heard at half; a peer that holds the sender or is stopped takes
 * nothing until it lets go, then all in order (with hold latency, what
 * the sender sent before the hold reached it still comes); a node with
 * a processing time takes one message at a time. The same seed and
 * calls make the same run, the DHT's own random draws included.
 */
/* unit-link: ferry_testlib */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include <ferry/proto.h>

#include "core/identity.h"
#include "dht/dht.h"
#include "dht/dht_int.h"
#include "dhtsim.h"
#include "unit.h"

static struct dhtsim *
sim_of(uint64_t seed, int n, bool dht_unlinks)
{
	struct dhtsim_cfg cfg;
	struct dhtsim *s;

	dhtsim_cfg_default(&cfg);
	cfg.seed = seed;
	cfg.dht_unlinks = dht_unlinks;
	/* Only the test's links: no refresh lookups in the way. */
	cfg.dht.refresh_us = 3600ull * 1000 * 1000;
	ck_assert_int_eq(dhtsim_new(&cfg, n, &s), 0);
	return s;
}

/* The env node i's DHT was given. */
static const struct dht_env *
env_of(struct dhtsim *s, int i)
{
	return &s->nodes[i].dht->env;
}

START_TEST(test_seeded)
{
	struct dhtsim *a = sim_of(7, 3, false), *b = sim_of(7, 3, false);
	struct dhtsim *c = sim_of(8, 3, false);
	struct identity *ident;
	uint8_t seed[32] = { 2, 0x77 }, ra[40], rb[40], rc[40];
	struct dhtkey id;

	for (int i = 0; i < 3; i++) {
		ck_assert(dhtkey_equal(&a->nodes[i].id, &b->nodes[i].id));
		ck_assert(!dhtkey_equal(&a->nodes[i].id, &c->nodes[i].id));
		ck_assert_ptr_eq(dhtsim_node_of(a, &a->nodes[i].id),
		    &a->nodes[i]);
	}
	dhtsim_random(a, ra, sizeof(ra));
	dhtsim_random(b, rb, sizeof(rb));
	dhtsim_random(c, rc, sizeof(rc));
	ck_assert_int_eq(memcmp(ra, rb, sizeof(ra)), 0);
	ck_assert_int_ne(memcmp(ra, rc, sizeof(ra)), 0);
	ck_assert_uint_eq(dhtsim_rand(a), dhtsim_rand(b));
	dhtsim_free(a);
	dhtsim_free(b);
	dhtsim_free(c);
	/* Node i of seed s below 256: the identity of the seed bytes i, s
	 * (the ids the tests were written against). */
	a = sim_of(0x77, 3, false);
	ck_assert_int_eq(identity_from_seed(seed, &ident), 0);
	dhtkey_from_peer(&ident->id, &id);
	ck_assert(dhtkey_equal(&a->nodes[2].id, &id));
	identity_free(ident);
	dhtsim_free(a);
}
END_TEST

START_TEST(test_link_rules)
{
	struct dhtsim *s = sim_of(1, 4, false);
	const struct dht_env *e = env_of(s, 0);
	uint8_t helo[2], wrong[2] = { 0, 3 };

	ck_assert_uint_eq(e->peer_helo(e->cls, &s->nodes[1].id, helo, 2), 2);
	/* Unknown without a HELO; a HELO must be the peer's. */
	ck_assert_int_eq(e->link(e->cls, &s->nodes[1].id, NULL, 0), -ENOENT);
	ck_assert_int_eq(e->link(e->cls, &s->nodes[1].id, wrong, 2), -ENOENT);
	s->links_frozen = true;
	ck_assert_int_eq(e->link(e->cls, &s->nodes[1].id, helo, 2), -EPERM);
	s->links_frozen = false;
	ck_assert_int_eq(e->link(e->cls, &s->nodes[1].id, helo, 2), 0);
	ck_assert(dhtsim_linked(s, 0, 1) && dhtsim_linked(s, 1, 0));
	ck_assert(!e->linked(e->cls, &s->nodes[2].id));
	dhtsim_run_ms(s, 10);
	ck_assert_uint_eq(dhtsim_link_get(s, 0, 1).ups, 1);
	ck_assert_uint_eq(dhtsim_link_get(s, 1, 0).ups, 1);
	ck_assert(dhtsim_link_get(s, 0, 1).asked);
	ck_assert(!dhtsim_link_get(s, 1, 0).asked);
	ck_assert_uint_eq(dhtsim_stat(s, 1, "links"), 1);
	/* Gone, and told: known now, no HELO needed to link again. */
	dhtsim_cut(s, 0, 1, true);
	dhtsim_run_ms(s, 10);
	ck_assert_uint_eq(dhtsim_stat(s, 1, "links"), 0);
	ck_assert_int_eq(e->link(e->cls, &s->nodes[1].id, NULL, 0), 0);
	ck_assert(dhtsim_linked(s, 0, 1));
	/* Asked in vain: an unreachable node, a dead one. */
	s->nodes[2].unreachable = true;
	s->nodes[3].alive = false;
	ck_assert_int_eq(dhtsim_link(s, 0, 2), 0);
	ck_assert_int_eq(dhtsim_link(s, 3, 0), 0);
	ck_assert(!dhtsim_linked(s, 0, 2) && !dhtsim_linked(s, 0, 3));
	ck_assert_int_eq(dhtsim_link(s, 0, 0), -EINVAL);
	dhtsim_free(s);
}
END_TEST

START_TEST(test_unlink_rules)
{
	struct dhtsim *s = sim_of(1, 4, true);
	const struct dht_env *e = env_of(s, 0);

	ck_assert_int_eq(dhtsim_link(s, 0, 1), 0);
	ck_assert_int_eq(dhtsim_link(s, 2, 0), 0);
	ck_assert_int_eq(dhtsim_link(s, 0, 3), 0);
	ck_assert_int_eq(dhtsim_pin(s, 0, 3, true), 0);
	ck_assert(e->may_unlink(e->cls, &s->nodes[1].id));
	ck_assert(!e->may_unlink(e->cls, &s->nodes[2].id));
	ck_assert(!e->may_unlink(e->cls, &s->nodes[3].id));
	/* Not ours to drop: refused and counted. */
	ck_assert_int_eq(e->unlink(e->cls, &s->nodes[2].id), -EPERM);
	ck_assert_int_eq(e->unlink(e->cls, &s->nodes[3].id), -EPERM);
	ck_assert_uint_eq(s->c.bad_unlinks, 2);
	ck_assert_int_eq(e->unlink(e->cls, &s->nodes[1].id), 0);
	ck_assert_int_eq(e->unlink(e->cls, &s->nodes[1].id), -ENOTCONN);
	ck_assert_uint_eq(s->c.bad_unlinks, 3);
	ck_assert_uint_eq(s->nodes[0].unlinks, 1);
	ck_assert(!dhtsim_linked(s, 1, 0) && dhtsim_linked(s, 0, 2));
	dhtsim_free(s);
}
END_TEST

static int filter_seen;

/* The test's messages (3 bytes at most) meet *arg; the DHTs' own pass. */
static enum dhtsim_verdict
filter(void *arg, int from, int to, uint16_t type, size_t len)
{
	(void)from;
	(void)to;
	(void)type;
	if (len > 3)
		return DHTSIM_DELIVER;
	filter_seen++;
	return *(const enum dhtsim_verdict *)arg;
}

/* Bodies that do not decode: only their fate matters. */
START_TEST(test_filter)
{
	struct dhtsim *s = sim_of(1, 2, false);
	enum dhtsim_verdict v = DHTSIM_DROP;
	static const uint8_t body[3];
	uint64_t malformed, delivered, t0;

	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body, 3),
	    -ENOTCONN);
	ck_assert_int_eq(dhtsim_link(s, 0, 1), 0);
	dhtsim_run_ms(s, 100);
	malformed = dhtsim_stat(s, 1, "malformed");
	s->filter = filter;
	s->filter_arg = &v;
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body, 3), 0);
	v = DHTSIM_FULL;
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body, 3),
	    -EAGAIN);
	v = DHTSIM_HOLD;
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body, 3), 0);
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_GET, body, 2), 0);
	dhtsim_run_ms(s, 10);
	ck_assert_int_eq(filter_seen, 4);
	ck_assert_uint_eq(s->c.dropped, 1);
	ck_assert_uint_eq(s->c.full, 1);
	ck_assert_uint_eq(s->c.held, 2);
	ck_assert_uint_eq(dhtsim_stat(s, 1, "malformed"), malformed);
	t0 = s->now_us;
	delivered = s->c.delivered;
	dhtsim_release(s);
	dhtsim_run_ms(s, 10);
	ck_assert_uint_ge(s->c.delivered, delivered + 2);
	ck_assert_uint_eq(dhtsim_stat(s, 1, "malformed"), malformed + 2);
	ck_assert_uint_ge(dhtsim_link_get(s, 1, 0).heard_us, t0);
	dhtsim_free(s);
}
END_TEST

struct store_seen {
	int calls, status;
	uint8_t data[8];
	size_t len;
};

static void
on_stored(void *arg, int status)
{
	struct store_seen *seen = arg;

	seen->calls++;
	seen->status = status;
}

static void
on_got(void *arg, int status, const uint8_t *data, size_t len, uint64_t expiry)
{
	struct store_seen *seen = arg;

	(void)expiry;
	on_stored(arg, status);
	seen->len = len;
	if (status == 0)
		memcpy(seen->data, data, len < 8 ? len : 8);
}

START_TEST(test_store)
{
	struct dhtsim *s = sim_of(1, 2, false);
	const struct dht_env *e = env_of(s, 0);
	struct store_seen put = { 0 }, got = { 0 }, late = { 0 };
	struct dht_store_usage u;
	struct dhtkey key;

	dhtsim_random(s, key.b, sizeof(key.b));
	ck_assert_int_eq(e->store_put(e->cls, &key, "block", 5, 9, on_stored,
	                     &put),
	    0);
	ck_assert_int_eq(put.calls, 0); /* never from inside the call */
	ck_assert(e->store_has(e->cls, &key));
	dhtsim_run_ms(s, 1);
	ck_assert_int_eq(put.calls, 1);
	ck_assert_int_eq(put.status, 0);
	e->store_usage(e->cls, &u);
	ck_assert_uint_eq(u.blocks, 1);
	ck_assert_uint_eq(u.bytes, 5);
	ck_assert_uint_eq(dhtsim_block(s, 0, &key)->expiry, 9);
	s->nodes[0].corrupt = true;
	ck_assert_int_eq(e->store_get(e->cls, &key, on_got, &got), 0);
	dhtsim_run_ms(s, 1);
	ck_assert_int_eq(got.status, 0);
	ck_assert_uint_eq(got.len, 5);
	ck_assert_int_eq(memcmp(got.data, "clock", 5), 0); /* 'b' ^ 1 */
	s->nodes[0].liar = true;
	ck_assert(!e->store_has(e->cls, &key));
	ck_assert_ptr_null(dhtsim_block(s, 1, &key));
	/* A dead node's store call waits, and is cancelled at the end. */
	s->nodes[0].alive = false;
	ck_assert_int_eq(e->store_get(e->cls, &key, on_got, &late), 0);
	dhtsim_run_ms(s, 1);
	ck_assert_int_eq(late.calls, 0);
	dhtsim_free(s);
	ck_assert_int_eq(late.calls, 1);
	ck_assert_int_eq(late.status, -ECANCELED);
}
END_TEST

/* Links a and b and runs past the first tick's lookups, before the
 * next: nothing on the link either way. */
static void
link_quiet(struct dhtsim *s, int a, int b)
{
	ck_assert_int_eq(dhtsim_link(s, a, b), 0);
	dhtsim_run_ms(s, 150);
	ck_assert_ptr_null(dhtsim_link_msgs(s, a, b));
	ck_assert_ptr_null(dhtsim_link_msgs(s, b, a));
}

/* 5 ms each way, 100 kB/s from 0 to 1: a message of 1000 bytes is due
 * 15 ms after its send, the next of 500 bytes 5 ms after it, behind it
 * on the way; each is taken at its time, not before. */
START_TEST(test_link_delay_rate)
{
	struct dhtsim *s = sim_of(1, 2, false);
	const struct dht_env *e = env_of(s, 0);
	struct dhtsim_link_cfg c = s->cfg.link;
	static const uint8_t body[1000];
	const struct dhtsim_msg *m;
	uint64_t t0, delivered;

	ck_assert_uint_eq(c.cap, DHTSIM_NO_CAP);
	ck_assert_uint_eq(c.delay_us, 0);
	ck_assert_uint_eq(c.rate, 0);
	link_quiet(s, 0, 1);
	c.delay_us = 5000;
	ck_assert_int_eq(dhtsim_link_set(s, 1, 0, &c), 0);
	c.rate = 100000;
	ck_assert_int_eq(dhtsim_link_set(s, 0, 1, &c), 0);
	ck_assert_uint_eq(e->srtt_us(e->cls, &s->nodes[1].id), 500 + 2 * 5000);
	t0 = s->now_us;
	delivered = s->c.delivered;
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body, 1000),
	    0);
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_GET, body, 500), 0);
	m = dhtsim_link_msgs(s, 0, 1);
	ck_assert_uint_eq(m->at_us, t0 + 15000);
	ck_assert_uint_eq(m->type, FERRY_MSG_DHT_FIND);
	ck_assert_uint_eq(m->next->at_us, t0 + 20000);
	ck_assert_uint_eq(dhtsim_link_get(s, 0, 1).n_msgs, 2);
	dhtsim_run_until(s, t0 + 15000);
	ck_assert_uint_eq(s->c.delivered, delivered);
	dhtsim_run_until(s, t0 + 15000 + DHTSIM_EVENT_US);
	ck_assert_uint_eq(s->c.delivered, delivered + 1);
	ck_assert_uint_eq(dhtsim_link_get(s, 1, 0).heard_us, t0 + 15000);
	dhtsim_run_ms(s, 10);
	ck_assert_uint_eq(s->c.delivered, delivered + 2);
	ck_assert_uint_eq(dhtsim_link_get(s, 1, 0).heard_us, t0 + 20000);
	ck_assert_ptr_null(dhtsim_link_msgs(s, 0, 1));
	dhtsim_free(s);
}
END_TEST

/* A way of cap 4 whose peer holds its sender: four requests go on it,
 * the fifth is refused, an answer has room of its own (1), the next not;
 * nothing is taken until node 1 lets go, then all, in order, and node 0
 * hears of the drain once. A way of cap 0 takes nothing; made larger, it
 * owes its sender the drain at once. */
START_TEST(test_link_cap_hold)
{
	struct dhtsim *s = sim_of(1, 2, false);
	struct dhtsim_link_cfg c = s->cfg.link;
	static const uint8_t body[3];
	const struct dhtsim_msg *m;
	uint64_t delivered;
	int n = 0;

	link_quiet(s, 0, 1);
	c.cap = 4;
	c.answer_room = 1;
	ck_assert_int_eq(dhtsim_link_set(s, 0, 1, &c), 0);
	ck_assert_int_eq(dhtsim_hold(s, 1, 0, true), 0);
	ck_assert(dhtsim_link_get(s, 1, 0).holds);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body,
		                     3),
		    0);
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_GET, body, 3),
	    -EAGAIN);
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_NODES, body, 3), 0);
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FAIL, body, 3),
	    -EAGAIN);
	ck_assert_uint_eq(s->c.refused, 2);
	ck_assert(dhtsim_link_get(s, 0, 1).owed);
	for (m = dhtsim_link_msgs(s, 0, 1); m != NULL; m = m->next, n++)
		ck_assert_uint_eq(m->type,
		    n < 4 ? FERRY_MSG_DHT_FIND : FERRY_MSG_DHT_NODES);
	ck_assert_int_eq(n, 5);
	delivered = s->c.delivered;
	dhtsim_run_ms(s, 10);
	ck_assert_uint_eq(s->c.delivered, delivered);
	ck_assert_uint_eq(dhtsim_link_get(s, 0, 1).n_msgs, 5);
	ck_assert_uint_eq(dhtsim_link_get(s, 0, 1).n_stalled, 5);
	ck_assert_uint_eq(s->c.drains, 0);
	ck_assert_int_eq(dhtsim_hold(s, 1, 0, false), 0);
	dhtsim_run_ms(s, 10);
	ck_assert_uint_eq(s->c.delivered, delivered + 5);
	ck_assert_uint_eq(s->c.drains, 1);
	ck_assert(!dhtsim_link_get(s, 0, 1).owed);
	ck_assert_uint_eq(dhtsim_link_get(s, 0, 1).n_msgs, 0);
	c.cap = 0;
	ck_assert_int_eq(dhtsim_link_set(s, 0, 1, &c), 0);
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body, 3),
	    -EAGAIN);
	ck_assert_uint_eq(s->c.drains, 1);
	c.cap = 2;
	ck_assert_int_eq(dhtsim_link_set(s, 0, 1, &c), 0);
	ck_assert_uint_eq(s->c.drains, 2);
	dhtsim_free(s);
}
END_TEST

/* With hold latency a hold reaches the held node one delay of the way
 * to it later (5 ms each way here): node 1 holds node 0 1 ms after node
 * 0 sent two requests, and still takes them and the one node 0 sends 3
 * ms later, before it heard of the hold; the one it sends after, 7 ms
 * later, waits until node 1 lets go. */
START_TEST(test_hold_latency)
{
	struct dhtsim *s = sim_of(1, 2, false);
	struct dhtsim_link_cfg c = s->cfg.link;
	static const uint8_t body[3];
	uint64_t t0, delivered;

	s->cfg.hold_latency = true;
	link_quiet(s, 0, 1);
	c.delay_us = 5000;
	ck_assert_int_eq(dhtsim_link_set(s, 0, 1, &c), 0);
	ck_assert_int_eq(dhtsim_link_set(s, 1, 0, &c), 0);
	t0 = s->now_us;
	delivered = s->c.delivered;
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body,
		                     3),
		    0);
	dhtsim_run_until(s, t0 + 1000);
	ck_assert_int_eq(dhtsim_hold(s, 1, 0, true), 0);
	ck_assert_uint_eq(dhtsim_link_get(s, 1, 0).hold_from_us,
	    s->now_us + 5000);
	dhtsim_run_until(s, t0 + 3000);
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_GET, body, 3), 0);
	dhtsim_run_until(s, t0 + 7000);
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_PUT, body, 3), 0);
	dhtsim_run_until(s, t0 + 20000);
	ck_assert_uint_eq(s->c.delivered, delivered + 3);
	ck_assert_uint_eq(dhtsim_link_get(s, 0, 1).n_msgs, 1);
	ck_assert_uint_eq(dhtsim_link_msgs(s, 0, 1)->type, FERRY_MSG_DHT_PUT);
	ck_assert_uint_eq(dhtsim_link_get(s, 0, 1).n_stalled, 1);
	ck_assert_int_eq(dhtsim_hold(s, 1, 0, false), 0);
	dhtsim_run_ms(s, 1);
	ck_assert_uint_eq(s->c.delivered, delivered + 4);
	ck_assert_ptr_null(dhtsim_link_msgs(s, 0, 1));
	dhtsim_free(s);
}
END_TEST

/* A stopped node takes nothing, nor its store's answers, and hears no
 * drain; once it goes on, all come, in order. */
START_TEST(test_stop)
{
	struct dhtsim *s = sim_of(1, 2, false);
	const struct dht_env *e = env_of(s, 1);
	struct dhtsim_link_cfg c = s->cfg.link;
	struct store_seen got = { 0 };
	static const uint8_t body[3];
	uint64_t delivered, malformed;
	struct dhtkey key;

	link_quiet(s, 0, 1);
	c.cap = 1;
	ck_assert_int_eq(dhtsim_link_set(s, 1, 0, &c), 0);
	malformed = dhtsim_stat(s, 1, "malformed");
	delivered = s->c.delivered;
	dhtsim_stop(s, 1, true);
	ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body, 3), 0);
	ck_assert_int_eq(dhtsim_send(s, 1, 0, FERRY_MSG_DHT_FIND, body, 3), 0);
	ck_assert_int_eq(dhtsim_send(s, 1, 0, FERRY_MSG_DHT_FIND, body, 3),
	    -EAGAIN);
	dhtsim_random(s, key.b, sizeof(key.b));
	ck_assert_int_eq(e->store_get(e->cls, &key, on_got, &got), 0);
	dhtsim_run_ms(s, 40); /* before the next tick */
	/* Node 0 took node 1's message; node 1 hears of the drain later. */
	ck_assert_uint_eq(s->c.delivered, delivered + 1);
	ck_assert_uint_eq(dhtsim_link_get(s, 0, 1).n_msgs, 1);
	ck_assert(dhtsim_link_get(s, 1, 0).owed);
	ck_assert_uint_eq(s->c.drains, 0);
	ck_assert_int_eq(got.calls, 0);
	ck_assert_uint_eq(dhtsim_stat(s, 1, "malformed"), malformed);
	dhtsim_stop(s, 1, false);
	ck_assert_uint_eq(s->c.drains, 1);
	dhtsim_run_ms(s, 10);
	ck_assert_uint_eq(s->c.delivered, delivered + 2);
	ck_assert_uint_eq(dhtsim_stat(s, 1, "malformed"), malformed + 1);
	ck_assert_int_eq(got.calls, 1);
	ck_assert_int_eq(got.status, -ENOENT);
	dhtsim_free(s);
}
END_TEST

/* Events that take no time, and nodes that take 100 µs for each
 * message: node 1 takes the five sent to it at once one after the
 * other, in the order of their sends, one each 100 µs. */
START_TEST(test_proc_time)
{
	struct dhtsim_cfg cfg;
	struct dhtsim *s;
	static const uint8_t body[3];
	uint64_t t0, delivered;

	dhtsim_cfg_default(&cfg);
	cfg.dht.refresh_us = 3600ull * 1000 * 1000;
	ck_assert_uint_eq(cfg.event_us, DHTSIM_EVENT_US);
	ck_assert_uint_eq(cfg.proc_us, 0);
	cfg.event_us = 0;
	cfg.proc_us = 100;
	ck_assert_int_eq(dhtsim_new(&cfg, 3, &s), 0);
	ck_assert_int_eq(dhtsim_link(s, 2, 1), 0);
	link_quiet(s, 0, 1);
	ck_assert_ptr_null(dhtsim_link_msgs(s, 2, 1));
	t0 = s->now_us;
	delivered = s->c.delivered;
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(dhtsim_send(s, 0, 1, FERRY_MSG_DHT_FIND, body,
		                     3),
		    0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(dhtsim_send(s, 2, 1, FERRY_MSG_DHT_FIND, body,
		                     3),
		    0);
	dhtsim_run_until(s, t0 + 1);
	ck_assert_uint_eq(s->c.delivered, delivered + 1);
	ck_assert_uint_eq(dhtsim_link_get(s, 1, 0).heard_us, t0);
	dhtsim_run_until(s, t0 + 201);
	ck_assert_uint_eq(s->c.delivered, delivered + 3);
	ck_assert_uint_eq(dhtsim_link_get(s, 1, 0).heard_us, t0 + 200);
	ck_assert_uint_lt(dhtsim_link_get(s, 1, 2).heard_us, t0);
	dhtsim_run_until(s, t0 + 401);
	ck_assert_uint_eq(s->c.delivered, delivered + 5);
	ck_assert_uint_eq(dhtsim_link_get(s, 1, 2).heard_us, t0 + 400);
	dhtsim_free(s);
}
END_TEST

/* 12 nodes join through node 0 and refresh their buckets (random
 * targets) for 20 s: what was delivered, when, from whom to whom. */
static uint64_t
replay(uint64_t seed)
{
	struct dhtsim_cfg cfg;
	struct dhtsim *s;
	uint64_t trace;

	dhtsim_cfg_default(&cfg);
	cfg.seed = seed;
	ck_assert_int_eq(dhtsim_new(&cfg, 12, &s), 0);
	for (int i = 1; i < s->n; i++)
		ck_assert_int_eq(dhtsim_link(s, i, 0), 0);
	dhtsim_run_ms(s, 20000);
	ck_assert_uint_gt(s->c.delivered, 100);
	trace = s->c.trace;
	dhtsim_free(s);
	return trace;
}

/* The same seed and calls make the same run, the DHT's own draws
 * (request ids, refresh targets) and the maps' keys included: while a
 * network exists libsodium's randombytes are the seed's, after it they
 * are libsodium's own again. */
START_TEST(test_replay)
{
	char name[32];
	uint8_t a[16], b[16];
	struct dhtsim *s;

	(void)snprintf(name, sizeof(name), "%s",
	    randombytes_implementation_name());
	ck_assert_uint_eq(replay(5), replay(5));
	ck_assert_uint_ne(replay(5), replay(6));
	s = sim_of(9, 1, false);
	ck_assert_str_eq(randombytes_implementation_name(), "dhtsim");
	randombytes_buf(a, sizeof(a));
	dhtsim_free(s);
	ck_assert_str_eq(randombytes_implementation_name(), name);
	s = sim_of(9, 1, false);
	randombytes_buf(b, sizeof(b));
	dhtsim_free(s);
	ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dhtsim");
	TCase *tc = tcase_create("sim");

	tcase_add_test(tc, test_seeded);
	tcase_add_test(tc, test_link_rules);
	tcase_add_test(tc, test_unlink_rules);
	tcase_add_test(tc, test_filter);
	tcase_add_test(tc, test_store);
	tcase_add_test(tc, test_link_delay_rate);
	tcase_add_test(tc, test_link_cap_hold);
	tcase_add_test(tc, test_hold_latency);
	tcase_add_test(tc, test_stop);
	tcase_add_test(tc, test_proc_time);
	tcase_add_test(tc, test_replay);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
