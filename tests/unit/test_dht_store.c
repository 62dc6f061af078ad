/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's block store (src/dht/store*.c), its behaviour: puts and gets,
 * callbacks never from inside a call, group commit, expiry, renewal,
 * eviction by distance to the node's id, persistence across a reopen,
 * store_free() with work pending, one user at a time. Real SQLite files
 * in a scratch directory, a real event_base, the real worker thread.
 * Damage (bad files, kill -9, full and read-only disks) is in
 * test_dht_store_damage.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/event.h>
#include <sqlite3.h>

#include <ferry/transport.h>

#include "dht/store.h"
#include "dht/store_int.h"
#include "lib/log.h"
#include "store_test.h"
#include "unit.h"

#define T_NOW 1000000000ull /* the fake clock's start, seconds */
#define T_DAY 86400ull

static char dir[256];
static struct event_base *base;
static uint8_t own_id[STORE_KEY_LEN];
static uint64_t fake_now;
static struct unit_log logbuf;

static uint64_t
fake_clock(void *cls)
{
	(void)cls;
	return fake_now;
}

static void
test_setup(void)
{
	unit_tmpdir(dir, sizeof(dir));
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	memset(own_id, 0, sizeof(own_id));
	fake_now = T_NOW;
	unit_log_capture(&logbuf, FERRY_LOG_INFO);
}

static void
test_teardown(void)
{
	unit_log_release();
	event_base_free(base);
	unit_rmtree(dir);
}

/* Opens the store in dir with the fake clock. */
static struct store *
t_open(uint64_t quota)
{
	struct store *st = NULL;

	ck_assert_int_eq(store_open(base, dir, own_id, quota, &st), 0);
	ck_assert_ptr_nonnull(st);
	store_set_clock(st, fake_clock, NULL);
	return st;
}

static struct store_stats
t_stats(const struct store *st)
{
	struct store_stats s;

	store_stats(st, &s);
	return s;
}

/* A key of 0xNN followed by zeros: its distance to an all-zero id is
 * ordered by its first byte. */
static void
t_key(uint8_t key[STORE_KEY_LEN], uint8_t first)
{
	memset(key, 0, STORE_KEY_LEN);
	key[0] = first;
	key[STORE_KEY_LEN - 1] = 1;
}

START_TEST(test_round_trip)
{
	struct store *st = t_open(1 << 20);
	uint8_t data[1024], key[STORE_KEY_LEN];
	struct st_result res;
	struct store_stats s;

	st_block(1, data, sizeof(data), key);
	ck_assert(!store_has(st, key));
	ck_assert_int_eq(st_put(base, st, key, data, sizeof(data),
	                     T_NOW + T_DAY),
	    0);
	ck_assert(store_has(st, key));
	st_get(base, st, key, &res);
	ck_assert_int_eq(res.status, 0);
	ck_assert_uint_eq(res.len, sizeof(data));
	ck_assert_mem_eq(res.data, data, sizeof(data));
	ck_assert_uint_eq(res.expiry, T_NOW + T_DAY);
	free(res.data);
	s = t_stats(st);
	ck_assert_uint_eq(s.blocks, 1);
	ck_assert_uint_eq(s.bytes, sizeof(data));
	ck_assert_uint_eq(s.puts, 1);
	ck_assert_uint_eq(s.commits, 1);
	ck_assert_uint_eq(s.quota, 1 << 20);
	ck_assert_uint_eq(s.pending, 0);
	store_free(st);
}
END_TEST

/* Arguments refused at once, and then no callback ever runs. */
START_TEST(test_bad_arguments)
{
	struct store *st = t_open(1 << 20);
	uint8_t data[16] = { 1 }, key[STORE_KEY_LEN] = { 2 };
	struct st_result res = { 0 };

	ck_assert_int_eq(store_put(st, key, data, 0, T_NOW + 10, st_on_done,
	                     &res),
	    -EINVAL);
	ck_assert_int_eq(store_put(st, key, data, sizeof(data), T_NOW,
	                     st_on_done, &res),
	    -EINVAL);
	ck_assert_int_eq(store_put(st, key, data, STORE_BLOCK_MAX + 1,
	                     T_NOW + 10, st_on_done, &res),
	    -EMSGSIZE);
	ck_assert_int_eq(t_stats(st).pending, 0);
	store_free(st);
	ck_assert_int_eq(res.calls, 0);
}
END_TEST

