/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reed-Solomon erasure coding of a group of sealed blocks over Intel
 * ISA-L (see erasure.h), storage layer, issue 16. The blocks are coded in
 * windows, so that blocks of unequal lengths need no padded copies.
 */
#include "storage/erasure.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/erasure_code.h>

#define LOG_TAG "erasure"
#include "lib/log.h"

/*
 * Bytes of each block coded per ISA-L call. A window never crosses the
 * end of a block, so a block's padding is read from a window of zero
 * bytes and no output is written past its length. The size hardly
 * matters: with 256 KiB blocks, windows of 16 KiB, 64 KiB and whole
 * blocks gave rates within the noise of each other (bench_stages -w
 * erasure); 64 KiB keeps the zero window small and one call's k inputs
 * and m outputs inside the L2 cache.
 */
#define ERASURE_WINDOW (64u * 1024)
/* ISA-L's tables: 32 bytes for each coefficient of the matrix coded. */
#define ERASURE_TBL    32u

struct erasure {
	unsigned k, m;
	/*
	 * The generator, n rows of k: the identity, then the Cauchy rows.
	 * Cauchy and not gf_gen_rs_matrix()'s Vandermonde-style rows,
	 * because those are not MDS for every k and m: ISA-L's own comment
	 * on gf_gen_rs_matrix() (include/erasure_code.h) says some decode
	 * matrices of large k and m are not invertible and that it is safe
	 * only for k <= 3, k = 4 with n <= 25, k = 5 with n <= 10, k <= 21
	 * with m = 4, or m <= 3; erasure_code/gen_rs_matrix_limits.c in
	 * ISA-L searches those limits. Checked with ISA-L 2.30: for 8 + 5,
	 * 6 of the 1287 sets of 8 rows of gf_gen_rs_matrix(13, 8) are
	 * singular (the first: rows 0 1 3 4 6 8 9 12), none of the Cauchy
	 * generator's, which test_storage_erasure tries all of.
	 */
	uint8_t gen[ERASURE_N_MAX * ERASURE_K_MAX];
	uint8_t *enc_tbl; /* ec_init_tables() of the m parity rows */
	uint8_t *zero;    /* ERASURE_WINDOW zero bytes: the padding */
};

/* One ec_encode_data() job: k inputs (shorter ones padded with zeros) to
 * rows outputs through tbl, the outputs sorted longest first. */
struct erasure_job {
	unsigned k, rows;
	const uint8_t *in[ERASURE_K_MAX];
	size_t in_len[ERASURE_K_MAX];
	uint8_t *out[ERASURE_N_MAX];
	size_t out_len[ERASURE_N_MAX];
	uint8_t *tbl;
};

int
erasure_layout_init(struct erasure_layout *l, unsigned k, unsigned m,
    const size_t len[])
{
	uint32_t stripe = 0;

	if (k < 1 || k > ERASURE_K_MAX || m > ERASURE_M_MAX || len == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < k; i++) {
		if (len[i] > ERASURE_BLOCK_MAX)
			return -EINVAL;
		if (len[i] > stripe)
			stripe = (uint32_t)len[i];
	}
	memset(l, 0, sizeof(*l));
	l->k = k;
	l->m = m;
	l->stripe = stripe;
	for (unsigned i = 0; i < k; i++)
		l->len[i] = (uint32_t)len[i];
	return 0;
}

size_t
erasure_block_len(const struct erasure_layout *l, unsigned index)
{
	if (index < l->k)
		return l->len[index];
	return index < l->k + l->m ? l->stripe : 0;
}

/* Whether l is a well-formed layout of e's code: the struct is plain data
 * a caller may have filled, so its stripe is checked, not trusted. */
static bool
erasure_layout_fits(const struct erasure *e, const struct erasure_layout *l)
{
	uint32_t stripe = 0;

	if (l->k != e->k || l->m != e->m)
		return false;
	for (unsigned i = 0; i < l->k; i++) {
		if (l->len[i] > ERASURE_BLOCK_MAX)
			return false;
		if (l->len[i] > stripe)
			stripe = l->len[i];
	}
	return l->stripe == stripe;
}

