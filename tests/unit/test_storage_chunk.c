/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Convergent sealing (src/storage/chunk.c): seal and open round trips
 * under both ciphers and at the edges of length; the same plaintext and
 * secret give the same block, another secret, kind or cipher a different
 * one; a last chunk padded to the chunk size opens to its own bytes; and
 * a block altered anywhere, opened with the wrong key, as the wrong kind
 * or with a length it does not have, or of an unknown cipher, is refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "storage/chunk.h"
#include "unit.h"

#define BIG (64 * 1024)

static uint8_t secret_a[STORAGE_SECRET_LEN], secret_b[STORAGE_SECRET_LEN];
static uint8_t *plain, *sealed, *opened;

static void
test_setup(void)
{
	uint64_t seed = 7;

	for (size_t i = 0; i < STORAGE_SECRET_LEN; i++) {
		secret_a[i] = (uint8_t)i;
		secret_b[i] = (uint8_t)(i + 1);
	}
	plain = malloc(BIG);
	sealed = malloc(storage_sealed_len(BIG));
	opened = malloc(BIG);
	ck_assert(plain != NULL && sealed != NULL && opened != NULL);
	for (size_t i = 0; i < BIG; i++)
		plain[i] = (uint8_t)unit_rand(&seed);
}

static void
test_teardown(void)
{
	free(plain);
	free(sealed);
	free(opened);
}

static struct storage_codec *
codec(const uint8_t *secret, bool aes)
{
	struct storage_codec *c = NULL;

	ck_assert_int_eq(storage_codec_new(secret, 3, aes, &c), 0);
	ck_assert_uint_eq(storage_codec_cipher(c),
	    aes ? STORAGE_CIPHER_AESGCM : STORAGE_CIPHER_CHACHA20);
	return c;
}

START_TEST(test_round_trip)
{
	static const size_t lens[] = { 0, 1, 15, 16, 17, 1000, 4096, BIG };
	struct storage_codec *c = codec(secret_a, _i == 1);

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t len = lens[k], got = 12345;
		struct storage_ref ref;

		ck_assert_int_eq(storage_seal(c, STORAGE_KIND_DATA, plain, len,
		                     sealed, &ref),
		    0);
		ck_assert_uint_eq(ref.len, len);
		ck_assert_uint_eq(sealed[0], storage_codec_cipher(c));
		if (len >= 16)
			ck_assert_mem_ne(sealed + 1, plain, 16);
		memset(opened, 0, BIG);
		ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, sealed,
		                     storage_sealed_len(len), opened, BIG,
		                     &got),
		    0);
		ck_assert_uint_eq(got, len);
		ck_assert_mem_eq(opened, plain, len);
		/* A node's plaintext length comes from the block. */
		ck_assert_int_eq(storage_seal(c, STORAGE_KIND_NODE, plain, len,
		                     sealed, &ref),
		    0);
		ref.len = 999999; /* a node's ref counts file bytes */
		ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_NODE, sealed,
		                     storage_sealed_len(len), opened, BIG,
		                     &got),
		    0);
		ck_assert_uint_eq(got, len);
		ck_assert_mem_eq(opened, plain, len);
	}
	/* An empty plaintext into no buffer at all. */
	{
		struct storage_ref ref;
		uint8_t blk[STORAGE_SEAL_OVERHEAD];
		size_t got = 1;

		ck_assert_int_eq(storage_seal(c, STORAGE_KIND_DATA, NULL, 0,
		                     blk, &ref),
		    0);
		ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, blk,
		                     sizeof(blk), NULL, 0, &got),
		    0);
		ck_assert_uint_eq(got, 0);
	}
	storage_codec_free(c);
}
END_TEST

