/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The erasure stage of bench_stages (issue 16, tests/bench/README): the
 * rate of src/storage/erasure.c's ISA-L encode and decode for k + m
 * groups of sealed blocks of the default chunk size, with two baselines
 * over the same bytes in the same run: memcpy (what moving them costs)
 * and the AEAD of the encrypt stage (what sealing them costs). Timed in
 * the thread's CPU time, as the CPU stages are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "core/aead.h"
#include "storage/chunk.h"
#include "storage/erasure.h"
#include "stages_bench.h"

/* Data of all the groups of one point: more than the L3 cache (32 MiB
 * here), so that blocks come from memory, as a file's do. */
#define SG_EC_POOL (48u * 1000 * 1000)

/* The groups of one point: data then parity of each, and the pieces a
 * decode is given. */
struct sg_ec {
	unsigned k, m, groups, lost; /* lost: data blocks missing */
	size_t block;
	struct erasure *e;
	struct erasure_layout l;
	uint8_t **blk; /* groups * (k + m) blocks */
	uint8_t *copy; /* memcpy's destination, k blocks */
	uint8_t *out[ERASURE_N_MAX];
};

static uint64_t
sg_ec_cpu_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
sg_ec_free(struct sg_ec *x)
{
	for (unsigned i = 0; x->blk != NULL && i < x->groups * (x->k + x->m);
	     i++)
		free(x->blk[i]);
	free(x->blk);
	free(x->copy);
	for (unsigned i = 0; i < ERASURE_N_MAX; i++)
		free(x->out[i]);
	erasure_free(x->e);
}

static int
sg_ec_make(struct sg_ec *x, unsigned k, unsigned m, size_t block)
{
	size_t len[ERASURE_K_MAX];
	unsigned n = k + m;
	int r;

	memset(x, 0, sizeof(*x));
	x->k = k, x->m = m, x->block = block;
	x->lost = m < k ? m : k;
	x->groups = (unsigned)(SG_EC_POOL / (k * block)) + 1;
	for (unsigned i = 0; i < k; i++)
		len[i] = block;
	r = erasure_layout_init(&x->l, k, m, len);
	if (r == 0)
		r = erasure_new(k, m, &x->e);
	x->blk = r == 0 ? calloc((size_t)x->groups * n, sizeof(*x->blk)) : NULL;
	x->copy = malloc(k * block);
	if (r < 0 || x->blk == NULL || x->copy == NULL)
		return r < 0 ? r : -ENOMEM;
	for (unsigned i = 0; i < x->groups * n; i++) {
		x->blk[i] = malloc(block);
		if (x->blk[i] == NULL)
			return -ENOMEM;
		if (i % n < k && RAND_bytes(x->blk[i], (int)block) != 1)
			return -EIO;
	}
	for (unsigned i = 0; i < x->lost; i++) {
		x->out[i] = malloc(block);
		if (x->out[i] == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* Encodes every group once. */
static int
sg_ec_encode(struct sg_ec *x)
{
	unsigned n = x->k + x->m;

	for (unsigned g = 0; g < x->groups; g++) {
		uint8_t **b = &x->blk[g * n];
		int r = erasure_encode(x->e, &x->l, (const uint8_t *const *)b,
		    b + x->k);

		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Decodes every group with its first lost data blocks missing: the worst
 * case, as many data blocks rebuilt as parity can stand for. The blocks
 * are rebuilt in place (the same bytes again), so that they go to memory
 * as a get's do; with check, into x->out instead, and compared.
 */
static int
sg_ec_decode(struct sg_ec *x, bool check)
{
	struct erasure_piece have[ERASURE_N_MAX];
	uint8_t *out[ERASURE_N_MAX] = { NULL };
	unsigned n = x->k + x->m;

	for (unsigned g = 0; g < x->groups; g++) {
		unsigned h = 0;
		int r;

		for (unsigned i = 0; i < x->lost; i++)
			out[i] = check ? x->out[i] : x->blk[g * n + i];
		for (unsigned i = x->lost; i < n; i++)
			have[h++] = (struct erasure_piece){ i,
				x->blk[g * n + i], x->block };
		r = erasure_decode(x->e, &x->l, have, h, out);
		for (unsigned i = 0; check && r == 0 && i < x->lost; i++)
			if (memcmp(out[i], x->blk[g * n + i], x->block) != 0)
				r = -EBADMSG;
		if (r < 0)
			return r;
	}
	return 0;
}

/* Copies every group's data. */
static int
sg_ec_memcpy(struct sg_ec *x)
{
	for (unsigned g = 0; g < x->groups; g++)
		for (unsigned i = 0; i < x->k; i++)
			memcpy(x->copy + i * x->block,
			    x->blk[g * (x->k + x->m) + i], x->block);
	return 0;
}

/* Seals every group's data as the encrypt stage does (a context per
 * block), the last block's output overwritten by the next. */
static int
sg_ec_aead(struct sg_ec *x, bool aes)
{
	uint8_t key[32] = { 1 }, ad[2] = { 1, STORAGE_KIND_DATA };

	for (unsigned g = 0; g < x->groups; g++) {
		for (unsigned i = 0; i < x->k; i++) {
			struct aead *a = aead_new(aes, key, true);
			int r;

			if (a == NULL)
				return -ENOMEM;
			r = aead_seal(a, 0, ad, sizeof(ad),
			    x->blk[g * (x->k + x->m) + i], x->block - 17,
			    x->copy);
			aead_free(a);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* MB/s (10^6 bytes of data a CPU second) of method w over passes over
 * all groups. Negative errno on failure. */
static double
sg_ec_rate(struct sg_ec *x, int w, bool aes, unsigned passes)
{
	uint64_t t0 = sg_ec_cpu_ns(), t;
	int r = 0;

	for (unsigned p = 0; p < passes && r == 0; p++)
		r = w == 0   ? sg_ec_encode(x)
		    : w == 1 ? sg_ec_decode(x, false)
		    : w == 2 ? sg_ec_memcpy(x)
		             : sg_ec_aead(x, aes);
	t = sg_ec_cpu_ns() - t0;
	if (r < 0)
		return r;
	return (double)passes * x->groups * x->k * x->block * 1e3 /
	    (double)(t > 0 ? t : 1);
}

int
sg_erasure_point(const struct sg_opts *so, unsigned k, unsigned m, size_t block,
    struct bench_summary ret[SG_EC_METHODS])
{
	unsigned reps = so->o.reps < 64 ? so->o.reps : 64;
	unsigned passes = so->o.quick ? 1 : 3;
	double v[SG_EC_METHODS][64];
	struct sg_ec x;
	int r = sg_ec_make(&x, k, m, block);

	/* One untimed pass: parity to decode from, pages touched, and a
	 * decode checked against the data. */
	if (r == 0)
		r = sg_ec_encode(&x);
	if (r == 0)
		r = sg_ec_decode(&x, true);
	for (unsigned i = 0; i < reps && r == 0; i++) {
		/* The methods interleaved, so that a change of the load
		 * falls on all of them alike. */
		for (int w = 0; w < SG_EC_METHODS && r == 0; w++) {
			v[w][i] = sg_ec_rate(&x, w, so->aes, passes);
			r = v[w][i] < 0 ? (int)v[w][i] : 0;
		}
	}
	for (int w = 0; w < SG_EC_METHODS && r == 0; w++)
		bench_summarize(v[w], reps, &ret[w]);
	sg_ec_free(&x);
	return r;
}
