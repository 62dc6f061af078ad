/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Peers that find, prove and talk to each other (issue 3): real ferryd
 * processes, each on its own 127.0.0.N, that know only the first one's
 * HELO end up in a full mesh over UDP, TCP or both; traffic prefers UDP
 * and moves to TCP when UDP goes away; a killed and restarted daemon
 * comes back. A reload whose configuration one subsystem refuses changes
 * nothing in any.
 */
/* ctest: TIMEOUT=300 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "mesh.h"

#define LINK_MS 15000

/* Every daemon sends a distinct message to every other; each arrives. */
static void
exchange_all(struct harness *h, struct harness_daemon **d, size_t n)
{
	struct ferry_client *l[8];
	char msg[64];

	for (size_t i = 0; i < n; i++)
		l[i] = mesh_listener(d[i]);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			if (i == j)
				continue;
			(void)snprintf(msg, sizeof(msg), "from %zu to %zu", i,
			    j);
			mesh_send(d[i], d[j], msg, strlen(msg));
			mesh_expect(h, l[j], d[i], msg, strlen(msg), 5000);
		}
	for (size_t i = 0; i < n; i++)
		ferry_client_close(l[i]);
}

static void
three_peers(const char *transports, const char *expect_transport)
{
	struct harness_daemon *d[3];
	struct harness *h;
	char tr[32];

	ck_assert_int_eq(harness_new("mesh", &h), 0);
	mesh_start(h, d, 3, transports, NULL);
	/* B and C only knew A; gossip introduced them to each other. */
	for (size_t i = 0; i < 3; i++)
		mesh_wait_peers(h, d[i], 2, LINK_MS);
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 3; j++)
			if (i != j)
				ck_assert_str_eq(mesh_peer_transport(d[i],
						     &d[j]->id, tr, sizeof(tr)),
				    expect_transport);
	exchange_all(h, d, 3);
	/* Nothing here was forged or replayed. */
	for (size_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(mesh_stat(d[i], "core.enc_bad"), 0);
		ck_assert_uint_eq(mesh_stat(d[i], "core.kx_bad"), 0);
		ck_assert_uint_ge(mesh_stat(d[i], "core.validations"), 2);
	}
	harness_free(h);
}

START_TEST(test_three_udp)
{
	three_peers("udp", "udp");
}
END_TEST

START_TEST(test_three_tcp)
{
	three_peers("tcp", "tcp");
}
END_TEST

START_TEST(test_three_both_prefers_udp)
{
	three_peers("udp tcp", "udp");
}
END_TEST

/* UDP stops on one side: both sides' traffic moves to TCP. */
START_TEST(test_udp_stop_moves_to_tcp)
{
	struct harness_daemon *d[2];
	struct ferry_client *la, *lb;
	struct harness *h;
	char tr[32];
	uint64_t end;

	ck_assert_int_eq(harness_new("fallback", &h), 0);
	mesh_start(h, d, 2, "udp tcp", NULL);
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
	ck_assert_str_eq(mesh_peer_transport(d[1], &d[0]->id, tr, sizeof(tr)),
	    "udp");
	la = mesh_listener(d[0]);
	lb = mesh_listener(d[1]);
	ck_assert_int_eq(harness_daemon_transports(d[1], "tcp"), 0);
	mesh_reload(d[1]);
	ck_assert_int_eq(harness_daemon_wait_log(d[1], "unloading transport udp",
			     5000),
	    0);
	/* B switched at once; A notices its UDP path is dead when its
	 * frames go unanswered, so keep traffic flowing both ways. */
	end = harness_now_ms() + LINK_MS;
	for (int i = 0;; i++) {
		char msg[32];

		(void)snprintf(msg, sizeof(msg), "b2a %d", i);
		mesh_send(d[1], d[0], msg, strlen(msg));
		mesh_expect(h, la, d[1], msg, strlen(msg), 5000);
		if (strcmp(mesh_peer_transport(d[0], &d[1]->id, tr, sizeof(tr)),
			"tcp") == 0)
			break;
		/* A's messages over the dead path are lost until it
		 * notices: that is what makes it notice. */
		(void)snprintf(msg, sizeof(msg), "a2b %d", i);
		mesh_send_lossy(d[0], d[1], msg, strlen(msg));
		ck_assert_msg(harness_now_ms() < end,
		    "A still sends to B over %s", tr);
		harness_sleep_ms(200);
	}
	ck_assert_str_eq(mesh_peer_transport(d[1], &d[0]->id, tr, sizeof(tr)),
	    "tcp");
	/* Both directions work over TCP now. A's messages sent while it
	 * still used UDP may arrive late or not at all: skip them. */
	mesh_drain(lb, 500);
	mesh_send(d[0], d[1], "after", 5);
	mesh_expect(h, lb, d[0], "after", 5, 5000);
	mesh_send(d[1], d[0], "after", 5);
	mesh_expect(h, la, d[1], "after", 5, 5000);
	ferry_client_close(la);
	ferry_client_close(lb);
	harness_free(h);
}
END_TEST

/* SIGKILL one of three; restarted, it reconnects and re-keys, and the
 * other two carry on throughout. */
