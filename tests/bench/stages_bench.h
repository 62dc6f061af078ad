/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shared by bench_stages.c (options, tables, CSV), stages.c (the time of
 * each stage of seed 001's upload pipeline, and PBKDF2's cost per
 * iteration count) and stages_pipe.c (the whole pipeline, read to write,
 * on one thread and on several). See tests/bench/README.
 */
#ifndef FERRY_BENCH_STAGES_BENCH_H
#define FERRY_BENCH_STAGES_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define SG_MAX_SIZES   16
#define SG_MAX_ITERS   8
#define SG_MAX_THREADS 4
#define SG_MAX_STAGES  8

struct storage_codec;

struct sg_opts {
	struct bench_opts o;
	uint64_t file_size;           /* -f: bytes of the random file */
	unsigned sizes[SG_MAX_SIZES]; /* -k: chunk sizes */
	unsigned n_sizes;
	unsigned iters[SG_MAX_ITERS]; /* -i: PBKDF2 iteration counts */
	unsigned n_iters;
	unsigned stage_iters;             /* -I: iterations in the stages */
	unsigned threads[SG_MAX_THREADS]; /* -T: pipeline thread counts */
	unsigned n_threads;
	bool aes; /* -a: AES-256-GCM, else ChaCha */
	bool want_stages, want_pbkdf2, want_pipe; /* -w */
	const char *dir;                          /* -d: where the files go */
};

/* The input: a file of random bytes, open for reading. */
struct sg_file {
	char path[4096];
	int fd;
	uint64_t size;
};

/*
 * One stage of the upload of one chunk. Stages run in table order on the
 * same context; each is timed alone. To add one (the transmit stage, with
 * daemons), append it to sg_stages in stages.c.
 */
struct sg_ctx {
	const struct sg_opts *so;
	const struct sg_file *in;
	uint64_t offset;  /* of the chunk in the file */
	size_t len;       /* of the chunk */
	uint8_t *chunk;   /* its plaintext (len bytes) */
	uint8_t hash[64]; /* SHA-512 of it */
	uint8_t key[32];  /* derived from the hash */
	uint8_t *sealed;  /* the sealed block */
	size_t sealed_len;
	uint8_t salt[50]; /* as src/storage/chunk.c builds it */
	uint8_t name[32]; /* the block's DHT key */
};
typedef int sg_stage_fn(struct sg_ctx *c);
struct sg_stage {
	const char *name; /* column of the table and CSV */
	sg_stage_fn *fn;
};
extern const struct sg_stage sg_stages[];
extern const unsigned sg_n_stages;

/* CPU seconds each stage took for the whole file with chunks of size
 * bytes, into secs[sg_n_stages]. 0 or a negative errno. */
int sg_time_stages(const struct sg_opts *so, const struct sg_file *in,
    unsigned size, double *secs);
/* CPU microseconds of one PBKDF2-HMAC-SHA512 key of 32 bytes from a
 * 64-byte hash at iterations, over calls adding up to at least min_ms. */
double sg_pbkdf2_us(unsigned iterations, unsigned min_ms);
/* MB/s (10^6 bytes) of the whole pipeline through codec c: read, seal
 * (SHA-512, key, AEAD, block key), write, with chunks of size bytes on
 * threads threads, passes times over the file. Negative errno on failure. */
double sg_pipeline(const struct sg_file *in, const struct storage_codec *c,
    unsigned size, unsigned threads, unsigned passes);

#endif /* FERRY_BENCH_STAGES_BENCH_H */