/* Any CPU opens either cipher: the block says which it is. */
START_TEST(test_open_other_cipher)
{
	struct storage_codec *aes = codec(secret_a, true);
	struct storage_codec *cha = codec(secret_a, false);
	struct storage_ref ra, rc;
	uint8_t *sa = malloc(storage_sealed_len(1000));
	size_t got;

	ck_assert_ptr_nonnull(sa);
	ck_assert_int_eq(storage_seal(aes, STORAGE_KIND_DATA, plain, 1000, sa,
	                     &ra),
	    0);
	ck_assert_int_eq(storage_seal(cha, STORAGE_KIND_DATA, plain, 1000,
	                     sealed, &rc),
	    0);
	/* Different ciphers give different keys and blocks. */
	ck_assert_mem_ne(ra.key, rc.key, STORAGE_KEY_LEN);
	ck_assert_mem_ne(ra.block.b, rc.block.b, DHTKEY_LEN);
	ck_assert_int_eq(storage_open(&ra, STORAGE_KIND_DATA, sa,
	                     storage_sealed_len(1000), opened, BIG, &got),
	    0);
	ck_assert_mem_eq(opened, plain, 1000);
	ck_assert_int_eq(storage_open(&rc, STORAGE_KIND_DATA, sealed,
	                     storage_sealed_len(1000), opened, BIG, &got),
	    0);
	ck_assert_mem_eq(opened, plain, 1000);
	free(sa);
	storage_codec_free(aes);
	storage_codec_free(cha);
}
END_TEST

START_TEST(test_deterministic)
{
	bool aes = _i == 1;
	struct storage_codec *a1 = codec(secret_a, aes);
	struct storage_codec *a2 = codec(secret_a, aes);
	struct storage_codec *b = codec(secret_b, aes);
	uint8_t *again = malloc(storage_sealed_len(BIG));
	uint8_t *other = malloc(storage_sealed_len(BIG));
	struct storage_ref r1, r2, rb, rn;

	ck_assert(again != NULL && other != NULL);
	ck_assert_int_eq(storage_seal(a1, STORAGE_KIND_DATA, plain, BIG, sealed,
	                     &r1),
	    0);
	ck_assert_int_eq(storage_seal(a2, STORAGE_KIND_DATA, plain, BIG, again,
	                     &r2),
	    0);
	ck_assert_mem_eq(sealed, again, storage_sealed_len(BIG));
	ck_assert_mem_eq(&r1, &r2, sizeof(r1));
	/* Another secret: another key, and no byte run in common beyond
	 * chance (compare 8-byte words at the same offsets). */
	ck_assert_int_eq(storage_seal(b, STORAGE_KIND_DATA, plain, BIG, other,
	                     &rb),
	    0);
	ck_assert_mem_ne(r1.key, rb.key, STORAGE_KEY_LEN);
	ck_assert_mem_ne(r1.block.b, rb.block.b, DHTKEY_LEN);
	for (size_t i = 1; i + 8 <= storage_sealed_len(BIG); i += 8)
		ck_assert_mem_ne(sealed + i, other + i, 8);
	/* The same bytes as a node: another key and block. */
	ck_assert_int_eq(storage_seal(a1, STORAGE_KIND_NODE, plain, BIG, other,
	                     &rn),
	    0);
	ck_assert_mem_ne(r1.key, rn.key, STORAGE_KEY_LEN);
	ck_assert_mem_ne(r1.block.b, rn.block.b, DHTKEY_LEN);
	/* A one-byte change of the plaintext changes the key. */
	plain[BIG / 2] ^= 1;
	ck_assert_int_eq(storage_seal(a1, STORAGE_KIND_DATA, plain, BIG, other,
	                     &rb),
	    0);
	ck_assert_mem_ne(r1.key, rb.key, STORAGE_KEY_LEN);
	free(again);
	free(other);
	storage_codec_free(a1);
	storage_codec_free(a2);
	storage_codec_free(b);
}
END_TEST

