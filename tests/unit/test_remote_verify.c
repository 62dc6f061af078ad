/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The choice of the blocks a put fetches back (src/remote/remote_verify.c,
 * ferry(1) --verify): every manifest node; every data block of a small
 * file or under --verify all; else REMOTE_VERIFY_K data blocks drawn
 * uniformly, never one fetched back already; and the numbers ferry(1)
 * states for that sample hold.
 */
/* unit-link: ferry_remote */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "remote/remote_int.h"
#include "unit.h"

#define N_MAX 2000

static struct remote_block *blk[N_MAX];

/* n blocks, every node_every-th a node (0: none). */
static void
blocks(size_t n, size_t node_every)
{
	for (size_t i = 0; i < n; i++) {
		blk[i] = calloc(1, sizeof(*blk[i]));
		ck_assert_ptr_nonnull(blk[i]);
		blk[i]->node = node_every > 0 && i % node_every == 0;
	}
}

static void
blocks_free(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(blk[i]);
		blk[i] = NULL;
	}
}

/* Checked data blocks and checked nodes among the first n. */
static void
count(size_t n, size_t *data, size_t *nodes)
{
	*data = *nodes = 0;
	for (size_t i = 0; i < n; i++)
		if (blk[i]->check && blk[i]->node)
			(*nodes)++;
		else if (blk[i]->check)
			(*data)++;
}

START_TEST(test_sample_size)
{
	ck_assert_uint_eq(remote_verify_sample_size(REMOTE_VERIFY_NONE, 9), 0);
	ck_assert_uint_eq(remote_verify_sample_size(REMOTE_VERIFY_SAMPLE, 0),
	    0);
	ck_assert_uint_eq(remote_verify_sample_size(REMOTE_VERIFY_SAMPLE, 4),
	    4);
	ck_assert_uint_eq(remote_verify_sample_size(REMOTE_VERIFY_SAMPLE,
	                      REMOTE_VERIFY_K),
	    REMOTE_VERIFY_K);
	ck_assert_uint_eq(remote_verify_sample_size(REMOTE_VERIFY_SAMPLE,
	                      REMOTE_VERIFY_K + 1),
	    REMOTE_VERIFY_K);
	ck_assert_uint_eq(remote_verify_sample_size(REMOTE_VERIFY_SAMPLE,
	                      UINT64_C(1) << 30),
	    REMOTE_VERIFY_K);
	ck_assert_uint_eq(remote_verify_sample_size(REMOTE_VERIFY_ALL,
	                      UINT64_C(1) << 30),
	    UINT64_C(1) << 30);
}
END_TEST

/* ferry(1)'s numbers: a sample of REMOTE_VERIFY_K misses an intermediary
 * that dropped 5% of the data blocks at most 0.1% of the time, one that
 * dropped 1% about a quarter of the time, 10% almost never. */
START_TEST(test_sample_bound)
{
	static const uint64_t sizes[] = { 200, 1000, 40000, 4000000 };

	ck_assert(pow(0.95, REMOTE_VERIFY_K) < 1e-3);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t n = sizes[i];

		ck_assert(remote_verify_miss(n, (n + 19) / 20,
		              REMOTE_VERIFY_K) < 1e-3);
		ck_assert(remote_verify_miss(n, (n + 9) / 10, REMOTE_VERIFY_K) <
		    1e-6);
		ck_assert(
		    remote_verify_miss(n, n / 100, REMOTE_VERIFY_K) < 0.27);
	}
	/* Large files: about (1 - f)^k, the figure ferry(1) gives. */
	ck_assert(fabs(remote_verify_miss(4000000, 40000, REMOTE_VERIFY_K) -
	              pow(0.99, REMOTE_VERIFY_K)) < 1e-3);
	ck_assert(remote_verify_miss(4000000, 40000, REMOTE_VERIFY_K) > 0.25);
	/* One block dropped out of n: caught k / n of the time. */
	ck_assert(fabs(remote_verify_miss(1000, 1, REMOTE_VERIFY_K) -
	              (1000.0 - REMOTE_VERIFY_K) / 1000.0) < 1e-9);
	/* A sample of all is never missed; nothing dropped, always. */
	ck_assert(remote_verify_miss(100, 1, 100) == 0.0);
	ck_assert(remote_verify_miss(100, 0, 50) == 1.0);
}
END_TEST

