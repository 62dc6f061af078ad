/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Issue 13, benchmarks 1 and 3 (tests/bench/README): seed 001's Fig. 3
 * for ferry's encoding, the time of each stage of the upload of a 20 MB
 * random file (chunk, hash, key, encrypt, name on the CPU; transmit, the
 * sealed blocks put into the DHT of two daemons linked over UDP, by the
 * clock) at chunk sizes from 8 KiB to 4 MiB, median of several runs;
 * PBKDF2's cost per chunk at 1, 10, 100 and 1000 iterations against what
 * hashing and encrypting a chunk cost; and the machine's own pipeline
 * limit (read, storage_seal, write) on one thread and on two; and, for
 * issue 16, ISA-L's erasure encode and decode rates for groups of sealed
 * chunks against memcpy and the AEAD in the same run. A program, not a
 * test: nothing here asserts a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/rand.h>
#include <sodium.h>

#include <ferry/proto.h>

#include "core/aead.h"
#include "lib/log.h"
#include "storage/chunk.h"
#include "storage/erasure.h"
#include "stages_bench.h"

static const char sg_usage[] =
    " [-f MB] [-k SIZES] [-i ITERS] [-I N] [-T THREADS] [-a aes|chacha]\n"
    "       [-w stages,transmit,pbkdf2,pipeline,erasure] [-W N] [-d DIR]\n"
    "       [-e K+M,...]\n"
    "  -f MB      size of the random file, 10^6 bytes (default 20; -q 4)\n"
    "  -k SIZES   chunk sizes, bytes or with k/m (default 8k,16k,...,4m)\n"
    "  -i ITERS   PBKDF2 iteration counts to cost (default 1,10,100,1000)\n"
    "  -I N       iterations in the stages and the pipeline (default\n"
    "             STORAGE_ITERATIONS_DEFAULT)\n"
    "  -T THREADS pipeline thread counts (default 1,2)\n"
    "  -a CIPHER  aes or chacha (default: as the link layer chooses)\n"
    "  -w WHAT    what to measure (default all five; transmit needs\n"
    "             stages, and starts two daemons)\n"
    "  -W N       transmit: blocks in flight (default 8)\n"
    "  -d DIR     where the files go ($TMPDIR or /tmp)\n"
    "  -e K+M,... erasure: data + parity blocks of a group (default\n"
    "             4+4,8+4,10+4,8+8,16+8)";

/* Parses "8k,1m,300" into v (at most max). Number of values, or -1. */
static int
sg_list(const char *arg, unsigned *v, unsigned max, unsigned long limit)
{
	unsigned n = 0;
	char *end;

	for (const char *p = arg; *p != '\0';) {
		unsigned long x = strtoul(p, &end, 10);

		if (*end == 'k' || *end == 'K')
			x <<= 10, end++;
		else if (*end == 'm' || *end == 'M')
			x <<= 20, end++;
		if (end == p || x == 0 || x > limit || n == max ||
		    (*end != ',' && *end != '\0'))
			return -1;
		v[n++] = (unsigned)x;
		p = *end == ',' ? end + 1 : end;
	}
	return n > 0 ? (int)n : -1;
}

static int
sg_what(struct sg_opts *so, const char *arg)
{
	so->want_stages = strstr(arg, "stages") != NULL;
	so->want_xmit = so->want_stages && strstr(arg, "transmit") != NULL;
	so->want_pbkdf2 = strstr(arg, "pbkdf2") != NULL;
	so->want_pipe = strstr(arg, "pipeline") != NULL;
	so->want_erasure = strstr(arg, "erasure") != NULL;
	return so->want_stages || so->want_pbkdf2 || so->want_pipe ||
	        so->want_erasure
	    ? 0
	    : -1;
}

