/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * dht_put_signed() (src/dht/dht_ops.c), the intermediary's relay of a PUT
 * a thin client signed (ferry-intermediary(7)), on a network of real DHT
 * nodes in one process (tests/lib/dhtsim.c). Checked: the PUT reaches the
 * closest nodes unchanged, so that every receipt names the put_hash the
 * client computes for itself and verifies; the storing peers charge the
 * client's key, not the relay's, to ORIGIN_QUOTA; a forged signature, a
 * block that is not its key's, and fields out of range are refused at
 * the relay before anything is sent.
 */
/* unit-link: ferry_testlib */
#include <errno.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dht.h"
#include "dhtsim.h"
#include "unit.h"

#define EXPIRY 1800000000u

static struct dhtsim *sim;
static struct identity *client;

struct outcome {
	bool done;
	int status;
	unsigned receipts;
	struct dhtmsg_receipt receipt[DHTMSG_REPL_MAX];
	struct dhtkey storer[DHTMSG_REPL_MAX];
};

static void
on_done(void *cls, const struct dht_result *r)
{
	struct outcome *o = cls;

	ck_assert(!o->done);
	o->done = true;
	o->status = r->status;
	o->receipts = r->receipts;
	for (unsigned i = 0; i < r->receipts; i++) {
		o->receipt[i] = r->receipt[i];
		o->storer[i] = r->storer[i];
	}
}

static void
wait_for(struct outcome *o)
{
	for (int i = 0; i < 150 && !o->done; i++)
		dhtsim_run_ms(sim, 100);
	ck_assert_msg(o->done, "no outcome in 15 s");
}

static void
net_up(int n)
{
	struct dhtsim_cfg cfg;
	uint8_t seed[32];

	dhtsim_cfg_default(&cfg);
	cfg.seed = 0x51;
	ck_assert_int_eq(dhtsim_new(&cfg, n, &sim), 0);
	for (int i = 1; i < n; i++)
		ck_assert_int_eq(dhtsim_link(sim, i, 0), 0);
	dhtsim_run_ms(sim, 60000);
	memset(seed, 0xc1, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &client), 0);
}

static void
net_down(void)
{
	dhtsim_free(sim);
	sim = NULL;
	identity_free(client);
	client = NULL;
}

/* The client's side: a PUT of data signed by its own key. */
static void
client_sign(const uint8_t *data, size_t len, unsigned replication,
    struct dhtkey *ret_key, struct dhtmsg_put *ret)
{
	memset(ret, 0, sizeof(*ret));
	dhtkey_of_block(data, len, ret_key);
	ret->replication = (uint8_t)replication;
	ret->expiry = EXPIRY;
	ret->block = data;
	ret->block_len = len;
	dhtmsg_put_sign(client, ret_key, ret);
}

/* A relayed PUT is stored at the closest nodes as the client signed it:
 * every receipt verifies against the client's own put_hash, and the
 * relay's signature appears nowhere. */
START_TEST(test_relay_receipts)
{
	uint8_t data[1500], hash[DHTMSG_HASH_LEN];
	struct dhtmsg_put put;
	struct dhtkey key, got;
	struct outcome o;
	int relay = 3, stored = 0;

	net_up(16);
	dhtsim_random(sim, data, sizeof(data));
	client_sign(data, sizeof(data), 3, &key, &put);
	dhtmsg_put_hash(&key, &put, hash);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_put_signed(sim->nodes[relay].dht, &put, on_done,
	                     &o, &got),
	    0);
	ck_assert(dhtkey_equal(&got, &key));
	ck_assert(!o.done); /* never from inside the call */
	wait_for(&o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 3);
	for (unsigned i = 0; i < o.receipts; i++)
		ck_assert_int_eq(dhtmsg_receipt_verify(&key, &o.storer[i], hash,
		                     &o.receipt[i]),
		    0);
	for (int i = 0; i < sim->n; i++)
		stored += dhtsim_block(sim, i, &key) != NULL;
	ck_assert_int_eq(stored, 3);
	net_down();
}
END_TEST

/* ORIGIN_QUOTA counts the signer: the client's second block goes over it
 * at every storing peer, while the relay's own PUT of the same bytes,
 * signed by the relay, is still taken. */
