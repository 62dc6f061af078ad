/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Encrypted frames from a peer that holds a real link (issue 6,
 * "Adversarial peers"): the hostile peer completes the key exchange with
 * the core's own code, then sends its ENC frames reordered, truncated,
 * bit-flipped, forged with a far counter, or late by more than the replay
 * window. Reordering within the window is accepted; everything else is
 * refused, counted (core.enc_bad, enc_unknown, enc_replay, units_bad)
 * and never delivered. The window is 8128 frames (core/replay.h, RFC 6479
 * with 128 words of 64 bits, as WireGuard): a frame 8128 behind the
 * newest is still taken, 8129 behind is not. Rekeying is tested at the
 * smallest settings ferryd accepts (REKEY_MESSAGES = 16, REKEY_INTERVAL =
 * 1 s) between two daemons: many key changes, no frame lost to them.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <check.h>

#include "lib/wire.h"
#include "core/identity.h"
#include "core/replay.h"
#include "adv.h"
#include "harness.h"
#include "mesh.h"
#include "wirelink.h"
#include "wirepeer.h"

#define LINK_MS   10000
#define FRAME_MAX 2048
#define PAD_MAX   64 /* an ENC frame holding one empty PAD message */

/* A daemon, a client of it listening for MESH_APP_TYPE, and a hostile
 * peer linked to it. */
struct fix {
	struct harness *h;
	struct harness_daemon *d;
	struct ferry_client *lis;
	struct wirepeer *w;
	struct wirelink *l;
};

static void
fix_setup(struct fix *f, const char *name, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(harness_new(name, &f->h), 0);
	f->d = adv_daemon(f->h, NULL);
	f->lis = mesh_listener(f->d);
	ck_assert_int_eq(wirepeer_new(seed, &f->w), 0);
	ck_assert_int_eq(wirelink_new(f->w, &f->d->id, &f->d->addr, &f->l), 0);
	if (wirelink_handshake(f->l, LINK_MS) != 0) {
		harness_dump_logs(f->h);
		ck_abort_msg("no link between the test peer and the daemon");
	}
}

static void
fix_done(struct fix *f)
{
	ferry_client_close(f->lis);
	wirelink_free(f->l);
	wirepeer_free(f->w);
	harness_free(f->h);
}

/* Seals one application message holding text; returns the frame size. */
static size_t
seal_text(struct fix *f, const char *text, uint8_t *out, uint64_t *ret_ctr)
{
	uint8_t inner[256];
	int n, r;

	n = wirelink_msg(inner, sizeof(inner), MESH_APP_TYPE, text,
	    strlen(text));
	ck_assert_int_gt(n, 0);
	r = wirelink_seal(f->l, inner, (size_t)n, out, FRAME_MAX, ret_ctr);
	ck_assert_int_gt(r, 0);
	return (size_t)r;
}

/* Seals a frame holding nothing but padding (elicits no answer) into
 * PAD_MAX bytes at out. */
static size_t
seal_pad(struct fix *f, uint8_t *out)
{
	uint8_t inner[8];
	int n, r;

	n = wirelink_msg(inner, sizeof(inner), FERRY_MSG_PAD, NULL, 0);
	r = wirelink_seal(f->l, inner, (size_t)n, out, PAD_MAX, NULL);
	ck_assert_int_gt(r, 0);
	return (size_t)r;
}

/* Receives at the listener until quiet_ms pass without a message; each
 * "<prefix><index>" message sets seen[index] (counting repeats). */
static unsigned
receive_indexed(struct fix *f, const char *prefix, unsigned *seen, unsigned n,
    int quiet_ms)
{
	struct ferry_message m;
	size_t plen = strlen(prefix);
	unsigned got = 0;

	while (ferry_receive(f->lis, &m, quiet_ms) == 0) {
		char text[64];
		unsigned i;

		ck_assert_uint_lt(m.len, sizeof(text));
		memcpy(text, m.data, m.len);
		text[m.len] = '\0';
		ck_assert_mem_eq(&m.peer, &f->w->ident->id, sizeof(m.peer));
		ck_assert_int_eq(strncmp(text, prefix, plen), 0);
		i = (unsigned)strtoul(text + plen, NULL, 10);
		ck_assert_uint_lt(i, n);
		seen[i]++;
		got++;
	}
	return got;
}

/* Frames reordered within the window are all delivered, once; sent
 * again, every one is refused as a replay. */