/* Parses "4+4,10+4" into so's erasure shapes. 0 or -1. */
static int
sg_ec_list(struct sg_opts *so, const char *arg)
{
	char *end;

	so->n_ec = 0;
	for (const char *p = arg; *p != '\0';) {
		unsigned long k = strtoul(p, &end, 10), m;

		if (end == p || *end != '+' || so->n_ec == SG_MAX_EC)
			return -1;
		p = end + 1;
		m = strtoul(p, &end, 10);
		if (end == p || k < 1 || k > ERASURE_K_MAX ||
		    m > ERASURE_M_MAX || (*end != ',' && *end != '\0'))
			return -1;
		so->ec_k[so->n_ec] = (unsigned)k;
		so->ec_m[so->n_ec++] = (unsigned)m;
		p = *end == ',' ? end + 1 : end;
	}
	return so->n_ec > 0 ? 0 : -1;
}

static int
sg_opt(int opt, const char *arg, void *cls)
{
	struct sg_opts *so = cls;
	int n;

	switch (opt) {
	case 'f':
		so->file_size = strtoull(arg, NULL, 10) * 1000000;
		return so->file_size > 0 ? 0 : -1;
	case 'k':
		n = sg_list(arg, so->sizes, SG_MAX_SIZES, 4u << 20);
		so->n_sizes = n > 0 ? (unsigned)n : 0;
		return n;
	case 'i':
		n = sg_list(arg, so->iters, SG_MAX_ITERS,
		    STORAGE_ITERATIONS_MAX);
		so->n_iters = n > 0 ? (unsigned)n : 0;
		return n;
	case 'I':
		return sg_list(arg, &so->stage_iters, 1,
		    STORAGE_ITERATIONS_MAX);
	case 'T':
		n = sg_list(arg, so->threads, SG_MAX_THREADS, SG_MAX_THREADS);
		so->n_threads = n > 0 ? (unsigned)n : 0;
		return n;
	case 'a':
		so->aes = strcmp(arg, "aes") == 0;
		return so->aes || strcmp(arg, "chacha") == 0 ? 0 : -1;
	case 'w':
		return sg_what(so, arg);
	case 'W':
		n = sg_list(arg, &so->window, 1, SG_XMIT_WINDOW_MAX);
		return n;
	case 'd':
		so->dir = arg;
		return 0;
	case 'e':
		return sg_ec_list(so, arg);
	default:
		return -1;
	}
}

/* The random input file, written once and read from the page cache. */
static int
sg_file_make(const struct sg_opts *so, struct sg_file *f)
{
	uint8_t *buf = malloc(1 << 20);
	uint64_t done = 0;
	int r = 0;

	(void)snprintf(f->path, sizeof(f->path), "%s/ferry-bench-stages-%ld",
	    so->dir, (long)getpid());
	f->size = so->file_size;
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (buf == NULL || f->fd < 0) {
		free(buf);
		return -errno;
	}
	while (done < f->size && r == 0) {
		size_t n =
		    f->size - done < (1 << 20) ? f->size - done : 1 << 20;

		if (RAND_bytes(buf, (int)n) != 1 ||
		    pwrite(f->fd, buf, n, (off_t)done) != (ssize_t)n)
			r = -EIO;
		done += n;
	}
	free(buf);
	return r;
}

static const char *
sg_size_name(unsigned size, char *buf, size_t n)
{
	if (size >= (1u << 20) && size % (1u << 20) == 0)
		(void)snprintf(buf, n, "%u MiB", size >> 20);
	else if (size >= 1024 && size % 1024 == 0)
		(void)snprintf(buf, n, "%u KiB", size >> 10);
	else
		(void)snprintf(buf, n, "%u B", size);
	return buf;
}

/* Medians of the stage times, ms, by chunk size and stage; transmit's,
 * NAN where it was not measured. */
struct sg_results {
	double ms[SG_MAX_SIZES][SG_MAX_STAGES];
	double xmit_ms[SG_MAX_SIZES];
	unsigned xmit_retries[SG_MAX_SIZES]; /* over its runs */
	uint64_t chunks[SG_MAX_SIZES];
	bool have;
};

/* Whether a sealed chunk of size bytes is one DHT block. */
static bool
sg_xmit_fits(unsigned size)
{
	return storage_sealed_len(size) <= FERRY_DHT_BLOCK_MAX;
}

/* One chunk size's stages, reps times, and its transmit on x (NULL:
 * none) the first SG_XMIT_REPS of them; medians into res. */
