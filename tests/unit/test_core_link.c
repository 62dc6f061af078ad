/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The link key state machine (src/core/link.c) between two struct link
 * instances that exchange real KX messages (link_build_kx, kx_decode,
 * kx_verify, link_kx_fresh, link_on_kx) and ENC frames: first contact,
 * confirmation by frame or by KX, simultaneous initiation, rekeying by
 * either side or both with a grace period for old frames, a restarted
 * peer (LINK_KX_RESET) and recovery, reordered and replayed KX, a first
 * KX delivered after the link is up, clock skew, replayed, tampered and
 * unknown-key frames, and frame counters that are never reused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include <ferry/proto.h>

#include "lib/time.h"
#include "lib/wire.h"
#include "core/identity.h"
#include "core/kx.h"
#include "core/link.h"
#include "unit.h"

#define REAL0     1700000000000000ull /* µs since the epoch */
#define MONO0     5000000000ull
#define SKEW_US   (120 * USEC_PER_SEC)
#define A_INDEX   0x0a0a0a0au
#define B_INDEX   0x0b0b0b0bu
#define FRAME_MAX 256

struct side {
	const char *name;
	struct identity *ident;
	struct link l;
	uint64_t last_ctr; /* counters this side sealed must increase */
	bool sealed_any;
};

static struct identity *id_a, *id_b, *id_c;
static struct side A, B;
static uint64_t now_mono, now_real;

static void
test_tick(uint64_t us)
{
	now_mono += us;
	now_real += us;
}

static void
side_start(struct side *s, const char *name, struct identity *me,
    const struct identity *peer, uint32_t index)
{
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->ident = me;
	ck_assert_int_eq(link_init(&s->l, me, &peer->id, index, now_mono), 0);
	ck_assert(!link_ready(&s->l));
}

static void
test_setup(void)
{
	uint8_t seed[32];

	memset(seed, 0xa1, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &id_a), 0);
	memset(seed, 0xb0, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &id_b), 0);
	memset(seed, 0xc3, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &id_c), 0);
	now_mono = MONO0;
	now_real = REAL0;
	side_start(&A, "A", id_a, id_b, A_INDEX);
	side_start(&B, "B", id_b, id_a, B_INDEX);
}

static void
test_teardown(void)
{
	link_done(&A.l);
	link_done(&B.l);
	identity_free(id_a);
	identity_free(id_b);
	identity_free(id_c);
	id_a = id_b = id_c = NULL;
}

/* The KX from would send now. */
static void
kx_make(struct side *from, uint8_t msg[FERRY_KX_SIZE])
{
	test_tick(1000);
	link_build_kx(&from->l, now_real, msg);
}

/* Hands a KX to `to` as the core does; returns the LINK_KX_* bits or the
 * error of link_kx_fresh / link_on_kx. */
static int
kx_deliver(struct side *to, const uint8_t msg[FERRY_KX_SIZE])
{
	struct kx_msg m;
	int r;

	test_tick(1000);
	ck_assert_int_eq(kx_decode(msg, FERRY_KX_SIZE, &m), 0);
	ck_assert_int_eq(kx_verify(msg, FERRY_KX_SIZE), 0);
	ck_assert_int_eq(peer_id_cmp(&m.receiver, &to->ident->id), 0);
	ck_assert_int_eq(peer_id_cmp(&m.sender, &to->l.peer), 0);
	r = link_kx_fresh(&to->l, &m, now_real, SKEW_US);
	if (r < 0)
		return r;
	return link_on_kx(&to->l, &m, now_mono);
}

static int
kx_send(struct side *from, struct side *to)
{
	uint8_t msg[FERRY_KX_SIZE];

	kx_make(from, msg);
	return kx_deliver(to, msg);
}

/* Seals text from s into frame; returns the frame size. */
static size_t
frame_seal(struct side *s, const char *text, uint8_t frame[FRAME_MAX])
{
	uint64_t ctr = UINT64_MAX;
	int n = link_seal(&s->l, text, strlen(text), frame, &ctr);

	ck_assert_msg(n == (int)(strlen(text) + FERRY_ENC_OVERHEAD),
	    "%s cannot seal: %d", s->name, n);
	ck_assert(wire_get64(frame + 12) == ctr);
	if (s->sealed_any)
		ck_assert_msg(ctr > s->last_ctr, "%s reused counter %llu",
		    s->name, (unsigned long long)ctr);
	s->last_ctr = ctr;
	s->sealed_any = true;
	return (size_t)n;
}