START_TEST(test_kill_restart)
{
	struct harness_daemon *d[3];
	struct ferry_client *l0, *l1, *l2;
	struct harness *h;
	uint64_t keys;

	ck_assert_int_eq(harness_new("restart", &h), 0);
	mesh_start(h, d, 3, "udp tcp", NULL);
	for (size_t i = 0; i < 3; i++)
		mesh_wait_peers(h, d[i], 2, LINK_MS);
	keys = mesh_stat(d[0], "core.key_changes");
	ck_assert_int_eq(harness_daemon_kill(d[1]), 0);
	l0 = mesh_listener(d[0]);
	l2 = mesh_listener(d[2]);
	mesh_send(d[0], d[2], "while B is down", 15);
	mesh_expect(h, l2, d[0], "while B is down", 15, 5000);
	ck_assert_int_eq(harness_daemon_start_ready(d[1]), 0);
	/* From its peer book, B finds both again without any bootstrap. */
	mesh_wait_peers(h, d[1], 2, LINK_MS);
	l1 = mesh_listener(d[1]);
	mesh_send(d[0], d[1], "welcome back", 12);
	mesh_expect(h, l1, d[0], "welcome back", 12, 5000);
	mesh_send(d[1], d[2], "hello again", 11);
	mesh_expect(h, l2, d[1], "hello again", 11, 5000);
	/* Fragmented messages of the new session must not meet what A still
	 * remembers of the old one's reassembly. */
	{
		static uint8_t big[20000];

		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (uint8_t)(i * 7 + 3);
		for (int k = 0; k < 3; k++) {
			mesh_send(d[1], d[0], big, sizeof(big));
			mesh_expect(h, l0, d[1], big, sizeof(big), 5000);
		}
	}
	mesh_send(d[2], d[0], "still here", 10);
	mesh_expect(h, l0, d[2], "still here", 10, 5000);
	/* A made new keys with the new B rather than waiting for a timeout. */
	ck_assert_uint_gt(mesh_stat(d[0], "core.key_changes"), keys);
	ferry_client_close(l0);
	ferry_client_close(l1);
	ferry_client_close(l2);
	harness_free(h);
}
END_TEST

/* A daemon restarted with no bootstrap at all finds its peers again from
 * the peer book it wrote (atomically, in its state directory). */
START_TEST(test_peer_book)
{
	struct harness_daemon *d[3];
	struct ferry_client *l;
	struct harness *h;
	char path[PATH_MAX + 16];

	ck_assert_int_eq(harness_new("book", &h), 0);
	mesh_start(h, d, 3, "udp tcp", NULL);
	for (size_t i = 0; i < 3; i++)
		mesh_wait_peers(h, d[i], 2, LINK_MS);
	ck_assert_int_eq(harness_daemon_stop(d[2], 10000, NULL), 0);
	(void)snprintf(path, sizeof(path), "%s/peers.dat", d[2]->state_dir);
	ck_assert_int_eq(access(path, R_OK), 0);
	ck_assert_int_eq(harness_daemon_config_clear(d[2]), 0);
	ck_assert_int_eq(harness_daemon_start_ready(d[2]), 0);
	mesh_wait_peers(h, d[2], 2, LINK_MS);
	l = mesh_listener(d[0]);
	mesh_send(d[2], d[0], "remembered", 10);
	mesh_expect(h, l, d[2], "remembered", 10, 5000);
	ferry_client_close(l);
	harness_free(h);
}
END_TEST

/* Transports d runs, from STATUS. */
static size_t
transport_count(struct harness_daemon *d)
{
	struct ferry_client *c;
	struct ferry_status *st;
	size_t n;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_status(c, &st), 0);
	n = st->n_transports;
	ferry_status_free(st);
	ferry_client_close(c);
	return n;
}

/* A new transport list with a [service] value out of range: the service
 * refuses it, so the core must not have loaded TCP either. Once the
 * value is right, the same reload goes through. */
START_TEST(test_refused_reload_changes_nothing)
{
	struct harness_daemon *d;
	struct harness *h;

	ck_assert_int_eq(harness_new("badreload", &h), 0);
	mesh_start(h, &d, 1, "udp", NULL);
	ck_assert_uint_eq(transport_count(d), 1);
	ck_assert_int_eq(harness_daemon_transports(d, "udp tcp"), 0);
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[service]\nCLIENT_BUFFER = 1 KiB\n"),
	    0);
	mesh_reload(d);
	ck_assert(harness_daemon_log_has(d,
	    "reload failed; keeping the running configuration"));
	ck_assert_uint_eq(transport_count(d), 1);
	ck_assert_int_eq(harness_daemon_config_clear(d), 0);
	mesh_reload(d);
	ck_assert_uint_eq(transport_count(d), 2);
	harness_free(h);
}
END_TEST

static Suite *
mesh_suite(void)
{
	Suite *s = suite_create("mesh");
	TCase *tc = tcase_create("mesh");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_three_udp);
	tcase_add_test(tc, test_three_tcp);
	tcase_add_test(tc, test_three_both_prefers_udp);
	tcase_add_test(tc, test_udp_stop_moves_to_tcp);
	tcase_add_test(tc, test_kill_restart);
	tcase_add_test(tc, test_peer_book);
	tcase_add_test(tc, test_refused_reload_changes_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(mesh_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
