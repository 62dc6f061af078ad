/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The token bucket (src/lib/ratelimit.c): burst, refill rate, cap, and
 * a clock that goes backwards; the bucket of log lines that says how
 * many it held back. */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

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

/* ratelog_vformat() through a variadic call. */
static bool fmt_line(struct ratelog *rl, uint64_t now, char *buf, size_t size,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static bool
fmt_line(struct ratelog *rl, uint64_t now, char *buf, size_t size,
    const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = ratelog_vformat(rl, now, buf, size, fmt, ap);
	va_end(ap);
	return ok;
}

START_TEST(test_ratelog_counts_held_back)
{
	struct ratelog rl;
	char line[64];

	ratelog_init(&rl, 1.0, 2.0);
	ck_assert(fmt_line(&rl, T0, line, sizeof(line), "a %d", 1));
	ck_assert_str_eq(line, "a 1");
	ck_assert(fmt_line(&rl, T0, line, sizeof(line), "a %d", 2));
	strcpy(line, "untouched");
	for (int i = 0; i < 4; i++)
		ck_assert(!fmt_line(&rl, T0, line, sizeof(line), "a %d", 3));
	ck_assert_str_eq(line, "untouched");
	ck_assert_uint_eq(rl.held, 4);
	ck_assert(fmt_line(&rl, T0 + 1000000, line, sizeof(line), "b"));
	ck_assert_str_eq(line, "b (4 more such lines suppressed)");
	ck_assert_uint_eq(rl.held, 0);
	ck_assert(fmt_line(&rl, T0 + 2000000, line, sizeof(line), "c"));
	ck_assert_str_eq(line, "c");
	/* Cut to fit, and still counted as let through. */
	ck_assert(!fmt_line(&rl, T0 + 2000000, line, sizeof(line), "d"));
	ck_assert(fmt_line(&rl, T0 + 3000000, line, 8, "%s", "0123456789"));
	ck_assert_str_eq(line, "0123456");
	ck_assert_uint_eq(rl.held, 0);
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
	tcase_add_test(tc, test_ratelog_counts_held_back);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