static int
sg_stages_size(const struct sg_opts *so, const struct sg_file *in, unsigned si,
    struct sg_xmit *x, struct sg_results *res)
{
	double v[SG_MAX_STAGES][64], secs[SG_MAX_STAGES], t[SG_XMIT_REPS];
	unsigned reps = so->o.reps < 64 ? so->o.reps : 64, nt = 0;
	struct sg_blocks blocks = { 0 };
	struct bench_summary sum;
	unsigned retries;
	int err = 0;

	res->xmit_retries[si] = 0;
	if (!sg_xmit_fits(so->sizes[si]))
		x = NULL;
	for (unsigned r = 0; r < reps && err == 0; r++) {
		bool send = x != NULL && r < SG_XMIT_REPS;

		err = sg_time_stages(so, in, so->sizes[si], secs,
		    send ? &blocks : NULL);
		for (unsigned s = 0; err == 0 && s < sg_n_stages; s++)
			v[s][r] = secs[s] * 1e3;
		if (err == 0 && send) {
			err = sg_xmit_run(x, &blocks, &t[nt], &retries);
			t[nt++] *= 1e3;
			res->xmit_retries[si] += retries;
		}
		sg_blocks_free(&blocks);
	}
	if (err < 0)
		return err;
	for (unsigned s = 0; s < sg_n_stages; s++) {
		bench_summarize(v[s], reps, &sum);
		res->ms[si][s] = sum.median;
	}
	res->xmit_ms[si] = NAN;
	if (nt > 0) {
		bench_summarize(t, nt, &sum);
		res->xmit_ms[si] = sum.median;
	}
	res->chunks[si] = (in->size + so->sizes[si] - 1) / so->sizes[si];
	return 0;
}

static int
sg_run_stages(const struct sg_opts *so, const struct sg_file *in,
    struct sg_xmit *x, struct sg_results *res)
{
	char name[32], header[256] = "chunk_size,chunks";
	FILE *csv;

	for (unsigned s = 0; s < sg_n_stages; s++)
		(void)snprintf(header + strlen(header),
		    sizeof(header) - strlen(header), ",%s_ms",
		    sg_stages[s].name);
	if (x != NULL)
		(void)snprintf(header + strlen(header),
		    sizeof(header) - strlen(header), ",transmit_ms");
	csv = bench_csv_open(&so->o, "stages.csv", header);
	if (csv == NULL)
		return -EIO;
	printf(
	    "\nStages of the upload of a %.0f MB random file (seed 001 Fig. 3), CPU ms, median of %u runs, %s, %u PBKDF2 iterations:\n",
	    (double)in->size / 1e6, so->o.reps,
	    so->aes ? "AES-256-GCM" : "ChaCha20-Poly1305", so->stage_iters);
	if (x != NULL)
		printf(
		    "transmit: the sealed blocks put into the DHT of 2 daemons linked over UDP on loopback, replication 2 (stored by both, one across the link), %u in flight; wall ms, median of %u runs\n",
		    so->window,
		    so->o.reps < SG_XMIT_REPS ? so->o.reps : SG_XMIT_REPS);
	printf("  %-8s %7s", "chunk", "chunks");
	for (unsigned s = 0; s < sg_n_stages; s++)
		printf(" %9s", sg_stages[s].name);
	printf(" %9s %8s", "total", "MB/s");
	if (x != NULL)
		printf(" %9s %8s", "transmit", "MB/s");
	printf("\n");
	for (unsigned si = 0; si < so->n_sizes; si++) {
		double total = 0;
		int r = sg_stages_size(so, in, si, x, res);

		if (r < 0) {
			(void)fclose(csv);
			return r;
		}
		printf("  %-8s %7llu",
		    sg_size_name(so->sizes[si], name, sizeof(name)),
		    (unsigned long long)res->chunks[si]);
		fprintf(csv, "%u,%llu", so->sizes[si],
		    (unsigned long long)res->chunks[si]);
		for (unsigned s = 0; s < sg_n_stages; s++) {
			printf(" %9.2f", res->ms[si][s]);
			fprintf(csv, ",%.4f", res->ms[si][s]);
			total += res->ms[si][s];
		}
		printf(" %9.2f %8.0f", total, (double)in->size / total / 1e3);
		if (x != NULL && isnan(res->xmit_ms[si]))
			printf(" %9s %8s", "n/a", "");
		else if (x != NULL)
			printf(" %9.1f %8.1f", res->xmit_ms[si],
			    (double)in->size / res->xmit_ms[si] / 1e3);
		if (x != NULL)
			fprintf(csv, ",%.4f", res->xmit_ms[si]);
		if (x != NULL && res->xmit_retries[si] > 0)
			printf("  (%u puts again)", res->xmit_retries[si]);
		printf("\n");
		fprintf(csv, "\n");
		(void)fflush(stdout);
	}
	res->have = true;
	return fclose(csv) == 0 ? 0 : -EIO;
}

