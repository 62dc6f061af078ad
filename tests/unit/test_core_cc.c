/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Congestion control (src/core/cc.c): slow start doubles the window per
 * round trip, a loss halves it once per recovery period, congestion
 * avoidance adds about one frame per window, the window never falls
 * below two frames, the room to send is bounded by the receiver's window,
 * and the RTT estimator and probe timeout follow RFC 9002 / RFC 6298.
 */
#include <string.h>

#include <check.h>

#include "core/cc.h"
#include "unit.h"

#define MSS  1400ull
#define INIT (64 * 1024ull)
#define RWND (1ull << 40)

static struct cc c;

static void
test_setup(void)
{
	cc_init(&c, INIT, MSS, RWND, CC_MAX_ACK_DELAY_US);
}

/* Acknowledges `bytes` in MSS-sized frames sent at sent_us. */
static void
ack_bytes(uint64_t bytes, uint64_t sent_us)
{
	while (bytes > 0) {
		uint64_t n = bytes < MSS ? bytes : MSS;

		cc_on_acked(&c, n, sent_us);
		bytes -= n;
	}
}

START_TEST(test_init)
{
	ck_assert(c.cwnd == INIT);
	ck_assert(c.ssthresh == UINT64_MAX);
	ck_assert(c.mss == MSS && c.peer_rwnd == RWND);
	ck_assert(!c.have_rtt);
	/* An initial window below the minimum is raised to it. */
	cc_init(&c, 100, MSS, RWND, CC_MAX_ACK_DELAY_US);
	ck_assert(c.cwnd == 2 * MSS);
}
END_TEST

START_TEST(test_slow_start_doubles)
{
	uint64_t t = 1000;

	for (int rtt = 0; rtt < 5; rtt++) {
		uint64_t w = c.cwnd;

		/* One window acknowledged: the window doubles. */
		ack_bytes(w, t);
		ck_assert_msg(c.cwnd == 2 * w, "round %d: %llu -> %llu", rtt,
		    (unsigned long long)w, (unsigned long long)c.cwnd);
		t += 100000;
	}
	ck_assert(c.cwnd == INIT << 5);
}
END_TEST

START_TEST(test_one_halving_per_recovery)
{
	uint64_t w = c.cwnd;

	/* A loss: half the window, and that is the new threshold. */
	cc_on_lost(&c, 1000, 50000);
	ck_assert(c.cwnd == w / 2 && c.ssthresh == w / 2);
	ck_assert(c.recovery_start_us == 50000);
	/* More losses of frames sent before the reduction: the same event. */
	cc_on_lost(&c, 1001, 50100);
	cc_on_lost(&c, 49999, 60000);
	ck_assert(c.cwnd == w / 2);
	ck_assert(c.losses == 3);
	/* Their acknowledgements do not grow the window either. */
	ack_bytes(10 * MSS, 40000);
	ck_assert(c.cwnd == w / 2);
	/* A frame sent after the reduction and lost: a new event. */
	cc_on_lost(&c, 50001, 90000);
	ck_assert(c.cwnd == w / 4);
	ck_assert(c.recovery_start_us == 90000);
	ck_assert(c.losses == 4);
}
END_TEST

START_TEST(test_congestion_avoidance)
{
	uint64_t w, grown;

	cc_on_lost(&c, 1000, 2000); /* leave slow start */
	w = c.cwnd;
	ck_assert(c.cwnd == c.ssthresh);
	/* A window's worth of acknowledgements adds about one frame. */
	ack_bytes(w, 3000);
	grown = c.cwnd - w;
	ck_assert_msg(grown <= MSS && grown >= MSS * 95 / 100, "grew by %llu",
	    (unsigned long long)grown);
	/* Linear, not exponential: ten windows, about ten frames. */
	w = c.cwnd;
	for (int i = 0; i < 10; i++)
		ack_bytes(c.cwnd, 3000);
	grown = c.cwnd - w;
	ck_assert_msg(grown <= 10 * MSS && grown >= 9 * MSS,
	    "ten windows grew by %llu", (unsigned long long)grown);
}
END_TEST

