/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Erasure coding of a block group (src/storage/erasure.c): parity equals
 * a slow reference of the documented code (Cauchy rows 1 / (i xor j) in
 * GF(2^8) mod 0x11d) and two pinned vectors; for several k and m, blocks
 * of unequal lengths, every k of the n blocks (all sets for small n,
 * random ones for large) rebuild the others byte for byte, parity
 * included, and every k - 1 fail with -EIO and write nothing; data
 * blocks of length 0 count as held; bad pieces and layouts are refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "storage/erasure.h"
#include "unit.h"

/* Sets of k blocks tried: all of them up to this many (8 + 5 has 1287),
 * else random ones. */
#define EXHAUSTIVE_MAX 1300
#define RANDOM_SETS    300

/* A group: its layout, its n blocks (data then parity), its code. */
struct group {
	struct erasure_layout l;
	struct erasure *e;
	uint8_t *blk[ERASURE_N_MAX];
	unsigned n;
};

/* GF(2^8) with the polynomial x^8 + x^4 + x^3 + x^2 + 1, bit by bit. */
static uint8_t
ref_mul(uint8_t a, uint8_t b)
{
	unsigned x = a, r = 0;

	for (; b != 0; b >>= 1) {
		if (b & 1)
			r ^= x;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
	return (uint8_t)r;
}

static uint8_t
ref_inv(uint8_t a)
{
	for (unsigned x = 1; x < 256; x++)
		if (ref_mul(a, (uint8_t)x) == 1)
			return (uint8_t)x;
	ck_abort_msg("%u has no inverse", a);
	return 0;
}

/* Parity byte b of parity block p, from the definition in erasure.h. */
static uint8_t
ref_parity(const struct group *g, unsigned p, size_t b)
{
	uint8_t v = 0;

	for (unsigned j = 0; j < g->l.k; j++) {
		uint8_t d = b < g->l.len[j] ? g->blk[j][b] : 0;

		v ^= ref_mul(ref_inv((uint8_t)((g->l.k + p) ^ j)), d);
	}
	return v;
}

/* A group of k data blocks of the given lengths, random bytes, and its
 * parity from erasure_encode(). */
static void
group_make(struct group *g, unsigned k, unsigned m, const size_t *len,
    uint64_t *seed)
{
	memset(g, 0, sizeof(*g));
	ck_assert_int_eq(erasure_layout_init(&g->l, k, m, len), 0);
	ck_assert_int_eq(erasure_new(k, m, &g->e), 0);
	g->n = k + m;
	for (unsigned i = 0; i < g->n; i++) {
		size_t n = erasure_block_len(&g->l, i);

		g->blk[i] = malloc(n > 0 ? n : 1);
		ck_assert_ptr_nonnull(g->blk[i]);
		for (size_t b = 0; i < k && b < n; b++)
			g->blk[i][b] = (uint8_t)unit_rand(seed);
	}
	ck_assert_int_eq(erasure_encode(g->e, &g->l,
	                     (const uint8_t *const *)g->blk, &g->blk[k]),
	    0);
}

static void
group_free(struct group *g)
{
	for (unsigned i = 0; i < g->n; i++)
		free(g->blk[i]);
	erasure_free(g->e);
}

/* Random lengths 1..max, the first max itself so the stripe is known. */
static void
random_lens(size_t *len, unsigned k, size_t max, uint64_t *seed)
{
	for (unsigned i = 0; i < k; i++)
		len[i] = i == 0 ? max : 1 + unit_rand(seed) % max;
}

/*
 * Decodes g from the blocks in the set held, asking for every other one;
 * with at least k held (data blocks of length 0 count) they must come out
 * equal to the originals, with fewer the call must fail with -EIO and
 * leave the outputs alone.
 */
static void
try_set(const struct group *g, uint64_t held)
{
	struct erasure_piece have[ERASURE_N_MAX] = { { 0 } };
	uint8_t *out[ERASURE_N_MAX] = { NULL };
	uint64_t known = held;
	unsigned n_have = 0;
	bool enough;
	int r;

	for (unsigned i = 0; i < g->l.k; i++)
		if (g->l.len[i] == 0)
			known |= UINT64_C(1) << i;
	enough = __builtin_popcountll(known) >= (int)g->l.k;

	for (unsigned i = 0; i < g->n; i++) {
		size_t len = erasure_block_len(&g->l, i);

		if (held & (UINT64_C(1) << i)) {
			have[n_have++] =
			    (struct erasure_piece){ i, g->blk[i], len };
			continue;
		}
		out[i] = malloc(len > 0 ? len : 1);
		ck_assert_ptr_nonnull(out[i]);
		memset(out[i], 0xa5, len);
	}
	r = erasure_decode(g->e, &g->l, have, n_have, out);
	ck_assert_int_eq(r, enough ? 0 : -EIO);
	for (unsigned i = 0; i < g->n; i++) {
		size_t len = erasure_block_len(&g->l, i);

		size_t b = 0;

		/* One assertion per block: Check records each one it passes. */
		while (out[i] != NULL && b < len &&
		    out[i][b] == (enough ? g->blk[i][b] : 0xa5))
			b++;
		ck_assert_msg(out[i] == NULL || b == len,
		    "k %u m %u set %llx: block %u byte %zu", g->l.k, g->l.m,
		    (unsigned long long)held, i, b);
		free(out[i]);
	}
}

/* The next set of the same size after s (Gosper), 0 past the last of n. */
static uint64_t
next_set(uint64_t s, unsigned n)
{
	uint64_t low = s & -s, up = s + low;

	s = up | (((s ^ up) >> 2) / low);
	return n < 64 && (s >> n) != 0 ? 0 : s;
}

static uint64_t
binomial(unsigned n, unsigned k)
{
	uint64_t c = 1;

	for (unsigned i = 1; i <= k; i++)
		c = c * (n - k + i) / i;
	return c;
}

/* A random set of size blocks among n. */
static uint64_t
random_set(unsigned n, unsigned size, uint64_t *seed)
{
	uint64_t s = 0;

	while ((unsigned)__builtin_popcountll(s) < size)
		s |= UINT64_C(1) << (unit_rand(seed) % n);
	return s;
}

/* Every set of size blocks of g, or RANDOM_SETS of them if too many. */
static void
try_sets(const struct group *g, unsigned size, uint64_t *seed)
{
	if (size == 0) {
		try_set(g, 0);
		return;
	}
	if (binomial(g->n, size) > EXHAUSTIVE_MAX) {
		for (unsigned t = 0; t < RANDOM_SETS; t++)
			try_set(g, random_set(g->n, size, seed));
		return;
	}
	for (uint64_t s = (UINT64_C(1) << size) - 1; s != 0;
	     s = next_set(s, g->n))
		try_set(g, s);
}

/* The shapes tried: edges (one data block, no parity, the largest n),
 * the sizes issue 16 names, one that a Vandermonde generator would fail,
 * and blocks longer than a window of the code (64 KiB), so that the
 * windows' seams are crossed. */
static const struct {
	unsigned k, m;
	size_t max;
} shapes[] = {
	{ 1, 0, 100 },
	{ 1, 1, 100 },
	{ 1, 5, 333 },
	{ 2, 1, 70 },
	{ 3, 2, 1000 },
	{ 4, 4, 4096 },
	{ 8, 4, 700 },
	{ 8, 5, 90 }, /* where ISA-L's Vandermonde rows have singular sets */
	{ 10, 4, 300 },
	{ 6, 6, 129 },
	{ 32, 0, 50 },
	{ 5, 32, 64 },
	{ 32, 32, 200 },
	{ 4, 2, 150000 },
};

/* Parity is the documented code, computed the slow way. */
START_TEST(test_reference)
{
	uint64_t seed = 11 + (uint64_t)_i;
	size_t len[ERASURE_K_MAX];
	struct group g;

	random_lens(len, shapes[_i].k, shapes[_i].max, &seed);
	group_make(&g, shapes[_i].k, shapes[_i].m, len, &seed);
	for (unsigned p = 0; p < g.l.m; p++) {
		size_t b = 0;

		while (b < g.l.stripe &&
		    g.blk[g.l.k + p][b] == ref_parity(&g, p, b))
			b++;
		ck_assert_msg(b == g.l.stripe, "k %u m %u: parity %u byte %zu",
		    g.l.k, g.l.m, p, b);
	}
	group_free(&g);
}
END_TEST

/* Any k blocks rebuild the rest, parity too; more than k as well; any
 * k - 1 fail cleanly. */
START_TEST(test_any_k)
{
	uint64_t seed = 101 + (uint64_t)_i;
	size_t len[ERASURE_K_MAX];
	struct group g;

	random_lens(len, shapes[_i].k, shapes[_i].max, &seed);
	group_make(&g, shapes[_i].k, shapes[_i].m, len, &seed);
	try_sets(&g, g.l.k, &seed);
	try_sets(&g, g.l.k - 1, &seed);
	if (g.l.m > 0)
		try_sets(&g, g.l.k + 1, &seed);
	try_set(&g, g.n < 64 ? (UINT64_C(1) << g.n) - 1 : UINT64_MAX);
	group_free(&g);
}
END_TEST

/* Pinned vectors: a change of ISA-L or of the generator that alters the
 * bytes of parity fails here. The first runs ISA-L's short-block path
 * (under 16 bytes), the second its vector code. */
START_TEST(test_vectors)
{
	static const char *const text[2][3] = {
		{ "ferry", "erasure", "RS" },
		{ "Data that outlives its peers: erasure coding, repair, audits, expiry.",
		    "Any k of the n blocks of a group rebuild the others, byte for byte.",
		    NULL },
	};
	static const uint8_t short_p[2][7] = {
		{ 0xcc, 0x49, 0x90, 0x99, 0x68, 0x39, 0xbc },
		{ 0x91, 0xd2, 0xde, 0x2f, 0x11, 0x1a, 0xea },
	};
	static const uint8_t long_p[2][69] = {
		{ 0x1d, 0x6f, 0xe6, 0x55, 0xc2, 0xd1, 0x11, 0x9c, 0xd1, 0x3c,
		    0x6a, 0x97, 0xd1, 0xe7, 0x51, 0xee, 0x98, 0x92, 0x31, 0x68,
		    0xe0, 0x5c, 0x35, 0x1a, 0x57, 0x68, 0xd2, 0x61, 0x33, 0x35,
		    0x64, 0xe2, 0x55, 0x99, 0x97, 0xec, 0x64, 0x37, 0x9b, 0x6e,
		    0xd9, 0x96, 0xe4, 0x9e, 0xfd, 0x35, 0x15, 0x6f, 0x1b, 0x90,
		    0x60, 0xd6, 0xfd, 0xc5, 0x62, 0x98, 0x11, 0x51, 0x18, 0x92,
		    0x38, 0xfb, 0x69, 0xe0, 0x14, 0x99, 0x23, 0xb2, 0x17 },
		{ 0x92, 0xe3, 0x9e, 0xc4, 0x50, 0x3c, 0x6a, 0xe7, 0x3c, 0xd1,
		    0x11, 0x64, 0x3c, 0x13, 0x37, 0xe8, 0x15, 0x63, 0x54, 0x9c,
		    0x9b, 0xca, 0x52, 0xe8, 0x33, 0x9d, 0x3e, 0x67, 0x2f, 0x52,
		    0x97, 0x16, 0xc4, 0xe3, 0x64, 0x1f, 0x97, 0x51, 0x17, 0x17,
		    0xc7, 0x1d, 0xe5, 0x6a, 0xff, 0x52, 0x14, 0x17, 0x67, 0xed,
		    0x90, 0x38, 0xff, 0xda, 0x66, 0xe2, 0x6b, 0x37, 0x1f, 0x63,
		    0xd6, 0xfb, 0x12, 0x9a, 0xe1, 0x9b, 0x39, 0xdc, 0x1a },
	};
	const uint8_t *want[2] = { _i == 0 ? short_p[0] : long_p[0],
		_i == 0 ? short_p[1] : long_p[1] };
	unsigned k = _i == 0 ? 3 : 2;
	const uint8_t *data[3];
	uint8_t p0[69], p1[69], *parity[2] = { p0, p1 };
	struct erasure_layout l;
	struct erasure *e;
	size_t len[3];

	for (unsigned i = 0; i < k; i++) {
		data[i] = (const uint8_t *)text[_i][i];
		len[i] = strlen(text[_i][i]);
	}
	ck_assert_int_eq(erasure_layout_init(&l, k, 2, len), 0);
	ck_assert_uint_eq(l.stripe, _i == 0 ? 7 : 69);
	ck_assert_int_eq(erasure_new(k, 2, &e), 0);
	ck_assert_int_eq(erasure_encode(e, &l, data, parity), 0);
	ck_assert_mem_eq(p0, want[0], l.stripe);
	ck_assert_mem_eq(p1, want[1], l.stripe);
	erasure_free(e);
}
END_TEST

/* Data blocks of length 0 (a file's last group, short of blocks) are
 * held without a piece; a group of nothing but those codes to nothing. */
START_TEST(test_empty_blocks)
{
	static const size_t len[4] = { 1000, 0, 513, 0 };
	static const size_t none[3] = { 0, 0, 0 };
	uint64_t seed = 5;
	struct erasure_piece one = { 0 };
	uint8_t *out[ERASURE_N_MAX] = { NULL };
	struct group g;

	group_make(&g, 4, 2, len, &seed);
	/* Blocks 1 and 3 are known: any 2 of the other 4 will do. */
	try_sets(&g, 2, &seed);
	try_set(&g, UINT64_C(1) << 4);
	/* Given as pieces of length 0 they are accepted too. */
	one = (struct erasure_piece){ 1, NULL, 0 };
	out[0] = malloc(1000);
	ck_assert_ptr_nonnull(out[0]);
	ck_assert_int_eq(erasure_decode(g.e, &g.l, &one, 1, out), -EIO);
	free(out[0]);
	group_free(&g);

	group_make(&g, 3, 2, none, &seed);
	ck_assert_uint_eq(g.l.stripe, 0);
	ck_assert_int_eq(erasure_decode(g.e, &g.l, NULL, 0, out), 0);
	group_free(&g);
}
END_TEST

/* Bad shapes, pieces and layouts are refused before anything is
 * written. */
START_TEST(test_bad_input)
{
	static const size_t len[3] = { 40, 30, 20 };
	size_t big[1] = { ERASURE_BLOCK_MAX + 1 };
	uint8_t *out[ERASURE_N_MAX] = { NULL }, buf[40];
	struct erasure_piece p[3];
	struct erasure_layout l;
	struct erasure *other;
	uint64_t seed = 9;
	struct group g;

	ck_assert_int_eq(erasure_new(0, 1, &other), -EINVAL);
	ck_assert_int_eq(erasure_new(ERASURE_K_MAX + 1, 1, &other), -EINVAL);
	ck_assert_int_eq(erasure_new(1, ERASURE_M_MAX + 1, &other), -EINVAL);
	ck_assert_int_eq(erasure_layout_init(&l, 0, 1, len), -EINVAL);
	ck_assert_int_eq(erasure_layout_init(&l, 33, 1, len), -EINVAL);
	ck_assert_int_eq(erasure_layout_init(&l, 1, 33, len), -EINVAL);
	ck_assert_int_eq(erasure_layout_init(&l, 1, 1, big), -EINVAL);
	ck_assert_int_eq(erasure_layout_init(&l, 1, 1, NULL), -EINVAL);
	erasure_free(NULL);

	group_make(&g, 3, 2, len, &seed);
	ck_assert_uint_eq(erasure_block_len(&g.l, 5), 0);
	memset(buf, 0x5a, sizeof(buf));
	out[0] = buf;
	p[0] = (struct erasure_piece){ 1, g.blk[1], 30 };
	p[1] = (struct erasure_piece){ 3, g.blk[3], 40 };
	p[2] = (struct erasure_piece){ 4, g.blk[4], 40 };
	ck_assert_int_eq(erasure_decode(g.e, &g.l, p, 3, out), 0);
	ck_assert_mem_eq(buf, g.blk[0], 40);
	memset(buf, 0x5a, sizeof(buf));
	/* A wrong length, an index out of range, a piece given twice, no
	 * bytes, an output for a block given, no pieces array. */
	p[2].len = 39;
	ck_assert_int_eq(erasure_decode(g.e, &g.l, p, 3, out), -EINVAL);
	p[2] = (struct erasure_piece){ 5, g.blk[4], 0 };
	ck_assert_int_eq(erasure_decode(g.e, &g.l, p, 3, out), -EINVAL);
	p[2] = (struct erasure_piece){ 64, g.blk[4], 40 };
	ck_assert_int_eq(erasure_decode(g.e, &g.l, p, 3, out), -EINVAL);
	p[2] = p[1];
	ck_assert_int_eq(erasure_decode(g.e, &g.l, p, 3, out), -EINVAL);
	p[2] = (struct erasure_piece){ 4, NULL, 40 };
	ck_assert_int_eq(erasure_decode(g.e, &g.l, p, 3, out), -EINVAL);
	p[2] = (struct erasure_piece){ 0, g.blk[0], 40 };
	ck_assert_int_eq(erasure_decode(g.e, &g.l, p, 3, out), -EINVAL);
	ck_assert_int_eq(erasure_decode(g.e, &g.l, NULL, 3, out), -EINVAL);
	ck_assert_int_eq(erasure_decode(g.e, &g.l, p, 2, NULL), -EINVAL);
	/* A layout of another code, or whose stripe is not its longest. */
	ck_assert_int_eq(erasure_new(3, 3, &other), 0);
	ck_assert_int_eq(erasure_decode(other, &g.l, p, 2, out), -EINVAL);
	ck_assert_int_eq(erasure_encode(other, &g.l,
	                     (const uint8_t *const *)g.blk, &g.blk[3]),
	    -EINVAL);
	erasure_free(other);
	l = g.l;
	l.stripe = 41;
	ck_assert_int_eq(erasure_decode(g.e, &l, p, 2, out), -EINVAL);
	ck_assert_int_eq(erasure_encode(g.e, &l, (const uint8_t *const *)g.blk,
	                     &g.blk[3]),
	    -EINVAL);
	for (size_t b = 0; b < sizeof(buf); b++)
		ck_assert_uint_eq(buf[b], 0x5a);
	/* Missing buffers for encoding. */
	ck_assert_int_eq(erasure_encode(g.e, &g.l, NULL, &g.blk[3]), -EINVAL);
	ck_assert_int_eq(erasure_encode(g.e, &g.l,
	                     (const uint8_t *const *)g.blk, NULL),
	    -EINVAL);
	group_free(&g);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("storage_erasure");
	TCase *tc = tcase_create("erasure");
	int n_shapes = (int)(sizeof(shapes) / sizeof(shapes[0]));

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_reference, 0, n_shapes);
	tcase_add_loop_test(tc, test_any_k, 0, n_shapes);
	tcase_add_loop_test(tc, test_vectors, 0, 2);
	tcase_add_test(tc, test_empty_blocks);
	tcase_add_test(tc, test_bad_input);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
