/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shared by bench_stages.c (options, tables, CSV), stages.c (the time of
 * each stage of seed 001's upload pipeline, and PBKDF2's cost per
 * iteration count), stages_xmit.c (its transmit stage, into the DHT of
 * two daemons), stages_pipe.c (the whole pipeline, read to write, on
 * one thread and on several) and stages_erasure.c (ISA-L's erasure
 * coding of groups of blocks, issue 16). See tests/bench/README.
 */
#ifndef FERRY_BENCH_STAGES_BENCH_H
#define FERRY_BENCH_STAGES_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define SG_MAX_SIZES       16
#define SG_MAX_ITERS       8
#define SG_MAX_THREADS     4
#define SG_MAX_STAGES      8
#define SG_XMIT_WINDOW_MAX 64 /* -W: blocks in flight, at most */
#define SG_XMIT_REPS       3  /* transmit runs per chunk size, at most */
#define SG_MAX_EC          8  /* -e: k + m shapes */
/* What the erasure stage measures, in this order: encode, decode (with
 * min(k, m) data blocks missing), memcpy and AEAD of the same data. */
#define SG_EC_METHODS      4

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
	bool want_stages, want_xmit, want_pbkdf2, want_pipe; /* -w */
	bool want_erasure;                                   /* -w */
	unsigned ec_k[SG_MAX_EC], ec_m[SG_MAX_EC]; /* -e: k + m shapes */
	unsigned n_ec;
	unsigned window; /* -W: transmit's blocks in flight */
	const char *dir; /* -d: where the files go */
};

/* The input: a file of random bytes, open for reading. */
struct sg_file {
	char path[4096];
	int fd;
	uint64_t size;
};

/* The sealed blocks of one run, kept for the transmit stage. */
struct sg_blocks {
	uint8_t **data;
	size_t *len;
	size_t n, cap;
};
/* Frees what b holds (b itself is the caller's). */
void sg_blocks_free(struct sg_blocks *b);

/*
 * One stage of the upload of one chunk, on this process's CPU. Stages
 * run in table order on the same context; each is timed alone. The
 * transmit stage, which waits on daemons, is stages_xmit.c's.
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
 * bytes, into secs[sg_n_stages]; each run's blocks differ from every
 * other run's (their keys are salted apart). keep (may be NULL) gets a
 * copy of every sealed block. 0 or a negative errno. */
int sg_time_stages(const struct sg_opts *so, const struct sg_file *in,
    unsigned size, double *secs, struct sg_blocks *keep);

/* Two daemons linked over UDP on loopback for the transmit stage, whose
 * puts keep window blocks in flight. 0 or a negative errno (said). */
struct sg_xmit;
int sg_xmit_start(unsigned window, struct sg_xmit **ret);
void sg_xmit_stop(struct sg_xmit *x);
/* Puts every block of b into the DHT (replication 2), each up to 8
 * times; wall seconds into *ret_secs, puts made again into
 * *ret_retries. 0 or the first failure a block did not get past. */
int sg_xmit_run(struct sg_xmit *x, const struct sg_blocks *b, double *ret_secs,
    unsigned *ret_retries);
/* CPU microseconds of one PBKDF2-HMAC-SHA512 key of 32 bytes from a
 * 64-byte hash at iterations, over calls adding up to at least min_ms. */
double sg_pbkdf2_us(unsigned iterations, unsigned min_ms);
/* MB/s (10^6 bytes) of the whole pipeline through codec c: read, seal
 * (SHA-512, key, AEAD, block key), write, with chunks of size bytes on
 * threads threads, passes times over the file. Negative errno on failure. */
double sg_pipeline(const struct sg_file *in, const struct storage_codec *c,
    unsigned size, unsigned threads, unsigned passes);

/* The erasure stage for k data and m parity blocks of block bytes each:
 * MB/s of data (10^6 bytes a CPU second) of each method, so->o.reps
 * times, into ret. 0 or a negative errno. */
int sg_erasure_point(const struct sg_opts *so, unsigned k, unsigned m,
    size_t block, struct bench_summary ret[SG_EC_METHODS]);

#endif /* FERRY_BENCH_STAGES_BENCH_H */
