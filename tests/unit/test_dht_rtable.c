/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's routing table (src/dht/rtable.c): buckets by common prefix,
 * least-recently-seen order, replacement caches and dead entries, the
 * bound on one network's entries, closest-first answers checked against
 * brute force, bucket refresh, and the file form, truncated at every
 * byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "dht/rtable.h"
#include "unit.h"

static struct dhtkey self;

static void
setup(void)
{
	randombytes_buf(self.b, sizeof(self.b));
}

/* A random id sharing exactly prefix bits with self. */
static struct dhtkey
in_bucket(unsigned prefix)
{
	struct dhtkey k;

	dhtkey_random_in_bucket(&self, prefix, &k);
	return k;
}

START_TEST(test_buckets_and_self)
{
	struct rtable *rt = rtable_new(&self, 4, 0);
	struct rtable_stats st;
	struct dhtkey a = in_bucket(0), b = in_bucket(10);

	ck_assert_ptr_nonnull(rt);
	ck_assert_int_eq(rtable_seen(rt, &self, 0, 1), RTABLE_SELF);
	ck_assert_int_eq(rtable_seen(rt, &a, 0, 1), RTABLE_ADDED);
	ck_assert_int_eq(rtable_seen(rt, &b, 0, 2), RTABLE_ADDED);
	ck_assert_int_eq(rtable_seen(rt, &a, 0, 3), RTABLE_UPDATED);
	ck_assert_uint_eq(rtable_get(rt, &a)->last_seen_us, 3);
	rtable_get_stats(rt, &st);
	ck_assert_uint_eq(st.entries, 2);
	ck_assert_uint_eq(st.buckets, 2);
	ck_assert_ptr_null(rtable_get(rt, &self));
	ck_assert_ptr_null(rtable_new(&self, 0, 0));
	ck_assert_ptr_null(rtable_new(&self, RTABLE_K_MAX + 1, 0));
	rtable_free(rt);
}
END_TEST

/* The table knows every peer near a key that it was told of while no
 * bucket from the key's on toward self is full: a full one may have
 * parked peers in its cache. Buckets farther out do not matter. */
START_TEST(test_knows_near)
{
	struct rtable *rt = rtable_new(&self, 2, 0);
	struct dhtkey far = in_bucket(1), key = in_bucket(3),
	              deep = in_bucket(6);

	ck_assert(rtable_knows_near(rt, &key));
	for (int i = 0; i < 3; i++) {
		struct dhtkey e = in_bucket(1);

		(void)rtable_seen(rt, &e, 0, 1);
	}
	ck_assert(!rtable_knows_near(rt, &far));
	ck_assert(rtable_knows_near(rt, &key));
	(void)rtable_seen(rt, &key, 0, 1);
	ck_assert(rtable_knows_near(rt, &key));
	(void)rtable_seen(rt, &deep, 0, 1);
	ck_assert(rtable_knows_near(rt, &key));
	deep = in_bucket(6);
	(void)rtable_seen(rt, &deep, 0, 1);
	ck_assert(!rtable_knows_near(rt, &key));
	ck_assert(rtable_knows_near(rt, &self));
	rtable_free(rt);
}
END_TEST

/* A full bucket keeps its old entries; newcomers wait as replacements,
 * and the newest moves up when an entry fails often enough. */
START_TEST(test_full_bucket_and_replacement)
{
	struct rtable *rt = rtable_new(&self, 3, 0);
	struct dhtkey e[6];
	struct rtable_stats st;

	for (int i = 0; i < 6; i++) {
		e[i] = in_bucket(5);
		ck_assert_int_eq(rtable_seen(rt, &e[i], 0, (uint64_t)i + 1),
		    i < 3 ? RTABLE_ADDED : RTABLE_CACHED);
	}
	ck_assert_int_eq(rtable_set_helo(rt, &e[5], "H5", 2), 0);
	rtable_get_stats(rt, &st);
	ck_assert_uint_eq(st.entries, 3);
	ck_assert_uint_eq(st.cached, 3);
	/* Two failures are not enough at max 3; a success resets them. */
	ck_assert(!rtable_failed(rt, &e[0], 3));
	ck_assert(!rtable_failed(rt, &e[0], 3));
	ck_assert_int_eq(rtable_seen(rt, &e[0], 0, 10), RTABLE_UPDATED);
	ck_assert_uint_eq(rtable_get(rt, &e[0])->fails, 0);
	for (int i = 0; i < 2; i++)
		ck_assert(!rtable_failed(rt, &e[1], 3));
	ck_assert(rtable_failed(rt, &e[1], 3));
	ck_assert_ptr_null(rtable_get(rt, &e[1]));
	/* The most recently seen replacement took its place, HELOs too. */
	ck_assert_ptr_nonnull(rtable_get(rt, &e[5]));
	ck_assert_uint_eq(rtable_get(rt, &e[5])->helo_len, 2);
	ck_assert_mem_eq(rtable_get(rt, &e[5])->helo, "H5", 2);
	rtable_remove(rt, &e[2]);
	ck_assert_ptr_nonnull(rtable_get(rt, &e[4]));
	rtable_remove(rt, &e[0]);
	rtable_remove(rt, &e[4]);
	rtable_get_stats(rt, &st);
	ck_assert_uint_eq(st.entries, 2);
	ck_assert_uint_eq(st.cached, 0);
	ck_assert_uint_eq(st.replaced, 3);
	ck_assert_uint_eq(st.removed, 1);
	ck_assert_int_eq(rtable_set_helo(rt, &e[1], "x", 1), -ENOENT);
	rtable_free(rt);
}
END_TEST

