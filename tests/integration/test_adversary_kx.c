/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Handshake floods (issue 6, "Adversarial peers"). The attacker's
 * sockets are bound to 127.0.0.2, many source ports, while each
 * legitimate daemon has a loopback address of its own (127.0.0.10 and
 * up, harness.h): the UDP transport hands the core the source IP without
 * its port, and the per-source handshake limit (KX_RATE_PER_SOURCE) keys
 * on it, so the attacker is one source however many ports it uses, and
 * each legitimate peer is another.
 *
 * Each flooded KX names the victim as receiver and carries a fresh
 * timestamp, so it passes the cheap checks and would cost a signature
 * verification; the limits must drop nearly all of them before that,
 * keep the victim's CPU and memory bounded, and let a peer that has never
 * met the victim link within 5 s. A second flood of KX messages with
 * valid signatures from thousands of fresh identities shows that state
 * for unauthenticated peers stops at MAX_UNAUTH_PEERS, and that filling
 * it must not lock out a legitimate newcomer.
 */
/* ctest: TIMEOUT=300 RUN_SERIAL=ON */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "lib/time.h"
#include "core/identity.h"
#include "core/kx.h"
#include "adv.h"
#include "procstat.h"
#include "flood.h"
#include "harness.h"
#include "mesh.h"
#include "wirepeer.h"

#define ATTACKER_IP    "127.0.0.2"
#define ATTACKER_SOCKS 64
#define CONNECT_MS     5000

/* n KX messages to victim from n_ids identities, timestamps now. With
 * forge, each signature is broken in its R half, which costs a full
 * verification to find out. */
static uint8_t *
kx_batch(const struct ferry_peer_id *victim, uint64_t seed, unsigned n_ids,
    unsigned n, bool forge)
{
	uint8_t *kx = malloc((size_t)n * FERRY_KX_SIZE);
	struct identity **ids = calloc(n_ids, sizeof(*ids));
	uint64_t now = time_real_us();

	ck_assert_ptr_nonnull(kx);
	ck_assert_ptr_nonnull(ids);
	for (unsigned i = 0; i < n_ids; i++)
		ids[i] = adv_identity(seed + i);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *m = kx + (size_t)i * FERRY_KX_SIZE;

		/* Distinct timestamps, so that none looks like a replay of
		 * another from the same sender. */
		adv_kx(ids[i % n_ids], victim, now + i, m);
		if (forge)
			m[FERRY_KX_SIZE - FERRY_SIG_LEN] ^= 0x01;
	}
	for (unsigned i = 0; i < n_ids; i++)
		identity_free(ids[i]);
	free(ids);
	return kx;
}

/* Microseconds one KX signature check takes here (the daemon runs the
 * same code). */
static double
verify_cost_us(const uint8_t *kx, unsigned n)
{
	uint64_t t0 = time_mono_us();

	for (unsigned i = 0; i < n; i++)
		(void)kx_verify(kx + (size_t)i * FERRY_KX_SIZE, FERRY_KX_SIZE);
	return (double)(time_mono_us() - t0) / n;
}

/* Until both daemons list each other; returns the milliseconds it took,
 * or a value above timeout_ms. */
static uint64_t
time_to_link(struct harness_daemon *a, struct harness_daemon *b, int timeout_ms)
{
	uint64_t t0 = harness_now_ms(), end = t0 + (uint64_t)timeout_ms;

	while (mesh_peer_count(a) < 1 || mesh_peer_count(b) < 1) {
		if (harness_now_ms() > end)
			return (uint64_t)timeout_ms + 1;
		harness_sleep_ms(20);
	}
	return harness_now_ms() - t0;
}

/* Figures of the victim over a time window. */
struct victim_use {
	uint64_t t_ms, cpu_us, kx_in, kx_limited, kx_bad;
	unsigned long rss_kib;
};

static void
victim_use(struct harness_daemon *v, struct victim_use *u)
{
	u->t_ms = harness_now_ms();
	u->cpu_us = adv_cpu_us(v->pid);
	u->rss_kib = procstat_kib(v->pid, "VmRSS");
	u->kx_in = mesh_stat(v, "core.kx_in");
	u->kx_limited = mesh_stat(v, "core.kx_limited");
	u->kx_bad = mesh_stat(v, "core.kx_bad");
}

/*
 * Tens of thousands of forged KX initiations per second from many ports
 * of 127.0.0.2; meanwhile a daemon on an address of its own that has
 * never met the victim is given its HELO and must be linked within 5 s.
 * The victim verifies at most KX_RATE_PER_SOURCE signatures a second for
 * the attacker, uses a fraction of a core, and its memory stays put.
 */
