/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for key exchange messages (src/core/kx.c, link.c).
 * The input is a sequence of {u16 size, u16 type} messages for peer B (a
 * fixed identity), each a KX as A (another fixed identity) would send it.
 * Each goes through what handshake.c does: kx_decode, the receiver and
 * sender checks, kx_verify, link_kx_fresh and link_on_kx on B's link;
 * B's answer (link_build_kx) must always decode and verify. Each decoded
 * KX is also applied, unverified, to a second link, so that link_on_kx
 * sees arbitrary ephemeral keys, echoes and flags as a malicious but
 * authenticated peer could send them.
 *
 * Randomness is deterministic (a fixed stream, reset for every input), so
 * B's ephemeral key is the same each run and seeds can echo it: the seeds
 * in tests/fuzz/corpus/kx carry real handshakes (first contact, rekeys, a
 * restart, replays, clock skew) made with the same stream.
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

#define FUZZ_REAL0   1700000000000000ull /* µs since the epoch */
#define FUZZ_MONO0   1000000000ull
#define FUZZ_SKEW_US (120 * 1000000ull)
#define FUZZ_SEED_A  0xa0
#define FUZZ_SEED_B  0xb0
#define FUZZ_B_INDEX 0x0b0b0b0bu

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct identity *fuzz_a, *fuzz_b;
static uint64_t fuzz_rng;

/* A fixed random stream (splitmix64): reproducible ephemeral keys. */
static void
fuzz_rng_seed(uint64_t seed)
{
	fuzz_rng = seed;
}

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
	return 0;
}

/* B's link with A as it is before any message: a fixed ephemeral key. */
static void
fuzz_link_b(struct link *l)
{
	fuzz_rng_seed(FUZZ_SEED_B);
	if (link_init(l, fuzz_b, &fuzz_a->id, FUZZ_B_INDEX, FUZZ_MONO0) < 0)
		abort();
}

/* B's answer must always be a good KX for A. */
static void
fuzz_answer(struct link *l, uint64_t now_real)
{
	uint8_t out[FERRY_KX_SIZE];
	struct kx_msg m;

	link_build_kx(l, now_real, out);
	if (kx_decode(out, sizeof(out), &m) < 0 ||
	    kx_verify(out, sizeof(out)) < 0 ||
	    peer_id_cmp(&m.receiver, &fuzz_a->id) != 0 ||
	    peer_id_cmp(&m.sender, &fuzz_b->id) != 0 ||
	    memcmp(m.eph, l->my_eph, KX_EPH_LEN) != 0)
		abort();
}

/* After link_on_kx, what must hold of the link. */
static void
fuzz_link_sane(const struct link *l)
{
	if (l->cur != NULL && l->cur == l->next)
		abort();
	if (l->prev != NULL && (l->prev == l->cur || l->prev == l->next))
		abort();
	if (l->next != NULL &&
	    memcmp(l->next->my_eph, l->my_eph, KX_EPH_LEN) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct link l, raw;
	uint64_t now_real = FUZZ_REAL0, now_mono = FUZZ_MONO0;
	const uint8_t *msg;
	size_t off = 0, msize;
	uint16_t type;
	struct kx_msg m;

	/* The whole input as one KX, as a unit might hold it. */
	if (kx_decode(data, size, &m) == 0)
		(void)kx_verify(data, size);
	fuzz_link_b(&l);
	fuzz_link_b(&raw);
	while (rx_next(data, size, &off, &type, &msg, &msize) > 0) {
		int r;

		now_real += 1000000;
		now_mono += 1000000;
		if (type != FERRY_P2P_KX || kx_decode(msg, msize, &m) < 0)
			continue;
		/* Unverified, as an authenticated peer could send anything. */
		r = link_on_kx(&raw, &m, now_mono);
		if (r >= 0) {
			fuzz_link_sane(&raw);
			fuzz_answer(&raw, now_real);
		}
		/* The handshake.c path. */
		if (peer_id_cmp(&m.receiver, &fuzz_b->id) != 0 ||
		    peer_id_cmp(&m.sender, &fuzz_a->id) != 0 ||
		    kx_verify(msg, msize) < 0)
			continue;
		if (link_kx_fresh(&l, &m, now_real, FUZZ_SKEW_US) < 0)
			continue;
		r = link_on_kx(&l, &m, now_mono);
		if (r < 0)
			continue;
		fuzz_link_sane(&l);
		if ((r & LINK_KX_NEWKEYS) && !link_ready(&l))
			abort();
		if (l.peer_ts != m.timestamp_us || !l.have_peer)
			abort();
		/* A replay of what was just accepted is refused. */
		if (link_kx_fresh(&l, &m, now_real, FUZZ_SKEW_US) != -EALREADY)
			abort();
		fuzz_answer(&l, now_real);
	}
	link_done(&l);
	link_done(&raw);
	return 0;
}
