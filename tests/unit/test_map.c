/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The hash map (src/lib/map.c) against a reference model: put, replace,
 * get, remove, growth, iteration, and backward-shift deletion, exercised
 * over many small maps (each with its own random hash key) so that runs
 * of occupied slots wrap around the table end in many different ways.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "lib/map.h"
#include "unit.h"

struct model {
	size_t nkeys;
	uint32_t *keys; /* key storage; the map points into it */
	bool *present;
	uintptr_t *tag; /* value last stored for the key */
	size_t count;
};

static uint32_t test_keys[4096];
static bool test_present[4096];
static uintptr_t test_tags[4096];

static void
model_init(struct model *m, size_t nkeys, uint64_t *seed)
{
	ck_assert_uint_le(nkeys, 4096);
	m->nkeys = nkeys;
	m->keys = test_keys;
	m->present = test_present;
	m->tag = test_tags;
	m->count = 0;
	for (size_t i = 0; i < nkeys; i++) {
		/* Distinct keys: a random high half, the index below. */
		m->keys[i] = (uint32_t)(unit_rand(seed) << 12) | (uint32_t)i;
		m->present[i] = false;
		m->tag[i] = 0;
	}
}

/* Every key is found (or not) exactly as the model says. */
static void
model_check(const struct model *m, const struct map *map)
{
	if (map_size(map) != m->count)
		ck_abort_msg("size %zu, model %zu", map_size(map), m->count);
	for (size_t i = 0; i < m->nkeys; i++) {
		void *v = map_get(map, &m->keys[i], sizeof(m->keys[i]));
		void *want = m->present[i] ? (void *)m->tag[i] : NULL;

		if (v != want)
			ck_abort_msg("key %zu: got %p, expected %p", i, v,
			    want);
	}
}

/* One random operation on both. */
static void
model_step(struct model *m, struct map *map, uint64_t *seed, unsigned put_pct)
{
	size_t i = (size_t)(unit_rand(seed) % m->nkeys);
	uint32_t *k = &m->keys[i];

	if (unit_rand(seed) % 100 < put_pct) {
		uintptr_t tag = (uintptr_t)(unit_rand(seed) | 1);

		if (map_put(map, k, sizeof(*k), (void *)tag) != 0)
			ck_abort_msg("map_put failed");
		m->count += !m->present[i];
		m->present[i] = true;
		m->tag[i] = tag;
	} else {
		void *v = map_remove(map, k, sizeof(*k));
		void *want = m->present[i] ? (void *)m->tag[i] : NULL;

		if (v != want)
			ck_abort_msg("remove %zu: got %p, expected %p", i, v,
			    want);
		m->count -= m->present[i];
		m->present[i] = false;
	}
}

START_TEST(test_basics)
{
	struct map *map = map_new();
	int a = 1, b = 2;

	ck_assert_ptr_nonnull(map);
	ck_assert_uint_eq(map_size(map), 0);
	ck_assert_ptr_null(map_get(map, "k", 1));
	ck_assert_ptr_null(map_remove(map, "k", 1));
	ck_assert_int_eq(map_put(map, "k", 1, &a), 0);
	ck_assert_ptr_eq(map_get(map, "k", 1), &a);
	ck_assert_int_eq(map_put(map, "k", 1, &b), 0); /* replaces */
	ck_assert_uint_eq(map_size(map), 1);
	ck_assert_ptr_eq(map_get(map, "k", 1), &b);
	ck_assert_ptr_eq(map_remove(map, "k", 1), &b);
	ck_assert_uint_eq(map_size(map), 0);
	ck_assert_ptr_null(map_get(map, "k", 1));
	map_free(map);
	map_free(NULL);
}
END_TEST

START_TEST(test_lengths_distinguish_keys)
{
	static const char keys[] = "abcd";
	struct map *map = map_new();
	int v[5];

	/* "", "a", "ab", "abc", "abcd": prefixes of one another. */
	for (size_t len = 0; len <= 4; len++)
		ck_assert_int_eq(map_put(map, keys, len, &v[len]), 0);
	ck_assert_uint_eq(map_size(map), 5);
	for (size_t len = 0; len <= 4; len++)
		ck_assert_ptr_eq(map_get(map, keys, len), &v[len]);
	/* Lookup compares bytes, not pointers. */
	ck_assert_ptr_eq(map_get(map, "abc", 3), &v[3]);
	ck_assert_ptr_eq(map_remove(map, "", 0), &v[0]);
	ck_assert_ptr_null(map_get(map, keys, 0));
	ck_assert_ptr_eq(map_get(map, keys, 1), &v[1]);
	map_free(map);
}
END_TEST

