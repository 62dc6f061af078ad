/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's asynchronous DHT requests (<ferry/client.h>,
 * ferry_dht_*_start and ferry_dht_next) on a real ferryd whose DHT runs
 * alone (it stores every PUT itself and answers every FIND with itself):
 * 64 in flight on one connection and the 65th refused at once; each ends
 * once with its own req_id, key, block or peers; blocking calls on the
 * same client in between lose none of their replies; a daemon that stops
 * answering times them out, and one that goes away ends each with the
 * connection's error.
 */
/* ctest: TIMEOUT=120 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <ferry/client.h>

#include "harness.h"

#define BLOCK 512

static struct harness *h;
static struct harness_daemon *d;

static void
setup(void)
{
	ck_assert_int_eq(harness_new("dht-async", &h), 0);
	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_transports(d, "udp"), 0);
	if (harness_daemon_start_ready(d) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferryd did not start");
	}
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
	d = NULL;
}

/* Block i of a test: BLOCK bytes no other i has. */
static void
mk_block(uint8_t *buf, unsigned i)
{
	for (unsigned k = 0; k < BLOCK; k++)
		buf[k] = (uint8_t)(i * 31 + k * 7 + (k >> 8));
	memcpy(buf, &i, sizeof(i));
}

/* Index of req_id among ids[0..n), which must hold it. */
static unsigned
find_id(const uint32_t *ids, unsigned n, uint32_t req_id)
{
	for (unsigned i = 0; i < n; i++)
		if (ids[i] == req_id)
			return i;
	ck_abort_msg("req_id %u was never started", req_id);
	return 0;
}

/* FERRY_DHT_ASYNC_MAX PUTs, then GETs of them with blocking calls in
 * between, then FINDs and a GET of a block nobody holds. */
START_TEST(test_async_many)
{
	uint32_t ids[FERRY_DHT_ASYNC_MAX], extra;
	bool seen[FERRY_DHT_ASYNC_MAX] = { false };
	struct ferry_dht_key keys[FERRY_DHT_ASYNC_MAX], none;
	struct ferry_dht_status *st;
	struct ferry_client *c;
	struct ferry_dht_end e;
	uint8_t buf[BLOCK], *data;
	size_t len;
	unsigned n = FERRY_DHT_ASYNC_MAX;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_dht_next(c, 0, &e), -ENOENT);
	for (unsigned i = 0; i < n; i++) {
		mk_block(buf, i);
		ck_assert_int_eq(ferry_dht_key_of(buf, BLOCK, &keys[i]), 0);
		ck_assert_int_eq(ferry_dht_put_start(c, buf, BLOCK, 1, 0,
		                     &ids[i]),
		    0);
	}
	ck_assert_uint_eq(ferry_dht_pending(c), n);
	ck_assert_int_eq(ferry_dht_put_start(c, buf, BLOCK, 1, 0, &extra),
	    -EAGAIN);
	for (unsigned k = 0; k < n; k++) {
		unsigned i;

		ck_assert_int_eq(ferry_dht_next(c, 10000, &e), 0);
		i = find_id(ids, n, e.req_id);
		ck_assert_msg(!seen[i], "PUT %u ended twice", i);
		seen[i] = true;
		ck_assert_uint_eq(e.op, FERRY_C_DHT_PUT);
		ck_assert_int_eq(e.status, 0);
		ck_assert_uint_eq(e.receipts, 1);
		ck_assert_mem_eq(e.key.bytes, keys[i].bytes, FERRY_DHT_KEY_LEN);
		ck_assert_ptr_nonnull(e.receipt_list);
		ck_assert_int_eq(ferry_dht_receipt_verify(&keys[i],
		                     &e.receipt_list[0]),
		    0);
		ck_assert_mem_eq(&e.receipt_list[0].storer, &d->id,
		    sizeof(d->id));
		ferry_dht_end_free(&e);
	}
	ck_assert_int_eq(ferry_dht_next(c, 0, &e), -ENOENT);

	/* GETs, with blocking requests on the same client while they run:
	 * their replies come in between and must be kept. */
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(ferry_dht_get_start(c, &keys[i], &ids[i]), 0);
		if (i % 16 == 15) {
			ck_assert_int_eq(ferry_dht_status(c, &st), 0);
			ck_assert_uint_eq(st->blocks, n);
			ferry_dht_status_free(st);
		}
	}
	for (unsigned k = 0; k < n; k++) {
		unsigned i;

		ck_assert_int_eq(ferry_dht_next(c, 10000, &e), 0);
		i = find_id(ids, n, e.req_id);
		ck_assert(!seen[i]);
		seen[i] = true;
		ck_assert_uint_eq(e.op, FERRY_C_DHT_GET);
		ck_assert_int_eq(e.status, 0);
		mk_block(buf, i);
		ck_assert_uint_eq(e.len, BLOCK);
		ck_assert_mem_eq(e.data, buf, BLOCK);
		ferry_dht_end_free(&e);
		if (k == n / 2) {
			/* A blocking GET now that there is room. */
			ck_assert_int_eq(ferry_dht_get(c, &keys[5], &data,
			                     &len),
			    0);
			ck_assert_uint_eq(len, BLOCK);
			free(data);
		}
	}

	memset(none.bytes, 0x5a, sizeof(none.bytes));
	ck_assert_int_eq(ferry_dht_find_start(c, &none, 4, &ids[0]), 0);
	ck_assert_int_eq(ferry_dht_get_start(c, &none, &ids[1]), 0);
	ck_assert_int_eq(ferry_dht_find_start(c, &none, 0, &ids[2]), -EINVAL);
	for (unsigned k = 0; k < 2; k++) {
		ck_assert_int_eq(ferry_dht_next(c, 10000, &e), 0);
		if (e.req_id == ids[0]) {
			ck_assert_uint_eq(e.op, FERRY_C_DHT_FIND);
			ck_assert_int_eq(e.status, 0);
			ck_assert_uint_eq(e.n_peers, 1); /* the daemon alone */
			ck_assert_mem_eq(e.peers[0].bytes, d->id.bytes,
			    FERRY_PEER_ID_LEN);
		} else {
			ck_assert_uint_eq(e.req_id, ids[1]);
			ck_assert_int_eq(e.status, -ENOENT);
			ck_assert_ptr_null(e.data);
		}
		ferry_dht_end_free(&e);
	}
	ck_assert_int_eq(ferry_dht_next(c, 50, &e), -ENOENT);
	ferry_client_close(c);
}
END_TEST