START_TEST(test_network_bound)
{
	static const uint8_t v4a[4] = { 10, 1, 2, 3 }, v4b[4] = { 10, 1, 2, 99 };
	static const uint8_t v4c[4] = { 10, 1, 3, 3 };
	struct rtable *rt = rtable_new(&self, 8, 2);
	uint64_t net = rtable_net_of(v4a, 4);
	struct dhtkey e[4];

	ck_assert_uint_eq(net, rtable_net_of(v4b, 4));
	ck_assert_uint_ne(net, rtable_net_of(v4c, 4));
	ck_assert_uint_ne(net, 0);
	ck_assert_uint_eq(rtable_net_of(v4a, 3), 0);
	for (int i = 0; i < 4; i++)
		e[i] = in_bucket(1);
	ck_assert_int_eq(rtable_seen(rt, &e[0], net, 1), RTABLE_ADDED);
	ck_assert_int_eq(rtable_seen(rt, &e[1], net, 1), RTABLE_ADDED);
	ck_assert_int_eq(rtable_seen(rt, &e[2], net, 1), RTABLE_DIVERSITY);
	ck_assert_int_eq(rtable_seen(rt, &e[2], rtable_net_of(v4c, 4), 1),
	    RTABLE_ADDED);
	/* Unknown networks are not bounded. */
	ck_assert_int_eq(rtable_seen(rt, &e[3], 0, 1), RTABLE_ADDED);
	rtable_free(rt);
}
END_TEST

/* closest() against sorting every entry the table holds. */
struct collect {
	const struct rtable_entry *e[4096];
	size_t n;
};

static void
collect_one(void *cls, const struct rtable_entry *e)
{
	struct collect *c = cls;

	c->e[c->n++] = e;
}

static struct dhtkey sort_target;

static int
by_distance(const void *a, const void *b)
{
	const struct rtable_entry *const *x = a, *const *y = b;

	return dhtkey_closer(&sort_target, &(*x)->id, &(*y)->id);
}

START_TEST(test_closest_matches_brute_force)
{
	struct rtable *rt = rtable_new(&self, 8, 0);
	static struct collect all;
	const struct rtable_entry *got[20];
	size_t n;

	for (int i = 0; i < 2000; i++) {
		struct dhtkey k;

		randombytes_buf(k.b, sizeof(k.b));
		(void)rtable_seen(rt, &k, 0, 1);
	}
	all.n = 0;
	rtable_foreach(rt, collect_one, &all);
	ck_assert_uint_gt(all.n, 40);
	for (int round = 0; round < 50; round++) {
		randombytes_buf(sort_target.b, sizeof(sort_target.b));
		if (round == 0)
			sort_target = self;
		qsort(all.e, all.n, sizeof(all.e[0]), by_distance);
		n = rtable_closest(rt, &sort_target, 20, got);
		ck_assert_uint_eq(n, 20);
		for (size_t i = 0; i < n; i++)
			ck_assert_ptr_eq(got[i], all.e[i]);
	}
	ck_assert_uint_eq(rtable_closest(rt, &self, 0, got), 0);
	rtable_free(rt);
}
END_TEST

/* A filter that takes about one entry in four, by the id's last byte. */
static bool
quarter(void *cls, const struct rtable_entry *e)
{
	(void)cls;
	return e->id.b[DHTKEY_LEN - 1] % 4 == 0;
}

/* rtable_closest_match, which walks buckets by distance and sorts
 * nothing, finds what a sort of the whole table finds: the closest
 * matching entry, and among those closer than self only when asked. */
START_TEST(test_closest_match_brute_force)
{
	struct rtable *rt = rtable_new(&self, 8, 0);
	static struct collect all;
	const struct rtable_entry *want, *got;

	for (int i = 0; i < 2000; i++) {
		struct dhtkey k;

		randombytes_buf(k.b, sizeof(k.b));
		(void)rtable_seen(rt, &k, 0, 1);
	}
	/* And the deep buckets, which random ids do not reach. */
	for (unsigned p = 0; p < 48; p++)
		for (int i = 0; i < 3; i++) {
			struct dhtkey k = in_bucket(p);

			(void)rtable_seen(rt, &k, 0, 1);
		}
	all.n = 0;
	rtable_foreach(rt, collect_one, &all);
	for (int round = 0; round < 400; round++) {
		bool closer_only = round % 2 == 1;
		rtable_match_fn *match = round % 4 < 2 ? NULL : quarter;

		/* Targets far from self, near it, and self itself. */
		if (round % 8 < 3)
			randombytes_buf(sort_target.b, sizeof(sort_target.b));
		else if (round % 8 < 7)
			sort_target = in_bucket((unsigned)(round * 7) % 60);
		else
			sort_target = self;
		qsort(all.e, all.n, sizeof(all.e[0]), by_distance);
		want = NULL;
		for (size_t i = 0; i < all.n && want == NULL; i++) {
			bool farther = dhtkey_closer(&sort_target,
			                   &all.e[i]->id, &self) >= 0;

			if (closer_only && farther)
				break;
			if (match == NULL || match(NULL, all.e[i]))
				want = all.e[i];
		}
		got = rtable_closest_match(rt, &sort_target, closer_only, match,
		    NULL);
		ck_assert_msg(got == want, "round %d: %p, brute force %p",
		    round, (const void *)got, (const void *)want);
	}
	rtable_free(rt);
}
END_TEST