/* Many puts queued at once share transactions (one fsync for many);
 * with one operation per transaction each has its own. */
START_TEST(test_group_commit)
{
	enum { N = 300 };
	struct st_result res[N] = { 0 };
	uint8_t data[1024], key[STORE_KEY_LEN];
	int done = 0;
	struct store *st;

	for (int mode = 0; mode < 2; mode++) {
		st = t_open(64 << 20);
		store_set_batch_max(st, mode == 0 ? 0 : 1);
		for (int i = 0; i < N; i++) {
			memset(&res[i], 0, sizeof(res[i]));
			st_block((uint64_t)(mode * N + i), data, sizeof(data),
			    key);
			ck_assert_int_eq(store_put(st, key, data, sizeof(data),
			                     T_NOW + T_DAY, st_on_done,
			                     &res[i]),
			    0);
		}
		ck_assert_uint_eq(t_stats(st).pending, N);
		do {
			ck_assert_int_ge(event_base_loop(base, EVLOOP_ONCE), 0);
			done = 0;
			for (int i = 0; i < N; i++)
				done += res[i].calls;
		} while (done < N);
		for (int i = 0; i < N; i++) {
			ck_assert_int_eq(res[i].calls, 1);
			ck_assert_int_eq(res[i].status, 0);
		}
		ck_assert_uint_eq(t_stats(st).puts, N);
		if (mode == 0)
			ck_assert_uint_lt(t_stats(st).commits, N / 2);
		else
			ck_assert_uint_eq(t_stats(st).commits, N);
		store_free(st);
	}
}
END_TEST

