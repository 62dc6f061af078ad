/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The transfer engine's window and latency estimate
 * (src/storage/xfer_window.c): slow start, additive increase, halving on
 * a failure once per round trip, no cut for latency alone, the cap,
 * and the delay before a slow block is asked again. */
#include <stdint.h>

#include <check.h>

#include "storage/xfer_window.h"
#include "unit.h"

#define T0 1000000000ull /* an arbitrary monotonic start, in us */

START_TEST(test_starts_small_and_doubles)
{
	struct xfer_window w;
	uint64_t now = T0;

	xfer_window_init(&w, 64);
	ck_assert_uint_eq(xfer_window_allowed(&w), XFER_WINDOW_START);
	/* One more per block answered: a window's worth per round trip,
	 * so the window doubles each round trip. */
	for (int i = 0; i < 4; i++)
		xfer_window_ok(&w, 1000, now += 1000);
	ck_assert_uint_eq(xfer_window_allowed(&w), 8);
	for (int i = 0; i < 200; i++)
		xfer_window_ok(&w, 1000, now += 1000);
	ck_assert_uint_eq(xfer_window_allowed(&w), 64); /* the cap */
}
END_TEST

START_TEST(test_cap_below_start)
{
	struct xfer_window w;

	xfer_window_init(&w, 1);
	ck_assert_uint_eq(xfer_window_allowed(&w), 1);
	xfer_window_ok(&w, 10, T0);
	ck_assert_uint_eq(xfer_window_allowed(&w), 1);
	xfer_window_fail(&w, T0 + 10);
	ck_assert_uint_eq(xfer_window_allowed(&w), 1);
}
END_TEST

START_TEST(test_failure_halves_once_per_rtt)
{
	struct xfer_window w;
	uint64_t now = T0;

	xfer_window_init(&w, 64);
	for (int i = 0; i < 28; i++)
		xfer_window_ok(&w, 10000, now += 100);
	ck_assert_uint_eq(xfer_window_allowed(&w), 32);
	xfer_window_fail(&w, now += 100);
	ck_assert_uint_eq(xfer_window_allowed(&w), 16);
	/* The other losses of the same round trip cut nothing more. */
	xfer_window_fail(&w, now += 100);
	xfer_window_fail(&w, now += 100);
	ck_assert_uint_eq(xfer_window_allowed(&w), 16);
	/* A round trip later, they do. */
	xfer_window_fail(&w, now += 20000);
	ck_assert_uint_eq(xfer_window_allowed(&w), 8);
	/* After a cut it grows by one per round trip, not doubling. */
	for (int i = 0; i < 9; i++)
		xfer_window_ok(&w, 10000, now += 100);
	ck_assert_uint_eq(xfer_window_allowed(&w), 9);
	for (int i = 0; i < 9; i++)
		xfer_window_ok(&w, 10000, now += 100);
	ck_assert_uint_eq(xfer_window_allowed(&w), 10);
}
END_TEST

/* A high latency is not congestion: one slow peer among fast ones does
 * not shrink the window. */
START_TEST(test_latency_alone_cuts_nothing)
{
	struct xfer_window w;
	uint64_t now = T0;

	xfer_window_init(&w, 64);
	for (int i = 0; i < 28; i++)
		xfer_window_ok(&w, 5000, now += 100);
	ck_assert_uint_eq(xfer_window_allowed(&w), 32);
	for (int i = 0; i < 40; i++)
		xfer_window_ok(&w, i % 3 ? 5000 : 1000000, now += 100);
	ck_assert_uint_eq(xfer_window_allowed(&w), 64);
}
END_TEST

START_TEST(test_hedge_delay)
{
	struct xfer_window w;
	uint64_t now = T0;

	xfer_window_init(&w, 64);
	ck_assert_uint_eq(xfer_window_hedge_us(&w), XFER_HEDGE_INIT_US);
	/* Fast and steady: the floor. */
	for (int i = 0; i < 50; i++)
		xfer_window_ok(&w, 1000, now += 1000);
	ck_assert_uint_eq(xfer_window_hedge_us(&w), XFER_HEDGE_MIN_US);
	/* Slow and varied: above the smoothed latency. */
	xfer_window_init(&w, 64);
	for (int i = 0; i < 50; i++)
		xfer_window_ok(&w, i % 2 ? 300000 : 500000, now += 1000);
	ck_assert_uint_gt(xfer_window_hedge_us(&w), w.srtt_us);
	ck_assert_uint_gt(w.srtt_us, 300000);
	ck_assert_uint_lt(w.srtt_us, 500000);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("storage_window");
	TCase *tc = tcase_create("window");

	tcase_add_test(tc, test_starts_small_and_doubles);
	tcase_add_test(tc, test_cap_below_start);
	tcase_add_test(tc, test_failure_halves_once_per_rtt);
	tcase_add_test(tc, test_latency_alone_cuts_nothing);
	tcase_add_test(tc, test_hedge_delay);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