START_TEST(test_minimum_window)
{
	uint64_t t = 1000;

	for (int i = 0; i < 40; i++) {
		cc_on_lost(&c, t, t + 10);
		t += 100;
		ck_assert(c.cwnd >= 2 * MSS);
		ck_assert(c.ssthresh >= 2 * MSS);
	}
	ck_assert(c.cwnd == 2 * MSS);
	/* A path failure also goes to the minimum. */
	test_setup();
	cc_collapse(&c);
	ck_assert(c.cwnd == 2 * MSS);
	ck_assert(c.ssthresh == INIT / 2);
	cc_collapse(&c);
	ck_assert(c.cwnd == 2 * MSS && c.ssthresh == 2 * MSS);
}
END_TEST

START_TEST(test_room)
{
	ck_assert(cc_room(&c, 0) == INIT);
	ck_assert(cc_room(&c, INIT - 1) == 1);
	ck_assert(cc_room(&c, INIT) == 0);
	ck_assert(cc_room(&c, INIT + 5000) == 0);
	/* The receiver's window bounds what may be in flight. */
	c.peer_rwnd = 10000;
	ck_assert(cc_room(&c, 0) == 10000);
	ck_assert(cc_room(&c, 9000) == 1000);
	ck_assert(cc_room(&c, 10000) == 0);
	c.peer_rwnd = 0;
	ck_assert(cc_room(&c, 0) == 0);
}
END_TEST

START_TEST(test_growth_bounded_by_rwnd)
{
	cc_init(&c, INIT, MSS, 100000, CC_MAX_ACK_DELAY_US);
	for (int i = 0; i < 10; i++)
		ack_bytes(c.cwnd, 1000);
	/* Growing far past what the receiver allows only builds bursts. */
	ck_assert(c.cwnd <= 2 * 100000);
	ck_assert(cc_room(&c, 0) == 100000);
}
END_TEST

START_TEST(test_rtt_estimator)
{
	/* First sample: SRTT = sample, RTTVAR = sample / 2; the ACK delay
	 * is not subtracted from the very first sample. */
	cc_on_rtt(&c, 100000, 4000);
	ck_assert(c.have_rtt);
	ck_assert(c.srtt_us == 100000 && c.rttvar_us == 50000);
	ck_assert(c.min_rtt_us == 100000 && c.latest_rtt_us == 100000);
	/* Smoothing: RTTVAR from the old SRTT, then SRTT (7/8, 1/8). */
	cc_on_rtt(&c, 60000, 0);
	ck_assert(c.min_rtt_us == 60000);
	ck_assert(c.rttvar_us == (3 * 50000 + 40000) / 4);
	ck_assert(c.srtt_us == (7 * 100000 + 60000) / 8);
	ck_assert(c.latest_rtt_us == 60000);
}
END_TEST

START_TEST(test_rtt_ack_delay)
{
	uint64_t srtt;

	cc_on_rtt(&c, 50000, 0); /* min_rtt 50 ms */
	/* 100 ms with 3 ms of receiver delay counts as 97 ms. */
	srtt = c.srtt_us;
	cc_on_rtt(&c, 100000, 3000);
	ck_assert(c.srtt_us == (7 * srtt + 97000) / 8);
	/* A delay over the maximum the receiver promised is capped. */
	srtt = c.srtt_us;
	cc_on_rtt(&c, 100000, 20000);
	ck_assert(c.srtt_us == (7 * srtt + 100000 - CC_MAX_ACK_DELAY_US) / 8);
	/* Never below the minimum: 52 ms less 5 ms would be 47 < 50. */
	srtt = c.srtt_us;
	cc_on_rtt(&c, 52000, 5000);
	ck_assert(c.srtt_us == (7 * srtt + 52000) / 8);
	ck_assert(c.latest_rtt_us == 52000);
}
END_TEST

START_TEST(test_slow_path_ack_delay)
{
	/* Over mail the peer may hold an ACK for a second: that much of a
	 * sample is its delay, not the path's, and the PTO waits for it. */
	cc_init(&c, INIT, MSS, RWND, CC_MAX_ACK_DELAY_SLOW_US);
	ck_assert(c.max_ack_delay_us == CC_MAX_ACK_DELAY_SLOW_US);
	cc_on_rtt(&c, 2000000, 0);
	cc_on_rtt(&c, 2600000, 500000);
	ck_assert(c.srtt_us == (7 * 2000000 + 2100000) / 8);
	cc_on_rtt(&c, 4000000, 3000000); /* capped at the second */
	ck_assert(c.latest_rtt_us == 4000000);
	ck_assert(cc_pto(&c) ==
	    c.srtt_us + 4 * c.rttvar_us + CC_MAX_ACK_DELAY_SLOW_US);
}
END_TEST