/* Stage index by name, or -1. */
static int
sg_stage_index(const char *name)
{
	for (unsigned s = 0; s < sg_n_stages; s++)
		if (strcmp(sg_stages[s].name, name) == 0)
			return (int)s;
	return -1;
}

/* PBKDF2's cost per key at each iteration count; with the stages' hash
 * and encrypt times, its share of a chunk's cost at each chunk size. */
static int
sg_run_pbkdf2(const struct sg_opts *so, const struct sg_results *res)
{
	double us[SG_MAX_ITERS], v[64];
	unsigned reps = so->o.reps < 64 ? so->o.reps : 64;
	int hash = sg_stage_index("hash"), enc = sg_stage_index("encrypt");
	struct bench_summary sum;
	char name[32];
	FILE *csv = bench_csv_open(&so->o, "pbkdf2.csv", "iterations,us");

	if (csv == NULL)
		return -EIO;
	printf(
	    "\nPBKDF2-HMAC-SHA512, one 32-byte key from a 64-byte hash, median of %u:\n",
	    reps);
	for (unsigned i = 0; i < so->n_iters; i++) {
		for (unsigned r = 0; r < reps; r++)
			v[r] =
			    sg_pbkdf2_us(so->iters[i], so->o.quick ? 20 : 200);
		bench_summarize(v, reps, &sum);
		us[i] = sum.median;
		printf(
		    "  %7u iterations: %9.1f us per key (%.3f us per iteration)\n",
		    so->iters[i], us[i], us[i] / so->iters[i]);
		fprintf(csv, "%u,%.3f\n", so->iters[i], us[i]);
	}
	if (fclose(csv) != 0)
		return -EIO;
	if (!res->have || hash < 0 || enc < 0)
		return 0;
	csv = bench_csv_open(&so->o, "keyshare.csv",
	    "chunk_size,hash_us,encrypt_us,key_us_by_iterations...");
	if (csv == NULL)
		return -EIO;
	printf(
	    "\nPer chunk: SHA-512 and AEAD (us), and the key's share of hash + key + encrypt at each iteration count:\n  %-8s %9s %9s",
	    "chunk", "hash", "encrypt");
	for (unsigned i = 0; i < so->n_iters; i++)
		printf("  %6u it", so->iters[i]);
	printf("\n");
	for (unsigned si = 0; si < so->n_sizes; si++) {
		double h = res->ms[si][hash] * 1e3 / res->chunks[si];
		double e = res->ms[si][enc] * 1e3 / res->chunks[si];

		printf("  %-8s %9.1f %9.1f",
		    sg_size_name(so->sizes[si], name, sizeof(name)), h, e);
		fprintf(csv, "%u,%.3f,%.3f", so->sizes[si], h, e);
		for (unsigned i = 0; i < so->n_iters; i++) {
			printf("  %8.1f%%", 100 * us[i] / (h + e + us[i]));
			fprintf(csv, ",%.3f", us[i]);
		}
		printf("\n");
		fprintf(csv, "\n");
	}
	return fclose(csv) == 0 ? 0 : -EIO;
}

