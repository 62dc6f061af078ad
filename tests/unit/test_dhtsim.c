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
 * calls are cancelled at the end.
 */
/* unit-link: ferry_testlib */
#include <errno.h>
#include <string.h>

#include <check.h>

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
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
