/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Crockford base32 (src/lib/base32.c): vectors, round trips, aliases,
 * case, bad characters, lengths and the zero padding bits rule. */
#include <errno.h>
#include <string.h>

#include <check.h>

#include "lib/base32.h"
#include "unit.h"

struct vector {
	const char *in;
	size_t len;
	const char *out;
};

/* RFC 4648 base32 of the same bytes, spelled in Crockford's alphabet. */
static const struct vector vectors[] = {
	{ "", 0, "" },
	{ "f", 1, "CR" },
	{ "fo", 2, "CSQG" },
	{ "foo", 3, "CSQPY" },
	{ "foob", 4, "CSQPYRG" },
	{ "fooba", 5, "CSQPYRK1" },
	{ "foobar", 6, "CSQPYRK1E8" },
	{ "\xff\xff\xff\xff\xff", 5, "ZZZZZZZZ" },
};

START_TEST(test_vectors)
{
	const struct vector *v = &vectors[_i];
	char out[64];
	unsigned char back[16];

	ck_assert_uint_eq(BASE32_LEN(v->len), strlen(v->out));
	base32_encode(v->in, v->len, out);
	ck_assert_str_eq(out, v->out);
	memset(back, 0xee, sizeof(back));
	ck_assert_int_eq(base32_decode(v->out, strlen(v->out), back, v->len),
	    0);
	ck_assert_mem_eq(back, v->in, v->len);
	ck_assert_uint_eq(back[v->len], 0xee); /* nothing written past */
}
END_TEST

START_TEST(test_sequence_32)
{
	unsigned char in[32], back[32];
	char out[BASE32_LEN(32) + 1];

	for (int i = 0; i < 32; i++)
		in[i] = (unsigned char)i;
	base32_encode(in, sizeof(in), out);
	ck_assert_str_eq(out,
	    "000G40R40M30E209185GR38E1W8124GK2GAHC5RR34D1P70X3RFG");
	ck_assert_uint_eq(strlen(out), 52);
	ck_assert_int_eq(base32_decode(out, strlen(out), back, sizeof(back)),
	    0);
	ck_assert_mem_eq(back, in, sizeof(in));
}
END_TEST

START_TEST(test_round_trips)
{
	unsigned char in[64], back[64];
	char out[BASE32_LEN(64) + 1];
	uint64_t seed = 42;

	for (size_t len = 0; len <= sizeof(in); len++) {
		for (int round = 0; round < 20; round++) {
			for (size_t i = 0; i < len; i++)
				in[i] = (unsigned char)unit_rand(&seed);
			base32_encode(in, len, out);
			ck_assert_uint_eq(strlen(out), BASE32_LEN(len));
			ck_assert_int_eq(base32_decode(out, strlen(out), back,
			                     len),
			    0);
			ck_assert_mem_eq(back, in, len);
		}
	}
}
END_TEST

START_TEST(test_case_and_aliases)
{
	unsigned char a[6], b[6];

	ck_assert_int_eq(base32_decode("CSQPYRK1E8", 10, a, 6), 0);
	ck_assert_int_eq(base32_decode("csqpyrk1e8", 10, b, 6), 0);
	ck_assert_mem_eq(a, b, 6);
	/* O reads as 0; I and L (either case) read as 1. */
	ck_assert_int_eq(base32_decode("CSQPYRKIE8", 10, b, 6), 0);
	ck_assert_mem_eq(a, b, 6);
	ck_assert_int_eq(base32_decode("CSQPYRKlE8", 10, b, 6), 0);
	ck_assert_mem_eq(a, b, 6);
	ck_assert_int_eq(base32_decode("CSQPYRKiE8", 10, b, 6), 0);
	ck_assert_mem_eq(a, b, 6);
	ck_assert_int_eq(base32_decode("0000000000", 10, a, 6), 0);
	ck_assert_int_eq(base32_decode("OOOOOOOOOO", 10, b, 6), 0);
	ck_assert_mem_eq(a, b, 6);
	ck_assert_int_eq(base32_decode("oooooooooo", 10, b, 6), 0);
	ck_assert_mem_eq(a, b, 6);
}
END_TEST

START_TEST(test_bad_characters)
{
	/* U is not in Crockford's alphabet; neither is anything below. */
	static const char bad[] = "Uu*=- \t\n.\x80\xff";
	unsigned char out[6];
	char s[11];

	for (size_t i = 0; i < sizeof(bad) - 1; i++) {
		memcpy(s, "CSQPYRK1E8", 11);
		s[3] = bad[i];
		ck_assert_msg(base32_decode(s, 10, out, 6) == -EINVAL,
		    "character 0x%02x accepted", (unsigned char)bad[i]);
	}
	/* An embedded NUL counts as a character, and a bad one. */
	ck_assert_int_eq(base32_decode("CSQ\0YRK1E8", 10, out, 6), -EINVAL);
}
END_TEST

START_TEST(test_wrong_lengths)
{
	unsigned char out[8];

	ck_assert_int_eq(base32_decode("CSQPYRK1E", 9, out, 6), -EINVAL);
	ck_assert_int_eq(base32_decode("CSQPYRK1E80", 11, out, 6), -EINVAL);
	ck_assert_int_eq(base32_decode("CSQPYRK1E8", 10, out, 7), -EINVAL);
	ck_assert_int_eq(base32_decode("", 0, out, 1), -EINVAL);
	ck_assert_int_eq(base32_decode("", 0, out, 0), 0);
}
END_TEST

START_TEST(test_padding_bits_must_be_zero)
{
	unsigned char out[32];
	char id[BASE32_LEN(32) + 1];

	/* "f" is 01100110: CR = 01100 11000, two padding bits. */
	ck_assert_int_eq(base32_decode("CR", 2, out, 1), 0);
	ck_assert_uint_eq(out[0], 'f');
	ck_assert_int_eq(base32_decode("CS", 2, out, 1), -EINVAL);
	ck_assert_int_eq(base32_decode("CT", 2, out, 1), -EINVAL);
	ck_assert_int_eq(base32_decode("CV", 2, out, 1), -EINVAL);
	/* A peer id has 4 padding bits: one spelling per id. */
	memset(out, 0xff, sizeof(out));
	base32_encode(out, 32, id);
	ck_assert_int_eq(id[51], 'G'); /* 10000 */
	ck_assert_int_eq(base32_decode(id, 52, out, 32), 0);
	for (char c = 'H'; c <= 'Z'; c++) {
		if (c == 'I' || c == 'L' || c == 'O' || c == 'U')
			continue;
		id[51] = c;
		ck_assert_msg(base32_decode(id, 52, out, 32) == -EINVAL,
		    "padding '%c' accepted", c);
	}
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("base32");
	TCase *tc = tcase_create("base32");

	tcase_add_loop_test(tc, test_vectors, 0,
	    sizeof(vectors) / sizeof(vectors[0]));
	tcase_add_test(tc, test_sequence_32);
	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_case_and_aliases);
	tcase_add_test(tc, test_bad_characters);
	tcase_add_test(tc, test_wrong_lengths);
	tcase_add_test(tc, test_padding_bits_must_be_zero);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