START_TEST(test_absent_and_expired)
{
	struct store *st = t_open(1 << 20);
	uint8_t data[100], key[STORE_KEY_LEN], other[STORE_KEY_LEN];
	struct st_result res;

	st_block(8, data, sizeof(data), other);
	st_get(base, st, other, &res);
	ck_assert_int_eq(res.status, -ENOENT);
	st_block(7, data, sizeof(data), key);
	ck_assert_int_eq(st_put(base, st, key, data, sizeof(data), T_NOW + 60),
	    0);
	fake_now = T_NOW + 59;
	ck_assert(store_has(st, key));
	fake_now = T_NOW + 60;
	ck_assert(!store_has(st, key));
	st_get(base, st, key, &res);
	ck_assert_int_eq(res.status, -ENOENT);
	/* Held, but expired: the expiry pass drops it. */
	ck_assert_uint_eq(t_stats(st).blocks, 1);
	store_expire_now(st);
	while (t_stats(st).expired == 0)
		ck_assert_int_ge(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(t_stats(st).blocks, 0);
	ck_assert_uint_eq(t_stats(st).bytes, 0);
	store_free(st);
	/* And it is gone from the disk too. */
	fake_now = T_NOW;
	st = t_open(1 << 20);
	ck_assert_uint_eq(t_stats(st).blocks, 0);
	store_free(st);
}
END_TEST

/* A put of a key held already renews it: the later expiry wins. */
START_TEST(test_renewal)
{
	struct store *st = t_open(1 << 20);
	uint8_t data[500], key[STORE_KEY_LEN];
	struct st_result res;

	st_block(3, data, sizeof(data), key);
	ck_assert_int_eq(st_put(base, st, key, data, sizeof(data), T_NOW + 60),
	    0);
	ck_assert_int_eq(st_put(base, st, key, data, sizeof(data), T_NOW + 600),
	    0);
	ck_assert_int_eq(st_put(base, st, key, data, sizeof(data), T_NOW + 300),
	    0);
	fake_now = T_NOW + 100;
	ck_assert(store_has(st, key));
	st_get(base, st, key, &res);
	ck_assert_int_eq(res.status, 0);
	ck_assert_uint_eq(res.expiry, T_NOW + 600);
	free(res.data);
	ck_assert_uint_eq(t_stats(st).blocks, 1);
	ck_assert_uint_eq(t_stats(st).bytes, sizeof(data));
	store_free(st);
}
END_TEST

/* Puts a block of len bytes under the key 0xNN... */
static int
t_put_far(struct store *st, uint8_t first, size_t len)
{
	uint8_t key[STORE_KEY_LEN], *data = calloc(1, len);
	int r;

	ck_assert_ptr_nonnull(data);
	t_key(key, first);
	r = st_put(base, st, key, data, len, T_NOW + T_DAY);
	free(data);
	return r;
}

static bool
t_has(const struct store *st, uint8_t first)
{
	uint8_t key[STORE_KEY_LEN];

	t_key(key, first);
	return store_has(st, key);
}

/* Full: a closer block evicts the farthest; a block farther than all
 * that could make room is refused. */
START_TEST(test_quota_eviction)
{
	struct store *st = t_open(3000);
	struct store_stats s;

	ck_assert_int_eq(t_put_far(st, 0xf0, 1000), 0);
	ck_assert_int_eq(t_put_far(st, 0xe0, 1000), 0);
	ck_assert_int_eq(t_put_far(st, 0xd0, 1000), 0);
	ck_assert_int_eq(t_put_far(st, 0x10, 1000), 0);
	ck_assert(!t_has(st, 0xf0));
	ck_assert(t_has(st, 0x10) && t_has(st, 0xe0) && t_has(st, 0xd0));
	ck_assert_uint_eq(t_stats(st).evicted, 1);
	ck_assert_int_eq(t_put_far(st, 0xff, 1000), -ENOSPC);
	/* 0xe8 is closer than 0xf0 was but farther than all held. */
	ck_assert_int_eq(t_put_far(st, 0xe8, 1000), -ENOSPC);
	ck_assert_int_eq(t_put_far(st, 0x01, 3001), -ENOSPC);
	ck_assert(!t_has(st, 0xff) && !t_has(st, 0xe8));
	/* Two blocks go for one twice their size. */
	ck_assert_int_eq(t_put_far(st, 0x20, 2000), 0);
	ck_assert(t_has(st, 0x10) && t_has(st, 0x20));
	ck_assert(!t_has(st, 0xe0) && !t_has(st, 0xd0));
	s = t_stats(st);
	ck_assert_uint_eq(s.evicted, 3);
	ck_assert_uint_eq(s.refused, 3);
	ck_assert_uint_eq(s.blocks, 2);
	ck_assert_uint_eq(s.bytes, 3000);
	ck_assert_uint_eq(s.failed, 0);
	store_free(st);
	st = t_open(3000);
	ck_assert(t_has(st, 0x10) && t_has(st, 0x20) && !t_has(st, 0xf0));
	ck_assert_uint_eq(t_stats(st).bytes, 3000);
	store_free(st);
}
END_TEST

/* Expired blocks make room before any live block is evicted. */
START_TEST(test_quota_expired_first)
{
	struct store *st = t_open(2000);
	uint8_t key[STORE_KEY_LEN], data[1000] = { 0 };

	t_key(key, 0x05);
	ck_assert_int_eq(st_put(base, st, key, data, sizeof(data), T_NOW + 10),
	    0);
	ck_assert_int_eq(t_put_far(st, 0xf0, 1000), 0);
	fake_now = T_NOW + 10;
	ck_assert_int_eq(t_put_far(st, 0x80, 1000), 0);
	ck_assert(t_has(st, 0xf0) && t_has(st, 0x80));
	ck_assert_uint_eq(t_stats(st).expired, 1);
	ck_assert_uint_eq(t_stats(st).evicted, 0);
	store_free(st);
}
END_TEST

/* The node's id is part of the distances: a new id moves them. */
START_TEST(test_new_own_id)
{
	struct store *st = t_open(2000);

	ck_assert_int_eq(t_put_far(st, 0xf0, 1000), 0);
	ck_assert_int_eq(t_put_far(st, 0x10, 1000), 0);
	store_free(st);
	memset(own_id, 0xff, sizeof(own_id));
	st = t_open(2000);
	/* Seen from 0xff..., 0x10 is the far one now. */
	ck_assert_int_eq(t_put_far(st, 0xe0, 1000), 0);
	ck_assert(t_has(st, 0xf0) && t_has(st, 0xe0) && !t_has(st, 0x10));
	ck_assert_int_eq(t_put_far(st, 0x20, 1000), -ENOSPC);
	store_free(st);
}
END_TEST

START_TEST(test_persistence)
{
	enum { N = 40 };
	uint8_t data[3000], key[STORE_KEY_LEN];
	uint64_t bytes = 0;
	struct store *st = t_open(1 << 20);

	for (int i = 0; i < N; i++) {
		size_t len = 100 + (size_t)i * 70;

		st_block((uint64_t)i, data, len, key);
		ck_assert_int_eq(st_put(base, st, key, data, len,
		                     T_NOW + T_DAY),
		    0);
		bytes += len;
	}
	store_free(st);
	st = t_open(1 << 20);
	ck_assert_uint_eq(t_stats(st).blocks, N);
	ck_assert_uint_eq(t_stats(st).bytes, bytes);
	for (int i = 0; i < N; i++) {
		ck_assert(st_check_block(base, st, (uint64_t)i,
		    100 + (size_t)i * 70));
	}
	store_free(st);
}
END_TEST

/* store_job(): a layer above's table, written in the store's worker
 * with the puts, kept across a reopen; a job that fails is undone alone
 * and the transaction goes on. */
static int
t_job_create(struct sqlite3 *db, void *cls)
{
	(void)cls;
	return sqlite3_exec(db,
	           "CREATE TABLE IF NOT EXISTS t_above(v INTEGER);"
	           " INSERT INTO t_above VALUES (1)",
	           NULL, NULL, NULL) == SQLITE_OK
	    ? 0
	    : -EIO;
}

static int
t_job_fail(struct sqlite3 *db, void *cls)
{
	(void)cls;
	(void)sqlite3_exec(db, "INSERT INTO t_above VALUES (2)", NULL, NULL,
	    NULL);
	return -EINVAL;
}

/* A job's cls is also its callback's: the result comes first. */
struct t_count {
	struct st_result res;
	int n[2];
};

static int
t_job_count(struct sqlite3 *db, void *cls)
{
	sqlite3_stmt *s;
	int *n = ((struct t_count *)cls)->n;

	if (sqlite3_prepare_v2(db, "SELECT count(*), sum(v) FROM t_above",
	        -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(s) == SQLITE_ROW) {
		n[0] = sqlite3_column_int(s, 0);
		n[1] = sqlite3_column_int(s, 1);
	}
	(void)sqlite3_finalize(s);
	return 0;
}

START_TEST(test_job)
{
	struct store *st = t_open(1 << 20);
	struct st_result r1 = { 0 }, r2 = { 0 }, rp = { 0 };
	struct t_count tc = { .n = { -1, -1 } };
	uint8_t data[500], key[STORE_KEY_LEN];

	st_block(7, data, sizeof(data), key);
	ck_assert_int_eq(store_job(st, t_job_create, st_on_done, &r1), 0);
	ck_assert_int_eq(store_put(st, key, data, sizeof(data), T_NOW + T_DAY,
	                     st_on_done, &rp),
	    0);
	ck_assert_int_eq(store_job(st, t_job_fail, st_on_done, &r2), 0);
	/* Never from inside the call. */
	ck_assert_int_eq(r1.calls + r2.calls + rp.calls, 0);
	st_run_until(base, &r2.calls, 1);
	st_run_until(base, &rp.calls, 1);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r1.status, 0);
	ck_assert_int_eq(r2.status, -EINVAL);
	ck_assert_int_eq(rp.status, 0);
	ck_assert_uint_eq(t_stats(st).pending, 0);
	store_free(st);
	/* The row of the first job is durable; the failed one's is not. */
	st = t_open(1 << 20);
	ck_assert(store_has(st, key));
	ck_assert_int_eq(store_job(st, t_job_count, st_on_done, &tc), 0);
	st_run_until(base, &tc.res.calls, 1);
	ck_assert_int_eq(tc.res.status, 0);
	ck_assert_int_eq(tc.n[0], 1);
	ck_assert_int_eq(tc.n[1], 1);
	store_free(st);
}
END_TEST

/* store_free() with puts queued: each callback runs exactly once, 0 for
 * what the worker finished (and it is stored), -ECANCELED for what it
 * never began (and it is not). */
START_TEST(test_free_pending)
{
	enum { N = 400 };
	static struct st_result res[N];
	uint8_t data[4096], key[STORE_KEY_LEN];
	struct store *st = t_open(64 << 20);
	int stored = 0, cancelled = 0;

	memset(res, 0, sizeof(res));
	for (int i = 0; i < N; i++) {
		st_block((uint64_t)i, data, sizeof(data), key);
		ck_assert_int_eq(store_put(st, key, data, sizeof(data),
		                     T_NOW + T_DAY, st_on_done, &res[i]),
		    0);
	}
	store_free(st);
	st = t_open(64 << 20);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(res[i].calls, 1);
		ck_assert(res[i].status == 0 || res[i].status == -ECANCELED);
		st_block((uint64_t)i, data, sizeof(data), key);
		ck_assert(store_has(st, key) == (res[i].status == 0));
		stored += res[i].status == 0;
		cancelled += res[i].status == -ECANCELED;
	}
	ck_assert_uint_eq(t_stats(st).blocks, (uint64_t)stored);
	ck_assert_int_eq(stored + cancelled, N);
	store_free(st);
}
END_TEST