START_TEST(test_kx_flood_legit_peer_connects)
{
	enum { N_KX = 4096, N_IDS = 64, RATE = 30000, FLOOD_MS = 8000 };
	struct harness_daemon *v, *l;
	struct victim_use u0, u1;
	struct harness *h;
	struct flood *f;
	uint8_t *kx;
	uint64_t sent, link_ms, wall_ms, in, verified;
	double cost, cpu_share, per_kx;
	unsigned long rss_mid;
	char *uri;

	ck_assert_int_eq(harness_new("kx-flood", &h), 0);
	v = adv_daemon(h, NULL);
	l = adv_daemon(h, NULL);
	uri = mesh_hello(v);
	kx = kx_batch(&v->id, 70000, N_IDS, N_KX, true);
	cost = verify_cost_us(kx, 1000);
	victim_use(v, &u0);
	ck_assert_int_eq(flood_start(ATTACKER_IP, ATTACKER_SOCKS, &v->addr, kx,
	                     FERRY_KX_SIZE, N_KX, RATE, &f),
	    0);
	free(kx);
	/* The flood is under way before the newcomer tries. */
	harness_sleep_ms(1000);
	adv_connect_uri(l, uri);
	link_ms = time_to_link(l, v, CONNECT_MS);
	/* The newcomer's link costs memory of its own: from here on, the
	 * flood alone. */
	harness_sleep_ms(500);
	rss_mid = procstat_kib(v->pid, "VmRSS");
	while (harness_now_ms() - u0.t_ms < FLOOD_MS)
		harness_sleep_ms(100);
	sent = flood_stop(f);
	victim_use(v, &u1);
	wall_ms = u1.t_ms - u0.t_ms;
	in = u1.kx_in - u0.kx_in;
	verified = u1.kx_bad - u0.kx_bad;
	cpu_share = (double)(u1.cpu_us - u0.cpu_us) / (wall_ms * 1000.0);
	per_kx = in > 0 ? (double)(u1.cpu_us - u0.cpu_us) / in : 0;
	fprintf(stderr,
	    "kx flood: %llu KX sent in %llu ms (%.0f/s), %llu reached the "
	    "core, %llu verified, %llu rate-limited; newcomer linked in "
	    "%llu ms; victim CPU %.1f%% of a core (%.2f us per KX, a "
	    "signature check costs %.1f us); RSS %lu -> %lu (linked) -> %lu "
	    "KiB\n",
	    (unsigned long long)sent, (unsigned long long)wall_ms,
	    sent * 1000.0 / wall_ms, (unsigned long long)in,
	    (unsigned long long)verified,
	    (unsigned long long)(u1.kx_limited - u0.kx_limited),
	    (unsigned long long)link_ms, cpu_share * 100, per_kx, cost,
	    u0.rss_kib, rss_mid, u1.rss_kib);
	ck_assert_msg(link_ms <= CONNECT_MS,
	    "the newcomer was not linked within %d ms", CONNECT_MS);
	/* The attack was as big as claimed and reached the core. */
	ck_assert_uint_ge(sent * 1000 / wall_ms, 20000);
	ck_assert_uint_ge(in, sent / 2);
	/* Verified: 20 per second from the attacker's source, plus its
	 * bucket's burst. */
	ck_assert_uint_le(verified, 20 * (wall_ms / 1000 + 1) + 20);
	ck_assert_uint_ge(u1.kx_limited - u0.kx_limited, in - verified - 50);
	/* A KX that is dropped costs a small part of what checking its
	 * signature would; the whole flood well under half a core. */
	ck_assert_msg(per_kx < cost / 2, "%.2f us of CPU per flooded KX",
	    per_kx);
	ck_assert_msg(cpu_share < 0.5, "the victim used %.0f%% of a core",
	    cpu_share * 100);
	ck_assert_msg(u1.rss_kib < u0.rss_kib + procstat_allow_kib(0, 4096),
	    "victim RSS grew from %lu to %lu KiB", u0.rss_kib, u1.rss_kib);
	ck_assert_msg(u1.rss_kib < rss_mid + procstat_allow_kib(0, 1024),
	    "victim RSS grew from %lu to %lu KiB under the flood", rss_mid,
	    u1.rss_kib);
	free(uri);
	harness_free(h);
}
END_TEST

/* Sends n prepared KX from the attacker's address, 256 at a time, each
 * lot once the victim's core has read the one before: however slow the
 * victim (a sanitizer build), none is lost in its socket buffer. */
static void
send_kx_paced(struct harness_daemon *v, const uint8_t *kx, unsigned n)
{
	uint64_t base = mesh_stat(v, "core.kx_in");
	struct wirepeer *w;

	ck_assert_int_eq(wirepeer_new_at(1, ATTACKER_IP, &w), 0);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(wirepeer_send(w, &v->addr,
		                     kx + (size_t)i * FERRY_KX_SIZE,
		                     FERRY_KX_SIZE),
		    0);
		if (i % 256 == 255 || i + 1 == n)
			ck_assert(mesh_wait_stat(v, "core.kx_in", base + i + 1,
			    20000));
	}
	wirepeer_free(w);
}

