/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's key space (src/dht/dhtkey.c): XOR distance and its order,
 * common prefixes (bucket numbers), random keys in a given bucket, block
 * keys, and parsing.
 */
#include <errno.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dhtkey.h"
#include "unit.h"

static struct dhtkey
key_of_byte(uint8_t first, uint8_t last)
{
	struct dhtkey k;

	memset(&k, 0, sizeof(k));
	k.b[0] = first;
	k.b[DHTKEY_LEN - 1] = last;
	return k;
}

START_TEST(test_distance_order)
{
	struct dhtkey t = key_of_byte(0x80, 0), a = key_of_byte(0x81, 0),
		      b = key_of_byte(0x00, 0xff), d;

	/* 0x80 ^ 0x81 = 0x01 in the first byte beats 0x80 there. */
	ck_assert_int_lt(dhtkey_closer(&t, &a, &b), 0);
	ck_assert_int_gt(dhtkey_closer(&t, &b, &a), 0);
	ck_assert_int_eq(dhtkey_closer(&t, &a, &a), 0);
	dhtkey_distance(&t, &a, &d);
	ck_assert_uint_eq(d.b[0], 0x01);
	ck_assert_uint_eq(d.b[DHTKEY_LEN - 1], 0);
	/* Symmetric, and zero only to itself. */
	ck_assert_int_lt(dhtkey_closer(&t, &t, &a), 0);
}
END_TEST

START_TEST(test_common_prefix)
{
	struct dhtkey a = key_of_byte(0, 0), b;

	ck_assert_uint_eq(dhtkey_common_prefix(&a, &a), DHTKEY_BITS);
	for (unsigned bit = 0; bit < DHTKEY_BITS; bit++) {
		b = a;
		b.b[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
		ck_assert_uint_eq(dhtkey_common_prefix(&a, &b), bit);
		ck_assert_uint_eq(dhtkey_common_prefix(&b, &a), bit);
	}
}
END_TEST

START_TEST(test_random_in_bucket)
{
	struct dhtkey self, r;

	randombytes_buf(self.b, sizeof(self.b));
	for (unsigned prefix = 0; prefix < DHTKEY_BITS; prefix++)
		for (int i = 0; i < 4; i++) {
			dhtkey_random_in_bucket(&self, prefix, &r);
			ck_assert_uint_eq(dhtkey_common_prefix(&self, &r),
			    prefix);
		}
}
END_TEST

START_TEST(test_block_key_and_parse)
{
	static const char hello[] = "hello";
	char hex[2 * DHTKEY_LEN + 1], id_str[FERRY_PEER_ID_STRLEN + 1];
	struct ferry_peer_id id;
	struct dhtkey k, back;
	uint8_t expect[32];

	dhtkey_of_block(hello, 5, &k);
	crypto_generichash(expect, 32, (const uint8_t *)hello, 5, NULL, 0);
	ck_assert_mem_eq(k.b, expect, 32);
	dhtkey_hex(&k, hex);
	ck_assert_uint_eq(strlen(hex), 64);
	ck_assert_int_eq(dhtkey_parse(hex, &back), 0);
	ck_assert(dhtkey_equal(&k, &back));
	/* A peer id in its base32 form names the same point. */
	dhtkey_to_peer(&k, &id);
	peer_id_format(&id, id_str);
	ck_assert_int_eq(dhtkey_parse(id_str, &back), 0);
	ck_assert(dhtkey_equal(&k, &back));
	hex[10] = 'g';
	ck_assert_int_eq(dhtkey_parse(hex, &back), -EINVAL);
	ck_assert_int_eq(dhtkey_parse("", &back), -EINVAL);
	ck_assert_int_eq(dhtkey_parse("abc", &back), -EINVAL);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_key");
	TCase *tc = tcase_create("key");

	tcase_add_test(tc, test_distance_order);
	tcase_add_test(tc, test_common_prefix);
	tcase_add_test(tc, test_random_in_bucket);
	tcase_add_test(tc, test_block_key_and_parse);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
