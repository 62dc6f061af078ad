/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Clocks (src/lib/time.c): units, monotonicity, conversion to timeval. */
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#include <check.h>

#include "lib/time.h"
#include "unit.h"

START_TEST(test_monotonic)
{
	uint64_t a = time_mono_ns(), b, us;

	for (int i = 0; i < 1000; i++) {
		b = time_mono_ns();
		if (b < a)
			ck_abort_msg("monotonic clock went back");
		a = b;
	}
	us = time_mono_us();
	b = time_mono_ns();
	/* The same clock in two units: us is ns / 1000, taken just before. */
	ck_assert_uint_le(us, b / 1000);
	ck_assert_uint_gt(us + 1000000, b / 1000);
}
END_TEST

START_TEST(test_real)
{
	uint64_t us = time_real_us();
	time_t now = time(NULL);

	/* Within a few seconds of time(2), and after 2020. */
	ck_assert_uint_ge(us / USEC_PER_SEC + 2, (uint64_t)now);
	ck_assert_uint_le(us / USEC_PER_SEC, (uint64_t)now + 2);
	ck_assert_uint_gt(time_real_s(), 1577836800u);
	ck_assert_uint_eq(USEC_PER_SEC, 1000 * USEC_PER_MSEC);
}
END_TEST

START_TEST(test_timeval)
{
	struct timeval tv;

	time_us_to_tv(0, &tv);
	ck_assert_int_eq(tv.tv_sec, 0);
	ck_assert_int_eq(tv.tv_usec, 0);
	time_us_to_tv(2500001, &tv);
	ck_assert_int_eq(tv.tv_sec, 2);
	ck_assert_int_eq(tv.tv_usec, 500001);
	time_us_to_tv(999999, &tv);
	ck_assert_int_eq(tv.tv_sec, 0);
	ck_assert_int_eq(tv.tv_usec, 999999);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("time");
	TCase *tc = tcase_create("time");

	tcase_add_test(tc, test_monotonic);
	tcase_add_test(tc, test_real);
	tcase_add_test(tc, test_timeval);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