/*
 * KX messages with valid signatures from 2 x 6000 fresh identities, the
 * rate limits lifted so that only the table's cap stands in the way: the
 * victim keeps at most MAX_UNAUTH_PEERS peers (refusing newcomers or
 * evicting others, its choice), and its memory stops growing once the
 * table is full.
 */
START_TEST(test_kx_fresh_identities_state_capped)
{
	enum { CAP = 4096, N = 6000 };
	struct harness_daemon *v;
	struct harness *h;
	unsigned long rss0, rss1, rss2;
	uint64_t peers1, peers2, refused;
	struct ferry_client *c;
	struct ferry_status *st;
	uint8_t *kx;

	ck_assert_int_eq(harness_new("kx-ids", &h), 0);
	v = adv_daemon(h,
	    "[core]\nMAX_UNAUTH_PEERS = 4096\n"
	    "KX_RATE = 1000000\nKX_RATE_PER_SOURCE = 1000000\n");
	rss0 = procstat_kib(v->pid, "VmRSS");
	kx = kx_batch(&v->id, 100000, N, N, false);
	send_kx_paced(v, kx, N);
	free(kx);
	/* Past the cap once: the table is full. */
	peers1 = mesh_stat(v, "core.peers_known");
	rss1 = procstat_kib(v->pid, "VmRSS");
	kx = kx_batch(&v->id, 200000, N, N, false);
	send_kx_paced(v, kx, N);
	free(kx);
	peers2 = mesh_stat(v, "core.peers_known");
	rss2 = procstat_kib(v->pid, "VmRSS");
	refused = mesh_stat(v, "core.kx_refused");
	fprintf(stderr,
	    "kx identities: %u + %u fresh identities; peers %llu then %llu "
	    "(cap %u), %llu refused; RSS %lu -> %lu -> %lu KiB (%.1f KiB "
	    "per unauthenticated peer)\n",
	    N, N, (unsigned long long)peers1, (unsigned long long)peers2, CAP,
	    (unsigned long long)refused, rss0, rss1, rss2,
	    peers1 > 0 ? (double)(rss1 - rss0) / peers1 : 0.0);
	/* The flood did reach the cap, and went no further. */
	ck_assert_uint_ge(peers1, CAP / 2);
	ck_assert_uint_le(peers1, CAP);
	ck_assert_uint_le(peers2, CAP);
	/* Full table, more identities: no more memory. */
	ck_assert_msg(rss2 < rss1 + procstat_allow_kib(0, 2048),
	    "RSS grew from %lu to %lu KiB", rss1,
	    rss2);
	ck_assert_int_eq(harness_daemon_client(v, &c), 0);
	ck_assert_int_eq(ferry_status(c, &st), 0);
	ferry_status_free(st);
	ferry_client_close(c);
	harness_free(h);
}
END_TEST

/*
 * The same with the default handshake limits and a small table: an
 * attacker with one address fills MAX_UNAUTH_PEERS with identities that
 * never finish their handshake (at KX_RATE_PER_SOURCE a second; with the
 * default 4096 and 20/s that takes 3.5 minutes, or 2 s from 205
 * addresses). A legitimate peer that has never met the victim must
 * still be linked within 5 s.
 */
START_TEST(test_kx_fresh_identities_legit_still_connects)
{
	enum { N = 2000, RATE = 200, CAP = 16 };
	struct harness_daemon *v, *l;
	struct harness *h;
	struct flood *f;
	uint64_t link_ms;
	uint8_t *kx;
	char *uri;

	ck_assert_int_eq(harness_new("kx-lockout", &h), 0);
	v = adv_daemon(h, "[core]\nMAX_UNAUTH_PEERS = 16\n");
	l = adv_daemon(h, NULL);
	uri = mesh_hello(v);
	kx = kx_batch(&v->id, 300000, N, N, false);
	ck_assert_int_eq(flood_start(ATTACKER_IP, ATTACKER_SOCKS, &v->addr, kx,
	                     FERRY_KX_SIZE, N, RATE, &f),
	    0);
	free(kx);
	ck_assert(mesh_wait_stat(v, "core.peers_known", CAP, 10000));
	adv_connect_uri(l, uri);
	link_ms = time_to_link(l, v, CONNECT_MS);
	(void)flood_stop(f);
	fprintf(stderr, "kx lockout: table of %d full; newcomer %s\n", CAP,
	    link_ms <= CONNECT_MS ? "linked" : "not linked within 5 s");
	ck_assert_msg(link_ms <= CONNECT_MS,
	    "a table full of half-open identities kept a legitimate peer "
	    "out (core.kx_refused = %llu)",
	    (unsigned long long)mesh_stat(v, "core.kx_refused"));
	free(uri);
	harness_free(h);
}
END_TEST

static Suite *
kx_suite(void)
{
	Suite *s = suite_create("adversary_kx");
	TCase *tc = tcase_create("kx");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_kx_flood_legit_peer_connects);
	tcase_add_test(tc, test_kx_fresh_identities_state_capped);
	tcase_add_test(tc, test_kx_fresh_identities_legit_still_connects);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(kx_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