/* A daemon that stops answering (SIGSTOP): the requests time out at the
 * client's timeout plus 5 s; after SIGCONT the client works on. A
 * daemon that goes away ends each request in flight with the error. */
START_TEST(test_async_stop_and_gone)
{
	struct ferry_dht_key key;
	struct ferry_client *c;
	struct ferry_dht_end e;
	uint32_t ids[3];
	uint64_t t0;

	memset(key.bytes, 0x11, sizeof(key.bytes));
	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ferry_client_set_timeout(c, 200);
	ck_assert_int_eq(kill(d->pid, SIGSTOP), 0);
	t0 = harness_now_ms();
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(ferry_dht_find_start(c, &key, 1, &ids[i]), 0);
	ck_assert_int_eq(ferry_dht_next(c, 1000, &e), -ETIMEDOUT);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_int_eq(ferry_dht_next(c, 20000, &e), 0);
		ck_assert_int_eq(e.status, -ETIMEDOUT);
		ferry_dht_end_free(&e);
	}
	ck_assert_uint_ge(harness_now_ms() - t0, 5200);
	ck_assert_int_eq(kill(d->pid, SIGCONT), 0);
	ferry_client_set_timeout(c, 10000);
	ck_assert_int_eq(ferry_dht_find_start(c, &key, 1, &ids[0]), 0);
	ck_assert_int_eq(ferry_dht_next(c, 10000, &e), 0);
	ck_assert_uint_eq(e.req_id, ids[0]);
	ck_assert_int_eq(e.status, 0);
	ferry_dht_end_free(&e);

	ck_assert_int_eq(kill(d->pid, SIGSTOP), 0);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(ferry_dht_find_start(c, &key, 1, &ids[i]), 0);
	ck_assert_int_eq(harness_daemon_kill(d), 0);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_int_eq(ferry_dht_next(c, 5000, &e), 0);
		ck_assert_int_eq(e.status, -ECONNRESET);
		ferry_dht_end_free(&e);
	}
	ck_assert_int_eq(ferry_dht_next(c, 0, &e), -ENOENT);
	ck_assert_int_eq(ferry_dht_find_start(c, &key, 1, &ids[0]),
	    -ECONNRESET);
	ferry_client_close(c);
}
END_TEST

static Suite *
dht_async_suite(void)
{
	Suite *s = suite_create("dht_async");
	TCase *tc = tcase_create("alone");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_async_many);
	tcase_add_test(tc, test_async_stop_and_gone);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dht_async_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
