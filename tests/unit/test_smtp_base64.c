/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's base64 codec, plugins/smtp/smtp_base64.c: RFC 4648
 * test vectors, MIME line layout, the streaming encoder against the
 * one-shot one, and the decoder's strictness. The codec is built into the
 * plugin, which unit tests do not link, so its source is compiled in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "unit.h"

#include "../../plugins/smtp/smtp_base64.c"

static size_t
enc(const char *in, char *out)
{
	size_t n = smtp_base64_encode(in, strlen(in), out);

	out[n] = '\0';
	return n;
}

static int
dec(const char *in, char *out, size_t max, size_t *len)
{
	int r = smtp_base64_decode(in, strlen(in), (uint8_t *)out, max, len);

	if (r == 0)
		out[*len] = '\0';
	return r;
}

START_TEST(rfc4648_vectors)
{
	static const char *const v[][2] = {
		{ "", "" },
		{ "f", "Zg==\r\n" },
		{ "fo", "Zm8=\r\n" },
		{ "foo", "Zm9v\r\n" },
		{ "foob", "Zm9vYg==\r\n" },
		{ "fooba", "Zm9vYmE=\r\n" },
		{ "foobar", "Zm9vYmFy\r\n" },
	};
	char out[64], back[64];
	size_t len;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert_uint_eq(enc(v[i][0], out), strlen(v[i][1]));
		ck_assert_str_eq(out, v[i][1]);
		ck_assert_uint_eq(smtp_base64_encoded_size(strlen(v[i][0])),
		    strlen(v[i][1]));
		ck_assert_int_eq(dec(out, back, sizeof(back) - 1, &len), 0);
		ck_assert_str_eq(back, v[i][0]);
	}
}
END_TEST

START_TEST(lines_of_76_with_crlf)
{
	uint8_t in[1000];
	char out[2000];
	size_t n, col = 0, lines = 0;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7);
	n = smtp_base64_encode(in, sizeof(in), out);
	ck_assert_uint_eq(n, smtp_base64_encoded_size(sizeof(in)));
	for (size_t i = 0; i < n; i++) {
		if (out[i] == '\r') {
			ck_assert_int_eq(out[i + 1], '\n');
			ck_assert(col == 76 || i + 2 == n);
			col = 0;
			lines++;
			i++;
			continue;
		}
		col++;
	}
	ck_assert_uint_eq(col, 0);
	/* 1000 bytes: 1336 characters, 17 full lines and one of 44 */
	ck_assert_uint_eq(lines, 18);
	ck_assert_uint_eq(n, 1336 + 2 * 18);
	/* 57 bytes fill exactly one line */
	ck_assert_uint_eq(smtp_base64_encoded_size(57), 78);
	ck_assert_uint_eq(smtp_base64_encoded_size(58), 78 + 6);
}
END_TEST

START_TEST(stream_equals_one_shot)
{
	uint8_t in[700];
	char whole[1200], part[1200];
	uint64_t seed = 11;
	size_t n;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)unit_rand(&seed);
	ck_assert_uint_eq(smtp_base64_encode(in, 0, whole), 0);
	for (size_t len = 0; len <= sizeof(in); len += 13) {
		n = smtp_base64_encode(in, len, whole);
		/* every split into three pieces */
		for (size_t a = 0; a <= len; a += 5) {
			for (size_t b = a; b <= len; b += 29) {
				struct smtp_b64_enc e;
				size_t w;

				smtp_base64_enc_init(&e);
				w = smtp_base64_enc_update(&e, in, a, part);
				w += smtp_base64_enc_update(&e, in + a, b - a,
				    part + w);
				w += smtp_base64_enc_update(&e, in + b, len - b,
				    part + w);
				w += smtp_base64_enc_final(&e, part + w);
				ck_assert_uint_eq(w, n);
				ck_assert_mem_eq(part, whole, n);
			}
		}
	}
}
END_TEST

