/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for encrypted frames (src/core/link.c): the input is a
 * unit of {u16 size, u16 type} messages; each ENC frame goes through
 * link_frame_index and link_open, in place, on peer B's link with A.
 *
 * B's link is rebuilt for every input with fixed keys, so that seeds can
 * hold frames that authenticate: randomness is a fixed stream, and B
 * takes A's KX (decoded, no signatures needed) for three key sets -
 *   prev  ChaCha20-Poly1305, B's ephemeral b0 with A's a0
 *   cur   AES-256-GCM, b0 with A's a1 (A rekeyed)
 *   next  AES-256-GCM, b1 with a1 (B rekeyed, not yet confirmed)
 * The seeds in tests/fuzz/corpus/enc (sequences of real frames under each
 * set: reordered, replayed, promoting next) were made by A's side of the
 * same construction. Two pseudo-messages steer the run:
 *   FUZZ_T_LATER  the clock moves an hour on and link_expire runs;
 *   FUZZ_T_SEAL   u8 set (0 prev, 1 cur, 2 next), u64 counter, plaintext:
 *                 A seals the plaintext under that set with that counter
 *                 and B opens the frame. An authentic frame never fails
 *                 authentication (-EBADMSG) and opens to its plaintext,
 *                 so the fuzzer reaches every path after the tag check
 *                 whatever the key schedule makes of the stored frames.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/identity.h"
#include "core/kx.h"
#include "core/link.h"
#include "core/rx.h"

#define FUZZ_MONO0    1000000000ull
#define FUZZ_SEED_A0  0xa0
#define FUZZ_SEED_A1  0xa1
#define FUZZ_SEED_B0  0xb0
#define FUZZ_SEED_B1  0xb1
#define FUZZ_A_INDEX  0x0a0a0a0au
#define FUZZ_B_INDEX  0x0b0b0b0bu
#define FUZZ_T_LATER  0x00ff
#define FUZZ_T_SEAL   0x00fe
#define FUZZ_SEAL_HDR (FERRY_HDR_SIZE + 9)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct identity *fuzz_a, *fuzz_b;
static uint64_t fuzz_rng;
/* Public ephemeral keys of the fixed stream's seeds. */
static uint8_t fuzz_a0[KX_EPH_LEN], fuzz_a1[KX_EPH_LEN];
static uint8_t fuzz_b0[KX_EPH_LEN], fuzz_b1[KX_EPH_LEN];
static uint8_t fuzz_frame[FERRY_MSG_SIZE_MAX];
static uint8_t fuzz_sealed[FERRY_MSG_SIZE_MAX];
/* A's links, sealing under B's prev, cur and next sets. */
static struct link fuzz_a_links[3];

static void
fuzz_rng_seed(uint64_t seed)
{
	fuzz_rng = seed;
}

/* splitmix64 */
static uint64_t
fuzz_rng_next(void)
{
	uint64_t z = (fuzz_rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static const char *
fuzz_rng_name(void)
{
	return "ferry-fuzz-fixed";
}

static uint32_t
fuzz_rng_random(void)
{
	return (uint32_t)fuzz_rng_next();
}

static void
fuzz_rng_buf(void *const buf, const size_t size)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < size; i++)
		p[i] = (uint8_t)fuzz_rng_next();
}

static randombytes_implementation fuzz_rng_impl = { fuzz_rng_name,
	fuzz_rng_random, NULL, NULL, fuzz_rng_buf, NULL };

/* The ephemeral public key link_init or link_rotate makes from seed. */
static void
fuzz_eph_of(uint64_t seed, uint8_t pk[KX_EPH_LEN])
{
	uint8_t sk[KX_EPH_LEN];

	fuzz_rng_seed(seed);
	kx_eph_new(sk, pk);
	sodium_memzero(sk, sizeof(sk));
}

/* A KX of from to `to` as to's link decodes it. */
static void
fuzz_kx(struct kx_msg *m, const struct identity *from,
    const struct identity *to, const uint8_t eph[KX_EPH_LEN],
    const uint8_t echo_of[KX_EPH_LEN], uint32_t flags, uint32_t index)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->pk, from->pk, FERRY_PUBKEY_LEN);
	m->sender = from->id;
	m->receiver = to->id;
	memcpy(m->eph, eph, KX_EPH_LEN);
	m->timestamp_us = 1;
	m->sender_index = index;
	m->flags = flags;
	kx_echo_of(echo_of, m->echo);
}

/* A's link from seed holding the keys with B's ephemeral b_eph. */
static void
fuzz_link_a(struct link *l, uint64_t seed, uint32_t flags,
    const uint8_t b_eph[KX_EPH_LEN])
{
	struct kx_msg m;

	fuzz_rng_seed(seed);
	if (link_init(l, fuzz_a, &fuzz_b->id, FUZZ_A_INDEX, FUZZ_MONO0) < 0)
		abort();
	l->my_flags = flags;
	fuzz_kx(&m, fuzz_b, fuzz_a, b_eph, l->my_eph, flags, FUZZ_B_INDEX);
	if (link_on_kx(l, &m, FUZZ_MONO0) != (LINK_KX_NEWKEYS | LINK_KX_REPLY))
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t seed[32];

	(void)argc;
	(void)argv;
	if (randombytes_set_implementation(&fuzz_rng_impl) != 0 ||
	    sodium_init() < 0)
		abort();
	memset(seed, 0xa1, sizeof(seed));
	if (identity_from_seed(seed, &fuzz_a) < 0)
		abort();
	memset(seed, 0xb0, sizeof(seed));
	if (identity_from_seed(seed, &fuzz_b) < 0)
		abort();
	fuzz_eph_of(FUZZ_SEED_A0, fuzz_a0);
	fuzz_eph_of(FUZZ_SEED_A1, fuzz_a1);
	fuzz_eph_of(FUZZ_SEED_B0, fuzz_b0);
	fuzz_eph_of(FUZZ_SEED_B1, fuzz_b1);
	fuzz_link_a(&fuzz_a_links[0], FUZZ_SEED_A0, 0, fuzz_b0);
	fuzz_link_a(&fuzz_a_links[1], FUZZ_SEED_A1, FERRY_KX_F_AESGCM, fuzz_b0);
	fuzz_link_a(&fuzz_a_links[2], FUZZ_SEED_A1, FERRY_KX_F_AESGCM, fuzz_b1);
	return 0;
}