/* Opens a copy of frame at s; on success the plaintext must be text. */
static int
frame_open(struct side *s, const uint8_t *frame, size_t len, const char *text)
{
	uint8_t buf[FRAME_MAX];
	size_t ptlen = 0;
	uint64_t ctr = 0;
	int r;

	ck_assert_uint_le(len, sizeof(buf));
	memcpy(buf, frame, len);
	test_tick(10);
	r = link_open(&s->l, buf, len, now_mono, &ptlen, &ctr);
	if (r >= 0) {
		ck_assert_uint_eq(ptlen, strlen(text));
		ck_assert_mem_eq(buf + FERRY_ENC_HDR, text, ptlen);
		ck_assert(ctr == wire_get64(frame + 12));
	}
	return r;
}

/* One frame each way must get through; returns the receivers' results
 * or'ed (so a caller sees LINK_KX_NEWKEYS). */
static int
frames_flow(void)
{
	uint8_t f[FRAME_MAX];
	size_t n;
	int ra, rb;

	n = frame_seal(&A, "from A", f);
	rb = frame_open(&B, f, n, "from A");
	ck_assert_msg(rb >= 0, "B cannot open A's frame: %d", rb);
	n = frame_seal(&B, "from B", f);
	ra = frame_open(&A, f, n, "from B");
	ck_assert_msg(ra >= 0, "A cannot open B's frame: %d", ra);
	return ra | rb;
}

/* Both sides hold the same current key set, mirrored. */
static void
keys_agree(void)
{
	ck_assert(link_ready(&A.l));
	ck_assert(link_ready(&B.l));
	ck_assert_uint_eq(A.l.cur->tx_id, B.l.cur->rx_id);
	ck_assert_uint_eq(A.l.cur->rx_id, B.l.cur->tx_id);
	ck_assert_uint_ne(A.l.cur->tx_id, A.l.cur->rx_id);
}

/* The first contact of the issue: A sends, B answers, A confirms. */
static void
handshake(void)
{
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_REPLY);
	ck_assert(!link_ready(&B.l));
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	ck_assert(link_ready(&A.l));
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_NEWKEYS);
	keys_agree();
}

START_TEST(test_first_contact)
{
	uint8_t f[FRAME_MAX];
	uint32_t idx = 0;
	size_t n;

	/* Nothing can be sealed before keys exist. */
	ck_assert_int_eq(link_seal(&A.l, "x", 1, f, &(uint64_t){ 0 }), -ENOKEY);
	handshake();
	ck_assert_int_eq(frames_flow(), 0);
	/* Each side addresses frames with the index the other asked for. */
	n = frame_seal(&A, "to B", f);
	ck_assert_int_eq(link_frame_index(f, n, &idx), 0);
	ck_assert_uint_eq(idx, B_INDEX);
	n = frame_seal(&B, "to A", f);
	ck_assert_int_eq(link_frame_index(f, n, &idx), 0);
	ck_assert_uint_eq(idx, A_INDEX);
	/* A's tx key id is B's rx key id and it is in A's frames. */
	ck_assert_uint_eq(wire_get32(f + 8), B.l.cur->tx_id);
	ck_assert_uint_eq(link_tx_frames(&B.l), 2);
	ck_assert(link_key_age(&B.l, now_mono) > 0);
}
END_TEST