START_TEST(test_quota_is_the_clients)
{
	uint8_t a[3000], b[3000];
	struct dhtmsg_put put;
	struct dhtkey ka, kb, got;
	struct outcome o;
	struct dht_cfg cfg;

	net_up(8);
	for (int i = 0; i < sim->n; i++) {
		cfg = *dht_config(sim->nodes[i].dht);
		cfg.origin_quota = 5000;
		ck_assert_int_eq(dht_set_cfg(sim->nodes[i].dht, &cfg), 0);
	}
	dhtsim_random(sim, a, sizeof(a));
	dhtsim_random(sim, b, sizeof(b));
	client_sign(a, sizeof(a), 8, &ka, &put);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_put_signed(sim->nodes[1].dht, &put, on_done, &o,
	                     &got),
	    0);
	ck_assert(dhtkey_equal(&got, &ka));
	wait_for(&o);
	ck_assert_int_eq(o.status, 0);
	client_sign(b, sizeof(b), 8, &kb, &put);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_put_signed(sim->nodes[1].dht, &put, on_done, &o,
	                     &got),
	    0);
	ck_assert(dhtkey_equal(&got, &kb));
	wait_for(&o);
	ck_assert_int_eq(o.status, -EDQUOT);
	ck_assert_uint_eq(o.receipts, 0);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_put_keyed(sim->nodes[1].dht, &kb, b, sizeof(b),
	                     EXPIRY, 8, on_done, &o),
	    0);
	wait_for(&o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(o.receipts, 8);
	net_down();
}
END_TEST

/* Refusals at the relay: nothing leaves it, and done is never called. */
START_TEST(test_refused_at_relay)
{
	uint8_t data[500], other[500];
	struct dhtmsg_put put, bad;
	struct dhtkey key, wrong, got;
	struct outcome o;
	struct dht *d;

	net_up(8);
	d = sim->nodes[2].dht;
	dhtsim_random(sim, data, sizeof(data));
	dhtsim_random(sim, other, sizeof(other));
	client_sign(data, sizeof(data), 3, &key, &put);
	memset(&o, 0, sizeof(o));
	bad = put;
	bad.sig[10] ^= 1;
	ck_assert_int_eq(dht_put_signed(d, &bad, on_done, &o, &got), -EBADMSG);
	ck_assert(dhtkey_equal(&got, &key));
	bad = put;
	bad.expiry++; /* signed for another expiry */
	ck_assert_int_eq(dht_put_signed(d, &bad, on_done, &o, &got), -EBADMSG);
	bad = put;
	bad.block = other; /* not the block that was signed */
	ck_assert_int_eq(dht_put_signed(d, &bad, on_done, &o, &got), -EBADMSG);
	/* The key is the block's own, whatever was signed: a relay cannot
	 * be handed another. */
	dhtkey_of_block(other, sizeof(other), &wrong);
	ck_assert(dhtkey_equal(&got, &wrong));
	ck_assert_uint_eq(dhtsim_stat(sim, 2, "refused"), 3);
	bad = put;
	bad.replication = 0;
	ck_assert_int_eq(dht_put_signed(d, &bad, on_done, &o, &got), -EINVAL);
	bad.replication = DHTMSG_REPL_MAX + 1;
	ck_assert_int_eq(dht_put_signed(d, &bad, on_done, &o, &got), -EINVAL);
	client_sign(data, sizeof(data), 3, &key, &bad);
	bad.expiry = DHTSIM_WALL0_S - 1;
	dhtmsg_put_sign(client, &key, &bad);
	ck_assert_int_eq(dht_put_signed(d, &bad, on_done, &o, &got), -EINVAL);
	ck_assert_int_eq(dht_put_signed(d, &put, NULL, NULL, &got), -EINVAL);
	bad = put;
	bad.block_len = 0;
	ck_assert_int_eq(dht_put_signed(d, &bad, on_done, &o, &got), -EINVAL);
	dhtsim_run_ms(sim, 2000);
	ck_assert(!o.done);
	for (int i = 0; i < sim->n; i++)
		ck_assert_ptr_null(dhtsim_block(sim, i, &key));
	net_down();
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_put_signed");
	TCase *tc = tcase_create("relay");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_relay_receipts);
	tcase_add_test(tc, test_quota_is_the_clients);
	tcase_add_test(tc, test_refused_at_relay);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