/* A get queued behind store_free() is cancelled too. */
START_TEST(test_free_pending_get)
{
	uint8_t data[64], key[STORE_KEY_LEN];
	struct store *st = t_open(1 << 20);
	struct st_result res = { 0 }, absent = { 0 };
	uint8_t nokey[STORE_KEY_LEN] = { 9 };

	st_block(5, data, sizeof(data), key);
	ck_assert_int_eq(st_put(base, st, key, data, sizeof(data),
	                     T_NOW + T_DAY),
	    0);
	ck_assert_int_eq(store_get(st, key, st_on_got, &res), 0);
	ck_assert_int_eq(store_get(st, nokey, st_on_got, &absent), 0);
	ck_assert_int_eq(res.calls + absent.calls, 0);
	store_free(st);
	ck_assert_int_eq(res.calls, 1);
	ck_assert(res.status == 0 || res.status == -ECANCELED);
	ck_assert_int_eq(absent.calls, 1);
	ck_assert_int_eq(absent.status, -ENOENT);
	free(res.data);
}
END_TEST

/* A second store on the same directory is refused while one is open. */
START_TEST(test_one_user)
{
	struct store *st = t_open(1 << 20), *second = NULL;

	ck_assert_int_eq(store_open(base, dir, own_id, 1 << 20, &second),
	    -EBUSY);
	ck_assert_ptr_null(second);
	ck_assert(unit_log_has(&logbuf, "in use by another process"));
	store_free(st);
	st = t_open(1 << 20);
	store_free(st);
}
END_TEST

START_TEST(test_free_null)
{
	store_free(NULL);
}
END_TEST

static Suite *
dht_store_suite(void)
{
	Suite *s = suite_create("dht_store");
	TCase *tc = tcase_create("store");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_group_commit);
	tcase_add_test(tc, test_absent_and_expired);
	tcase_add_test(tc, test_renewal);
	tcase_add_test(tc, test_quota_eviction);
	tcase_add_test(tc, test_quota_expired_first);
	tcase_add_test(tc, test_new_own_id);
	tcase_add_test(tc, test_persistence);
	tcase_add_test(tc, test_job);
	tcase_add_test(tc, test_free_pending);
	tcase_add_test(tc, test_free_pending_get);
	tcase_add_test(tc, test_one_user);
	tcase_add_test(tc, test_free_null);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(dht_store_suite());
}