START_TEST(test_many_inserts_and_removes)
{
	struct map *map = map_new();
	uint64_t seed = 99;
	struct model m;
	size_t order[4096];

	model_init(&m, 4096, &seed);
	for (size_t i = 0; i < m.nkeys; i++) {
		uintptr_t tag = (uintptr_t)(i * 8 + 8);

		ck_assert_int_eq(map_put(map, &m.keys[i], 4, (void *)tag), 0);
		m.present[i] = true;
		m.tag[i] = tag;
		m.count++;
	}
	model_check(&m, map);
	/* Remove in a shuffled order, checking everything as we go. */
	for (size_t i = 0; i < m.nkeys; i++)
		order[i] = i;
	for (size_t i = m.nkeys - 1; i > 0; i--) {
		size_t j = (size_t)(unit_rand(&seed) % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (size_t n = 0; n < m.nkeys; n++) {
		size_t i = order[n];

		ck_assert_ptr_eq(map_remove(map, &m.keys[i], 4),
		    (void *)m.tag[i]);
		m.present[i] = false;
		m.count--;
		if (n % 256 == 0)
			model_check(&m, map);
	}
	model_check(&m, map);
	map_free(map);
}
END_TEST

START_TEST(test_backward_shift_against_model)
{
	uint64_t seed = 2024;

	/* Small maps stay at 16 or 32 slots, where runs often wrap. */
	for (int round = 0; round < 1500; round++) {
		struct map *map = map_new();
		struct model m;

		ck_assert_ptr_nonnull(map);
		model_init(&m, 6 + (size_t)(unit_rand(&seed) % 10), &seed);
		for (int step = 0; step < 300; step++) {
			model_step(&m, map, &seed, 55);
			model_check(&m, map);
		}
		map_free(map);
	}
}
END_TEST

START_TEST(test_large_random_against_model)
{
	struct map *map = map_new();
	uint64_t seed = 5;
	struct model m;

	model_init(&m, 3000, &seed);
	for (int step = 0; step < 200000; step++) {
		model_step(&m, map, &seed, step < 100000 ? 70 : 30);
		if (step % 5000 == 0)
			model_check(&m, map);
	}
	model_check(&m, map);
	map_free(map);
}
END_TEST

struct visit {
	size_t calls;
	size_t stop_after;
	const struct model *m;
	bool bad;
};

static bool
test_visit(void *cls, const void *key, size_t len, void *value)
{
	struct visit *v = cls;
	const uint32_t *k = key;
	size_t i = (size_t)(k - v->m->keys);

	v->calls++;
	if (len != 4 || i >= v->m->nkeys || !v->m->present[i] ||
	    (uintptr_t)value != v->m->tag[i])
		v->bad = true;
	return v->calls < v->stop_after;
}

START_TEST(test_foreach)
{
	struct map *map = map_new();
	uint64_t seed = 3;
	struct model m;
	struct visit v;

	model_init(&m, 500, &seed);
	for (int step = 0; step < 2000; step++)
		model_step(&m, map, &seed, 60);
	memset(&v, 0, sizeof(v));
	v.m = &m;
	v.stop_after = SIZE_MAX;
	map_foreach(map, test_visit, &v);
	ck_assert(!v.bad);
	ck_assert_uint_eq(v.calls, m.count);
	ck_assert_uint_gt(m.count, 10);
	/* Returning false stops the walk. */
	memset(&v, 0, sizeof(v));
	v.m = &m;
	v.stop_after = 3;
	map_foreach(map, test_visit, &v);
	ck_assert_uint_eq(v.calls, 3);
	map_free(map);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tcase_create("map");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_basics);
	tcase_add_test(tc, test_lengths_distinguish_keys);
	tcase_add_test(tc, test_many_inserts_and_removes);
	tcase_add_test(tc, test_backward_shift_against_model);
	tcase_add_test(tc, test_large_random_against_model);
	tcase_add_test(tc, test_foreach);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
