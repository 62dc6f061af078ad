/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT between real ferryd processes (issue 12), each on its own
 * 127.0.0.N, with the core's links left to the DHT (the default, [core]
 * LINK_POLICY = auto): daemons that know only the first one's HELO build
 * tables from which FIND, from any daemon, returns the true closest
 * (checked against the membership the test knows); a block put on one
 * daemon is held by exactly the REPLICATION closest, with that many valid
 * receipts, and every daemon gets it; a key nobody holds ends in
 * not-found, quickly; a storing daemon killed, the block still comes from
 * the others; and one killed with SIGKILL right after its receipt still
 * serves the block after its restart. It runs alone (RUN_SERIAL): its 16
 * daemons, under ASan above all, would starve the timing of tests beside
 * it.
 */
/* ctest: TIMEOUT=600 RUN_SERIAL=1 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include <ferry/client.h>

#include "dhtcheck.h"
#include "harness.h"
#include "mesh.h"

#define N        16
#define LINK_MS  30000
/* All daemons are in 127.0.0.0/24, one network to PER_NETWORK: no bound
 * here, or a bucket would keep two of them. */
#define DHT_CFG  "[dht]\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n" \
		 "PER_NETWORK = 0\n"

static struct harness *h;
static struct harness_daemon *d[N];

/* 16 daemons; each knows d0's HELO only. Waits until every table holds
 * every other daemon (k = 20 leaves room for all). */
static void
setup(void)
{
	ck_assert_int_eq(harness_new("dht", &h), 0);
	mesh_start(h, d, N, "udp", DHT_CFG);
	dhtcheck_wait_tables(h, d, N, N - 1, LINK_MS);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

START_TEST(test_find_true_closest)
{
	struct ferry_peer_id want[N], *got;
	struct ferry_dht_key key;
	struct ferry_client *c;
	size_t n;

	for (int i = 0; i < N; i++) {
		randombytes_buf(key.bytes, sizeof(key.bytes));
		c = dhtcheck_client(d[i]);
		ck_assert_int_eq(ferry_dht_find(c, &key, 8, &got, &n), 0);
		ferry_client_close(c);
		ck_assert_uint_eq(n, 8);
		(void)dhtcheck_closest(d, N, &key, want);
		for (size_t j = 0; j < n; j++)
			ck_assert_msg(memcmp(&got[j], &want[j],
			                  sizeof(want[j])) == 0,
			    "FIND from d%d: place %zu is d%d, not d%d", i, j,
			    dhtcheck_index_of(d, N, &got[j]),
			    dhtcheck_index_of(d, N, &want[j]));
		free(got);
	}
}
END_TEST

/* Puts a random block of len bytes on dd; checks its receipts. */
static void
put_checked(struct harness_daemon *dd, uint8_t *data, size_t len,
    struct ferry_dht_key *ret_key, struct ferry_peer_id *ret_storers)
{
	struct ferry_client *c = dhtcheck_client(dd);
	struct ferry_dht_receipt *r;
	size_t n;

	randombytes_buf(data, len);
	ck_assert_int_eq(ferry_dht_put(c, data, len, 0, 0, ret_key, &r, &n),
	    0);
	ferry_client_close(c);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(ferry_dht_receipt_verify(ret_key, &r[i]), 0);
		for (size_t j = 0; j < i; j++)
			ck_assert(memcmp(&r[i].storer, &r[j].storer,
			              sizeof(r[i].storer)) != 0);
		ret_storers[i] = r[i].storer;
	}
	free(r);
}

static void
get_checked(struct harness_daemon *dd, const struct ferry_dht_key *key,
    const uint8_t *data, size_t len)
{
	struct ferry_client *c = dhtcheck_client(dd);
	uint8_t *got;
	size_t n;
	int r = ferry_dht_get(c, key, &got, &n);

	ferry_client_close(c);
	ck_assert_msg(r == 0, "GET from d%u: %s", dd->index, strerror(-r));
	ck_assert_uint_eq(n, len);
	ck_assert_int_eq(memcmp(got, data, len), 0);
	free(got);
}

START_TEST(test_put_get_everywhere)
{
	static uint8_t data[200 * 1024];
	struct ferry_peer_id want[N], storers[3];
	struct ferry_dht_key key;

	put_checked(d[3], data, sizeof(data), &key, storers);
	(void)dhtcheck_closest(d, N, &key, want);
	/* The three closest hold it and signed for it; nobody else has it. */
	for (int i = 0; i < N; i++) {
		bool closest = false;

		for (int j = 0; j < 3; j++)
			closest = closest ||
			    memcmp(&want[j], &d[i]->id, sizeof(want[j])) == 0;
		ck_assert_uint_eq(dhtcheck_figures(d[i]).blocks,
		    closest ? 1 : 0);
	}
	for (int j = 0; j < 3; j++)
		ck_assert_int_ge(dhtcheck_index_of(d, N, &storers[j]), 0);
	for (int i = 0; i < N; i++)
		get_checked(d[i], &key, data, sizeof(data));
}
END_TEST

START_TEST(test_absent_and_killed_holder)
{
	static uint8_t data[4096];
	struct ferry_peer_id want[N], storers[3];
	struct ferry_dht_key key;
	struct ferry_client *c;
	uint8_t *got;
	size_t n;
	uint64_t t0;
	int victim;

	randombytes_buf(key.bytes, sizeof(key.bytes));
	c = dhtcheck_client(d[5]);
	t0 = harness_now_ms();
	ck_assert_int_eq(ferry_dht_get(c, &key, &got, &n), -ENOENT);
	ferry_client_close(c);
	ck_assert_uint_lt(harness_now_ms() - t0, 3000);
	put_checked(d[7], data, sizeof(data), &key, storers);
	(void)dhtcheck_closest(d, N, &key, want);
	victim = dhtcheck_index_of(d, N, &want[0]);
	ck_assert_int_eq(harness_daemon_kill(d[victim]), 0);
	for (int i = 0; i < N; i++)
		if (harness_daemon_running(d[i]))
			get_checked(d[i], &key, data, sizeof(data));
}
END_TEST

/* Receipts mean durable: a holder killed with SIGKILL right after the
 * PUT's receipts came has the block after its restart. */
START_TEST(test_receipt_survives_kill)
{
	static uint8_t data[50000];
	struct ferry_peer_id storers[3];
	struct ferry_dht_key key;
	int holder;

	put_checked(d[9], data, sizeof(data), &key, storers);
	holder = dhtcheck_index_of(d, N, &storers[0]);
	ck_assert_int_eq(harness_daemon_kill(d[holder]), 0);
	ck_assert_int_eq(harness_daemon_start_ready(d[holder]), 0);
	ck_assert_uint_eq(dhtcheck_figures(d[holder]).blocks, 1);
	get_checked(d[holder], &key, data, sizeof(data));
}
END_TEST

static Suite *
dht_suite(void)
{
	Suite *s = suite_create("dht");
	TCase *tc = tcase_create("sixteen");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_find_true_closest);
	tcase_add_test(tc, test_put_get_everywhere);
	tcase_add_test(tc, test_absent_and_killed_holder);
	tcase_add_test(tc, test_receipt_survives_kill);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dht_suite());
	int failed;

	if (sodium_init() < 0)
		return 1;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