/* One size and thread count of the pipeline, reps times. */
static int
sg_pipe_point(const struct sg_opts *so, const struct sg_file *in,
    const struct storage_codec *c, unsigned size, unsigned threads,
    struct bench_summary *ret)
{
	unsigned reps = so->o.reps < 64 ? so->o.reps : 64;
	unsigned passes = so->o.quick ? 1 : (unsigned)(2e8 / in->size) + 1;
	double v[64];

	for (unsigned r = 0; r < reps; r++) {
		v[r] = sg_pipeline(in, c, size, threads, passes);
		if (v[r] < 0)
			return (int)v[r];
	}
	bench_summarize(v, reps, ret);
	return 0;
}

static int
sg_run_pipe(const struct sg_opts *so, const struct sg_file *in,
    const struct storage_codec *c)
{
	struct bench_summary sum;
	char name[32];
	FILE *csv = bench_csv_open(&so->o, "pipeline.csv",
	    "chunk_size,threads,mb_s,min,max");

	if (csv == NULL)
		return -EIO;
	printf(
	    "\nPipeline limit: read, storage_seal (SHA-512, PBKDF2 %u, %s, block key), write; MB/s, median of %u [min-max]:\n  %-8s",
	    so->stage_iters, so->aes ? "AES-256-GCM" : "ChaCha20-Poly1305",
	    so->o.reps, "chunk");
	for (unsigned t = 0; t < so->n_threads; t++)
		printf("   %u thread%s          ", so->threads[t],
		    so->threads[t] > 1 ? "s" : " ");
	printf("\n");
	for (unsigned si = 0; si < so->n_sizes; si++) {
		printf("  %-8s",
		    sg_size_name(so->sizes[si], name, sizeof(name)));
		for (unsigned t = 0; t < so->n_threads; t++) {
			int r = sg_pipe_point(so, in, c, so->sizes[si],
			    so->threads[t], &sum);

			if (r < 0) {
				(void)fclose(csv);
				return r;
			}
			printf("  %6.0f [%4.0f-%4.0f]  ", sum.median, sum.min,
			    sum.max);
			fprintf(csv, "%u,%u,%.1f,%.1f,%.1f\n", so->sizes[si],
			    so->threads[t], sum.median, sum.min, sum.max);
		}
		printf("\n");
		(void)fflush(stdout);
	}
	return fclose(csv) == 0 ? 0 : -EIO;
}

/* ISA-L's encode and decode of groups of sealed chunks of the default
 * size, against memcpy and the AEAD of the same bytes. */
static int
sg_run_erasure(const struct sg_opts *so)
{
	static const char *const name[SG_EC_METHODS] = { "encode", "decode",
		"memcpy", "aead" };
	size_t block = storage_sealed_len(STORAGE_CHUNK_SIZE_DEFAULT);
	struct bench_summary sum[SG_EC_METHODS];
	FILE *csv = bench_csv_open(&so->o, "erasure.csv",
	    "k,m,block,lost,encode_mb_s,encode_min,encode_max,decode_mb_s,decode_min,decode_max,memcpy_mb_s,memcpy_min,memcpy_max,aead_mb_s,aead_min,aead_max");

	if (csv == NULL)
		return -EIO;
	printf(
	    "\nErasure coding (ISA-L, Reed-Solomon, Cauchy) of groups of sealed %u KiB chunks (%zu bytes a block), MB/s of data a CPU second, median of %u [min-max]; decode with min(k, m) data blocks missing; memcpy and %s of the same data:\n  %-6s",
	    STORAGE_CHUNK_SIZE_DEFAULT >> 10, block, so->o.reps,
	    so->aes ? "AES-256-GCM" : "ChaCha20-Poly1305", "k+m");
	for (unsigned w = 0; w < SG_EC_METHODS; w++)
		printf("  %-19s", name[w]);
	printf("\n");
	for (unsigned i = 0; i < so->n_ec; i++) {
		unsigned k = so->ec_k[i], m = so->ec_m[i];
		int r = sg_erasure_point(so, k, m, block, sum);
		char shape[16];

		if (r < 0) {
			(void)fclose(csv);
			return r;
		}
		(void)snprintf(shape, sizeof(shape), "%u+%u", k, m);
		printf("  %-6s", shape);
		fprintf(csv, "%u,%u,%zu,%u", k, m, block, m < k ? m : k);
		for (unsigned w = 0; w < SG_EC_METHODS; w++) {
			printf("  %6.0f [%5.0f-%5.0f]", sum[w].median,
			    sum[w].min, sum[w].max);
			fprintf(csv, ",%.1f,%.1f,%.1f", sum[w].median,
			    sum[w].min, sum[w].max);
		}
		printf("\n");
		fprintf(csv, "\n");
		(void)fflush(stdout);
	}
	return fclose(csv) == 0 ? 0 : -EIO;
}