int
erasure_new(unsigned k, unsigned m, struct erasure **ret)
{
	struct erasure *e;

	if (k < 1 || k > ERASURE_K_MAX || m > ERASURE_M_MAX)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->k = k;
	e->m = m;
	e->enc_tbl = malloc((size_t)ERASURE_TBL * k * (m > 0 ? m : 1));
	e->zero = calloc(1, ERASURE_WINDOW);
	if (e->enc_tbl == NULL || e->zero == NULL) {
		erasure_free(e);
		return -ENOMEM;
	}
	gf_gen_cauchy1_matrix(e->gen, (int)(k + m), (int)k);
	if (m > 0)
		ec_init_tables((int)k, (int)m, &e->gen[k * k], e->enc_tbl);
	*ret = e;
	return 0;
}

void
erasure_free(struct erasure *e)
{
	if (e == NULL)
		return;
	free(e->enc_tbl);
	free(e->zero);
	free(e);
}

/*
 * Runs job j over windows that end wherever an input or an output ends,
 * so that within a window each input is all bytes or all padding, and the
 * outputs still unfinished are a prefix (they are sorted longest first),
 * whose tables are the prefix of j->tbl.
 */
static void
erasure_run(const struct erasure *e, const struct erasure_job *j)
{
	uint8_t *in[ERASURE_K_MAX], *out[ERASURE_N_MAX];
	size_t total = j->rows > 0 ? j->out_len[0] : 0;

	for (size_t off = 0; off < total;) {
		size_t w =
		    total - off < ERASURE_WINDOW ? total - off : ERASURE_WINDOW;
		unsigned rows = 0;

		for (unsigned s = 0; s < j->k; s++)
			if (j->in_len[s] > off && j->in_len[s] - off < w)
				w = j->in_len[s] - off;
		while (rows < j->rows && j->out_len[rows] > off) {
			if (j->out_len[rows] - off < w)
				w = j->out_len[rows] - off;
			rows++;
		}
		/* ISA-L only reads its inputs; its prototype is not const. */
		for (unsigned s = 0; s < j->k; s++)
			in[s] = j->in_len[s] > off ? (uint8_t *)j->in[s] + off
			                           : e->zero;
		for (unsigned o = 0; o < rows; o++)
			out[o] = j->out[o] + off;
		ec_encode_data((int)w, (int)j->k, (int)rows, j->tbl, in, out);
		off += w;
	}
}

int
erasure_encode(const struct erasure *e, const struct erasure_layout *l,
    const uint8_t *const data[], uint8_t *const parity[])
{
	struct erasure_job j = { .k = e->k, .rows = e->m, .tbl = e->enc_tbl };

	if (!erasure_layout_fits(e, l) || (e->m > 0 && parity == NULL) ||
	    data == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < e->k; i++) {
		if (data[i] == NULL && l->len[i] > 0)
			return -EINVAL;
		j.in[i] = data[i];
		j.in_len[i] = l->len[i];
	}
	for (unsigned p = 0; p < e->m; p++) {
		if (parity[p] == NULL && l->stripe > 0)
			return -EINVAL;
		j.out[p] = parity[p];
		j.out_len[p] = l->stripe;
	}
	erasure_run(e, &j);
	return 0;
}

/*
 * Puts each piece of have at its index in src, and the set of indices
 * given into *ret_given. -EINVAL for an index out of range or given
 * twice, a length that is not the block's, or missing bytes.
 */
static int
erasure_gather(const struct erasure_layout *l, const struct erasure_piece *have,
    unsigned n_have, const uint8_t *src[ERASURE_N_MAX], uint64_t *ret_given)
{
	uint64_t given = 0;
	unsigned n = l->k + l->m;

	if (n_have > 0 && have == NULL)
		return -EINVAL;
	for (unsigned h = 0; h < n_have; h++) {
		unsigned i = have[h].index;

		if (i >= n || (given & (UINT64_C(1) << i)) != 0 ||
		    have[h].len != erasure_block_len(l, i) ||
		    (have[h].buf == NULL && have[h].len > 0))
			return -EINVAL;
		given |= UINT64_C(1) << i;
		src[i] = have[h].buf;
	}
	*ret_given = given;
	return 0;
}

/* Inserts block i of length len into j's outputs, longest first. */
static void
erasure_job_add_out(struct erasure_job *j, uint8_t *buf, size_t len, unsigned i,
    unsigned order[ERASURE_N_MAX])
{
	unsigned o = j->rows++;

	for (; o > 0 && j->out_len[o - 1] < len; o--) {
		j->out[o] = j->out[o - 1];
		j->out_len[o] = j->out_len[o - 1];
		order[o] = order[o - 1];
	}
	j->out[o] = buf;
	j->out_len[o] = len;
	order[o] = i;
}