/* B's link with prev, cur and next key sets (see the head comment). */
static void
fuzz_link_b(struct link *l)
{
	struct kx_msg m;

	fuzz_rng_seed(FUZZ_SEED_B0);
	if (link_init(l, fuzz_b, &fuzz_a->id, FUZZ_B_INDEX, FUZZ_MONO0) < 0)
		abort();
	l->my_flags = 0;
	fuzz_kx(&m, fuzz_a, fuzz_b, fuzz_a0, fuzz_b0, 0, FUZZ_A_INDEX);
	if (link_on_kx(l, &m, FUZZ_MONO0) != (LINK_KX_NEWKEYS | LINK_KX_REPLY))
		abort();
	l->my_flags = FERRY_KX_F_AESGCM;
	fuzz_kx(&m, fuzz_a, fuzz_b, fuzz_a1, fuzz_b0, FERRY_KX_F_AESGCM,
	    FUZZ_A_INDEX);
	m.timestamp_us = 2;
	if (link_on_kx(l, &m, FUZZ_MONO0 + 1) !=
	    (LINK_KX_NEWKEYS | LINK_KX_REPLY))
		abort();
	fuzz_rng_seed(FUZZ_SEED_B1);
	if (link_rotate(l, FUZZ_MONO0 + 2) < 0 || l->prev == NULL ||
	    l->cur == NULL || l->next == NULL)
		abort();
}

/* A seals, B opens: what is authentic must open, or be a replay or under
 * a key set B no longer has. */
static void
fuzz_seal_open(struct link *l, const uint8_t *msg, size_t msize, uint64_t now)
{
	struct link *a = &fuzz_a_links[msg[FERRY_HDR_SIZE] % 3];
	const uint8_t *pt = msg + FUZZ_SEAL_HDR;
	size_t len = msize - FUZZ_SEAL_HDR, ptlen;
	uint64_t ctr;
	int n, r;

	a->tx_counter = wire_get64(msg + FERRY_HDR_SIZE + 1);
	n = link_seal(a, pt, len, fuzz_sealed, &ctr);
	if (len > FERRY_MSG_SIZE_MAX - FERRY_ENC_OVERHEAD) {
		if (n != -EMSGSIZE)
			abort();
		return;
	}
	if (n != (int)(len + FERRY_ENC_OVERHEAD) ||
	    ctr != wire_get64(msg + FERRY_HDR_SIZE + 1))
		abort();
	r = link_open(l, fuzz_sealed, (size_t)n, now, &ptlen, &ctr);
	if (r == -EBADMSG || (r < 0 && r != -EALREADY && r != -ENOKEY))
		abort();
	if (r >= 0 &&
	    (ptlen != len || memcmp(fuzz_sealed + FERRY_ENC_HDR, pt, len) != 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t now = FUZZ_MONO0 + 1000, ctr;
	const uint8_t *msg;
	size_t off = 0, msize, ptlen;
	uint16_t type;
	uint32_t idx;
	struct link l;

	(void)link_frame_index(data, size, &idx);
	fuzz_link_b(&l);
	while (rx_next(data, size, &off, &type, &msg, &msize) > 0) {
		const uint8_t *in;
		size_t ioff = 0, isize;
		uint16_t itype;
		int r;

		now += 1000;
		if (type == FUZZ_T_LATER) {
			now += 3600 * 1000000ull;
			link_expire(&l, now);
			continue;
		}
		if (type == FUZZ_T_SEAL && msize >= FUZZ_SEAL_HDR) {
			fuzz_seal_open(&l, msg, msize, now);
			continue;
		}
		if (link_frame_index(msg, msize, &idx) < 0)
			continue;
		if (msize < FERRY_ENC_OVERHEAD || wire_get16(msg) != msize)
			abort();
		memcpy(fuzz_frame, msg, msize);
		r = link_open(&l, fuzz_frame, msize, now, &ptlen, &ctr);
		if (r < 0)
			continue;
		if (ptlen != msize - FERRY_ENC_OVERHEAD ||
		    ctr != wire_get64(msg + 12) || !link_ready(&l))
			abort();
		if (r == LINK_KX_NEWKEYS && l.next != NULL)
			abort();
		/* The plaintext walks like any frame's. */
		while (rx_next(fuzz_frame + FERRY_ENC_HDR, ptlen, &ioff, &itype,
		           &in, &isize) > 0)
			if (in < fuzz_frame + FERRY_ENC_HDR ||
			    in + isize > fuzz_frame + FERRY_ENC_HDR + ptlen)
				abort();
		/* The same frame again is a replay. */
		memcpy(fuzz_frame, msg, msize);
		if (link_open(&l, fuzz_frame, msize, now, &ptlen, &ctr) !=
		    -EALREADY)
			abort();
	}
	link_done(&l);
	return 0;
}
