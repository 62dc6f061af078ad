/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A daemon's first traffic after a restart (the full peer's cold put of
 * tests/bench/bench_remote): three real ferryd processes with the DHT,
 * the third one's units delayed by 100 ms ([testing] DELAY), which is
 * stopped and started again and at once asked to put a block. It comes
 * back with its routing table from disk and no link up, so the PUT's
 * first attempt finds no neighbour linked and is stored there alone; the
 * links the table asked for come up a round trip later. The put must
 * complete then, not when that attempt's time is out (REQUEST_TIMEOUT / 4
 * while no round trip is measured, 5 s here): it took 2.5 s with the
 * default timeout, one key exchange per link as it should be, the
 * counters having been read as a second one. Each of the other two
 * makes one new session with the restarted daemon, no more.
 */
/* ctest: TIMEOUT=300 */
#include <stdio.h>
#include <stdlib.h>

#include <check.h>
#include <sodium.h>

#include <ferry/client.h>

#include "dhtcheck.h"
#include "harness.h"
#include "mesh.h"

#define N        3
#define TABLE_MS 30000
#define DELAY_MS 100
/* The attempt a PUT would wait out: 20 s / 4 = 5 s. */
#define DHT_CFG                                                                \
	"[dht]\nREFRESH_INTERVAL = 2 s\nPER_NETWORK = 0\nORIGIN_QUOTA = 0\n"   \
	"REQUEST_TIMEOUT = 20 s\n"
/* A put over links that come up a round trip after the start takes a
 * few round trips; under a loaded machine, allow many more, still half
 * the attempt's time. */
#define PUT_MS 2500

static struct harness *h;
static struct harness_daemon *d[N];

static void
setup(void)
{
	char *uri;

	ck_assert_int_eq(harness_new("restart-traffic", &h), 0);
	mesh_start(h, d, N - 1, "udp", DHT_CFG);
	ck_assert_int_eq(harness_daemon_new(h, &d[N - 1]), 0);
	ck_assert_int_eq(harness_daemon_transports(d[N - 1], "udp"), 0);
	uri = mesh_hello(d[0]);
	ck_assert_int_eq(harness_daemon_config(d[N - 1],
	                     "%s[core]\nBOOTSTRAP = %s\n"
	                     "[testing]\nENABLE = yes\nDELAY = %d ms\n",
	                     DHT_CFG, uri, DELAY_MS),
	    0);
	free(uri);
	ck_assert_int_eq(harness_daemon_start_ready(d[N - 1]), 0);
	dhtcheck_wait_tables(h, d, N, N - 1, TABLE_MS);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

/* Puts a random block on dd; how long it took (ms). */
static uint64_t
put_timed(struct harness_daemon *dd)
{
	static uint8_t data[4000];
	struct ferry_client *c = dhtcheck_client(dd);
	struct ferry_dht_receipt *r;
	struct ferry_dht_key key;
	uint64_t t0 = harness_now_ms();
	size_t n;

	randombytes_buf(data, sizeof(data));
	ck_assert_int_eq(ferry_dht_put(c, data, sizeof(data), 0, 0, &key, &r,
	                     &n),
	    0);
	t0 = harness_now_ms() - t0;
	ferry_client_close(c);
	free(r);
	ck_assert_uint_eq(n, 3);
	return t0;
}

START_TEST(test_put_right_after_restart)
{
	struct harness_daemon *x = d[N - 1];
	uint64_t keys[N - 1], ms;

	for (int rep = 0; rep < 3; rep++) {
		for (int i = 0; i < N - 1; i++)
			keys[i] = mesh_stat(d[i], "core.key_changes");
		ck_assert_int_eq(harness_daemon_restart(x), 0);
		ms = put_timed(x);
		fprintf(stderr,
		    "test_restart_traffic: put %d after the restart: %llu ms, "
		    "%llu retries\n",
		    rep + 1, (unsigned long long)ms,
		    (unsigned long long)mesh_stat(x, "dht.retries"));
		if (ms >= PUT_MS)
			harness_dump_logs(h);
		ck_assert_msg(ms < PUT_MS,
		    "put %d after the restart took %llu ms", rep + 1,
		    (unsigned long long)ms);
		ck_assert_uint_eq(mesh_stat(x, "dht.timeouts"), 0);
		/* One key exchange per link, on both ends. */
		ck_assert_uint_eq(mesh_stat(x, "core.key_changes"), N - 1);
		for (int i = 0; i < N - 1; i++)
			ck_assert_uint_eq(mesh_stat(d[i], "core.key_changes"),
			    keys[i] + 1);
	}
	for (int i = 0; i < N; i++)
		ck_assert_uint_eq(mesh_stat(d[i], "core.enc_bad"), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("restart_traffic");
	TCase *tc = tcase_create("restart");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_put_right_after_restart);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
