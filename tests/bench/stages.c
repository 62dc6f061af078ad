/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The stages of seed 001's Fig. 3 on the CPU, ferry's way
 * (tests/bench/README; transmit is stages_xmit.c's): for
 * every chunk of the file, in turn, chunk (read it from the file), hash
 * (SHA-512), key (PBKDF2-HMAC-SHA512 of the hash, salted as
 * src/storage/chunk.c salts it), encrypt (the AEAD of core/aead.h, a
 * context per chunk as storage_seal() makes one) and name (BLAKE2b-256 of
 * the sealed block, its DHT key), each timed alone in the thread's CPU
 * time (so that a busy machine's other work is not counted; the pipeline
 * of stages_pipe.c is timed by the clock). The calls are those
 * of chunk.c, taken apart so that each can be timed; the pipeline of
 * stages_pipe.c runs storage_seal() itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/aead.h"
#include "dht/dhtkey.h"
#include "storage/chunk.h"
#include "stages_bench.h"

static int
sg_chunk(struct sg_ctx *c)
{
	ssize_t n = pread(c->in->fd, c->chunk, c->len, (off_t)c->offset);

	return n == (ssize_t)c->len ? 0 : -EIO;
}

static int
sg_hash(struct sg_ctx *c)
{
	unsigned len = 0;

	return EVP_Digest(c->chunk, c->len, c->hash, &len, EVP_sha512(),
	           NULL) == 1
	    ? 0
	    : -EIO;
}

static int
sg_key(struct sg_ctx *c)
{
	return PKCS5_PBKDF2_HMAC((const char *)c->hash, sizeof(c->hash),
	           c->salt, sizeof(c->salt), (int)c->so->stage_iters,
	           EVP_sha512(), sizeof(c->key), c->key) == 1
	    ? 0
	    : -EIO;
}

static int
sg_encrypt(struct sg_ctx *c)
{
	uint8_t ad[2] = { c->so->aes ? STORAGE_CIPHER_AESGCM
		                     : STORAGE_CIPHER_CHACHA20,
		STORAGE_KIND_DATA };
	struct aead *a = aead_new(c->so->aes, c->key, true);
	int r;

	if (a == NULL)
		return -ENOMEM;
	c->sealed[0] = ad[0];
	r = aead_seal(a, 0, ad, sizeof(ad), c->chunk, c->len, c->sealed + 1);
	aead_free(a);
	c->sealed_len = storage_sealed_len(c->len);
	return r;
}

static int
sg_name(struct sg_ctx *c)
{
	struct dhtkey k;

	dhtkey_of_block(c->sealed, c->sealed_len, &k);
	memcpy(c->name, k.b, sizeof(c->name));
	return 0;
}

/* This thread's CPU time: on a shared machine, time spent waiting for
 * the CPU is not counted against a stage (the system call costs about
 * 0.3 us, twice per stage). */
static uint64_t
sg_cpu_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const struct sg_stage sg_stages[] = {
	{ "chunk", sg_chunk },
	{ "hash", sg_hash },
	{ "key", sg_key },
	{ "encrypt", sg_encrypt },
	{ "name", sg_name },
};
const unsigned sg_n_stages = sizeof(sg_stages) / sizeof(sg_stages[0]);

void
sg_blocks_free(struct sg_blocks *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->data[i]);
	free(b->data);
	free(b->len);
	memset(b, 0, sizeof(*b));
}

/* A copy of c's sealed block into b. */
static int
sg_blocks_add(struct sg_blocks *b, const struct sg_ctx *c)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		uint8_t **d = realloc(b->data, cap * sizeof(*d));
		size_t *l;

		if (d == NULL)
			return -ENOMEM;
		b->data = d;
		l = realloc(b->len, cap * sizeof(*l));
		if (l == NULL)
			return -ENOMEM;
		b->len = l;
		b->cap = cap;
	}
	b->data[b->n] = malloc(c->sealed_len);
	if (b->data[b->n] == NULL)
		return -ENOMEM;
	memcpy(b->data[b->n], c->sealed, c->sealed_len);
	b->len[b->n++] = c->sealed_len;
	return 0;
}

int
sg_time_stages(const struct sg_opts *so, const struct sg_file *in,
    unsigned size, double *secs, struct sg_blocks *keep)
{
	static uint32_t runs;
	struct sg_ctx c = { .so = so, .in = in };
	int r = 0;

	c.chunk = malloc(size);
	c.sealed = malloc(storage_sealed_len(size));
	if (c.chunk == NULL || c.sealed == NULL) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(c.salt, "ferry-storage-v1", 16);
	c.salt[16] = STORAGE_KIND_DATA;
	c.salt[17] = so->aes ? STORAGE_CIPHER_AESGCM : STORAGE_CIPHER_CHACHA20;
	memset(c.salt + 18, 0x5a, 32);
	/* As another convergence secret would: other blocks every run, so
	 * that the transmit stage never puts a block the DHT holds. */
	runs++;
	memcpy(c.salt + 18, &runs, sizeof(runs));
	for (unsigned s = 0; s < sg_n_stages; s++)
		secs[s] = 0;
	for (c.offset = 0; c.offset < in->size && r == 0; c.offset += size) {
		c.len = in->size - c.offset < size
		    ? (size_t)(in->size - c.offset)
		    : size;
		for (unsigned s = 0; s < sg_n_stages && r == 0; s++) {
			uint64_t t0 = sg_cpu_ns();

			r = sg_stages[s].fn(&c);
			secs[s] += (double)(sg_cpu_ns() - t0) / 1e9;
		}
		if (r == 0 && keep != NULL)
			r = sg_blocks_add(keep, &c);
	}
out:
	free(c.chunk);
	free(c.sealed);
	return r;
}

double
sg_pbkdf2_us(unsigned iterations, unsigned min_ms)
{
	uint8_t hash[64], salt[50], key[32];
	uint64_t t0 = sg_cpu_ns(), t;
	unsigned n = 0;

	memset(hash, 0x11, sizeof(hash));
	memset(salt, 0x22, sizeof(salt));
	do {
		if (PKCS5_PBKDF2_HMAC((const char *)hash, sizeof(hash), salt,
		        sizeof(salt), (int)iterations, EVP_sha512(),
		        sizeof(key), key) != 1)
			return -1;
		n++;
		t = sg_cpu_ns() - t0;
	} while (t < (uint64_t)min_ms * 1000000);
	return (double)t / 1e3 / n;
}
