/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Statistics counters (src/lib/stats.c): creation, stable addresses,
 * name order, prefixes and limits. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "lib/stats.h"
#include "unit.h"

static struct stats *st;

static void
test_setup(void)
{
	st = stats_new();
	ck_assert_ptr_nonnull(st);
}

static void
test_teardown(void)
{
	stats_free(st);
	st = NULL;
}

START_TEST(test_create_and_count)
{
	uint64_t *a = stats_counter(st, "udp.bytes_out");

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(*a, 0);
	*a += 1500;
	(*a)++;
	ck_assert_ptr_eq(stats_counter(st, "udp.bytes_out"), a);
	ck_assert_uint_eq(stats_get(st, "udp.bytes_out"), 1501);
	ck_assert_uint_eq(stats_get(st, "udp.bytes_in"), 0);
	ck_assert_uint_eq(stats_count(st), 1); /* stats_get creates nothing */
	stats_free(NULL);
}
END_TEST

struct walk {
	size_t n;
	char last[128];
	bool sorted;
	uint64_t sum;
};

static void
test_walk(void *cls, const char *name, uint64_t value)
{
	struct walk *w = cls;

	if (w->n > 0 && strcmp(w->last, name) >= 0)
		w->sorted = false;
	(void)snprintf(w->last, sizeof(w->last), "%s", name);
	w->sum += value;
	w->n++;
}

START_TEST(test_addresses_stay_valid)
{
	uint64_t *p[1000];
	uint64_t seed = 11, sum = 0;
	char name[64];
	struct walk w = { 0, "", true, 0 };

	/* Names in random order, so insertion shifts the sorted array. */
	for (int i = 0; i < 1000; i++) {
		(void)snprintf(name, sizeof(name), "c%016llx.%d",
		    (unsigned long long)unit_rand(&seed), i);
		p[i] = stats_counter(st, name);
		ck_assert_ptr_nonnull(p[i]);
		*p[i] = (uint64_t)i;
		sum += (uint64_t)i;
	}
	for (int i = 0; i < 1000; i++)
		if (*p[i] != (uint64_t)i)
			ck_abort_msg("counter %d moved or was clobbered", i);
	ck_assert_uint_eq(stats_count(st), 1000);
	stats_foreach(st, test_walk, &w);
	ck_assert_uint_eq(w.n, 1000);
	ck_assert(w.sorted);
	ck_assert_uint_eq(w.sum, sum);
}
END_TEST

START_TEST(test_prefixed)
{
	char longname[200];
	uint64_t *a = stats_counter2(st, "tcp", "connects");

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_eq(stats_counter(st, "tcp.connects"), a);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	/* Too long for "prefix.name": refused, nothing created. */
	ck_assert_ptr_null(stats_counter2(st, "tcp", longname));
	ck_assert_uint_eq(stats_count(st), 1);
	/* stats_counter itself takes long names. */
	ck_assert_ptr_nonnull(stats_counter(st, longname));
}
END_TEST

struct bound {
	uint64_t *first;
	uint64_t *second;
	uint64_t *third;
};

START_TEST(test_bind)
{
	static const struct stats_slot slots[] = {
		STATS_SLOT(struct bound, first),
		STATS_SLOT(struct bound, second),
	};
	struct bound b = { NULL, NULL, NULL };

	ck_assert_int_eq(stats_bind_prefix(st, "layer", &b, slots, 2), 0);
	ck_assert_ptr_eq(b.first, stats_counter(st, "layer.first"));
	ck_assert_ptr_eq(b.second, stats_counter(st, "layer.second"));
	/* Slots not in the table are left alone. */
	ck_assert_ptr_null(b.third);
	(*b.second) += 7;
	ck_assert_uint_eq(stats_get(st, "layer.second"), 7);
	ck_assert_uint_eq(stats_count(st), 2);
}
END_TEST

static uint64_t *
lookup_fails_second(void *cls, const char *name)
{
	if (strcmp(name, "second") == 0)
		return NULL;
	return stats_counter(cls, name);
}

START_TEST(test_bind_fails)
{
	static const struct stats_slot slots[] = {
		STATS_SLOT(struct bound, first),
		STATS_SLOT(struct bound, second),
		STATS_SLOT(struct bound, third),
	};
	struct bound b = { NULL, NULL, NULL };

	ck_assert_int_eq(stats_bind(&b, slots, 3, lookup_fails_second, st),
	    -ENOMEM);
	ck_assert_ptr_eq(b.first, stats_counter(st, "first"));
	ck_assert_ptr_null(b.second);
	ck_assert_ptr_null(b.third);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("stats");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_create_and_count);
	tcase_add_test(tc, test_addresses_stay_valid);
	tcase_add_test(tc, test_prefixed);
	tcase_add_test(tc, test_bind);
	tcase_add_test(tc, test_bind_fails);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
