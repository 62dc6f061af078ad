/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * imd_sign: what a thin client signs for an intermediary, for tests that
 * drive ferry-intermediary(7) with curl, the command-line tool. Written
 * from the page with libsodium alone, not with ferryd's code, so that a
 * test that passes shows the page and the daemon agree.
 *
 *   imd_sign id KEYFILE
 *       prints the client id of KEYFILE (32 bytes of Ed25519 seed, made
 *       with mode 0600 if missing)
 *   imd_sign auth KEYFILE INTERMEDIARY METHOD TARGET [TIME [NONCE]]
 *       prints "Authorization: Ferry CLIENT:TIME:NONCE:SIG"; TIME
 *       defaults to now (+N or -N: now plus or minus N seconds), NONCE
 *       (base32) to 16 random bytes; TIME "bad" signs for another target
 *   imd_sign put KEYFILE BLOCK_SIZE IN OUT [REPLICATION [EXPIRY [BAD]]]
 *       cuts IN into blocks and writes their upload records to OUT
 *       (POST /v1/blocks), printing each block's key and put_hash, one
 *       pair a line; REPLICATION defaults to 3, EXPIRY to a day from now
 *       (+N: now plus N s), BAD is the index of a record whose signature
 *       is spoiled
 *   imd_sign keys OUT KEY...
 *       writes the 32-byte keys (base32) to OUT: a POST /v1/fetch body
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/base32.h"
#include "lib/wire.h"

#define REQ_PREFIX "ferry intermediary request v1"
#define PUT_PREFIX "ferry dht put v1"

static unsigned char pk[crypto_sign_PUBLICKEYBYTES];
static unsigned char sk[crypto_sign_SECRETKEYBYTES];

static void
die(const char *what)
{
	fprintf(stderr, "imd_sign: %s\n", what);
	exit(2);
}

static void
load_key(const char *path)
{
	unsigned char seed[crypto_sign_SEEDBYTES];
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		randombytes_buf(seed, sizeof(seed));
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || write(fd, seed, sizeof(seed)) != sizeof(seed))
			die("cannot write the key file");
	} else if (read(fd, seed, sizeof(seed)) != sizeof(seed)) {
		die("the key file is not 32 bytes");
	}
	(void)close(fd);
	crypto_sign_seed_keypair(pk, sk, seed);
	sodium_memzero(seed, sizeof(seed));
}

/* prefix NUL || data, signed. */
static void
sign(const char *prefix, const unsigned char *data, size_t len,
    unsigned char sig[64])
{
	size_t pl = strlen(prefix) + 1;
	unsigned char *m = malloc(pl + len);

	if (m == NULL)
		die("out of memory");
	memcpy(m, prefix, pl);
	memcpy(m + pl, data, len);
	crypto_sign_detached(sig, NULL, m, pl + len, sk);
	free(m);
}

static uint64_t
time_arg(const char *s, uint64_t def_offset)
{
	uint64_t now = (uint64_t)time(NULL);

	if (s == NULL)
		return now + def_offset;
	if (s[0] == '+')
		return now + strtoull(s + 1, NULL, 10);
	if (s[0] == '-')
		return now - strtoull(s + 1, NULL, 10);
	return strtoull(s, NULL, 10);
}

static int
cmd_auth(int argc, char **argv)
{
	unsigned char id[32], nonce[16], sig[64], *m, *p;
	char s_client[BASE32_LEN(32) + 1], s_nonce[BASE32_LEN(16) + 1];
	char s_sig[BASE32_LEN(64) + 1];
	const char *method = argv[4], *target = argv[5];
	bool bad = argc > 6 && strcmp(argv[6], "bad") == 0;
	uint64_t t = time_arg(argc > 6 && !bad ? argv[6] : NULL, 0);
	size_t len;

	if (base32_decode(argv[3], strlen(argv[3]), id, sizeof(id)) < 0)
		die("INTERMEDIARY is not a peer id");
	if (argc > 7) {
		if (base32_decode(argv[7], strlen(argv[7]), nonce,
		        sizeof(nonce)) < 0)
			die("NONCE is not 16 bytes of base32");
	} else {
		randombytes_buf(nonce, sizeof(nonce));
	}
	if (bad)
		target = "/elsewhere";
	len = 32 + strlen(method) + 1 + strlen(target) + 1 + 8 + 16;
	m = p = malloc(len);
	if (m == NULL)
		die("out of memory");
	memcpy(p, id, 32);
	p += 32;
	memcpy(p, method, strlen(method) + 1);
	p += strlen(method) + 1;
	memcpy(p, target, strlen(target) + 1);
	p += strlen(target) + 1;
	wire_put64(p, t);
	memcpy(p + 8, nonce, 16);
	sign(REQ_PREFIX, m, len, sig);
	free(m);
	base32_encode(pk, 32, s_client);
	base32_encode(nonce, 16, s_nonce);
	base32_encode(sig, 64, s_sig);
	printf("Authorization: Ferry %s:%llu:%s:%s\n", s_client,
	    (unsigned long long)t, s_nonce, s_sig);
	return 0;
}