START_TEST(test_enc_reorder_within_window)
{
	enum { N = 200 };
	static uint8_t frames[N][FRAME_MAX];
	static size_t len[N];
	unsigned seen[N] = { 0 }, order[N];
	uint64_t replay0;
	struct fix f;

	fix_setup(&f, "enc-reorder", 301);
	for (unsigned i = 0; i < N; i++) {
		char text[32];

		(void)snprintf(text, sizeof(text), "r%u", i);
		len[i] = seal_text(&f, text, frames[i], NULL);
		order[i] = i;
	}
	/* Newest first, then a shuffle of the rest: every frame but the
	 * first arrives after a later one. */
	for (unsigned i = 0; i < N / 2; i++) {
		unsigned t = order[i];

		order[i] = order[N - 1 - i];
		order[N - 1 - i] = t;
	}
	for (unsigned i = N - 1; i > 1; i--) {
		unsigned j = 1 + randombytes_uniform(i);
		unsigned t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(wirelink_send_raw(f.l, frames[order[i]],
		                     len[order[i]]),
		    0);
	ck_assert_uint_eq(receive_indexed(&f, "r", seen, N, 1000), N);
	for (unsigned i = 0; i < N; i++)
		ck_assert_msg(seen[i] == 1, "frame %u delivered %u times", i,
		    seen[i]);
	ck_assert_uint_eq(mesh_stat(f.d, "core.enc_bad"), 0);
	replay0 = mesh_stat(f.d, "core.enc_replay");
	ck_assert_uint_eq(replay0, 0);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(wirelink_send_raw(f.l, frames[i], len[i]), 0);
	ck_assert(mesh_wait_stat(f.d, "core.enc_replay", N, 5000));
	ck_assert_uint_eq(receive_indexed(&f, "r", seen, N, 300), 0);
	fix_done(&f);
}
END_TEST

/* Sends n frames of PAD_MAX-byte slots, waiting every 512 until the
 * daemon has read them, so that its socket buffer never overflows. */
static void
send_and_settle(struct fix *f, uint8_t (*frames)[PAD_MAX], const size_t *len,
    unsigned n)
{
	uint64_t base = mesh_stat(f->d, "core.enc_in");

	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(wirelink_send_raw(f->l, frames[i], len[i]), 0);
		if (i % 512 == 511 || i + 1 == n)
			ck_assert(mesh_wait_stat(f->d, "core.enc_in",
			    base + i + 1, 5000));
	}
}

/*
 * The window's edge: with frame T the newest seen, frame T - 8128 is
 * still accepted and frame T - 8129 is refused as too old, without
 * being decrypted into a delivery.
 */
START_TEST(test_enc_replay_window_edge)
{
	enum { PADS = REPLAY_WINDOW };
	static uint8_t pads[PADS][PAD_MAX];
	static size_t plen[PADS];
	uint8_t e0[FRAME_MAX], e1[FRAME_MAX];
	unsigned seen[2] = { 0, 0 };
	uint64_t ctr0, ctr1, replay0;
	size_t len0, len1;
	struct fix f;

	ck_assert_int_eq(REPLAY_WINDOW, 8128);
	fix_setup(&f, "enc-window", 302);
	len0 = seal_text(&f, "e0", e0, &ctr0);
	len1 = seal_text(&f, "e1", e1, &ctr1);
	for (unsigned i = 0; i < PADS; i++)
		plen[i] = seal_pad(&f, pads[i]);
	ck_assert_uint_eq(ctr1, ctr0 + 1);
	/* The newest frame is then ctr1 + REPLAY_WINDOW: e1 is exactly
	 * REPLAY_WINDOW behind it and e0 one more. */
	send_and_settle(&f, pads, plen, PADS);
	replay0 = mesh_stat(f.d, "core.enc_replay");
	ck_assert_int_eq(wirelink_send_raw(f.l, e1, len1), 0);
	ck_assert_uint_eq(receive_indexed(&f, "e", seen, 2, 1000), 1);
	ck_assert_uint_eq(seen[1], 1);
	ck_assert_int_eq(wirelink_send_raw(f.l, e0, len0), 0);
	ck_assert(mesh_wait_stat(f.d, "core.enc_replay", replay0 + 1, 5000));
	ck_assert_uint_eq(receive_indexed(&f, "e", seen, 2, 500), 0);
	ck_assert_uint_eq(seen[0], 0);
	ck_assert_uint_eq(mesh_stat(f.d, "core.enc_bad"), 0);
	fix_done(&f);
}
END_TEST

