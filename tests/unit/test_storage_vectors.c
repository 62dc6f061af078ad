/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The test vectors of ferry-storage(7), built by the real code from a
 * fixed convergence secret (bytes 00 to 1f) and 100 PBKDF2 iterations: the
 * PBKDF2 salt of a data chunk, the key and sealed block of the chunk
 * "ferry" under AES-256-GCM and under ChaCha20-Poly1305, and for a file of
 * 1025 bytes in chunks of 1 KiB its XXH128, the plaintext of its manifest
 * root, the root's block key and AEAD key, and its URI. The key is also
 * derived here from the page's description with OpenSSL directly, so the
 * page's recipe is checked, not only its bytes. Each vector is compared
 * with the hex below and with the block the page prints under the same
 * name (a roff comment ".\" vector: NAME" before its display);
 * FERRY_VECTORS_PRINT=1 prints them all and checks nothing, for when the
 * format changes on purpose.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <openssl/evp.h>

#include "storage/chunk.h"
#include "storage/filesum.h"
#include "storage/manifest.h"
#include "storage/uri.h"
#include "unit.h"
#include "vector_page.h"

#define PAGE       "man/ferry-storage.7"
#define ITERATIONS 100
#define FILE_LEN   1025
#define CHUNK      1024

static const struct vector vectors[] = {
	{ "salt_data_aes",
	    "66657272792d73746f726167652d76310101000102030405"
	    "060708090a0b0c0d0e0f101112131415161718191a1b1c1d"
	    "1e1f",
	    false },
	{ "key_data_aes",
	    "b99e22667c347486db38f1e73150bc485aff6b7d161540c0"
	    "a74ab750a8e841d0",
	    false },
	{ "sealed_data_aes", "01902b24087bf6587ae0bbdee7667148f7395a58e291",
	    false },
	{ "block_data_aes",
	    "1573633941ba58baaea3bac7cc19cdb6f1dec02b3170baac"
	    "ce4be6d1309ac790",
	    false },
	{ "key_data_chacha",
	    "5fe0242a7b21f64e3c903779d2932378d9cbed10b97f29df"
	    "25d43654dda04076",
	    false },
	{ "sealed_data_chacha", "02c3b6b870be8dd7998d7b07ce9f7932dd6b29239532",
	    false },
	{ "file_xxh128", "20609de0583fad86e1d9cd946277ae26", false },
	{ "root_node",
	    "010001000000000200000000000004010000040020609de0"
	    "583fad86e1d9cd946277ae26a1c87fa291ce29d9b73824fc"
	    "412dc9f0a695e56e7bdb5f88a01bde3ac6ba7c2f5ce4c808"
	    "577b5f567b4185d6e5a0c45276587d8f30f48888376854e9"
	    "cd10364a0000000000000400e21575e567a37fd442df4055"
	    "5e97e25ade025d8a5c127ade795164517023c4c03feb2e6a"
	    "2cb1cf5e0771c823051d505e38b3222fab85bb1dd52c875a"
	    "1b93a4f60000000000000001",
	    false },
	{ "root_block",
	    "f5705ee8cd4b29d955563e44d0a539f0f9478907def6e4ad"
	    "0a5c25a8406dfc10",
	    false },
	{ "root_key",
	    "cc4db39c781ca62ac32f545c721ef34f087fd97f9203152a"
	    "f116a89d06738ecf",
	    false },
	{ "uri",
	    "ferry:f1.1025.YNR5XT6D9CMXJNAP7S2D199SY3WMF287VVVE9B8ABG"
	    "JTGG3DZG8CRKDKKHW1S9HARCQN8Q3J3VSMY23ZV5ZS40RN5BRHDA4X0S"
	    "SRXKWTGW4GG",
	    true },
};

#define N_VECTORS (sizeof(vectors) / sizeof(vectors[0]))

static struct vector_page page = { PAGE, vectors, N_VECTORS, false, NULL };

static uint8_t secret[STORAGE_SECRET_LEN];

static void
test_setup(void)
{
	for (size_t i = 0; i < sizeof(secret); i++)
		secret[i] = (uint8_t)i;
	vector_page_load(&page);
}

static void
test_teardown(void)
{
	vector_page_done(&page);
}

/* Checks what the code made against the test's hex and the page's. */
static void
check_vector(const char *name, const void *got, size_t len)
{
	vector_page_check(&page, name, got, len);
}

/* The page's recipe, with OpenSSL alone: PBKDF2-HMAC-SHA512 of the
 * SHA-512 of the plaintext, salted by "ferry-storage-v1", the kind, the
 * cipher byte and the secret. */
