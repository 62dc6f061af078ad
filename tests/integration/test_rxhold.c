/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-peer receive back-pressure and per-layer backlog accounts (issue 12,
 * seam 2), on cores in one process over real UDP and TCP (tests/lib
 * corenet): a receiver that holds one sender stops that sender's traffic
 * (its queue fills and core_send says -EAGAIN; over UDP only control
 * frames ask the closed window) while another sender's messages still
 * arrive; letting go delivers every message and wakes the sender. The
 * accounts' backlogs add up: together they stop the streams that each
 * alone would not, and freeing an account lets go of its holds.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "corenet.h"

#define LINK_MS 10000
#define MSG	1000	 /* bytes per message */
#define TYPE	0x0400	 /* the messages' type */

/* Small windows and queues, so that a held sender fills up soon. */
#define SMALL                                                              \
	"RECV_WINDOW = 64 KiB\nQUEUE_BYTES = 64 KiB\n"                     \
	"[transport-tcp]\nWRITE_QUEUE = 64 KiB\n"

static struct corenet *net;
static struct corenet_node *rcv, *held, *other;

/* rcv with two senders, linked; transports as given. */
static void
three(const char *transports)
{
	net = corenet_new();
	rcv = corenet_add(net, transports, "[core]\n" SMALL);
	held = corenet_add(net, transports, "[core]\n" SMALL);
	other = corenet_add(net, transports, "[core]\n" SMALL);
	corenet_introduce(held, rcv);
	corenet_introduce(other, rcv);
	corenet_wait_linked(held, rcv, LINK_MS);
	corenet_wait_linked(other, rcv, LINK_MS);
}

static void
teardown(void)
{
	corenet_free(net);
	net = NULL;
}

/* Sends from a to rcv until core_send refuses, running the loop between
 * messages; at most limit messages. Returns how many were queued and
 * checks that the refusal was -EAGAIN. */
static uint64_t
send_until_full(struct corenet_node *a, uint64_t limit)
{
	uint64_t sent = 0;
	int r = 0;

	while (sent < limit) {
		r = corenet_send(a, rcv, CORE_CLASS_BULK, TYPE, MSG);
		if (r != 0)
			break;
		if (++sent % 16 == 0)
			corenet_run_ms(net, 1);
	}
	ck_assert_msg(r == -EAGAIN, "after %llu messages: %d",
	    (unsigned long long)sent, r);
	return sent;
}

/* Sends n messages from a to rcv, waiting (10 s at most) for room when
 * refused. */
static void
send_n(struct corenet_node *a, unsigned n)
{
	unsigned waits = 0;

	for (unsigned i = 0; i < n;) {
		int r = corenet_send(a, rcv, CORE_CLASS_BULK, TYPE, MSG);

		if (r == 0) {
			i++;
			continue;
		}
		ck_assert_int_eq(r, -EAGAIN);
		ck_assert_msg(++waits < 10000, "no room at node %u", a->index);
		corenet_run_ms(net, 1);
	}
}

struct want {
	const uint64_t *have; /* a counter of the test */
	uint64_t n;	      /* waited for */
};

static bool
reached(void *cls)
{
	const struct want *w = cls;

	return *w->have >= w->n;
}

static void
wait_for(const uint64_t *have, uint64_t n, int timeout_ms, const char *what)
{
	struct want w = { have, n };

	ck_assert_msg(corenet_run_until(net, reached, &w, timeout_ms),
	    "%s: %llu of %llu", what, (unsigned long long)*have,
	    (unsigned long long)n);
}

/* The hold stops held's traffic and nobody else's; letting go delivers
 * everything. limit bounds what held may queue before its refusal
 * (streams buffer megabytes in the kernel). */
static void
hold_and_release(uint64_t limit)
{
	struct core_rx_account *acct;
	uint64_t sent, before, drains, out;

	ck_assert_int_eq(core_rx_account_new(rcv->core, &acct), 0);
	ck_assert_int_eq(core_rx_account_hold(acct, &held->id, true), 0);
	/* Holding twice is holding once. */
	ck_assert_int_eq(core_rx_account_hold(acct, &held->id, true), 0);
	ck_assert_uint_eq(corenet_stat(rcv, "core.peers_held"), 1);
	sent = send_until_full(held, limit);
	drains = held->drains[CORE_CLASS_BULK];
	/* What was under way arrives; then nothing more. */
	corenet_run_ms(net, 500);
	before = rcv->rx_from[held->index];
	out = corenet_stat(held, "core.msg_out");
	ck_assert_uint_lt(before, sent);
	send_n(other, 100);
	wait_for(&rcv->rx_from[other->index], 100, 5000, "other's messages");
	corenet_run_ms(net, 1000);
	ck_assert_uint_eq(rcv->rx_from[held->index], before);
	ck_assert_uint_eq(corenet_stat(held, "core.msg_out"), out);
	/* Letting go: everything queued arrives, the sender hears of room. */
	ck_assert_int_eq(core_rx_account_hold(acct, &held->id, false), 0);
	ck_assert_uint_eq(corenet_stat(rcv, "core.peers_held"), 0);
	wait_for(&rcv->rx_from[held->index], sent, 20000, "held's messages");
	wait_for(&held->drains[CORE_CLASS_BULK], drains + 1, 5000,
	    "drain");
	ck_assert_int_eq(corenet_send(held, rcv, CORE_CLASS_BULK, TYPE, MSG),
	    0);
	wait_for(&rcv->rx_from[held->index], sent + 1, 5000, "one more");
	core_rx_account_free(acct);
}

