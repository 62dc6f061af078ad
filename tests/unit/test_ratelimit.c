/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The token bucket (src/lib/ratelimit.c): burst, refill rate, cap, and
 * a clock that goes backwards. */
#include <stdint.h>

#include <check.h>

#include "lib/ratelimit.h"
#include "unit.h"

#define T0 1000000000ull /* an arbitrary monotonic start, in us */

START_TEST(test_starts_full)
{
	struct ratelimit rl;
	int taken = 0;

	ratelimit_init(&rl, 10.0, 5.0);
	while (ratelimit_take(&rl, T0, 1.0))
		taken++;
	ck_assert_int_eq(taken, 5);
}
END_TEST

START_TEST(test_refill_rate)
{
	struct ratelimit rl;

	ratelimit_init(&rl, 10.0, 5.0);
	for (int i = 0; i < 5; i++)
		ck_assert(ratelimit_take(&rl, T0, 1.0));
	ck_assert(!ratelimit_take(&rl, T0, 1.0));
	/* 10 per second: one token per 100 ms, not before. */
	ck_assert(!ratelimit_take(&rl, T0 + 99999, 1.0));
	ck_assert(ratelimit_take(&rl, T0 + 100000, 1.0));
	ck_assert(!ratelimit_take(&rl, T0 + 100000, 1.0));
	/* Over one simulated second at 1 ms steps, 10 more get through. */
	{
		int taken = 0;

		for (uint64_t t = 1; t <= 1000; t++)
			taken +=
			    ratelimit_take(&rl, T0 + 100000 + t * 1000, 1.0);
		ck_assert_int_eq(taken, 10);
	}
}
END_TEST

START_TEST(test_burst_caps_savings)
{
	struct ratelimit rl;
	int taken = 0;

	ratelimit_init(&rl, 100.0, 3.0);
	ck_assert(ratelimit_take(&rl, T0, 3.0));
	/* An hour idle still saves only `burst` tokens. */
	while (ratelimit_take(&rl, T0 + 3600ull * 1000000, 1.0))
		taken++;
	ck_assert_int_eq(taken, 3);
}
END_TEST

START_TEST(test_weights)
{
	struct ratelimit rl;

	ratelimit_init(&rl, 1.0, 4.0);
	ck_assert(!ratelimit_take(&rl, T0, 4.5)); /* more than a full bucket */
	ck_assert(ratelimit_take(&rl, T0, 2.5));
	ck_assert(!ratelimit_take(&rl, T0, 2.0)); /* 1.5 left */
	ck_assert(ratelimit_take(&rl, T0, 1.5));
	ck_assert(!ratelimit_take(&rl, T0, 0.5));
	ck_assert(ratelimit_take(&rl, T0 + 500000, 0.5));
}
END_TEST

START_TEST(test_clock_backwards)
{
	struct ratelimit rl;

	ratelimit_init(&rl, 10.0, 2.0);
	ck_assert(ratelimit_take(&rl, T0, 2.0));
	/* A step back must not mint tokens (unsigned wrap-around). */
	ck_assert(!ratelimit_take(&rl, T0 - 500000, 1.0));
	ck_assert(!ratelimit_take(&rl, T0 - 400001, 1.0));
	ck_assert(ratelimit_take(&rl, T0 - 400000, 1.0));
}
END_TEST

START_TEST(test_zero_rate)
{
	struct ratelimit rl;

	ratelimit_init(&rl, 0.0, 1.0);
	ck_assert(ratelimit_take(&rl, T0, 1.0));
	ck_assert(!ratelimit_take(&rl, T0 + 86400ull * 1000000, 1.0));
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("ratelimit");
	TCase *tc = tcase_create("ratelimit");

	tcase_add_test(tc, test_starts_full);
	tcase_add_test(tc, test_refill_rate);
	tcase_add_test(tc, test_burst_caps_savings);
	tcase_add_test(tc, test_weights);
	tcase_add_test(tc, test_clock_backwards);
	tcase_add_test(tc, test_zero_rate);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
