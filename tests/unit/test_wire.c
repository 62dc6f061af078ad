/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Big-endian wire access (src/lib/wire.h): byte order, round trips and
 * unaligned positions. */
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "lib/wire.h"
#include "unit.h"

START_TEST(test_byte_order)
{
	uint8_t b[8];

	wire_put16(b, 0x1234);
	ck_assert_mem_eq(b, "\x12\x34", 2);
	wire_put32(b, 0x89abcdefu);
	ck_assert_mem_eq(b, "\x89\xab\xcd\xef", 4);
	wire_put64(b, 0x0102030405060708ull);
	ck_assert_mem_eq(b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	ck_assert_uint_eq(wire_get16("\xff\xfe"), 0xfffe);
	ck_assert_uint_eq(wire_get32("\x80\x00\x00\x01"), 0x80000001u);
	ck_assert_uint_eq(wire_get64("\xff\xee\xdd\xcc\xbb\xaa\x99\x88"),
	    0xffeeddccbbaa9988ull);
}
END_TEST

START_TEST(test_round_trips_unaligned)
{
	uint8_t buf[32];
	uint64_t seed = 17;

	for (int i = 0; i < 10000; i++) {
		uint64_t v = unit_rand(&seed);
		size_t at = (size_t)(v % 23); /* any alignment */

		memset(buf, 0xaa, sizeof(buf));
		wire_put64(buf + at, v);
		if (wire_get64(buf + at) != v || buf[at + 8] != 0xaa ||
		    (at > 0 && buf[at - 1] != 0xaa))
			ck_abort_msg("64-bit round trip at %zu", at);
		wire_put32(buf + at, (uint32_t)v);
		wire_put16(buf + at + 4, (uint16_t)(v >> 32));
		if (wire_get32(buf + at) != (uint32_t)v ||
		    wire_get16(buf + at + 4) != (uint16_t)(v >> 32))
			ck_abort_msg("32/16-bit round trip at %zu", at);
	}
}
END_TEST

START_TEST(test_header)
{
	uint8_t b[4];

	wire_put_hdr(b, 516, 0x0400);
	ck_assert_mem_eq(b, "\x02\x04\x04\x00", 4);
	ck_assert_uint_eq(wire_get16(b), 516);
	ck_assert_uint_eq(wire_get16(b + 2), 0x0400);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("wire");

	tcase_add_test(tc, test_byte_order);
	tcase_add_test(tc, test_round_trips_unaligned);
	tcase_add_test(tc, test_header);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
