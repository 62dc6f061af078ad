/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for erasure_decode() (src/storage/erasure.c), which
 * will take pieces of a group as peers hand them over: the input chooses
 * a group's shape (k, m, data lengths) and the pieces given (indices, in
 * or out of range, repeated, of the wrong length, without bytes) and the
 * blocks asked for. Checked against an oracle: the call returns -EINVAL
 * exactly when a piece or request is bad, else -EIO exactly when fewer
 * than k blocks are held, else 0 with every block asked for equal to the
 * original; on failure nothing is written.
 * Input: k, m, k lengths, then 2 bytes a piece (index, flags), then a
 * byte of flags per block for what is asked. Seeds: tests/fuzz/corpus/erasure.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/erasure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_LEN_MAX 300 /* bytes of a data block, at most */
#define FUZZ_CANARY  0xa5

/* What the input made: the group, its blocks, the pieces and requests. */
struct fuzz_case {
	struct erasure_layout l;
	struct erasure *e;
	unsigned n;
	uint8_t *blk[ERASURE_N_MAX];
	uint8_t *out[ERASURE_N_MAX];
	struct erasure_piece have[2 * ERASURE_N_MAX];
	unsigned n_have;
	bool bad; /* a piece or request the call must refuse */
};

static void
fuzz_free(struct fuzz_case *c)
{
	for (unsigned i = 0; i < ERASURE_N_MAX; i++) {
		free(c->blk[i]);
		free(c->out[i]);
	}
	erasure_free(c->e);
}

/* The group: k, m and lengths from the input, bytes of its own. */
static int
fuzz_group(struct fuzz_case *c, const uint8_t **p, const uint8_t *end)
{
	size_t len[ERASURE_K_MAX];
	unsigned k, m;

	if (end - *p < 2)
		return -1;
	k = 1 + (*p)[0] % ERASURE_K_MAX;
	m = (*p)[1] % (ERASURE_M_MAX + 1);
	*p += 2;
	for (unsigned i = 0; i < k; i++)
		len[i] = *p < end ? (size_t)(*(*p)++) * FUZZ_LEN_MAX / 255 : 0;
	if (erasure_layout_init(&c->l, k, m, len) != 0 ||
	    erasure_new(k, m, &c->e) != 0)
		abort();
	c->n = k + m;
	for (unsigned i = 0; i < c->n; i++) {
		c->blk[i] = malloc(FUZZ_LEN_MAX + 1);
		if (c->blk[i] == NULL)
			return -1;
		for (size_t b = 0; b < FUZZ_LEN_MAX + 1; b++)
			c->blk[i][b] = (uint8_t)(i * 131 + b * 7 + (b >> 3));
	}
	if (erasure_encode(c->e, &c->l, (const uint8_t *const *)c->blk,
	        &c->blk[k]) != 0)
		abort();
	return 0;
}

/* The pieces: two bytes each, index (some out of range) and flags. */
static void
fuzz_pieces(struct fuzz_case *c, const uint8_t **p, const uint8_t *end,
    uint64_t *ret_given)
{
	uint64_t given = 0;
	unsigned count = *p < end ? *(*p)++ % (c->n + 3) : 0;

	for (unsigned h = 0; h < count && end - *p >= 2; h++, *p += 2) {
		unsigned i = (*p)[0] % (c->n + 2), f = (*p)[1];
		size_t len = i < c->n ? erasure_block_len(&c->l, i) : 1;
		struct erasure_piece *pc = &c->have[c->n_have++];

		*pc =
		    (struct erasure_piece){ i, c->blk[i < c->n ? i : 0], len };
		if (f & 1)
			pc->len = f & 2 ? len + 1 : len - (len > 0);
		if ((f & 4) && len > 0)
			pc->buf = NULL;
		if (i >= c->n || pc->len != len || pc->buf == NULL ||
		    (given & (UINT64_C(1) << i)))
			c->bad = true;
		if (i < c->n)
			given |= UINT64_C(1) << i;
	}
	*ret_given = given;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct fuzz_case c;
	uint64_t given, held;
	int want, r;

	memset(&c, 0, sizeof(c));
	if (fuzz_group(&c, &p, end) < 0) {
		fuzz_free(&c);
		return 0;
	}
	fuzz_pieces(&c, &p, end, &given);
	/* Asked for: every block not given, and a given one if its byte
	 * says so (which the call must refuse). */
	for (unsigned i = 0; i < c.n; i++) {
		uint8_t f = p < end ? *p++ : 0;
		bool is_given = (given & (UINT64_C(1) << i)) != 0;

		if (is_given && !(f & 1))
			continue;
		c.bad |= is_given;
		c.out[i] = malloc(FUZZ_LEN_MAX + 1);
		if (c.out[i] == NULL)
			abort();
		memset(c.out[i], FUZZ_CANARY, FUZZ_LEN_MAX + 1);
	}
	held = given;
	for (unsigned i = 0; i < c.l.k; i++)
		if (c.l.len[i] == 0)
			held |= UINT64_C(1) << i;
	want = c.bad                                  ? -EINVAL
	    : __builtin_popcountll(held) < (int)c.l.k ? -EIO
	                                              : 0;
	r = erasure_decode(c.e, &c.l, c.have, c.n_have, c.out);
	if (r != want)
		abort();
	for (unsigned i = 0; i < c.n; i++) {
		size_t len = erasure_block_len(&c.l, i);

		if (c.out[i] == NULL)
			continue;
		if (r == 0 && memcmp(c.out[i], c.blk[i], len) != 0)
			abort();
		for (size_t b = r == 0 ? len : 0; b < FUZZ_LEN_MAX + 1; b++)
			if (c.out[i][b] != FUZZ_CANARY)
				abort();
	}
	fuzz_free(&c);
	return 0;
}