START_TEST(test_confirm_by_first_frame)
{
	uint8_t f[FRAME_MAX], late_kx[FERRY_KX_SIZE];
	size_t n;

	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	/* A's confirming KX is delayed; its first frame gets there first. */
	kx_make(&A, late_kx);
	ck_assert(!link_ready(&B.l));
	n = frame_seal(&A, "first", f);
	ck_assert_int_eq(frame_open(&B, f, n, "first"), LINK_KX_NEWKEYS);
	keys_agree();
	/* The late KX changes nothing and asks for no answer. */
	ck_assert_int_eq(kx_deliver(&B, late_kx), 0);
	keys_agree();
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

START_TEST(test_simultaneous)
{
	uint8_t ka[FERRY_KX_SIZE], kb[FERRY_KX_SIZE];

	kx_make(&A, ka);
	kx_make(&B, kb);
	ck_assert_int_eq(kx_deliver(&B, ka), LINK_KX_REPLY);
	ck_assert_int_eq(kx_deliver(&A, kb), LINK_KX_REPLY);
	ck_assert(!link_ready(&A.l));
	ck_assert(!link_ready(&B.l));
	kx_make(&A, ka);
	kx_make(&B, kb);
	ck_assert_int_eq(kx_deliver(&B, ka), LINK_KX_NEWKEYS);
	ck_assert_int_eq(kx_deliver(&A, kb), LINK_KX_NEWKEYS);
	keys_agree();
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

/* Loop 0: A rekeys; 1: B rekeys. */
START_TEST(test_rekey)
{
	struct side *x = _i == 0 ? &A : &B, *y = _i == 0 ? &B : &A;
	uint8_t old1[FRAME_MAX], old2[FRAME_MAX], f[FRAME_MAX];
	uint8_t reply[FERRY_KX_SIZE];
	uint32_t old_tx_id;
	size_t n1, n2, n;

	handshake();
	ck_assert_int_eq(frames_flow(), 0);
	old_tx_id = x->l.cur->tx_id;
	n1 = frame_seal(x, "old one", old1);
	ck_assert_int_eq(link_rotate(&x->l, now_mono), 0);
	/* Until the peer confirms, x keeps sending under the old keys. */
	ck_assert(link_ready(&x->l));
	ck_assert_ptr_nonnull(x->l.next);
	n2 = frame_seal(x, "old two", old2);
	ck_assert_uint_eq(wire_get32(old2 + 8), old_tx_id);
	/* y takes the new key at once: x's KX shows x holds y's key. */
	ck_assert_int_eq(kx_send(x, y), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	kx_make(y, reply);
	/* y's first frame under the new keys confirms them to x. */
	n = frame_seal(y, "new from y", f);
	ck_assert_int_eq(frame_open(x, f, n, "new from y"), LINK_KX_NEWKEYS);
	keys_agree();
	ck_assert_uint_ne(x->l.cur->tx_id, old_tx_id);
	ck_assert_uint_eq(link_tx_frames(&x->l), 0);
	n = frame_seal(x, "new from x", f);
	ck_assert_uint_ne(wire_get32(f + 8), old_tx_id);
	ck_assert_int_eq(frame_open(y, f, n, "new from x"), 0);
	/* y's answer arrives after that and is only a confirmation. */
	ck_assert_int_eq(kx_deliver(x, reply), 0);
	keys_agree();
	/* Frames under the old keys, still in flight, open in the grace
	 * period - and only once. */
	ck_assert_int_eq(frame_open(y, old2, n2, "old two"), 0);
	ck_assert_int_eq(frame_open(y, old1, n1, "old one"), 0);
	ck_assert_int_eq(frame_open(y, old1, n1, "old one"), -EALREADY);
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

START_TEST(test_rekey_confirmed_by_kx)
{
	handshake();
	ck_assert_int_eq(link_rotate(&A.l, now_mono), 0);
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	/* B's answer (before any frame of B) promotes A's next set. */
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS);
	keys_agree();
	ck_assert_ptr_null(A.l.next);
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

START_TEST(test_rekey_both_at_once)
{
	uint8_t ka[FERRY_KX_SIZE], kb[FERRY_KX_SIZE];
	int ra, rb;

	handshake();
	ck_assert_int_eq(link_rotate(&A.l, now_mono), 0);
	ck_assert_int_eq(link_rotate(&B.l, now_mono), 0);
	kx_make(&A, ka);
	kx_make(&B, kb);
	/* Each echoes the other's old key: neither can switch yet. */
	ck_assert_int_eq(kx_deliver(&B, ka), LINK_KX_REPLY);
	ck_assert_int_eq(kx_deliver(&A, kb), LINK_KX_REPLY);
	/* Old keys still carry traffic meanwhile. */
	ck_assert_int_eq(frames_flow(), 0);
	kx_make(&A, ka);
	kx_make(&B, kb);
	ra = kx_deliver(&A, kb);
	rb = kx_deliver(&B, ka);
	ck_assert_int_eq(ra & LINK_KX_NEWKEYS, LINK_KX_NEWKEYS);
	ck_assert_int_eq(rb & LINK_KX_NEWKEYS, LINK_KX_NEWKEYS);
	keys_agree();
	ck_assert_mem_eq(A.l.cur->my_eph, A.l.my_eph, KX_EPH_LEN);
	ck_assert_mem_eq(B.l.cur->my_eph, B.l.my_eph, KX_EPH_LEN);
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

START_TEST(test_grace_period_ends)
{
	uint8_t old[FRAME_MAX], early[FRAME_MAX];
	size_t n, ne;

	handshake();
	n = frame_seal(&A, "late", old);
	ne = frame_seal(&A, "early", early);
	ck_assert_int_eq(link_rotate(&A.l, now_mono), 0);
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS);
	ck_assert_ptr_nonnull(B.l.prev);
	test_tick(USEC_PER_SEC);
	link_expire(&B.l, now_mono);
	ck_assert_int_eq(frame_open(&B, early, ne, "early"), 0);
	test_tick(3600 * USEC_PER_SEC);
	link_expire(&B.l, now_mono);
	ck_assert_ptr_null(B.l.prev);
	ck_assert_int_eq(frame_open(&B, old, n, "late"), -ENOKEY);
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

START_TEST(test_restart)
{
	uint8_t before[FRAME_MAX], f[FRAME_MAX];
	size_t nb, n;
	int r;

	handshake();
	ck_assert_int_eq(frames_flow(), 0);
	nb = frame_seal(&A, "before the crash", before);
	/* A restarts: a fresh link, a new ephemeral key, no peer state. */
	link_done(&A.l);
	side_start(&A, "A", id_a, id_b, A_INDEX + 1);
	test_tick(5 * USEC_PER_SEC);
	r = kx_send(&A, &B);
	ck_assert_int_eq(r, LINK_KX_RESET | LINK_KX_REPLY);
	/* B stops sending under keys A no longer has. */
	ck_assert(!link_ready(&B.l));
	ck_assert_int_eq(link_seal(&B.l, "x", 1, f, &(uint64_t){ 0 }), -ENOKEY);
	/* A frame of the old A still in flight opens in the grace time. */
	ck_assert_int_eq(frame_open(&B, before, nb, "before the crash"), 0);
	/* Recovery: B answers, A has keys, A's first frame confirms them. */
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	n = frame_seal(&A, "I am back", f);
	ck_assert_int_eq(frame_open(&B, f, n, "I am back"), LINK_KX_NEWKEYS);
	keys_agree();
	ck_assert_int_eq(frames_flow(), 0);
	/* Frames now go to A's new index. */
	n = frame_seal(&B, "to the new A", f);
	ck_assert_uint_eq(wire_get32(f + 4), A_INDEX + 1);
	ck_assert_int_eq(kx_send(&A, &B), 0);
	keys_agree();
}
END_TEST

START_TEST(test_restart_answer_lost)
{
	handshake();
	link_done(&B.l);
	side_start(&B, "B", id_b, id_a, B_INDEX);
	test_tick(USEC_PER_SEC);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_RESET | LINK_KX_REPLY);
	/* A's answer is lost; B tries again, A answers again. */
	test_tick(USEC_PER_SEC);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_REPLY);
	ck_assert(!link_ready(&A.l));
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS);
	keys_agree();
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

/* The side that kept its state starts the new session from a new
 * ephemeral key: one made long before would have the new keys replaced
 * by a rekey during the session's first traffic (REKEY_INTERVAL counts
 * from the key's making), and the new keys owe nothing to the old. */
START_TEST(test_restart_fresh_key)
{
	uint8_t old_eph[KX_EPH_LEN];

	handshake();
	test_tick(110 * USEC_PER_SEC);
	memcpy(old_eph, A.l.my_eph, KX_EPH_LEN);
	link_done(&B.l);
	side_start(&B, "B", id_b, id_a, B_INDEX + 1);
	test_tick(USEC_PER_SEC);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_RESET | LINK_KX_REPLY);
	ck_assert(memcmp(A.l.my_eph, old_eph, KX_EPH_LEN) != 0);
	ck_assert_uint_eq(A.l.my_eph_us, now_mono);
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS);
	keys_agree();
	ck_assert_mem_eq(A.l.cur->my_eph, A.l.my_eph, KX_EPH_LEN);
	ck_assert_uint_lt(link_key_age(&A.l, now_mono), USEC_PER_SEC);
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

/* A restarted B says its first KX twice (the second before A's answer
 * reached it), and the copy arrives after B's first frame under the new
 * keys: its zero echo is no second restart. Taken for one, it threw the
 * new keys away, with what A had half-received from B and the fragments
 * A had on the way, and every frame either side sent in between was
 * lost. */
START_TEST(test_restart_late_copy)
{
	uint8_t k1[FERRY_KX_SIZE], k1_again[FERRY_KX_SIZE], f[FRAME_MAX];
	size_t n;

	handshake();
	link_done(&B.l);
	side_start(&B, "B", id_b, id_a, B_INDEX + 1);
	test_tick(USEC_PER_SEC);
	kx_make(&B, k1);
	test_tick(USEC_PER_SEC);
	kx_make(&B, k1_again);
	ck_assert_int_eq(kx_deliver(&A, k1), LINK_KX_RESET | LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	n = frame_seal(&B, "first after the restart", f);
	ck_assert_int_eq(frame_open(&A, f, n, "first after the restart"),
	    LINK_KX_NEWKEYS);
	keys_agree();
	/* The copy: answered (it does not echo A's key), nothing reset. */
	ck_assert_int_eq(kx_deliver(&A, k1_again), LINK_KX_REPLY);
	ck_assert(link_ready(&A.l));
	keys_agree();
	ck_assert_int_eq(frames_flow(), 0);
	ck_assert_int_eq(kx_send(&A, &B), 0);
	keys_agree();
}
END_TEST

START_TEST(test_reordered_kx)
{
	uint8_t k1[FERRY_KX_SIZE], k2[FERRY_KX_SIZE], k3[FERRY_KX_SIZE];

	/* A's first KX and its retransmission swap places. */
	kx_make(&A, k1);
	kx_make(&A, k2);
	ck_assert_int_eq(kx_deliver(&B, k2), LINK_KX_REPLY);
	ck_assert_int_eq(kx_deliver(&B, k1), -EALREADY);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_NEWKEYS);
	keys_agree();
	/* Two rekeys of A whose KX arrive newest first: the older one is
	 * refused and the link settles on the newest key. */
	ck_assert_int_eq(link_rotate(&A.l, now_mono), 0);
	kx_make(&A, k2);
	ck_assert_int_eq(link_rotate(&A.l, now_mono), 0);
	kx_make(&A, k3);
	ck_assert_int_eq(kx_deliver(&B, k3), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	ck_assert_int_eq(kx_deliver(&B, k2), -EALREADY);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS);
	keys_agree();
	ck_assert_mem_eq(B.l.cur->peer_eph, A.l.my_eph, KX_EPH_LEN);
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

START_TEST(test_replayed_kx)
{
	uint8_t k1[FERRY_KX_SIZE], k2[FERRY_KX_SIZE];

	kx_make(&A, k1);
	ck_assert_int_eq(kx_deliver(&B, k1), LINK_KX_REPLY);
	ck_assert_int_eq(kx_deliver(&B, k1), -EALREADY);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	kx_make(&A, k2);
	ck_assert_int_eq(kx_deliver(&B, k2), LINK_KX_NEWKEYS);
	keys_agree();
	/* Replays later, of either KX, change nothing. */
	test_tick(10 * USEC_PER_SEC);
	ck_assert_int_eq(kx_deliver(&B, k2), -EALREADY);
	ck_assert_int_eq(kx_deliver(&B, k1), -EALREADY);
	keys_agree();
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

/* Mail duplicates and delays: a retransmission of A's first KX, sent
 * before A heard from B and so still echoing nothing, arrives after the
 * link is up. Its zero echo must not pass for a restart of A, which
 * would throw away the keys both sides just agreed on. */
START_TEST(test_late_first_kx_no_reset)
{
	uint8_t k1[FERRY_KX_SIZE], k1_again[FERRY_KX_SIZE];

	kx_make(&A, k1);
	kx_make(&A, k1_again);
	ck_assert_int_eq(kx_deliver(&B, k1), LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_NEWKEYS);
	keys_agree();
	test_tick(30 * USEC_PER_SEC);
	ck_assert_int_eq(kx_deliver(&B, k1_again), -EALREADY);
	keys_agree();
	ck_assert_int_eq(frames_flow(), 0);
}
END_TEST

START_TEST(test_clock_skew)
{
	uint8_t msg[FERRY_KX_SIZE];
	struct kx_msg m;

	/* From a clock too far ahead of B's, then too far behind. */
	link_build_kx(&A.l, now_real + SKEW_US + 1, msg);
	ck_assert_int_eq(kx_decode(msg, sizeof(msg), &m), 0);
	ck_assert_int_eq(link_kx_fresh(&B.l, &m, now_real, SKEW_US), -ERANGE);
	link_done(&A.l);
	side_start(&A, "A", id_a, id_b, A_INDEX);
	link_build_kx(&A.l, now_real - SKEW_US - 1, msg);
	ck_assert_int_eq(kx_decode(msg, sizeof(msg), &m), 0);
	ck_assert_int_eq(link_kx_fresh(&B.l, &m, now_real, SKEW_US), -ERANGE);
	/* Just inside, on both sides. */
	link_done(&A.l);
	side_start(&A, "A", id_a, id_b, A_INDEX);
	link_build_kx(&A.l, now_real - SKEW_US, msg);
	ck_assert_int_eq(kx_decode(msg, sizeof(msg), &m), 0);
	ck_assert_int_eq(link_kx_fresh(&B.l, &m, now_real, SKEW_US), 0);
	link_build_kx(&A.l, now_real + SKEW_US, msg);
	ck_assert_int_eq(kx_decode(msg, sizeof(msg), &m), 0);
	ck_assert_int_eq(link_kx_fresh(&B.l, &m, now_real, SKEW_US), 0);
	ck_assert_int_eq(link_on_kx(&B.l, &m, now_mono), LINK_KX_REPLY);
	/* A's next KX is stamped after the last one even though A's clock
	 * says otherwise, so B sees it as too far ahead until B's clock
	 * catches up; then it is fresh. */
	link_build_kx(&A.l, now_real, msg);
	ck_assert_int_eq(kx_decode(msg, sizeof(msg), &m), 0);
	ck_assert(m.timestamp_us == now_real + SKEW_US + 1);
	ck_assert_int_eq(link_kx_fresh(&B.l, &m, now_real, SKEW_US), -ERANGE);
	ck_assert_int_eq(link_kx_fresh(&B.l, &m, now_real + 1, SKEW_US), 0);
}
END_TEST

START_TEST(test_replayed_frames)
{
	uint8_t f[8][FRAME_MAX];
	size_t n[8];
	static const int order[8] = { 5, 2, 7, 0, 1, 6, 3, 4 };
	char text[16];

	handshake();
	for (int i = 0; i < 8; i++) {
		(void)snprintf(text, sizeof(text), "frame %d", i);
		n[i] = frame_seal(&A, text, f[i]);
	}
	/* Out of order within the window: all accepted, once. */
	for (int k = 0; k < 8; k++) {
		(void)snprintf(text, sizeof(text), "frame %d", order[k]);
		ck_assert_int_eq(frame_open(&B, f[order[k]], n[order[k]], text),
		    0);
	}
	for (int i = 0; i < 8; i++) {
		(void)snprintf(text, sizeof(text), "frame %d", i);
		ck_assert_int_eq(frame_open(&B, f[i], n[i], text), -EALREADY);
	}
}
END_TEST

START_TEST(test_tampered_frames)
{
	uint8_t f[FRAME_MAX], bad[FRAME_MAX];
	size_t n;

	handshake();
	n = frame_seal(&A, "tamper with me", f);
	for (size_t i = 0; i < n; i++) {
		for (int bit = 0; bit < 8; bit++) {
			int r, want;

			memcpy(bad, f, n);
			bad[i] ^= (uint8_t)(1u << bit);
			r = frame_open(&B, bad, n, "");
			want = i >= 8 && i < 12 ? -ENOKEY : -EBADMSG;
			ck_assert_msg(r == want,
			    "flip of byte %zu bit %d: %d, not %d", i, bit, r,
			    want);
		}
	}
	/* Truncated and extended frames, with and without the size field
	 * following. */
	ck_assert_int_eq(frame_open(&B, f, n - 1, ""), -EBADMSG);
	memcpy(bad, f, n);
	wire_put16(bad, (uint16_t)(n - 1));
	ck_assert_int_eq(frame_open(&B, bad, n - 1, ""), -EBADMSG);
	memcpy(bad, f, n);
	bad[n] = 0;
	ck_assert_int_eq(frame_open(&B, bad, n + 1, ""), -EBADMSG);
	wire_put16(bad, (uint16_t)(n + 1));
	ck_assert_int_eq(frame_open(&B, bad, n + 1, ""), -EBADMSG);
	/* No forgery moved the replay window: the real frame opens, once. */
	ck_assert_int_eq(frame_open(&B, f, n, "tamper with me"), 0);
	ck_assert_int_eq(frame_open(&B, f, n, "tamper with me"), -EALREADY);
}
END_TEST

START_TEST(test_unknown_key)
{
	struct side C;
	uint8_t f[FRAME_MAX], msg[FERRY_KX_SIZE];
	struct kx_msg m;
	size_t n;

	handshake();
	/* A link of C with B: its frames carry keys B's link with A lacks. */
	side_start(&C, "C", id_c, id_b, 0x0c0c0c0c);
	link_done(&B.l);
	side_start(&B, "B", id_b, id_c, B_INDEX);
	link_build_kx(&C.l, now_real, msg);
	ck_assert_int_eq(kx_decode(msg, sizeof(msg), &m), 0);
	ck_assert_int_eq(link_on_kx(&B.l, &m, now_mono), LINK_KX_REPLY);
	link_build_kx(&B.l, now_real + 1, msg);
	ck_assert_int_eq(kx_decode(msg, sizeof(msg), &m), 0);
	ck_assert_int_eq(link_on_kx(&C.l, &m, now_mono),
	    LINK_KX_NEWKEYS | LINK_KX_REPLY);
	n = frame_seal(&C, "from C", f);
	/* A never derived C's keys. */
	ck_assert_int_eq(frame_open(&A, f, n, "from C"), -ENOKEY);
	ck_assert_int_eq(frame_open(&B, f, n, "from C"), LINK_KX_NEWKEYS);
	/* A frame before any keys at all. */
	link_done(&A.l);
	side_start(&A, "A", id_a, id_b, A_INDEX);
	ck_assert_int_eq(frame_open(&A, f, n, ""), -ENOKEY);
	link_done(&C.l);
}
END_TEST

START_TEST(test_frame_bounds)
{
	static uint8_t big[FERRY_MSG_SIZE_MAX + 64], pt[FERRY_MSG_SIZE_MAX];
	uint8_t f[FRAME_MAX];
	uint64_t ctr = 0, before;
	uint32_t idx;
	size_t n;

	handshake();
	before = A.l.tx_counter;
	ck_assert_int_eq(link_seal(&A.l, pt,
	                     FERRY_MSG_SIZE_MAX - FERRY_ENC_OVERHEAD + 1, big,
	                     &ctr),
	    -EMSGSIZE);
	ck_assert(A.l.tx_counter == before); /* no counter spent */
	ck_assert_int_eq(link_seal(&A.l, pt,
	                     FERRY_MSG_SIZE_MAX - FERRY_ENC_OVERHEAD, big,
	                     &ctr),
	    FERRY_MSG_SIZE_MAX);
	/* The largest frame opens. */
	ck_assert_int_eq(link_open(&B.l, big, FERRY_MSG_SIZE_MAX, now_mono, &n,
	                     &ctr),
	    0);
	ck_assert_uint_eq(n, FERRY_MSG_SIZE_MAX - FERRY_ENC_OVERHEAD);
	/* An empty frame is a valid frame. */
	ck_assert_int_eq(link_seal(&A.l, "", 0, f, &ctr), FERRY_ENC_OVERHEAD);
	ck_assert_int_eq(link_open(&B.l, f, FERRY_ENC_OVERHEAD, now_mono, &n,
	                     &ctr),
	    0);
	ck_assert_uint_eq(n, 0);
	/* link_frame_index bounds. */
	n = frame_seal(&A, "index", f);
	for (size_t len = 0; len < FERRY_ENC_OVERHEAD; len++) {
		wire_put16(f, (uint16_t)len);
		ck_assert_int_eq(link_frame_index(f, len, &idx), -EBADMSG);
	}
	wire_put16(f, (uint16_t)n);
	ck_assert_int_eq(link_frame_index(f, n - 1, &idx), -EBADMSG);
	wire_put16(f + 2, FERRY_P2P_KX);
	ck_assert_int_eq(link_frame_index(f, n, &idx), -EBADMSG);
	wire_put16(f + 2, FERRY_P2P_ENC);
	ck_assert_int_eq(link_frame_index(f, n, &idx), 0);
	ck_assert_uint_eq(idx, B_INDEX);
}
END_TEST

/* Every frame A ever seals, through rekeys of both sides and a restart of
 * B, carries a counter never used before (frame_seal checks). */
START_TEST(test_counters_never_reused)
{
	uint8_t f[FRAME_MAX];
	uint64_t first_ctr;

	handshake();
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 20; i++)
			(void)frame_seal(&A, "count", f);
		ck_assert_int_eq(link_rotate(round % 2 ? &B.l : &A.l, now_mono),
		    0);
		if (round % 2) {
			ck_assert_int_ge(kx_send(&B, &A), 0);
			ck_assert_int_ge(kx_send(&A, &B), 0);
		} else {
			ck_assert_int_ge(kx_send(&A, &B), 0);
			ck_assert_int_ge(kx_send(&B, &A), 0);
		}
		keys_agree();
		ck_assert_int_eq(frames_flow() & ~LINK_KX_NEWKEYS, 0);
	}
	first_ctr = A.last_ctr;
	/* B restarts: A resets and derives new keys, yet counts on. */
	link_done(&B.l);
	side_start(&B, "B", id_b, id_a, B_INDEX);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_RESET | LINK_KX_REPLY);
	ck_assert_int_eq(link_seal(&A.l, "x", 1, f, &(uint64_t){ 0 }), -ENOKEY);
	ck_assert_int_ge(kx_send(&A, &B), 0);
	ck_assert_int_ge(kx_send(&B, &A), 0);
	keys_agree();
	(void)frame_seal(&A, "after", f);
	ck_assert(A.last_ctr == first_ctr + 1);
	ck_assert_int_ge(frame_open(&B, f, FERRY_ENC_OVERHEAD + 5, "after"), 0);
}
END_TEST

START_TEST(test_low_order_ephemeral)
{
	uint8_t msg[FERRY_KX_SIZE];
	struct kx_msg m;
	struct identity *ia = id_a;

	/* A validly signed KX of A whose ephemeral key is all zeros. */
	memset(&m, 0, sizeof(m));
	m.receiver = id_b->id;
	m.timestamp_us = now_real;
	m.sender_index = A_INDEX;
	kx_build(msg, ia, &m);
	ck_assert_int_eq(kx_verify(msg, sizeof(msg)), 0);
	ck_assert_int_eq(kx_decode(msg, sizeof(msg), &m), 0);
	ck_assert_int_eq(link_on_kx(&B.l, &m, now_mono), -EBADMSG);
	ck_assert(!link_ready(&B.l));
	ck_assert_ptr_null(B.l.next);
	/* A genuine KX later still works. */
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&B, &A), LINK_KX_NEWKEYS | LINK_KX_REPLY);
	ck_assert_int_eq(kx_send(&A, &B), LINK_KX_NEWKEYS);
	keys_agree();
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_link");
	TCase *tc = tcase_create("handshake");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_first_contact);
	tcase_add_test(tc, test_confirm_by_first_frame);
	tcase_add_test(tc, test_simultaneous);
	tcase_add_test(tc, test_restart);
	tcase_add_test(tc, test_restart_answer_lost);
	tcase_add_test(tc, test_restart_fresh_key);
	tcase_add_test(tc, test_restart_late_copy);
	tcase_add_test(tc, test_reordered_kx);
	tcase_add_test(tc, test_replayed_kx);
	tcase_add_test(tc, test_late_first_kx_no_reset);
	tcase_add_test(tc, test_clock_skew);
	tcase_add_test(tc, test_low_order_ephemeral);
	suite_add_tcase(s, tc);
	tc = tcase_create("rekey");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_loop_test(tc, test_rekey, 0, 2);
	tcase_add_test(tc, test_rekey_confirmed_by_kx);
	tcase_add_test(tc, test_rekey_both_at_once);
	tcase_add_test(tc, test_grace_period_ends);
	tcase_add_test(tc, test_counters_never_reused);
	suite_add_tcase(s, tc);
	tc = tcase_create("frames");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_replayed_frames);
	tcase_add_test(tc, test_tampered_frames);
	tcase_add_test(tc, test_unknown_key);
	tcase_add_test(tc, test_frame_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
