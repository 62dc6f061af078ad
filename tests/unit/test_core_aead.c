/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * AEAD contexts (src/core/aead.c): AES-256-GCM and ChaCha20-Poly1305 seal
 * and open, separately and in place, agree with libsodium's reference
 * implementations, and refuse a wrong key, counter, associated data or
 * tag, and any flipped bit of the ciphertext.
 */
#include <errno.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "lib/wire.h"
#include "core/aead.h"
#include "unit.h"

#define PT_LEN 1400

static uint8_t key[AEAD_KEY_LEN], pt[PT_LEN], ad[20];

static void
test_setup(void)
{
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 13 + 1);
	for (size_t i = 0; i < sizeof(pt); i++)
		pt[i] = (uint8_t)(i ^ (i >> 8));
	for (size_t i = 0; i < sizeof(ad); i++)
		ad[i] = (uint8_t)(0xa0 + i);
}

static void
test_pair(bool aes, struct aead **ret_tx, struct aead **ret_rx)
{
	*ret_tx = aead_new(aes, key, true);
	*ret_rx = aead_new(aes, key, false);
	ck_assert_ptr_nonnull(*ret_tx);
	ck_assert_ptr_nonnull(*ret_rx);
}

START_TEST(test_seal_open)
{
	bool aes = _i == 1;
	uint8_t ct[PT_LEN + AEAD_TAG_LEN], out[PT_LEN];
	struct aead *tx, *rx;
	static const size_t lens[] = { 0, 1, 15, 16, 17, 100, PT_LEN };

	test_pair(aes, &tx, &rx);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t len = lens[k];

		for (uint64_t ctr = 0; ctr < 3; ctr++) {
			ck_assert_int_eq(aead_seal(tx, ctr, ad, sizeof(ad), pt,
			                     len, ct),
			    0);
			if (len > 0)
				ck_assert_mem_ne(ct, pt, len);
			memset(out, 0, sizeof(out));
			ck_assert_int_eq(aead_open(rx, ctr, ad, sizeof(ad), ct,
			                     len + AEAD_TAG_LEN, out),
			    0);
			ck_assert_mem_eq(out, pt, len);
		}
	}
	/* Each context works one way only. */
	ck_assert_int_eq(aead_seal(rx, 0, ad, sizeof(ad), pt, 10, ct), -EINVAL);
	ck_assert_int_eq(aead_open(tx, 0, ad, sizeof(ad), ct, 26, out),
	    -EINVAL);
	/* Shorter than a tag. */
	ck_assert_int_eq(aead_open(rx, 0, ad, sizeof(ad), ct, AEAD_TAG_LEN - 1,
	                     out),
	    -EINVAL);
	aead_free(tx);
	aead_free(rx);
	aead_free(NULL);
}
END_TEST

START_TEST(test_in_place)
{
	bool aes = _i == 1;
	uint8_t buf[PT_LEN + AEAD_TAG_LEN];
	struct aead *tx, *rx;

	test_pair(aes, &tx, &rx);
	memcpy(buf, pt, PT_LEN);
	ck_assert_int_eq(aead_seal(tx, 77, ad, sizeof(ad), buf, PT_LEN, buf),
	    0);
	ck_assert_mem_ne(buf, pt, PT_LEN);
	ck_assert_int_eq(aead_open(rx, 77, ad, sizeof(ad), buf, sizeof(buf),
	                     buf),
	    0);
	ck_assert_mem_eq(buf, pt, PT_LEN);
	aead_free(tx);
	aead_free(rx);
}
END_TEST

/* The nonce is 4 zero bytes and the big-endian counter: the same result
 * as libsodium's IETF constructions. */
START_TEST(test_matches_libsodium)
{
	bool aes = _i == 1;
	uint8_t ct[PT_LEN + AEAD_TAG_LEN], ref[PT_LEN + AEAD_TAG_LEN];
	uint8_t nonce[12];
	const uint64_t ctr = 0x0102030405060708ull;
	unsigned long long rlen;
	struct aead *tx, *rx;

	if (aes && !crypto_aead_aes256gcm_is_available())
		return; /* no reference to compare with on this CPU */
	test_pair(aes, &tx, &rx);
	ck_assert_int_eq(aead_seal(tx, ctr, ad, sizeof(ad), pt, PT_LEN, ct), 0);
	wire_put32(nonce, 0);
	wire_put64(nonce + 4, ctr);
	if (aes)
		ck_assert_int_eq(crypto_aead_aes256gcm_encrypt(ref, &rlen, pt,
		                     PT_LEN, ad, sizeof(ad), NULL, nonce, key),
		    0);
	else
		ck_assert_int_eq(crypto_aead_chacha20poly1305_ietf_encrypt(ref,
		                     &rlen, pt, PT_LEN, ad, sizeof(ad), NULL,
		                     nonce, key),
		    0);
	ck_assert_uint_eq(rlen, sizeof(ref));
	ck_assert_mem_eq(ct, ref, sizeof(ref));
	aead_free(tx);
	aead_free(rx);
}
END_TEST