/* A small file: every block, nodes and data. */
START_TEST(test_small_file_all)
{
	size_t data, nodes;

	/* Of the first k + 9: 9 nodes (every 17th), k data blocks. */
	blocks(REMOTE_VERIFY_K + 10, 17);
	ck_assert_uint_eq(remote_verify_choose(blk, REMOTE_VERIFY_K + 9,
	                      REMOTE_VERIFY_SAMPLE),
	    REMOTE_VERIFY_K + 9);
	count(REMOTE_VERIFY_K + 9, &data, &nodes);
	ck_assert_uint_eq(nodes, 9);
	ck_assert_uint_eq(data, REMOTE_VERIFY_K);
	blocks_free(REMOTE_VERIFY_K + 10);
}
END_TEST

/* A large file: every node, exactly k data blocks; all under ALL; none
 * under NONE (and the marks of an earlier choice cleared). */
START_TEST(test_large_file_sample)
{
	size_t data, nodes, n = N_MAX;

	blocks(n, 100); /* 20 nodes, 1980 data blocks */
	ck_assert_uint_eq(remote_verify_choose(blk, n, REMOTE_VERIFY_SAMPLE),
	    20 + REMOTE_VERIFY_K);
	count(n, &data, &nodes);
	ck_assert_uint_eq(nodes, 20);
	ck_assert_uint_eq(data, REMOTE_VERIFY_K);
	ck_assert_uint_eq(remote_verify_choose(blk, n, REMOTE_VERIFY_ALL), n);
	ck_assert_uint_eq(remote_verify_choose(blk, n, REMOTE_VERIFY_NONE), 0);
	count(n, &data, &nodes);
	ck_assert_uint_eq(data + nodes, 0);
	blocks_free(n);
}
END_TEST

/* Blocks fetched back already are not chosen again; the sample is drawn
 * from the others, and sized for them. */
START_TEST(test_held_skipped)
{
	size_t data, nodes, n = 1000;

	blocks(n, 50); /* 20 nodes */
	for (size_t i = 0; i < n; i += 2)
		blk[i]->held = true; /* every node among them */
	ck_assert_uint_eq(remote_verify_choose(blk, n, REMOTE_VERIFY_SAMPLE),
	    REMOTE_VERIFY_K);
	for (size_t i = 0; i < n; i += 2)
		ck_assert(!blk[i]->check);
	for (size_t i = 1; i < n; i += 2)
		blk[i]->held = i > 100;
	ck_assert_uint_eq(remote_verify_choose(blk, n, REMOTE_VERIFY_SAMPLE),
	    50);
	count(n, &data, &nodes);
	ck_assert_uint_eq(data, 50);
	blocks_free(n);
}
END_TEST

/* Uniform: over many draws, each data block is chosen about k / n of the
 * time, wherever it is in the file (six standard deviations allowed: a
 * sound sampler fails this less than once in 10^6 runs); and two draws
 * differ. */
START_TEST(test_uniform)
{
	enum { N = 300, RUNS = 2000 };
	static unsigned hits[N];
	double p = (double)REMOTE_VERIFY_K / N;
	double mean = RUNS * p, sd = sqrt(RUNS * p * (1 - p));
	bool first[N], differ = false;

	blocks(N, 0);
	memset(hits, 0, sizeof(hits));
	for (int r = 0; r < RUNS; r++) {
		ck_assert_uint_eq(remote_verify_choose(blk, N,
		                      REMOTE_VERIFY_SAMPLE),
		    REMOTE_VERIFY_K);
		for (size_t i = 0; i < N; i++) {
			hits[i] += blk[i]->check;
			if (r == 0)
				first[i] = blk[i]->check;
			else if (first[i] != blk[i]->check)
				differ = true;
		}
	}
	for (size_t i = 0; i < N; i++)
		ck_assert_msg(fabs(hits[i] - mean) < 6 * sd,
		    "block %zu chosen %u times of %d, %.0f expected", i,
		    hits[i], RUNS, mean);
	ck_assert(differ);
	blocks_free(N);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("remote_verify");
	TCase *tc = tcase_create("choice");

	tcase_add_test(tc, test_sample_size);
	tcase_add_test(tc, test_sample_bound);
	tcase_add_test(tc, test_small_file_all);
	tcase_add_test(tc, test_large_file_sample);
	tcase_add_test(tc, test_held_skipped);
	tcase_add_test(tc, test_uniform);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