static void
recipe_key(const void *plain, size_t len, uint8_t kind, uint8_t cipher,
    uint8_t salt[50], uint8_t key[STORAGE_KEY_LEN])
{
	uint8_t hash[64];
	unsigned hlen;

	memcpy(salt, "ferry-storage-v1", 16);
	salt[16] = kind;
	salt[17] = cipher;
	memcpy(salt + 18, secret, STORAGE_SECRET_LEN);
	ck_assert_int_eq(EVP_Digest(plain, len, hash, &hlen, EVP_sha512(),
	                     NULL),
	    1);
	ck_assert_int_eq(PKCS5_PBKDF2_HMAC((const char *)hash, 64, salt, 50,
	                     ITERATIONS, EVP_sha512(), STORAGE_KEY_LEN, key),
	    1);
}

static void
chunk_vectors(bool aes, const char *key_name, const char *sealed_name)
{
	struct storage_codec *c = NULL;
	uint8_t sealed[5 + STORAGE_SEAL_OVERHEAD], salt[50];
	uint8_t key[STORAGE_KEY_LEN], out[5];
	struct storage_ref ref;
	size_t got;

	ck_assert_int_eq(storage_codec_new(secret, ITERATIONS, aes, &c), 0);
	ck_assert_int_eq(storage_seal(c, STORAGE_KIND_DATA, "ferry", 5, sealed,
	                     &ref),
	    0);
	recipe_key("ferry", 5, STORAGE_KIND_DATA,
	    aes ? STORAGE_CIPHER_AESGCM : STORAGE_CIPHER_CHACHA20, salt, key);
	ck_assert_mem_eq(key, ref.key, sizeof(key));
	if (aes) {
		check_vector("salt_data_aes", salt, sizeof(salt));
		check_vector("block_data_aes", ref.block.b, DHTKEY_LEN);
	}
	check_vector(key_name, ref.key, STORAGE_KEY_LEN);
	check_vector(sealed_name, sealed, sizeof(sealed));
	ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, sealed,
	                     sizeof(sealed), out, sizeof(out), &got),
	    0);
	ck_assert_mem_eq(out, "ferry", 5);
	storage_codec_free(c);
}

START_TEST(test_chunk)
{
	chunk_vectors(true, "key_data_aes", "sealed_data_aes");
	chunk_vectors(false, "key_data_chacha", "sealed_data_chacha");
}
END_TEST

/* The last node the builder emits is the root: keep its sealed bytes. */
struct last {
	uint8_t sealed[CHUNK + STORAGE_SEAL_OVERHEAD];
	size_t len;
};

static int
keep_last(void *arg, const uint8_t *sealed, size_t len,
    const struct storage_ref *ref)
{
	struct last *l = arg;

	(void)ref;
	ck_assert_uint_le(len, sizeof(l->sealed));
	memcpy(l->sealed, sealed, len);
	l->len = len;
	return 0;
}

START_TEST(test_file)
{
	static uint8_t file[FILE_LEN], sealed[CHUNK + STORAGE_SEAL_OVERHEAD];
	static struct last last;
	struct storage_codec *c = NULL;
	struct manifest_builder *b = NULL;
	struct storage_ref ref, root, back;
	uint8_t sum[FILESUM_LEN], node[CHUNK];
	char uri[STORAGE_URI_MAX];
	size_t got;

	for (size_t i = 0; i < FILE_LEN; i++)
		file[i] = (uint8_t)(i * 7);
	ck_assert_int_eq(storage_codec_new(secret, ITERATIONS, true, &c), 0);
	ck_assert_int_eq(manifest_builder_new(c, CHUNK, CHUNK, keep_last, &last,
	                     &b),
	    0);
	for (size_t off = 0; off < FILE_LEN; off += CHUNK) {
		size_t len = FILE_LEN - off < CHUNK ? FILE_LEN - off : CHUNK;

		ck_assert_int_eq(storage_seal_pad(c, file + off, len, CHUNK,
		                     sealed, &ref),
		    0);
		ck_assert_int_eq(manifest_builder_add(b, &ref), 0);
	}
	filesum_of(file, FILE_LEN, sum);
	check_vector("file_xxh128", sum, sizeof(sum));
	ck_assert_int_eq(manifest_builder_finish(b, sum, &root), 0);
	ck_assert_int_eq(storage_open(&root, STORAGE_KIND_NODE, last.sealed,
	                     last.len, node, sizeof(node), &got),
	    0);
	check_vector("root_node", node, got);
	check_vector("root_block", root.block.b, DHTKEY_LEN);
	check_vector("root_key", root.key, STORAGE_KEY_LEN);
	ck_assert_int_gt(storage_uri_format(&root, uri, sizeof(uri)), 0);
	check_vector("uri", uri, strlen(uri));
	ck_assert_int_eq(storage_uri_parse(uri, &back, NULL), 0);
	ck_assert_mem_eq(&back, &root, sizeof(root));
	manifest_builder_free(b);
	storage_codec_free(c);
}
END_TEST

START_TEST(test_page_has_no_other)
{
	vector_page_check_all(&page);
}
END_TEST

static Suite *
vectors_suite(void)
{
	Suite *s = suite_create("storage_vectors");
	TCase *tc = tcase_create("vectors");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_chunk);
	tcase_add_test(tc, test_file);
	tcase_add_test(tc, test_page_has_no_other);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(vectors_suite());
}