/* The iteration count changes the key (it is in the derivation). */
START_TEST(test_iterations_matter)
{
	struct storage_codec *c1 = NULL, *c2 = NULL;
	uint8_t k1[STORAGE_KEY_LEN], k2[STORAGE_KEY_LEN];

	ck_assert_int_eq(storage_codec_new(secret_a, 1, true, &c1), 0);
	ck_assert_int_eq(storage_codec_new(secret_a, 2, true, &c2), 0);
	ck_assert_int_eq(storage_derive_key(c1, STORAGE_KIND_DATA, plain, 100,
	                     k1),
	    0);
	ck_assert_int_eq(storage_derive_key(c2, STORAGE_KIND_DATA, plain, 100,
	                     k2),
	    0);
	ck_assert_mem_ne(k1, k2, sizeof(k1));
	storage_codec_free(c1);
	storage_codec_free(c2);
	ck_assert_int_eq(storage_codec_new(secret_a, 0, true, &c1), -EINVAL);
	ck_assert_int_eq(storage_codec_new(secret_a, STORAGE_ITERATIONS_MAX + 1,
	                     true, &c1),
	    -EINVAL);
}
END_TEST

START_TEST(test_tamper)
{
	struct storage_codec *c = codec(secret_a, _i == 1);
	size_t len = 3000, slen = storage_sealed_len(len), got;
	struct storage_ref ref, bad;

	ck_assert_int_eq(storage_seal(c, STORAGE_KIND_DATA, plain, len, sealed,
	                     &ref),
	    0);
	/* Every flipped bit fails the hash check. */
	for (size_t i = 0; i < slen; i += 97) {
		sealed[i] ^= 0x10;
		ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, sealed,
		                     slen, opened, BIG, &got),
		    -EBADMSG);
		sealed[i] ^= 0x10;
	}
	/* Truncated or extended: the hash again. */
	ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, sealed, slen - 1,
	                     opened, BIG, &got),
	    -EBADMSG);
	ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, sealed, 5,
	                     opened, BIG, &got),
	    -EBADMSG);
	/* A block altered and its hash updated (a peer that returns other
	 * bytes under the right name cannot, but a wrong ref can): the AEAD
	 * catches it, in the ciphertext and in the tag. */
	for (size_t i = 1; i < slen; i += 211) {
		memcpy(&bad, &ref, sizeof(bad));
		sealed[i] ^= 0x01;
		dhtkey_of_block(sealed, slen, &bad.block);
		ck_assert_int_eq(storage_open(&bad, STORAGE_KIND_DATA, sealed,
		                     slen, opened, BIG, &got),
		    -EBADMSG);
		sealed[i] ^= 0x01;
	}
	storage_codec_free(c);
}
END_TEST

/* The right block opened wrongly, or a block of another cipher. */
START_TEST(test_misopen)
{
	struct storage_codec *c = codec(secret_a, _i == 1);
	size_t len = 3000, slen = storage_sealed_len(len), got;
	struct storage_ref ref, bad;

	ck_assert_int_eq(storage_seal(c, STORAGE_KIND_DATA, plain, len, sealed,
	                     &ref),
	    0);
	/* The wrong key. */
	memcpy(&bad, &ref, sizeof(bad));
	bad.key[5] ^= 1;
	ck_assert_int_eq(storage_open(&bad, STORAGE_KIND_DATA, sealed, slen,
	                     opened, BIG, &got),
	    -EBADMSG);
	/* The wrong kind (bound in the associated data). */
	ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_NODE, sealed, slen,
	                     opened, BIG, &got),
	    -EBADMSG);
	/* A DATA ref longer than the block, or shorter than it where the
	 * rest is not zero padding. */
	memcpy(&bad, &ref, sizeof(bad));
	bad.len = len + 1;
	ck_assert_int_eq(storage_open(&bad, STORAGE_KIND_DATA, sealed, slen,
	                     opened, BIG, &got),
	    -EBADMSG);
	ck_assert_uint_ne(plain[len - 1], 0);
	bad.len = len - 1;
	ck_assert_int_eq(storage_open(&bad, STORAGE_KIND_DATA, sealed, slen,
	                     opened, BIG, &got),
	    -EBADMSG);
	/* Too small a buffer. */
	ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, sealed, slen,
	                     opened, len - 1, &got),
	    -EMSGSIZE);
	/* The other cipher byte, hash fixed up: the AD differs. */
	memcpy(&bad, &ref, sizeof(bad));
	sealed[0] ^= 0x03;
	dhtkey_of_block(sealed, slen, &bad.block);
	ck_assert_int_eq(storage_open(&bad, STORAGE_KIND_DATA, sealed, slen,
	                     opened, BIG, &got),
	    -EBADMSG);
	/* An unknown cipher byte. */
	sealed[0] = 0x7f;
	dhtkey_of_block(sealed, slen, &bad.block);
	ck_assert_int_eq(storage_open(&bad, STORAGE_KIND_DATA, sealed, slen,
	                     opened, BIG, &got),
	    -EPROTO);
	storage_codec_free(c);
}
END_TEST

