/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The transfer engine's window and latency estimate
 * (src/storage/xfer_window.c): a window that grows while it delivers
 * more, goes back to the best when larger delivers less, holds on a
 * plateau and probes again, halves on a failure once per round trip,
 * keeps to its cap; and the delay before a slow block is asked again. */
#include <stdint.h>

#include <check.h>

#include "storage/xfer_window.h"
#include "unit.h"

#define T0 1000000000ull /* an arbitrary monotonic start, in us */

/* A network that delivers min(w, knee) blocks per latency: more in
 * flight helps up to the knee, and beyond it only waits longer (the
 * latency climbs: queues). n answers from *now, each at the rate the
 * window of the moment gets. */
static void
run(struct xfer_window *w, unsigned knee, uint64_t lat_us, int n, uint64_t *now)
{
	for (int i = 0; i < n; i++) {
		unsigned win = xfer_window_allowed(w);
		unsigned eff = win < knee ? win : knee;
		uint64_t lat = win <= knee ? lat_us : lat_us * win / knee;

		xfer_window_ok(w, lat, *now += lat_us / eff);
	}
}

START_TEST(test_grows_while_it_pays)
{
	struct xfer_window w;
	uint64_t now = T0;

	xfer_window_init(&w, 64);
	ck_assert_uint_eq(xfer_window_allowed(&w), XFER_WINDOW_START);
	/* Latency-bound (a far network): every block more in flight
	 * delivers more, up to the cap. */
	run(&w, 1000, 50000, 5000, &now);
	ck_assert_uint_eq(xfer_window_allowed(&w), 64);
}
END_TEST

START_TEST(test_finds_the_knee)
{
	struct xfer_window w;
	uint64_t now = T0;

	/* Beyond 8 in flight nothing more is delivered (a busy CPU): the
	 * window settles near 8, not at the cap. */
	xfer_window_init(&w, 64);
	run(&w, 8, 10000, 5000, &now);
	ck_assert_uint_ge(xfer_window_allowed(&w), 6);
	ck_assert_uint_le(xfer_window_allowed(&w), 18);
}
END_TEST

START_TEST(test_cap_below_start)
{
	struct xfer_window w;

	xfer_window_init(&w, 1);
	ck_assert_uint_eq(xfer_window_allowed(&w), 1);
	for (int i = 0; i < 100; i++)
		xfer_window_ok(&w, 10, T0 + (uint64_t)i * 10000);
	ck_assert_uint_eq(xfer_window_allowed(&w), 1);
	xfer_window_fail(&w, T0 + 2000000);
	ck_assert_uint_eq(xfer_window_allowed(&w), 1);
}
END_TEST

START_TEST(test_failure_halves_once_per_rtt)
{
	struct xfer_window w;
	uint64_t now = T0;

	xfer_window_init(&w, 64);
	run(&w, 1000, 10000, 5000, &now);
	ck_assert_uint_eq(xfer_window_allowed(&w), 64);
	xfer_window_fail(&w, now += 100);
	ck_assert_uint_eq(xfer_window_allowed(&w), 32);
	/* The other losses of the same round trip cut nothing more. */
	xfer_window_fail(&w, now += 100);
	xfer_window_fail(&w, now += 100);
	ck_assert_uint_eq(xfer_window_allowed(&w), 32);
	/* A round trip later, they do. */
	xfer_window_fail(&w, now += 20000);
	ck_assert_uint_eq(xfer_window_allowed(&w), 16);
	/* And it grows back while more pays. */
	run(&w, 1000, 10000, 5000, &now);
	ck_assert_uint_eq(xfer_window_allowed(&w), 64);
}
END_TEST

/* A high latency is not congestion: one slow peer among fast ones does
 * not keep the window small. */
START_TEST(test_slow_peer_among_fast)
{
	struct xfer_window w;
	uint64_t now = T0;

	xfer_window_init(&w, 64);
	/* A third of the blocks take 1 s, the rest 5 ms: the rate is the
	 * window over the mean latency, 338 ms. */
	for (int i = 0; i < 5000; i++)
		xfer_window_ok(&w, i % 3 ? 5000 : 1000000,
		    now += 338000 / xfer_window_allowed(&w));
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

	tcase_add_test(tc, test_grows_while_it_pays);
	tcase_add_test(tc, test_finds_the_knee);
	tcase_add_test(tc, test_cap_below_start);
	tcase_add_test(tc, test_failure_halves_once_per_rtt);
	tcase_add_test(tc, test_slow_peer_among_fast);
	tcase_add_test(tc, test_hedge_delay);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