/* Sum of the counters a refused frame may land in. */
static uint64_t
refusals(struct harness_daemon *d)
{
	return mesh_stat(d, "core.enc_bad") + mesh_stat(d, "core.enc_unknown") +
	    mesh_stat(d, "core.enc_replay") + mesh_stat(d, "core.units_bad");
}

static void
wait_refusals(struct fix *f, uint64_t want)
{
	uint64_t end = harness_now_ms() + 5000;

	while (refusals(f->d) < want) {
		ck_assert_msg(harness_now_ms() < end,
		    "%llu of %llu forged frames counted",
		    (unsigned long long)refusals(f->d),
		    (unsigned long long)want);
		harness_sleep_ms(50);
	}
}

/*
 * Every truncation and every single-byte corruption of a genuine frame
 * is refused and counted, and none of them uses up the genuine frame's
 * counter: sent afterwards, it is delivered once. A forgery with a far
 * counter does not move the window either.
 */
START_TEST(test_enc_truncated_and_flipped)
{
	uint8_t frame[FRAME_MAX], bad[FRAME_MAX];
	unsigned seen[2] = { 0, 0 }, sent = 0;
	uint64_t base, ctr;
	size_t len;
	struct fix f;

	fix_setup(&f, "enc-forge", 303);
	len = seal_text(&f, "g1", frame, &ctr);
	base = refusals(f.d);
	/* Cut short: the size field still says the whole frame, says the
	 * cut length, or the frame ends inside its header or tag. */
	for (size_t cut = 1; cut < len; cut++) {
		memcpy(bad, frame, len);
		ck_assert_int_eq(wirelink_send_raw(f.l, bad, len - cut), 0);
		wire_put16(bad, (uint16_t)(len - cut));
		ck_assert_int_eq(wirelink_send_raw(f.l, bad, len - cut), 0);
		sent += 2;
	}
	/* Each byte flipped in turn: size, type, index, key id, counter,
	 * ciphertext and tag. */
	for (size_t i = 0; i < len; i++) {
		memcpy(bad, frame, len);
		bad[i] ^= (uint8_t)(1u << (i % 8));
		ck_assert_int_eq(wirelink_send_raw(f.l, bad, len), 0);
		sent++;
	}
	/* Too long: the frame and garbage after it in one datagram. */
	memcpy(bad, frame, len);
	memset(bad + len, 0xee, 40);
	wire_put16(bad, (uint16_t)(len + 40));
	ck_assert_int_eq(wirelink_send_raw(f.l, bad, len + 40), 0);
	sent++;
	/* The counter far ahead: if an unauthenticated frame moved the
	 * window, the genuine one would then be too old. */
	memcpy(bad, frame, len);
	wire_put64(bad + 12, ctr + 1000000);
	ck_assert_int_eq(wirelink_send_raw(f.l, bad, len), 0);
	sent++;
	wait_refusals(&f, base + sent);
	ck_assert_uint_eq(receive_indexed(&f, "g", seen, 2, 500), 0);
	ck_assert(harness_daemon_running(f.d));
	/* The genuine frame, last, is delivered. */
	ck_assert_int_eq(wirelink_send_raw(f.l, frame, len), 0);
	ck_assert_uint_eq(receive_indexed(&f, "g", seen, 2, 1000), 1);
	ck_assert_uint_eq(seen[1], 1);
	ck_assert_uint_ge(mesh_stat(f.d, "core.enc_bad"), len / 2);
	fix_done(&f);
}
END_TEST

/* Two daemons exchange numbered messages both ways with the given
 * [core] rekey settings; every message arrives. Returns the key changes
 * both counted. */