/* One record of block: u32 len, version, replication, u64 expiry, sig,
 * block; prints its key and put_hash. */
static void
put_record(FILE *out, const unsigned char *block, size_t len,
    unsigned replication, uint64_t expiry, bool spoil)
{
	unsigned char key[32], signed_part[41], sig[64], head[78], hash[32];
	char s_key[BASE32_LEN(32) + 1], s_hash[BASE32_LEN(32) + 1];
	crypto_generichash_state st;

	crypto_generichash(key, 32, block, len, NULL, 0);
	memcpy(signed_part, key, 32);
	signed_part[32] = (unsigned char)replication;
	wire_put64(signed_part + 33, expiry);
	sign(PUT_PREFIX, signed_part, sizeof(signed_part), sig);
	if (spoil)
		sig[7] ^= 0x40;
	wire_put32(head, (uint32_t)(74 + len));
	head[4] = 1;
	head[5] = (unsigned char)replication;
	wire_put64(head + 6, expiry);
	memcpy(head + 14, sig, 64);
	if (fwrite(head, 1, sizeof(head), out) != sizeof(head) ||
	    fwrite(block, 1, len, out) != len)
		die("cannot write OUT");
	/* put_hash: key || replication || expiry || origin_pk || sig */
	crypto_generichash_init(&st, NULL, 0, 32);
	crypto_generichash_update(&st, signed_part, sizeof(signed_part));
	crypto_generichash_update(&st, pk, 32);
	crypto_generichash_update(&st, sig, 64);
	crypto_generichash_final(&st, hash, 32);
	base32_encode(key, 32, s_key);
	base32_encode(hash, 32, s_hash);
	printf("%s %s\n", s_key, s_hash);
}

static int
cmd_put(int argc, char **argv)
{
	size_t bs = strtoull(argv[3], NULL, 10), n;
	unsigned replication = argc > 6 ? (unsigned)atoi(argv[6]) : 3;
	uint64_t expiry = time_arg(argc > 7 ? argv[7] : NULL, 86400);
	long bad = argc > 8 ? atol(argv[8]) : -1;
	FILE *in = fopen(argv[4], "rb"), *out = fopen(argv[5], "wb");
	unsigned char *block = malloc(bs > 0 ? bs : 1);

	if (in == NULL || out == NULL || block == NULL || bs == 0)
		die("cannot open IN or OUT, or BLOCK_SIZE is 0");
	for (long i = 0; (n = fread(block, 1, bs, in)) > 0; i++)
		put_record(out, block, n, replication, expiry, i == bad);
	if (fclose(out) != 0)
		die("cannot write OUT");
	(void)fclose(in);
	free(block);
	return 0;
}

static int
cmd_keys(int argc, char **argv)
{
	FILE *out = fopen(argv[2], "wb");
	unsigned char key[32];

	if (out == NULL)
		die("cannot open OUT");
	for (int i = 3; i < argc; i++) {
		if (base32_decode(argv[i], strlen(argv[i]), key, 32) < 0)
			die("a KEY is not 32 bytes of base32");
		if (fwrite(key, 1, 32, out) != 32)
			die("cannot write OUT");
	}
	return fclose(out) == 0 ? 0 : 2;
}

int
main(int argc, char **argv)
{
	char s[BASE32_LEN(32) + 1];

	if (sodium_init() < 0)
		die("libsodium failed");
	if (argc >= 3 && strcmp(argv[1], "id") == 0) {
		load_key(argv[2]);
		base32_encode(pk, 32, s);
		printf("%s\n", s);
		return 0;
	}
	if (argc >= 6 && strcmp(argv[1], "auth") == 0) {
		load_key(argv[2]);
		return cmd_auth(argc, argv);
	}
	if (argc >= 6 && strcmp(argv[1], "put") == 0) {
		load_key(argv[2]);
		return cmd_put(argc, argv);
	}
	if (argc >= 3 && strcmp(argv[1], "keys") == 0)
		return cmd_keys(argc, argv);
	fprintf(stderr,
	    "usage: imd_sign id|auth|put|keys ... (see its source)\n");
	return 2;
}