START_TEST(test_pto)
{
	/* Before any sample: initial RTT 100 ms, variance 2 x that. */
	ck_assert(cc_pto(&c) == 100000 + 200000 + CC_MAX_ACK_DELAY_US);
	cc_on_rtt(&c, 40000, 0);
	ck_assert(cc_pto(&c) == 40000 + 4 * 20000 + CC_MAX_ACK_DELAY_US);
	/* Each probe timeout without an ACK doubles it, up to 2^10. */
	c.pto_count = 1;
	ck_assert(cc_pto(&c) == 2 * (40000 + 80000 + CC_MAX_ACK_DELAY_US));
	c.pto_count = 3;
	ck_assert(cc_pto(&c) == 8 * (40000 + 80000 + CC_MAX_ACK_DELAY_US));
	c.pto_count = 40;
	ck_assert(cc_pto(&c) == (40000 + 80000 + CC_MAX_ACK_DELAY_US) << 10);
	/* An RTT sample ends the backoff. */
	cc_on_rtt(&c, 40000, 0);
	ck_assert(c.pto_count == 0);
	/* The variance term has a floor of the timer granularity. */
	cc_init(&c, INIT, MSS, RWND, CC_MAX_ACK_DELAY_US);
	cc_on_rtt(&c, 100, 0);
	for (int i = 0; i < 50; i++)
		cc_on_rtt(&c, 100, 0);
	ck_assert(cc_pto(&c) ==
	    c.srtt_us + CC_MIN_RTT_GRANULARITY_US + CC_MAX_ACK_DELAY_US);
}
END_TEST

START_TEST(test_loss_delay)
{
	/* Before a sample: 9/8 of the initial 100 ms. */
	ck_assert(cc_loss_delay(&c) == 112500);
	cc_on_rtt(&c, 80000, 0);
	ck_assert(cc_loss_delay(&c) == 90000);
	/* The larger of SRTT and the latest sample. */
	cc_on_rtt(&c, 160000, 0);
	ck_assert(cc_loss_delay(&c) == 160000 * 9 / 8);
	/* At least the timer granularity. */
	cc_init(&c, INIT, MSS, RWND, CC_MAX_ACK_DELAY_US);
	cc_on_rtt(&c, 10, 0);
	ck_assert(cc_loss_delay(&c) == CC_MIN_RTT_GRANULARITY_US);
}
END_TEST

/* Over mail a frame is lost only when its ACK is later than the RTT and
 * four of its variations, with the MTA's slack on top. */
START_TEST(test_loss_delay_unordered)
{
	cc_init(&c, INIT, MSS, RWND, CC_MAX_ACK_DELAY_SLOW_US);
	c.unordered = true;
	ck_assert(cc_loss_delay(&c) ==
	    100000 + 2 * 100000 + CC_REORDER_SLACK_SLOW_US);
	cc_on_rtt(&c, 20000, 0); /* SRTT 20 ms, RTTVAR 10 ms */
	ck_assert(cc_loss_delay(&c) ==
	    20000 + 4 * 10000 + CC_REORDER_SLACK_SLOW_US);
	c.unordered = false;
	ck_assert(cc_loss_delay(&c) == 20000 * 9 / 8);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_cc");
	TCase *tc = tcase_create("window");

	tcase_add_checked_fixture(tc, test_setup, NULL);
	tcase_add_test(tc, test_init);
	tcase_add_test(tc, test_slow_start_doubles);
	tcase_add_test(tc, test_one_halving_per_recovery);
	tcase_add_test(tc, test_congestion_avoidance);
	tcase_add_test(tc, test_minimum_window);
	tcase_add_test(tc, test_room);
	tcase_add_test(tc, test_growth_bounded_by_rwnd);
	suite_add_tcase(s, tc);
	tc = tcase_create("rtt");
	tcase_add_checked_fixture(tc, test_setup, NULL);
	tcase_add_test(tc, test_rtt_estimator);
	tcase_add_test(tc, test_rtt_ack_delay);
	tcase_add_test(tc, test_slow_path_ack_delay);
	tcase_add_test(tc, test_pto);
	tcase_add_test(tc, test_loss_delay);
	tcase_add_test(tc, test_loss_delay_unordered);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