static uint64_t
rekey_exchange(const char *name, const char *cfg, unsigned n, unsigned ms)
{
	struct harness_daemon *d[2];
	struct ferry_client *lis[2], *snd[2];
	struct harness *h;
	unsigned *seen[2];
	uint64_t end, keys, refused = 0, dups = 0;
	unsigned got[2] = { 0, 0 };

	ck_assert_int_eq(harness_new(name, &h), 0);
	mesh_start(h, d, 2, "udp", cfg);
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
	for (int i = 0; i < 2; i++) {
		lis[i] = mesh_listener(d[i]);
		ck_assert_int_eq(harness_daemon_client(d[i], &snd[i]), 0);
		seen[i] = calloc(n, sizeof(unsigned));
		ck_assert_ptr_nonnull(seen[i]);
	}
	/* Paced over `ms`, so that many rekeys fall between messages. */
	for (unsigned k = 0; k < n; k++) {
		uint8_t body[16];

		wire_put32(body, k);
		memset(body + 4, 0x5a, sizeof(body) - 4);
		for (int i = 0; i < 2; i++)
			ck_assert_int_eq(ferry_send(snd[i], &d[1 - i]->id,
			                     MESH_APP_TYPE, body, sizeof(body)),
			    0);
		if (k % 10 == 9) {
			ck_assert_int_eq(ferry_flush(snd[0]), 0);
			ck_assert_int_eq(ferry_flush(snd[1]), 0);
			harness_sleep_ms(ms * 10 / n);
		}
		for (int i = 0; i < 2; i++) {
			struct ferry_message m;

			while (ferry_receive(lis[i], &m, 0) == 0) {
				ck_assert_uint_eq(m.len, 16);
				seen[i][wire_get32(m.data) % n]++;
				got[i]++;
			}
		}
	}
	end = harness_now_ms() + 10000;
	for (int i = 0; i < 2; i++) {
		struct ferry_message m;

		while (got[i] < n && harness_now_ms() < end &&
		    ferry_receive(lis[i], &m, 1000) == 0) {
			ck_assert_uint_eq(m.len, 16);
			seen[i][wire_get32(m.data) % n]++;
			got[i]++;
		}
	}
	for (int i = 0; i < 2; i++) {
		for (unsigned k = 0; k < n; k++) {
			ck_assert_msg(seen[i][k] >= 1,
			    "message %u to d%d was lost", k, i);
			dups += seen[i][k] - 1;
		}
		refused += mesh_stat(d[i], "core.enc_unknown") +
		    mesh_stat(d[i], "core.enc_bad");
	}
	/* Frames that straddle a key change are opened with the old or the
	 * new keys, never refused. (A frame the sender wrongly thinks lost
	 * is sent again and its messages may then come twice: that is the
	 * timers' business, not rekeying's, and is only reported.) */
	ck_assert_msg(refused == 0, "%llu frames refused across rekeys",
	    (unsigned long long)refused);
	keys = mesh_stat(d[0], "core.key_changes") +
	    mesh_stat(d[1], "core.key_changes");
	fprintf(stderr,
	    "%s: %u messages each way, %llu key changes, %llu duplicates\n",
	    name, n, (unsigned long long)keys, (unsigned long long)dups);
	for (int i = 0; i < 2; i++) {
		ferry_client_close(lis[i]);
		ferry_client_close(snd[i]);
		free(seen[i]);
	}
	harness_free(h);
	return keys;
}

/*
 * REKEY_MESSAGES at its minimum, 16 frames (REKEY_INTERVAL far away):
 * the link keeps rekeying under traffic. The count is checked on the
 * core's 250 ms maintenance tick, so a busy link changes keys about four
 * times a second, whatever the frame rate.
 */
START_TEST(test_rekey_by_messages)
{
	uint64_t keys = rekey_exchange("rekey-msgs",
	    "[core]\nREKEY_MESSAGES = 16\nREKEY_INTERVAL = 1 h\n", 2000, 4000);

	/* Both sides, about 4 s of traffic: at least 8 new key sets. */
	ck_assert_msg(keys >= 8 * 2, "only %llu key changes",
	    (unsigned long long)keys);
}
END_TEST

/* REKEY_INTERVAL at its minimum, 1 s (REKEY_MESSAGES far away). */
START_TEST(test_rekey_by_time)
{
	uint64_t keys = rekey_exchange("rekey-time",
	    "[core]\nREKEY_INTERVAL = 1 s\n", 600, 6000);

	/* Each side rekeys every second or so: 6 s of traffic. */
	ck_assert_msg(keys >= 2 * 4, "only %llu key changes",
	    (unsigned long long)keys);
}
END_TEST

static Suite *
enc_suite(void)
{
	Suite *s = suite_create("adversary_enc");
	TCase *tc = tcase_create("enc");

	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_enc_reorder_within_window);
	tcase_add_test(tc, test_enc_replay_window_edge);
	tcase_add_test(tc, test_enc_truncated_and_flipped);
	tcase_add_test(tc, test_rekey_by_messages);
	tcase_add_test(tc, test_rekey_by_time);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(enc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
