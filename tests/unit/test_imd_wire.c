/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the intermediary's server parses (src/intermediary/httpmsg.c,
 * putrec.c): request lines, header fields, chunk sizes and
 * Content-Lengths at their edges, and the upload records of
 * ferry-intermediary(7) with their bounds judged from four bytes.
 */
#include <errno.h>
#include <string.h>

#include <check.h>

#include "intermediary/httpmsg.h"
#include "intermediary/putrec.h"
#include "lib/wire.h"
#include "unit.h"

#define S(x) x, sizeof(x) - 1

START_TEST(test_request_line)
{
	struct httpmsg_reqline rl;
	char long_target[HTTPMSG_TARGET_MAX + 20];

	ck_assert_int_eq(
	    httpmsg_request_line(S("GET /v1/receipts?after=3 HTTP/1.1"), &rl),
	    0);
	ck_assert_str_eq(rl.method, "GET");
	ck_assert_str_eq(rl.target, "/v1/receipts?after=3");
	ck_assert_uint_eq(rl.minor, 1);
	ck_assert_int_eq(httpmsg_request_line(S("POST / HTTP/1.0"), &rl), 0);
	ck_assert_uint_eq(rl.minor, 0);
	ck_assert_int_eq(httpmsg_request_line(S("get / HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET * HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET http://a/ HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET  / HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET / HTTP/1.1 "), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET / HTTP/1.2"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET /\x01 HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(
	    httpmsg_request_line(S("VERYLONGMETHODNAME / HTTP/1.1"), &rl),
	    -EMSGSIZE);
	memset(long_target, 'a', sizeof(long_target));
	memcpy(long_target, "GET /", 5);
	memcpy(long_target + sizeof(long_target) - 9, " HTTP/1.1", 9);
	ck_assert_int_eq(httpmsg_request_line(long_target, sizeof(long_target),
	                     &rl),
	    -EMSGSIZE);
}
END_TEST

START_TEST(test_fields)
{
	struct httpmsg_field f;

	ck_assert_int_eq(httpmsg_field(S("Content-Length:  42 \t"), &f), 0);
	ck_assert(httpmsg_field_is(&f, "content-length"));
	ck_assert_uint_eq(f.value_len, 2);
	ck_assert_int_eq(memcmp(f.value, "42", 2), 0);
	ck_assert_int_eq(httpmsg_field(S("X-Empty:"), &f), 0);
	ck_assert_uint_eq(f.value_len, 0);
	ck_assert_int_eq(httpmsg_field(S("Bad Name: x"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field(S("Name : x"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field(S(": x"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field(S("NoColon"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field(S("X: a\rb"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field("X: a\0b", 6, &f), -EBADMSG);
}
END_TEST

START_TEST(test_numbers)
{
	uint64_t n;

	ck_assert_int_eq(httpmsg_chunk_size(S("1aF"), &n), 0);
	ck_assert_uint_eq(n, 0x1af);
	ck_assert_int_eq(httpmsg_chunk_size(S("10;name=value"), &n), 0);
	ck_assert_uint_eq(n, 16);
	ck_assert_int_eq(httpmsg_chunk_size(S("0"), &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(httpmsg_chunk_size(S(""), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_chunk_size(S("x1"), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_chunk_size(S("1 x"), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_chunk_size(S("1000000000000"), &n),
	    -EOVERFLOW);
	ck_assert_int_eq(httpmsg_content_length(S("1048576"), &n), 0);
	ck_assert_uint_eq(n, 1048576);
	ck_assert_int_eq(httpmsg_content_length(S("-1"), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_content_length(S("1 2"), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_content_length(S(""), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_content_length(S("99999999999999999999"), &n),
	    -EOVERFLOW);
}
END_TEST

START_TEST(test_records)
{
	static uint8_t buf[2 * (PUTREC_HEAD + 100)];
	uint8_t sig[PUTREC_SIG_LEN], block[100];
	struct putrec rec;
	size_t total;

	memset(sig, 0x5a, sizeof(sig));
	memset(block, 0xb1, sizeof(block));
	putrec_encode(3, 1900000000, sig, block, sizeof(block), buf);
	ck_assert_uint_eq(wire_get32(buf), 74 + 100);
	ck_assert_int_eq(putrec_size(buf, 3, 100, &total), -EAGAIN);
	ck_assert_int_eq(putrec_size(buf, 4, 100, &total), 0);
	ck_assert_uint_eq(total, PUTREC_HEAD + 100);
	ck_assert_int_eq(putrec_decode(buf, total, 100, &rec), 0);
	ck_assert_uint_eq(rec.replication, 3);
	ck_assert_uint_eq(rec.expiry, 1900000000);
	ck_assert_mem_eq(rec.sig, sig, sizeof(sig));
	ck_assert_uint_eq(rec.block_len, 100);
	ck_assert_ptr_eq(rec.block, buf + PUTREC_HEAD);
	/* A MAX_BLOCK of 99: judged too large from the length alone. */
	ck_assert_int_eq(putrec_size(buf, 4, 99, &total), -EMSGSIZE);
	ck_assert_int_eq(putrec_decode(buf, PUTREC_HEAD + 99, 100, &rec),
	    -EBADMSG);
	buf[4] = 2;
	ck_assert_int_eq(putrec_decode(buf, PUTREC_HEAD + 100, 100, &rec),
	    -EBADMSG);
	/* An empty block: len 74 is under 75. */
	wire_put32(buf, 74);
	ck_assert_int_eq(putrec_size(buf, 4, 100, &total), -EBADMSG);
	wire_put32(buf, UINT32_MAX);
	ck_assert_int_eq(putrec_size(buf, 4, 100, &total), -EMSGSIZE);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("imd_wire");
	TCase *tc = tcase_create("wire");

	tcase_add_test(tc, test_request_line);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_records);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