START_TEST(test_algorithms_differ)
{
	uint8_t c1[64 + AEAD_TAG_LEN], c2[64 + AEAD_TAG_LEN], out[64];
	struct aead *gcm = aead_new(true, key, true);
	struct aead *cha = aead_new(false, key, true);
	struct aead *cha_rx = aead_new(false, key, false);

	ck_assert_ptr_nonnull(gcm);
	ck_assert_ptr_nonnull(cha);
	ck_assert_ptr_nonnull(cha_rx);
	ck_assert_int_eq(aead_seal(gcm, 1, ad, sizeof(ad), pt, 64, c1), 0);
	ck_assert_int_eq(aead_seal(cha, 1, ad, sizeof(ad), pt, 64, c2), 0);
	ck_assert_mem_ne(c1, c2, sizeof(c1));
	ck_assert_int_eq(aead_open(cha_rx, 1, ad, sizeof(ad), c1, sizeof(c1),
	                     out),
	    -EBADMSG);
	aead_free(gcm);
	aead_free(cha);
	aead_free(cha_rx);
}
END_TEST

START_TEST(test_rejects)
{
	bool aes = _i == 1;
	uint8_t ct[256 + AEAD_TAG_LEN], bad[sizeof(ct)], out[256];
	uint8_t ad2[sizeof(ad)], key2[AEAD_KEY_LEN];
	struct aead *tx, *rx, *rx2;

	test_pair(aes, &tx, &rx);
	ck_assert_int_eq(aead_seal(tx, 42, ad, sizeof(ad), pt, 256, ct), 0);
	/* Wrong counter. */
	ck_assert_int_eq(aead_open(rx, 41, ad, sizeof(ad), ct, sizeof(ct), out),
	    -EBADMSG);
	ck_assert_int_eq(aead_open(rx, 42 | (1ull << 63), ad, sizeof(ad), ct,
	                     sizeof(ct), out),
	    -EBADMSG);
	/* Wrong associated data: each byte, and a shorter one. */
	for (size_t i = 0; i < sizeof(ad); i++) {
		memcpy(ad2, ad, sizeof(ad));
		ad2[i] ^= 0x01;
		ck_assert_int_eq(aead_open(rx, 42, ad2, sizeof(ad2), ct,
		                     sizeof(ct), out),
		    -EBADMSG);
	}
	ck_assert_int_eq(aead_open(rx, 42, ad, sizeof(ad) - 1, ct, sizeof(ct),
	                     out),
	    -EBADMSG);
	/* Wrong tag, and every bit of the ciphertext. */
	for (size_t i = 0; i < sizeof(ct); i++)
		for (int bit = 0; bit < 8; bit += 3) {
			memcpy(bad, ct, sizeof(ct));
			bad[i] ^= (uint8_t)(1u << bit);
			ck_assert_msg(aead_open(rx, 42, ad, sizeof(ad), bad,
			                  sizeof(bad), out) == -EBADMSG,
			    "byte %zu bit %d opened", i, bit);
		}
	/* Truncated: the tag no longer where it was. */
	ck_assert_int_eq(aead_open(rx, 42, ad, sizeof(ad), ct, sizeof(ct) - 1,
	                     out),
	    -EBADMSG);
	/* Wrong key. */
	memcpy(key2, key, sizeof(key));
	key2[0] ^= 1;
	rx2 = aead_new(aes, key2, false);
	ck_assert_ptr_nonnull(rx2);
	ck_assert_int_eq(aead_open(rx2, 42, ad, sizeof(ad), ct, sizeof(ct),
	                     out),
	    -EBADMSG);
	/* And the context still opens the genuine message afterwards. */
	ck_assert_int_eq(aead_open(rx, 42, ad, sizeof(ad), ct, sizeof(ct), out),
	    0);
	ck_assert_mem_eq(out, pt, 256);
	aead_free(tx);
	aead_free(rx);
	aead_free(rx2);
}
END_TEST

/* Sealing in pieces of any sizes gives the very bytes of sealing the
 * whole: the frame packer seals fragments where they lie. */
START_TEST(test_pieces_equal_whole)
{
	bool aes = _i == 1;
	uint8_t whole[PT_LEN + AEAD_TAG_LEN], parts[PT_LEN + AEAD_TAG_LEN];
	uint8_t out[PT_LEN];
	struct aead *tx, *rx;
	uint64_t seed = 42;

	test_pair(aes, &tx, &rx);
	ck_assert_int_eq(aead_seal(tx, 9, ad, sizeof(ad), pt, PT_LEN, whole),
	    0);
	for (int round = 0; round < 200; round++) {
		struct iovec iov[8];
		size_t off = 0;
		int n = 0;

		/* Random cuts, empty pieces included. */
		while (n < 7 && off < PT_LEN) {
			size_t len = unit_rand(&seed) % (PT_LEN - off + 1);

			iov[n++] = (struct iovec){ pt + off, len };
			off += len;
		}
		iov[n++] = (struct iovec){ pt + off, PT_LEN - off };
		ck_assert_int_eq(aead_sealv(tx, 9, ad, sizeof(ad), iov, n,
				     parts),
		    0);
		ck_assert_mem_eq(parts, whole, sizeof(whole));
	}
	ck_assert_int_eq(aead_open(rx, 9, ad, sizeof(ad), parts, sizeof(parts),
			     out),
	    0);
	ck_assert_mem_eq(out, pt, PT_LEN);
	aead_free(tx);
	aead_free(rx);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_aead");
	TCase *tc = tcase_create("aead");

	/* Loop index 0: ChaCha20-Poly1305, 1: AES-256-GCM. */
	tcase_add_checked_fixture(tc, test_setup, NULL);
	tcase_add_loop_test(tc, test_seal_open, 0, 2);
	tcase_add_loop_test(tc, test_in_place, 0, 2);
	tcase_add_loop_test(tc, test_matches_libsodium, 0, 2);
	tcase_add_test(tc, test_algorithms_differ);
	tcase_add_loop_test(tc, test_rejects, 0, 2);
	tcase_add_loop_test(tc, test_pieces_equal_whole, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