START_TEST(decode_tolerates_line_breaks)
{
	char out[64];
	size_t len;

	ck_assert_int_eq(dec("Zm9v\nYmFy\n", out, 63, &len), 0);
	ck_assert_str_eq(out, "foobar");
	ck_assert_int_eq(dec("Zm9v\r\nYmFy\r\n\r\n", out, 63, &len), 0);
	ck_assert_str_eq(out, "foobar");
	/* breaks inside a group and between the padding characters */
	ck_assert_int_eq(dec("Zm\n9vY\r\ng=\n=", out, 63, &len), 0);
	ck_assert_str_eq(out, "foob");
	ck_assert_int_eq(dec("\n\n", out, 63, &len), 0);
	ck_assert_uint_eq(len, 0);
}
END_TEST

START_TEST(decode_is_strict)
{
	static const char *const bad[] = {
		"Zm9v YmFy",  /* space */
		"Zm9v\tYmFy", /* tab */
		"Zm9v\rYmFy", /* CR without LF */
		"Zm9vYmF",    /* incomplete group */
		"Zm9vY",      /* one character left over */
		"Zg=",        /* half the padding */
		"Zg==Zg==",   /* text after the padding */
		"Zm8=\nx",    /* text after the padding, next line */
		"Z===",       /* padding too early */
		"====",       /* only padding */
		"Zh==",       /* padding bits set: 'h' leaves 0x1 */
		"Zm9=",       /* padding bits set: '9' leaves 0x1 */
		"Zm9v-_==",   /* base64url alphabet */
	};
	char out[64];
	size_t len;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(dec(bad[i], out, 63, &len) == -EBADMSG,
		    "accepted '%s'", bad[i]);
	/* a NUL byte inside the text */
	ck_assert_int_eq(smtp_base64_decode("Zm9v\0Zm9v", 9, (uint8_t *)out, 63,
	                     &len),
	    -EBADMSG);
	/* high bytes */
	ck_assert_int_eq(smtp_base64_decode("Zm9\xc3", 4, (uint8_t *)out, 63,
	                     &len),
	    -EBADMSG);
}
END_TEST

START_TEST(decode_bounds_output)
{
	uint8_t out[8];
	size_t len = 99;

	ck_assert_int_eq(smtp_base64_decode("Zm9vYmFy", 8, out, 5, &len),
	    -ENOSPC);
	ck_assert_int_eq(smtp_base64_decode("Zm9vYg==", 8, out, 3, &len),
	    -ENOSPC);
	ck_assert_uint_eq(len, 99); /* untouched on failure */
	ck_assert_int_eq(smtp_base64_decode("Zm9vYg==", 8, out, 4, &len), 0);
	ck_assert_uint_eq(len, 4);
	ck_assert_uint_eq(smtp_base64_decoded_max(8), 6);
	ck_assert_uint_eq(smtp_base64_decoded_max(10), 6);
}
END_TEST

START_TEST(round_trip_random)
{
	uint64_t seed = 1234;
	uint8_t in[3000], back[3200]; /* line breaks count in decoded_max */
	char text[4200];

	for (int round = 0; round < 200; round++) {
		size_t n = (size_t)(unit_rand(&seed) % sizeof(in)), m, len;

		for (size_t i = 0; i < n; i++)
			in[i] = (uint8_t)unit_rand(&seed);
		m = smtp_base64_encode(in, n, text);
		ck_assert_uint_le(smtp_base64_decoded_max(m), sizeof(back));
		ck_assert_int_eq(smtp_base64_decode(text, m, back,
		                     smtp_base64_decoded_max(m), &len),
		    0);
		ck_assert_uint_eq(len, n);
		ck_assert_mem_eq(back, in, n);
	}
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("smtp_base64");
	TCase *tc = tcase_create("smtp_base64");

	tcase_add_test(tc, rfc4648_vectors);
	tcase_add_test(tc, lines_of_76_with_crlf);
	tcase_add_test(tc, stream_equals_one_shot);
	tcase_add_test(tc, decode_tolerates_line_breaks);
	tcase_add_test(tc, decode_is_strict);
	tcase_add_test(tc, decode_bounds_output);
	tcase_add_test(tc, round_trip_random);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
