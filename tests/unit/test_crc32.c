/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CRC-32 (src/lib/crc32.c) against the IEEE 802.3 check values. */
#include <string.h>

#include <check.h>

#include "lib/crc32.h"
#include "unit.h"

START_TEST(test_known_vectors)
{
	static const char fox[] = "The quick brown fox jumps over the lazy dog";
	static const unsigned char zeros[32];

	ck_assert_uint_eq(crc32_update(0, "", 0), 0);
	ck_assert_uint_eq(crc32_update(0, "a", 1), 0xe8b7be43u);
	ck_assert_uint_eq(crc32_update(0, "123456789", 9), 0xcbf43926u);
	ck_assert_uint_eq(crc32_update(0, fox, strlen(fox)), 0x414fa339u);
	ck_assert_uint_eq(crc32_update(0, zeros, sizeof(zeros)), 0x190a55adu);
}
END_TEST

START_TEST(test_incremental_equals_whole)
{
	unsigned char data[1000];
	uint64_t seed = 7;
	uint32_t whole, part;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)unit_rand(&seed);
	whole = crc32_update(0, data, sizeof(data));
	for (size_t cut = 0; cut <= sizeof(data); cut += 37) {
		part = crc32_update(0, data, cut);
		part = crc32_update(part, data + cut, sizeof(data) - cut);
		ck_assert_uint_eq(part, whole);
	}
	/* Any flipped bit changes the sum. */
	data[500] ^= 0x10;
	ck_assert_uint_ne(crc32_update(0, data, sizeof(data)), whole);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("crc32");
	TCase *tc = tcase_create("crc32");

	tcase_add_test(tc, test_known_vectors);
	tcase_add_test(tc, test_incremental_equals_whole);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
