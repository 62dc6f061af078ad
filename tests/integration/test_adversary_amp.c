/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Amplification (issue 6, "Adversarial peers"): whatever a stranger can
 * send without a link (PING, KX, HELO, garbage), the daemon's answer is
 * no larger than the request, so a spoofed source gains nothing by
 * reflecting off a ferryd (seed 004, II-C: the victim gets "at most one
 * small message" per advertisement, "an equal amount of traffic"). The
 * hostile peer captures every datagram sent back and compares sizes.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <check.h>

#include "lib/netaddr.h"
#include "lib/time.h"
#include "lib/wire.h"
#include "core/helo.h"
#include "core/identity.h"
#include "core/kx.h"
#include "core/pingpong.h"
#include "adv.h"
#include "harness.h"
#include "mesh.h"
#include "wirepeer.h"

/* Replies come within this after a request, on loopback. */
#define REPLY_MS 1500

/* A PING from w to d for d's own address, padded to pad bytes (0: the
 * size ping_build gives, which is the PONG's). Returns its size. */
static size_t
make_ping(const struct harness_daemon *d, uint8_t *out, size_t max, size_t pad)
{
	uint8_t addr[FERRY_ADDR_MAX], chal[FERRY_CHALLENGE_LEN];
	size_t alen = adv_daemon_addr(d, addr, sizeof(addr));
	int n;

	randombytes_buf(chal, sizeof(chal));
	n = ping_build(out, max, &d->id, chal, FERRY_PROTO_UDP, addr, alen);
	ck_assert_int_gt(n, 0);
	if (pad == 0)
		return (size_t)n;
	ck_assert_uint_le(pad, max);
	if (pad > (size_t)n)
		memset(out + n, 0, pad - (size_t)n);
	wire_put16(out, (uint16_t)pad);
	return pad;
}

/* A correctly padded PING is answered by a PONG of at most its size;
 * padding beyond changes nothing. */
START_TEST(test_amp_ping_answered_no_larger)
{
	static const size_t pads[] = { 0, 400, 1400 };
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct adv_rx rx;
	uint8_t ping[1452];

	ck_assert_int_eq(harness_new("amp-ping", &h), 0);
	d = adv_daemon(h, NULL);
	ck_assert_int_eq(wirepeer_new(201, &w), 0);
	for (size_t i = 0; i < sizeof(pads) / sizeof(pads[0]); i++) {
		size_t n = make_ping(d, ping, sizeof(ping), pads[i]);

		ck_assert_int_eq(wirepeer_send(w, &d->addr, ping, n), 0);
		adv_collect(w, &d->addr, REPLY_MS, &rx);
		/* The reply is measured, so there must be one. */
		ck_assert_uint_eq(rx.pongs, 1);
		ck_assert_uint_eq(rx.datagrams, 1);
		ck_assert_msg(rx.bytes <= n,
		    "a %zu-byte PING got %zu bytes back", n, rx.bytes);
	}
	ck_assert_uint_eq(mesh_stat(d, "core.pong_sent"), 3);
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/* A PING smaller than the PONG it asks for gets nothing, down to one
 * byte short of the PONG's size. */
START_TEST(test_amp_short_ping_unanswered)
{
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct adv_rx rx;
	uint8_t ping[1452];
	size_t full, sizes[2];

	ck_assert_int_eq(harness_new("amp-short", &h), 0);
	d = adv_daemon(h, NULL);
	ck_assert_int_eq(wirepeer_new(202, &w), 0);
	full = make_ping(d, ping, sizeof(ping), 0);
	/* Unpadded (the fields and the address only), and one byte short. */
	sizes[0] = FERRY_PING_FIXED + (full - FERRY_PONG_FIXED);
	sizes[1] = full - 1;
	for (size_t i = 0; i < 2; i++) {
		(void)make_ping(d, ping, sizeof(ping), 0);
		wire_put16(ping, (uint16_t)sizes[i]);
		ck_assert_int_eq(wirepeer_send(w, &d->addr, ping, sizes[i]), 0);
		ck_assert_msg(mesh_wait_stat(d, "core.ping_refused", i + 1,
		                  5000),
		    "a %zu-byte PING was not refused", sizes[i]);
		adv_collect(w, &d->addr, 500, &rx);
		ck_assert_msg(rx.datagrams == 0,
		    "a %zu-byte PING was answered with %zu bytes", sizes[i],
		    rx.bytes);
	}
	ck_assert_uint_eq(mesh_stat(d, "core.pong_sent"), 0);
	/* Padded, the same PING is answered: the refusal was the size. */
	(void)make_ping(d, ping, sizeof(ping), 0);
	ck_assert_int_eq(wirepeer_send(w, &d->addr, ping, full), 0);
	adv_collect(w, &d->addr, REPLY_MS, &rx);
	ck_assert_uint_eq(rx.pongs, 1);
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/* A burst of PINGs from one source costs the daemon a signature, and
 * the source a PONG, at KX_RATE_PER_SOURCE per second at most. */
START_TEST(test_amp_ping_burst_per_source)
{
	enum { BURST = 300, PER_SOURCE = 20 };
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct adv_rx rx;
	uint8_t ping[1452];
	uint64_t t0, secs;
	size_t n = 0;

	ck_assert_int_eq(harness_new("amp-burst", &h), 0);
	d = adv_daemon(h, "[core]\nKX_RATE_PER_SOURCE = 20\n");
	ck_assert_int_eq(wirepeer_new(203, &w), 0);
	t0 = harness_now_ms();
	for (unsigned i = 0; i < BURST; i++) {
		n = make_ping(d, ping, sizeof(ping), 0);
		ck_assert_int_eq(wirepeer_send(w, &d->addr, ping, n), 0);
	}
	ck_assert(mesh_wait_stat(d, "core.ping_in", BURST, 10000));
	secs = (harness_now_ms() - t0) / 1000 + 1;
	adv_collect(w, &d->addr, REPLY_MS, &rx);
	/* The bucket's burst, plus what refills while the test runs. */
	ck_assert_msg(rx.pongs <= PER_SOURCE + PER_SOURCE * secs,
	    "%u PONGs for %d PINGs in %llu s", rx.pongs, BURST,
	    (unsigned long long)secs);
	ck_assert_uint_ge(rx.pongs, 1);
	ck_assert_uint_le(rx.largest, n);
	ck_assert_uint_ge(mesh_stat(d, "core.pong_limited"), BURST - rx.pongs);
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/* A stranger's first KX is answered by one KX of the same size. */
START_TEST(test_amp_kx_answered_once)
{
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct adv_rx rx;
	uint8_t kx[FERRY_KX_SIZE];

	ck_assert_int_eq(harness_new("amp-kx", &h), 0);
	d = adv_daemon(h, NULL);
	ck_assert_int_eq(wirepeer_new(204, &w), 0);
	adv_kx(w->ident, &d->id, time_real_us(), kx);
	ck_assert_int_eq(wirepeer_send(w, &d->addr, kx, sizeof(kx)), 0);
	/* Less than the daemon's first retransmission interval (1 s). */
	adv_collect(w, &d->addr, 800, &rx);
	ck_assert_uint_eq(rx.kxs, 1);
	ck_assert_uint_eq(rx.datagrams, 1);
	ck_assert_uint_le(rx.bytes, sizeof(kx));
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/*
 * One KX from a stranger that never follows up: the daemon has answered
 * it; saying the same again and again to an address nobody proved (the
 * source may be spoofed) multiplies the traffic the request caused.
 */
START_TEST(test_amp_kx_stranger_not_repeated)
{
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct adv_rx rx;
	uint8_t kx[FERRY_KX_SIZE];

	ck_assert_int_eq(harness_new("amp-kxrep", &h), 0);
	d = adv_daemon(h, NULL);
	ck_assert_int_eq(wirepeer_new(205, &w), 0);
	adv_kx(w->ident, &d->id, time_real_us(), kx);
	ck_assert_int_eq(wirepeer_send(w, &d->addr, kx, sizeof(kx)), 0);
	/* Long enough for three of the daemon's retransmissions (1, 2 and
	 * 4 s apart). */
	adv_collect(w, &d->addr, 8000, &rx);
	ck_assert_uint_ge(rx.kxs, 1);
	ck_assert_msg(rx.bytes <= sizeof(kx),
	    "one %zu-byte KX from an unproven source got %u KX messages "
	    "(%zu bytes) back in 8 s",
	    sizeof(kx), rx.kxs, rx.bytes);
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/*
 * A stranger's HELO for its own address makes the daemon PING that
 * address. The PING must not be larger than the HELO that caused it,
 * or a HELO naming a victim's address is an amplifier.
 */
START_TEST(test_amp_helo_ping_no_larger)
{
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct adv_rx rx;
	uint8_t helo[FERRY_HELO_FIXED + FERRY_ADDR_MAX];
	int n;

	ck_assert_int_eq(harness_new("amp-helo", &h), 0);
	d = adv_daemon(h, NULL);
	ck_assert_int_eq(wirepeer_new(206, &w), 0);
	n = wirepeer_helo(w, &w->addr, 3600, helo, sizeof(helo));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wirepeer_send(w, &d->addr, helo, (size_t)n), 0);
	ck_assert(mesh_wait_stat(d, "core.helo_in", 1, 5000));
	adv_collect(w, &d->addr, REPLY_MS, &rx);
	ck_assert_uint_le(rx.pings, 1);
	ck_assert_msg(rx.bytes <= (size_t)n,
	    "a %d-byte HELO made the daemon send %zu bytes (%u datagrams) "
	    "to the address it names",
	    n, rx.bytes, rx.datagrams);
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/*
 * An address a stranger advertised and that never answers: "at most one
 * small message to that address" per advertisement (seed 004, II-C),
 * not one more after every failed attempt. PING_INTERVAL is short so
 * that the daemon's retries, minutes apart by default, show in seconds.
 */
START_TEST(test_amp_helo_one_ping_per_advert)
{
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct adv_rx rx;
	uint8_t helo[FERRY_HELO_FIXED + FERRY_ADDR_MAX];
	int n;

	ck_assert_int_eq(harness_new("amp-retry", &h), 0);
	d = adv_daemon(h,
	    "[core]\nPING_INTERVAL = 1 s\n"
	    "VALIDATION_TIMEOUT = 200 ms\n");
	ck_assert_int_eq(wirepeer_new(207, &w), 0);
	n = wirepeer_helo(w, &w->addr, 3600, helo, sizeof(helo));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wirepeer_send(w, &d->addr, helo, (size_t)n), 0);
	ck_assert(mesh_wait_stat(d, "core.helo_in", 1, 5000));
	/* Retries would come 2 and 4 s after the first failure. */
	adv_collect(w, &d->addr, 9000, &rx);
	ck_assert_msg(rx.pings <= 1,
	    "one HELO for an unanswering address drew %u PINGs (%zu bytes)",
	    rx.pings, rx.bytes);
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/* Builds a set of messages no stranger should get an answer to;
 * returns how many datagrams were sent. */
static unsigned
send_junk(struct harness_daemon *d, struct wirepeer *w)
{
	struct wirepeer *other;
	uint8_t buf[1452], addr[FERRY_ADDR_MAX];
	size_t alen = adv_daemon_addr(d, addr, sizeof(addr));
	static const size_t sizes[] = { 1, 3, 4, 5, 100, 1400 };
	unsigned sent = 0;
	int n;

#define JUNK_SEND(p, len)                                                      \
	do {                                                                   \
		ck_assert_int_eq(wirepeer_send(w, &d->addr, (p), (len)), 0);   \
		sent++;                                                        \
	} while (0)
	ck_assert_int_eq(wirepeer_new(299, &other), 0);
	/* Random bytes. */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		randombytes_buf(buf, sizes[i]);
		JUNK_SEND(buf, sizes[i]);
	}
	/* A well-framed unit of an unknown outer type. */
	memset(buf, 0, 64);
	wire_put_hdr(buf, 64, 0x7777);
	JUNK_SEND(buf, 64);
	/* KX: bad signature, for another peer, from 2 h ago, from the
	 * future. */
	adv_kx(w->ident, &d->id, time_real_us(), buf);
	buf[FERRY_KX_SIZE - 1] ^= 1;
	JUNK_SEND(buf, FERRY_KX_SIZE);
	adv_kx(w->ident, &other->ident->id, time_real_us(), buf);
	JUNK_SEND(buf, FERRY_KX_SIZE);
	adv_kx(w->ident, &d->id, time_real_us() - 7200 * USEC_PER_SEC, buf);
	JUNK_SEND(buf, FERRY_KX_SIZE);
	adv_kx(w->ident, &d->id, time_real_us() + 7200 * USEC_PER_SEC, buf);
	JUNK_SEND(buf, FERRY_KX_SIZE);
	/* ENC for a receiver index nobody has. */
	memset(buf, 0xa5, 200);
	wire_put_hdr(buf, 200, FERRY_P2P_ENC);
	JUNK_SEND(buf, 200);
	/* PING for another peer, and for an address the daemon does not
	 * have. */
	n = ping_build(buf, sizeof(buf), &other->ident->id, buf + 600,
	    FERRY_PROTO_UDP, addr, alen);
	ck_assert_int_gt(n, 0);
	JUNK_SEND(buf, (size_t)n);
	addr[alen - 1] ^= 1;
	n = ping_build(buf, sizeof(buf), &d->id, buf + 600, FERRY_PROTO_UDP,
	    addr, alen);
	JUNK_SEND(buf, (size_t)n);
	addr[alen - 1] ^= 1;
	/* A PONG for a challenge never sent. */
	n = pong_build(buf, sizeof(buf), w->ident, buf + 600, FERRY_PROTO_UDP,
	    time_real_s() + 3600, addr, alen);
	JUNK_SEND(buf, (size_t)n);
	/* HELO with a broken signature. */
	n = wirepeer_helo(w, &w->addr, 3600, buf, sizeof(buf));
	buf[n - 1] ^= 1;
	JUNK_SEND(buf, (size_t)n);
#undef JUNK_SEND
	wirepeer_free(other);
	return sent;
}

/* Garbage and refused messages get no answer at all. */
START_TEST(test_amp_junk_unanswered)
{
	struct harness_daemon *d;
	struct wirepeer *w;
	struct harness *h;
	struct adv_rx rx;
	unsigned sent;

	ck_assert_int_eq(harness_new("amp-junk", &h), 0);
	d = adv_daemon(h, NULL);
	ck_assert_int_eq(wirepeer_new(208, &w), 0);
	sent = send_junk(d, w);
	ck_assert(mesh_wait_stat(d, "udp.rx_datagrams", sent, 5000));
	adv_collect(w, NULL, REPLY_MS, &rx);
	ck_assert_msg(rx.datagrams == 0,
	    "%u junk datagrams drew %u answers (%zu bytes)", sent, rx.datagrams,
	    rx.bytes);
	/* Each was looked at and refused for its own reason. */
	ck_assert_uint_ge(mesh_stat(d, "core.units_bad"), 5);
	ck_assert_uint_ge(mesh_stat(d, "core.kx_bad"), 1);
	ck_assert_uint_ge(mesh_stat(d, "core.kx_refused"), 1);
	ck_assert_uint_ge(mesh_stat(d, "core.kx_stale"), 2);
	ck_assert_uint_ge(mesh_stat(d, "core.enc_unknown"), 1);
	ck_assert_uint_ge(mesh_stat(d, "core.ping_refused"), 2);
	ck_assert_uint_ge(mesh_stat(d, "core.pong_unsolicited"), 1);
	ck_assert_uint_ge(mesh_stat(d, "core.helo_bad"), 1);
	ck_assert(harness_daemon_running(d));
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

static Suite *
amp_suite(void)
{
	Suite *s = suite_create("adversary_amp");
	TCase *tc = tcase_create("amp");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_amp_ping_answered_no_larger);
	tcase_add_test(tc, test_amp_short_ping_unanswered);
	tcase_add_test(tc, test_amp_ping_burst_per_source);
	tcase_add_test(tc, test_amp_kx_answered_once);
	tcase_add_test(tc, test_amp_kx_stranger_not_repeated);
	tcase_add_test(tc, test_amp_helo_ping_no_larger);
	tcase_add_test(tc, test_amp_helo_one_ping_per_advert);
	tcase_add_test(tc, test_amp_junk_unanswered);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(amp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
