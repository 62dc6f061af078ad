/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Forged PONGs (issue 6, "Adversarial peers"), beyond those of
 * test_wire.c (wrong challenge, wrong signer, another address, broken
 * signature): a PONG whose signer stopped vouching (expired), one for
 * another transport, and genuine PONGs of an earlier validation replayed
 * when the daemon asks again with a new challenge (after a failed
 * attempt, and after a restart that revalidates the peer book). None
 * validates an address; the genuine answer to the current challenge
 * does, so the refusals are the checks at work.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "lib/time.h"
#include "core/identity.h"
#include "core/pingpong.h"
#include "adv.h"
#include "harness.h"
#include "mesh.h"
#include "wirepeer.h"

/* A PING as it arrived: the bytes stay in buf. */
struct got_ping {
	uint8_t buf[2048];
	struct ping ping;
	struct sockaddr_in from; /* the daemon that sent it */
};

static void
await(struct harness *h, struct wirepeer *w, struct got_ping *g, int timeout_ms)
{
	if (adv_await_ping(w, g->buf, sizeof(g->buf), &g->ping, &g->from,
	        timeout_ms) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("no PING arrived");
	}
}

/* Builds w's PONG for a PING with the given expiry and protocol. */
static size_t
pong_for(struct wirepeer *w, const struct ping *p, uint16_t protocol,
    uint64_t expiry, uint8_t *out, size_t max)
{
	int n = pong_build(out, max, w->ident, p->challenge, protocol, expiry,
	    p->addr, p->addr_len);

	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* The daemon with a URI of w, so that it PINGs w. */
static struct harness_daemon *
pinging_daemon(struct harness *h, struct wirepeer *w, const char *cfg)
{
	struct harness_daemon *d = adv_daemon(h, cfg);
	char *uri;

	ck_assert_int_eq(wirepeer_uri(w, &uri), 0);
	adv_connect_uri(d, uri);
	free(uri);
	return d;
}

/* Expired (and expiring this very second) and wrong-protocol PONGs are
 * refused even with the right challenge, signer and address. */
START_TEST(test_pong_expired_refused)
{
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct got_ping g;
	uint8_t pong[512];
	size_t n;

	ck_assert_int_eq(harness_new("pong-exp", &h), 0);
	ck_assert_int_eq(wirepeer_new(501, &w), 0);
	d = pinging_daemon(h, w, "[core]\nVALIDATION_TIMEOUT = 30 s\n");
	await(h, w, &g, 5000);
	n = pong_for(w, &g.ping, g.ping.protocol, time_real_s() - 60, pong,
	    sizeof(pong));
	ck_assert_int_eq(wirepeer_send(w, &g.from, pong, n), 0);
	ck_assert(mesh_wait_stat(d, "core.pong_bad", 1, 5000));
	n = pong_for(w, &g.ping, g.ping.protocol, time_real_s(), pong,
	    sizeof(pong));
	ck_assert_int_eq(wirepeer_send(w, &g.from, pong, n), 0);
	ck_assert(mesh_wait_stat(d, "core.pong_bad", 2, 5000));
	n = pong_for(w, &g.ping, FERRY_PROTO_TCP, time_real_s() + 3600, pong,
	    sizeof(pong));
	ck_assert_int_eq(wirepeer_send(w, &g.from, pong, n), 0);
	ck_assert(mesh_wait_stat(d, "core.pong_bad", 3, 5000));
	ck_assert_uint_eq(mesh_stat(d, "core.validations"), 0);
	ck_assert_uint_eq(mesh_stat(d, "core.peers_connected"), 0);
	/* Still pinging: the right answer validates. */
	n = pong_for(w, &g.ping, g.ping.protocol, time_real_s() + 3600, pong,
	    sizeof(pong));
	ck_assert_int_eq(wirepeer_send(w, &g.from, pong, n), 0);
	ck_assert(mesh_wait_stat(d, "core.validations", 1, 5000));
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/* Waits for a PING whose challenge differs from old's. */
static void
await_new_challenge(struct harness *h, struct wirepeer *w,
    const struct got_ping *old, struct got_ping *g, int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		uint64_t now = harness_now_ms();

		if (now >= end ||
		    adv_await_ping(w, g->buf, sizeof(g->buf), &g->ping,
		        &g->from, (int)(end - now)) != 0) {
			harness_dump_logs(h);
			ck_abort_msg("no PING with a new challenge");
		}
		if (memcmp(g->ping.challenge, old->ping.challenge,
		        FERRY_CHALLENGE_LEN) != 0)
			return;
	}
}

/*
 * The daemon's first PING goes unanswered until it times out; the one
 * after it carries a new challenge. The genuine, signed PONG for the
 * first challenge, arriving now, validates nothing; the PONG for the
 * current one does, once.
 */
START_TEST(test_pong_for_old_challenge_refused)
{
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct got_ping g1, g2;
	uint8_t p1[512], p2[512];
	size_t n1, n2;

	ck_assert_int_eq(harness_new("pong-old", &h), 0);
	ck_assert_int_eq(wirepeer_new(502, &w), 0);
	d = pinging_daemon(h, w,
	    "[core]\nVALIDATION_TIMEOUT = 1 s\nPING_INTERVAL = 1 s\n");
	await(h, w, &g1, 5000);
	n1 = pong_for(w, &g1.ping, g1.ping.protocol, time_real_s() + 3600, p1,
	    sizeof(p1));
	ck_assert(mesh_wait_stat(d, "core.validation_failures", 1, 5000));
	/* The retry comes PING_INTERVAL << 1 after the failure. */
	await_new_challenge(h, w, &g1, &g2, 10000);
	ck_assert_int_eq(wirepeer_send(w, &g2.from, p1, n1), 0);
	ck_assert(mesh_wait_stat(d, "core.pong_unsolicited", 1, 5000));
	ck_assert_uint_eq(mesh_stat(d, "core.validations"), 0);
	n2 = pong_for(w, &g2.ping, g2.ping.protocol, time_real_s() + 3600, p2,
	    sizeof(p2));
	ck_assert_int_eq(wirepeer_send(w, &g2.from, p2, n2), 0);
	ck_assert(mesh_wait_stat(d, "core.validations", 1, 5000));
	/* Used up: the same PONG again is unsolicited, as is the old one. */
	ck_assert_int_eq(wirepeer_send(w, &g2.from, p2, n2), 0);
	ck_assert_int_eq(wirepeer_send(w, &g2.from, p1, n1), 0);
	ck_assert(mesh_wait_stat(d, "core.pong_unsolicited", 3, 5000));
	ck_assert_uint_eq(mesh_stat(d, "core.validations"), 1);
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/*
 * A validated address survives a restart in the peer book, and the
 * restarted daemon checks it again with a fresh challenge. The PONG that
 * validated it before the restart, replayed, does not answer the new
 * PING.
 */
START_TEST(test_pong_replayed_after_restart_refused)
{
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct got_ping g1, g2;
	uint8_t p1[512], p2[512];
	size_t n1, n2;

	ck_assert_int_eq(harness_new("pong-restart", &h), 0);
	ck_assert_int_eq(wirepeer_new(503, &w), 0);
	d = pinging_daemon(h, w, "[core]\nVALIDATION_TIMEOUT = 30 s\n");
	await(h, w, &g1, 5000);
	n1 = pong_for(w, &g1.ping, g1.ping.protocol, time_real_s() + 3600, p1,
	    sizeof(p1));
	ck_assert_int_eq(wirepeer_send(w, &g1.from, p1, n1), 0);
	ck_assert(mesh_wait_stat(d, "core.validations", 1, 5000));
	ck_assert_int_eq(harness_daemon_restart(d), 0);
	await_new_challenge(h, w, &g1, &g2, 10000);
	ck_assert_int_eq(wirepeer_send(w, &g2.from, p1, n1), 0);
	ck_assert(mesh_wait_stat(d, "core.pong_unsolicited", 1, 5000));
	ck_assert_uint_eq(mesh_stat(d, "core.validations"), 0);
	n2 = pong_for(w, &g2.ping, g2.ping.protocol, time_real_s() + 3600, p2,
	    sizeof(p2));
	ck_assert_int_eq(wirepeer_send(w, &g2.from, p2, n2), 0);
	ck_assert(mesh_wait_stat(d, "core.validations", 1, 5000));
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

static Suite *
pong_suite(void)
{
	Suite *s = suite_create("adversary_pong");
	TCase *tc = tcase_create("pong");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pong_expired_refused);
	tcase_add_test(tc, test_pong_for_old_challenge_refused);
	tcase_add_test(tc, test_pong_replayed_after_restart_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pong_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