/*
 * The decode matrix: with B the generator's rows of the k blocks used
 * (rows[]), the data are B^-1 times those blocks; so data block i is row
 * i of B^-1, and parity block p is generator row p times B^-1. One row of
 * coef per output of j, in j's order. 0, or -EIO if B is singular, which
 * a Cauchy generator excludes.
 */
static int
erasure_matrix(const struct erasure *e, const unsigned rows[ERASURE_K_MAX],
    const unsigned order[ERASURE_N_MAX], unsigned n_out, uint8_t *scratch,
    uint8_t *coef)
{
	unsigned k = e->k;
	uint8_t *b = scratch, *inv = scratch + k * k;

	for (unsigned a = 0; a < k; a++)
		memcpy(&b[a * k], &e->gen[rows[a] * k], k);
	if (FERRY_BUG(gf_invert_matrix(b, inv, (int)k) != 0))
		return -EIO;
	for (unsigned o = 0; o < n_out; o++) {
		unsigned i = order[o];
		uint8_t *row = &coef[o * k];

		if (i < k) {
			memcpy(row, &inv[i * k], k);
			continue;
		}
		for (unsigned c = 0; c < k; c++) {
			uint8_t v = 0;

			for (unsigned t = 0; t < k; t++)
				v ^= gf_mul(e->gen[i * k + t], inv[t * k + c]);
			row[c] = v;
		}
	}
	return 0;
}

/* Rebuilds the blocks wanted in out[] from the k blocks rows[] of src. */
static int
erasure_rebuild(const struct erasure *e, const struct erasure_layout *l,
    const uint8_t *const src[ERASURE_N_MAX], uint64_t held,
    const unsigned rows[ERASURE_K_MAX], uint8_t *const out[])
{
	struct erasure_job j = { .k = e->k };
	unsigned order[ERASURE_N_MAX], k = e->k;
	uint8_t *mem;
	int r;

	for (unsigned i = 0; i < k + e->m; i++)
		if (out[i] != NULL && (held & (UINT64_C(1) << i)) == 0 &&
		    erasure_block_len(l, i) > 0)
			erasure_job_add_out(&j, out[i], erasure_block_len(l, i),
			    i, order);
	if (j.rows == 0)
		return 0;
	/* B and its inverse, then a row of coefficients per output and
	 * ISA-L's tables of those: at most 2 + 32 + 1 KiB. */
	mem =
	    malloc((size_t)2 * k * k + (size_t)j.rows * k * (1 + ERASURE_TBL));
	if (mem == NULL)
		return -ENOMEM;
	r = erasure_matrix(e, rows, order, j.rows, mem, mem + 2 * k * k);
	if (r == 0) {
		j.tbl = mem + 2 * k * k + j.rows * k;
		ec_init_tables((int)k, (int)j.rows, mem + 2 * k * k, j.tbl);
		for (unsigned a = 0; a < k; a++) {
			j.in[a] = src[rows[a]];
			j.in_len[a] = erasure_block_len(l, rows[a]);
		}
		erasure_run(e, &j);
	}
	free(mem);
	return r;
}

int
erasure_decode(const struct erasure *e, const struct erasure_layout *l,
    const struct erasure_piece *have, unsigned n_have, uint8_t *const out[])
{
	const uint8_t *src[ERASURE_N_MAX] = { NULL };
	unsigned rows[ERASURE_K_MAX], n = e->k + e->m, used = 0;
	uint64_t given, held;
	int r;

	if (!erasure_layout_fits(e, l) || out == NULL)
		return -EINVAL;
	r = erasure_gather(l, have, n_have, src, &given);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < n; i++)
		if (out[i] != NULL && (given & (UINT64_C(1) << i)) != 0)
			return -EINVAL;
	/* A data block of length 0 is all padding: known without its piece. */
	held = given;
	for (unsigned i = 0; i < e->k; i++)
		if (l->len[i] == 0)
			held |= UINT64_C(1) << i;
	if (__builtin_popcountll(held) < (int)e->k)
		return -EIO;
	/* Any k held blocks will do; the first, so data before parity:
	 * their rows of B are the identity's. */
	for (unsigned i = 0; i < n && used < e->k; i++)
		if ((held & (UINT64_C(1) << i)) != 0)
			rows[used++] = i;
	return erasure_rebuild(e, l, src, held, rows, out);
}
