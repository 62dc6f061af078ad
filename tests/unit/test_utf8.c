/* SPDX-License-Identifier: GPL-3.0-or-later */
/* UTF-8 sequences (src/lib/utf8.c) against RFC 3629's table. */
#include <check.h>

#include "lib/utf8.h"
#include "unit.h"

static size_t
seq(const char *s, size_t left, uint32_t *cp)
{
	return utf8_seq((const unsigned char *)s, left, cp);
}

START_TEST(test_valid)
{
	uint32_t cp = 0;

	ck_assert_uint_eq(seq("A", 1, &cp), 1);
	ck_assert_uint_eq(cp, 'A');
	ck_assert_uint_eq(seq("\xc2\x80", 2, &cp), 2); /* the first C1 */
	ck_assert_uint_eq(cp, 0x80);
	ck_assert_uint_eq(seq("\xc3\xa9", 2, &cp), 2);
	ck_assert_uint_eq(cp, 0xe9);
	ck_assert_uint_eq(seq("\xe2\x80\xae", 3, &cp), 3); /* RLO */
	ck_assert_uint_eq(cp, 0x202e);
	ck_assert_uint_eq(seq("\xef\xbb\xbf", 3, &cp), 3);
	ck_assert_uint_eq(cp, 0xfeff);
	ck_assert_uint_eq(seq("\xf0\x9f\x98\x80", 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x1f600);
	ck_assert_uint_eq(seq("\xf4\x8f\xbf\xbf", 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x10ffff);
}
END_TEST

START_TEST(test_invalid)
{
	uint32_t cp;

	ck_assert_uint_eq(seq("\x80", 1, &cp), 0);         /* continuation */
	ck_assert_uint_eq(seq("\xc0\xaf", 2, &cp), 0);     /* overlong '/' */
	ck_assert_uint_eq(seq("\xc1\xbf", 2, &cp), 0);     /* overlong */
	ck_assert_uint_eq(seq("\xe0\x80\xaf", 3, &cp), 0); /* overlong */
	ck_assert_uint_eq(seq("\xed\xa0\x80", 3, &cp), 0); /* surrogate */
	ck_assert_uint_eq(seq("\xf0\x80\x80\xaf", 4, &cp), 0);
	ck_assert_uint_eq(seq("\xf4\x90\x80\x80", 4, &cp), 0); /* > 10FFFF */
	ck_assert_uint_eq(seq("\xf5\x80\x80\x80", 4, &cp), 0);
	ck_assert_uint_eq(seq("\xc3\x28", 2, &cp), 0);     /* bad second */
	ck_assert_uint_eq(seq("\xe2\x80\x28", 3, &cp), 0); /* bad third */
	ck_assert_uint_eq(seq("\xe2\x80\xae", 2, &cp), 0); /* cut short */
	ck_assert_uint_eq(seq("\xff", 1, &cp), 0);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("utf8");
	TCase *tc = tcase_create("utf8");

	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_invalid);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
