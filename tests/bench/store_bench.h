/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shared by bench_store.c (puts through the block store, and the disk's
 * raw rate in the same run) and store_layout.c (block bytes as SQLite
 * BLOBs or as files indexed by SQLite). See tests/bench/README.
 */
#ifndef FERRY_BENCH_STORE_BENCH_H
#define FERRY_BENCH_STORE_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"

#define SB_MAX_SIZES 4

struct sb_opts {
	struct bench_opts o;
	unsigned sizes[SB_MAX_SIZES]; /* -s: block sizes, bytes */
	unsigned n_sizes;
	unsigned count;  /* -n: blocks per run, at most */
	uint64_t budget; /* bytes per run, at most (count is cut to it) */
	unsigned window; /* -w: puts in flight; blocks per group commit */
	const char *dir; /* -d: where the databases go (the disk measured) */
};

/* Blocks in one run of blocks of size bytes. */
unsigned sb_count(const struct sb_opts *so, unsigned size);
/* A fresh scratch directory under so->dir, path in buf (PATH_MAX). */
int sb_mkdir(const struct sb_opts *so, char *buf, size_t size);
/* Removes a scratch directory and everything in it. */
void sb_rmtree(const char *path);
/* Drops the page cache of a file (its pages are clean: it was synced),
 * so that the next read comes from the disk. */
void sb_drop_cache(const char *path);
/* Fills buf with len bytes that differ with i; key i too. */
void sb_block(uint64_t i, uint8_t *buf, size_t len, uint8_t key[32]);
/* "1 KiB", "256 KiB" for the tables. */
const char *sb_size_name(unsigned size, char *buf, size_t n);

/* store_layout.c: the layout comparison; table on stdout, CSV in
 * so->o.out_dir/store_layout.csv. 0 or a negative errno. */
int sb_layout(const struct sb_opts *so);

#endif /* FERRY_BENCH_STORE_BENCH_H */