START_TEST(test_hold_udp)
{
	uint64_t updates;

	three("udp");
	updates = corenet_stat(rcv, "core.window_updates");
	hold_and_release(100000);
	/* The closed window was asked, in frames without data, and reopened
	 * by an update. */
	ck_assert_uint_gt(corenet_stat(held, "core.window_probes"), 0);
	ck_assert_uint_gt(corenet_stat(rcv, "core.window_updates"), updates);
}
END_TEST

START_TEST(test_hold_tcp)
{
	three("tcp");
	hold_and_release(200000);
}
END_TEST

/* Two accounts, each below RECV_WINDOW, together above it: every stream
 * stops being read, for every sender, until their sum has halved. */
START_TEST(test_accounts_add_up)
{
	struct core_rx_account *a, *b;
	uint64_t sent_h, sent_o;

	three("tcp");
	ck_assert_int_eq(core_rx_account_new(rcv->core, &a), 0);
	ck_assert_int_eq(core_rx_account_new(rcv->core, &b), 0);
	core_rx_account_set(a, 40 * 1024);
	sent_h = 50;
	send_n(held, 50);
	wait_for(&rcv->rx_from[held->index], sent_h, 5000, "below the window");
	core_rx_account_set(b, 40 * 1024);
	sent_h += send_until_full(held, 200000);
	sent_o = send_until_full(other, 200000);
	corenet_run_ms(net, 300);
	ck_assert_uint_lt(rcv->rx_from[held->index], sent_h);
	ck_assert_uint_lt(rcv->rx_from[other->index], sent_o);
	/* 40 KiB left is more than half the window: still stopped. */
	core_rx_account_set(b, 0);
	corenet_run_ms(net, 300);
	ck_assert_int_eq(corenet_send(other, rcv, CORE_CLASS_BULK, TYPE, MSG),
	    -EAGAIN);
	/* Freeing the account takes its backlog away. */
	core_rx_account_free(a);
	wait_for(&rcv->rx_from[held->index], sent_h, 20000, "held's");
	wait_for(&rcv->rx_from[other->index], sent_o, 20000, "other's");
	core_rx_account_free(b);
}
END_TEST

/* An account freed while it holds a peer lets go of it; a hold of
 * another account on the same peer stays. */
START_TEST(test_free_releases)
{
	struct core_rx_account *a, *b;
	uint64_t sent;

	three("udp");
	ck_assert_int_eq(core_rx_account_new(rcv->core, &a), 0);
	ck_assert_int_eq(core_rx_account_new(rcv->core, &b), 0);
	ck_assert_int_eq(core_rx_account_hold(a, &held->id, true), 0);
	ck_assert_int_eq(core_rx_account_hold(b, &held->id, true), 0);
	ck_assert_int_eq(core_rx_account_hold(a, &other->id, true), 0);
	ck_assert_uint_eq(corenet_stat(rcv, "core.peers_held"), 2);
	sent = send_until_full(held, 100000);
	core_rx_account_free(a);
	ck_assert_uint_eq(corenet_stat(rcv, "core.peers_held"), 1);
	corenet_run_ms(net, 1000);
	ck_assert_uint_lt(rcv->rx_from[held->index], sent);
	send_n(other, 10);
	wait_for(&rcv->rx_from[other->index], 10, 5000, "other, let go");
	core_rx_account_free(b);
	wait_for(&rcv->rx_from[held->index], sent, 20000, "held, let go");
	ck_assert_uint_eq(corenet_stat(rcv, "core.peers_held"), 0);
}
END_TEST

static Suite *
rxhold_suite(void)
{
	Suite *s = suite_create("rxhold");
	TCase *tc = tcase_create("hold");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_hold_udp);
	tcase_add_test(tc, test_hold_tcp);
	tcase_add_test(tc, test_free_releases);
	suite_add_tcase(s, tc);
	tc = tcase_create("accounts");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_accounts_add_up);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(rxhold_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