START_TEST(test_stale_buckets)
{
	struct rtable *rt = rtable_new(&self, 4, 0);
	struct dhtkey a = in_bucket(3);
	unsigned prefix;

	(void)rtable_seen(rt, &a, 0, 1);
	/* Buckets 0 to 4 can hold peers someone may know; never looked. */
	ck_assert_int_eq(rtable_stale_bucket(rt, 100, 50, &prefix), 0);
	ck_assert_uint_eq(prefix, 0);
	for (unsigned i = 0; i <= 4; i++)
		rtable_touch(rt, i, 90);
	ck_assert_int_eq(rtable_stale_bucket(rt, 100, 50, &prefix), -ENOENT);
	ck_assert_int_eq(rtable_stale_bucket(rt, 200, 50, &prefix), 0);
	rtable_free(rt);
}
END_TEST

START_TEST(test_file_form)
{
	struct rtable *rt = rtable_new(&self, 4, 0), *rt2;
	struct rtable_stats st;
	struct dhtkey ids[10], other;
	struct buf out;

	buf_init(&out);
	for (int i = 0; i < 10; i++) {
		ids[i] = in_bucket((unsigned)i % 3);
		(void)rtable_seen(rt, &ids[i], (uint64_t)i, 5);
		(void)rtable_set_helo(rt, &ids[i], &ids[i], (size_t)i * 3);
	}
	ck_assert_int_eq(rtable_encode(rt, &out), 0);
	rt2 = rtable_new(&self, 4, 0);
	ck_assert_int_eq(rtable_decode(rt2, buf_head(&out), buf_size(&out), 9),
	    0);
	rtable_get_stats(rt2, &st);
	/* Buckets 0, 1 and 2 got 4, 3 and 3: all fit. */
	ck_assert_uint_eq(st.entries, 10);
	for (int i = 0; i < 10; i++) {
		const struct rtable_entry *a = rtable_get(rt, &ids[i]);
		const struct rtable_entry *b = rtable_get(rt2, &ids[i]);

		ck_assert((a == NULL) == (b == NULL));
		if (a == NULL)
			continue;
		ck_assert_uint_eq(b->net, a->net);
		ck_assert_uint_eq(b->helo_len, a->helo_len);
		if (a->helo_len > 0)
			ck_assert_int_eq(memcmp(b->helo, a->helo, a->helo_len),
			    0);
		ck_assert_uint_eq(b->last_seen_us, 9);
	}
	rtable_free(rt2);
	/* Cut anywhere, or with a byte more, it is refused whole. */
	for (size_t len = 0; len < buf_size(&out); len++) {
		rt2 = rtable_new(&self, 4, 0);
		ck_assert_int_eq(rtable_decode(rt2, buf_head(&out), len, 1),
		    -EBADMSG);
		rtable_get_stats(rt2, &st);
		ck_assert_uint_eq(st.entries, 0);
		rtable_free(rt2);
	}
	ck_assert_ptr_nonnull(buf_reserve(&out, 1));
	buf_commit(&out, 1);
	rt2 = rtable_new(&self, 4, 0);
	ck_assert_int_eq(rtable_decode(rt2, buf_head(&out), buf_size(&out), 1),
	    -EBADMSG);
	rtable_free(rt2);
	/* Another node's table is of no use here. */
	randombytes_buf(other.b, sizeof(other.b));
	rt2 = rtable_new(&other, 4, 0);
	ck_assert_int_eq(rtable_decode(rt2, buf_head(&out),
	                     buf_size(&out) - 1, 1),
	    -ESTALE);
	rtable_free(rt2);
	buf_done(&out);
	rtable_free(rt);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_rtable");
	TCase *tc = tcase_create("rtable");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_buckets_and_self);
	tcase_add_test(tc, test_full_bucket_and_replacement);
	tcase_add_test(tc, test_knows_near);
	tcase_add_test(tc, test_network_bound);
	tcase_add_test(tc, test_closest_matches_brute_force);
	tcase_add_test(tc, test_closest_match_brute_force);
	tcase_add_test(tc, test_stale_buckets);
	tcase_add_test(tc, test_file_form);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