static void
sg_defaults(struct sg_opts *so)
{
	static const unsigned ec_k[] = { 4, 8, 10, 8, 16 };
	static const unsigned ec_m[] = { 4, 4, 4, 8, 8 };
	static const unsigned sizes[] = { 8 << 10, 16 << 10, 32 << 10, 64 << 10,
		128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20 };
	static const unsigned iters[] = { 1, 10, 100, 1000 };
	const char *tmp = getenv("TMPDIR");

	so->file_size = 20000000;
	memcpy(so->sizes, sizes, sizeof(sizes));
	so->n_sizes = sizeof(sizes) / sizeof(sizes[0]);
	memcpy(so->iters, iters, sizeof(iters));
	so->n_iters = sizeof(iters) / sizeof(iters[0]);
	so->stage_iters = STORAGE_ITERATIONS_DEFAULT;
	so->threads[0] = 1;
	so->threads[1] = 2;
	so->n_threads = 2;
	so->aes = aead_aes_fast();
	so->want_stages = so->want_xmit = true;
	so->want_pbkdf2 = so->want_pipe = true;
	so->want_erasure = true;
	memcpy(so->ec_k, ec_k, sizeof(ec_k));
	memcpy(so->ec_m, ec_m, sizeof(ec_m));
	so->n_ec = sizeof(ec_k) / sizeof(ec_k[0]);
	so->window = 8;
	so->dir = tmp != NULL && *tmp == '/' ? tmp : "/tmp";
}

int
main(int argc, char **argv)
{
	struct sg_opts so;
	struct sg_results res = { .have = false };
	struct storage_codec *c = NULL;
	struct sg_xmit *x = NULL;
	struct sg_file in = { .fd = -1 };
	uint8_t secret[STORAGE_SECRET_LEN];
	int r;

	/* Before aead_aes_fast(): libsodium detects the CPU's features in
	 * sodium_init(), and says "no AES" until then. */
	if (sodium_init() < 0)
		return 1;
	bench_env_init(); /* the transmit stage's daemons load plugins */
	sg_defaults(&so);
	bench_opts_parse(&so.o, argc, argv, "f:k:i:I:T:a:w:W:d:e:", sg_opt, &so,
	    sg_usage);
	if (so.o.quick && so.file_size == 20000000)
		so.file_size = 4000000;
	log_init("bench_stages", FERRY_LOG_WARNING);
	memset(secret, 0x5a, sizeof(secret));
	r = storage_codec_new(secret, so.stage_iters, so.aes, &c);
	if (r == 0)
		r = sg_file_make(&so, &in);
	if (r == 0 && so.want_stages && so.want_xmit)
		r = sg_xmit_start(so.window, &x);
	if (r == 0 && so.want_stages)
		r = sg_run_stages(&so, &in, x, &res);
	sg_xmit_stop(x);
	if (r == 0 && so.want_pbkdf2)
		r = sg_run_pbkdf2(&so, &res);
	if (r == 0 && so.want_pipe)
		r = sg_run_pipe(&so, &in, c);
	if (r == 0 && so.want_erasure)
		r = sg_run_erasure(&so);
	if (r < 0)
		fprintf(stderr, "bench_stages: %s\n", strerror(-r));
	if (in.fd >= 0) {
		(void)close(in.fd);
		(void)unlink(in.path);
	}
	storage_codec_free(c);
	return r == 0 ? 0 : 1;
}