/* The last chunk padded to the chunk size: every block of a file is the
 * same size, and the padding is dropped (and checked) when opened. */
START_TEST(test_padding)
{
	static const size_t lens[] = { 0, 1, 100, 4095, 4096 };
	struct storage_codec *c = codec(secret_a, _i == 1);
	size_t slen = storage_sealed_len(4096), got;
	uint8_t exact[4096];

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t len = lens[k];
		struct storage_ref ref, same;

		ck_assert_int_eq(storage_seal_pad(c, plain, len, 4096, sealed,
		                     &ref),
		    0);
		ck_assert_uint_eq(ref.len, len);
		/* Opened into a buffer of exactly len bytes, and into a
		 * large one. */
		memset(exact, 0xaa, sizeof(exact));
		ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, sealed,
		                     slen, len > 0 ? exact : NULL, len, &got),
		    0);
		ck_assert_uint_eq(got, len);
		ck_assert_mem_eq(exact, plain, len);
		if (len < sizeof(exact))
			ck_assert_uint_eq(exact[len], 0xaa);
		ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, sealed,
		                     slen, opened, BIG, &got),
		    0);
		ck_assert_uint_eq(got, len);
		ck_assert_mem_eq(opened, plain, len);
		/* Deterministic too. */
		ck_assert_int_eq(storage_seal_pad(c, plain, len, 4096, opened,
		                     &same),
		    0);
		ck_assert_mem_eq(&same, &ref, sizeof(ref));
	}
	ck_assert_int_eq(storage_seal_pad(c, plain, 10, 9, sealed, NULL),
	    -EINVAL);
	storage_codec_free(c);
}
END_TEST

START_TEST(test_bad_arguments)
{
	struct storage_codec *c = codec(secret_a, true);
	struct storage_ref ref;
	size_t got;

	ck_assert_int_eq(storage_seal(c, 3, plain, 10, sealed, &ref), -EINVAL);
	ck_assert_int_eq(storage_seal(c, STORAGE_KIND_DATA, NULL, 10, sealed,
	                     &ref),
	    -EINVAL);
	ck_assert_int_eq(storage_seal(c, STORAGE_KIND_DATA, plain, 10, sealed,
	                     &ref),
	    0);
	ck_assert_int_eq(storage_open(&ref, 0, sealed, storage_sealed_len(10),
	                     opened, BIG, &got),
	    -EINVAL);
	storage_codec_free(c);
	storage_codec_free(NULL);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("storage_chunk");
	TCase *tc = tcase_create("chunk");

	/* Loop index 0: ChaCha20-Poly1305, 1: AES-256-GCM. */
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_loop_test(tc, test_round_trip, 0, 2);
	tcase_add_test(tc, test_open_other_cipher);
	tcase_add_loop_test(tc, test_deterministic, 0, 2);
	tcase_add_test(tc, test_iterations_matter);
	tcase_add_loop_test(tc, test_tamper, 0, 2);
	tcase_add_loop_test(tc, test_misopen, 0, 2);
	tcase_add_loop_test(tc, test_padding, 0, 2);
	tcase_add_test(tc, test_bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
