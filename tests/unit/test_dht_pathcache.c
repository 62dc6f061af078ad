/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Recently seen DHT requests (src/dht/pathcache.c): duplicates refused
 * within their time, the way back for answers, requests of this node's
 * own, expiry, and a full cache pushing out its oldest entry.
 */
#include <errno.h>
#include <string.h>

#include <check.h>

#include "dht/pathcache.h"
#include "unit.h"

static struct dhtkey
k(uint8_t v)
{
	struct dhtkey key;

	memset(key.b, v, sizeof(key.b));
	return key;
}

START_TEST(test_duplicates_and_way_back)
{
	struct pathcache *pc = pathcache_new(16, 1000);
	struct dhtkey r = k(1), prev = k(2), got;

	ck_assert_ptr_nonnull(pc);
	ck_assert_int_eq(pathcache_add(pc, &r, 7, &prev, 100), 0);
	ck_assert_int_eq(pathcache_add(pc, &r, 7, &prev, 200), -EEXIST);
	/* Same id from another requester is another request. */
	got = k(3);
	ck_assert_int_eq(pathcache_add(pc, &got, 7, &prev, 200), 0);
	ck_assert_int_eq(pathcache_prev(pc, &r, 7, 300, &got), 0);
	ck_assert(dhtkey_equal(&got, &prev));
	ck_assert_int_eq(pathcache_prev(pc, &r, 8, 300, &got), -ENOENT);
	/* This node's own request: the answer stops here. */
	ck_assert_int_eq(pathcache_add(pc, &r, 9, NULL, 300), 0);
	ck_assert_int_eq(pathcache_prev(pc, &r, 9, 300, &got), 1);
	/* Past its time it is forgotten, and may come again. */
	ck_assert_int_eq(pathcache_prev(pc, &r, 7, 1100, &got), -ENOENT);
	ck_assert_int_eq(pathcache_add(pc, &r, 7, &prev, 1100), 0);
	ck_assert_uint_eq(pathcache_size(pc), 3);
	pathcache_free(pc);
	ck_assert_ptr_null(pathcache_new(0, 1));
}
END_TEST

START_TEST(test_full_drops_oldest)
{
	struct pathcache *pc = pathcache_new(4, 1000000);
	struct dhtkey r = k(5), prev = k(6), got;

	for (uint64_t id = 0; id < 10; id++)
		ck_assert_int_eq(pathcache_add(pc, &r, id, &prev, id), 0);
	ck_assert_uint_eq(pathcache_size(pc), 4);
	ck_assert_uint_eq(pathcache_evicted(pc), 6);
	ck_assert_int_eq(pathcache_prev(pc, &r, 5, 10, &got), -ENOENT);
	ck_assert_int_eq(pathcache_prev(pc, &r, 6, 10, &got), 0);
	ck_assert_int_eq(pathcache_prev(pc, &r, 9, 10, &got), 0);
	pathcache_expire(pc, 2000000);
	ck_assert_uint_eq(pathcache_size(pc), 0);
	pathcache_free(pc);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_pathcache");
	TCase *tc = tcase_create("pathcache");

	tcase_add_test(tc, test_duplicates_and_way_back);
	tcase_add_test(tc, test_full_drops_oldest);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
