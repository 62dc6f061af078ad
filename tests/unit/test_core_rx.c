/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * rx_next (src/core/rx.c), the splitter of every {u16 size, u16 type}
 * sequence: units of outer messages and frames of inner ones. Valid
 * sequences, sizes below the header, sizes past the end, trailing bytes.
 */
#include <errno.h>
#include <string.h>

#include <check.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/rx.h"
#include "unit.h"

static uint8_t buf[256];

/* Appends a message of size bytes (header included) at *len. */
static void
put(size_t *len, uint16_t size, uint16_t type)
{
	wire_put_hdr(buf + *len, size, type);
	for (size_t i = 4; i < size; i++)
		buf[*len + i] = (uint8_t)(type + i);
	*len += size;
}

START_TEST(test_valid_sequence)
{
	static const uint16_t sizes[] = { 4, 10, 100, 5, 4 };
	size_t len = 0, off = 0, size = 0, at = 0;
	const uint8_t *msg = NULL;
	uint16_t type = 0;

	for (size_t i = 0; i < 5; i++)
		put(&len, sizes[i], (uint16_t)(0x100 + i));
	for (size_t i = 0; i < 5; i++) {
		ck_assert_int_eq(rx_next(buf, len, &off, &type, &msg, &size),
		    1);
		ck_assert_uint_eq(type, 0x100 + i);
		ck_assert_uint_eq(size, sizes[i]);
		ck_assert_ptr_eq(msg, buf + at);
		at += sizes[i];
		ck_assert_uint_eq(off, at);
	}
	ck_assert_int_eq(rx_next(buf, len, &off, &type, &msg, &size), 0);
	ck_assert_int_eq(rx_next(buf, len, &off, &type, &msg, &size), 0);
	/* An empty unit is simply at its end. */
	off = 0;
	ck_assert_int_eq(rx_next(buf, 0, &off, &type, &msg, &size), 0);
	/* A message exactly as long as the buffer. */
	len = 0;
	put(&len, sizeof(buf), 7);
	off = 0;
	ck_assert_int_eq(rx_next(buf, len, &off, &type, &msg, &size), 1);
	ck_assert_uint_eq(size, sizeof(buf));
	ck_assert_int_eq(rx_next(buf, len, &off, &type, &msg, &size), 0);
}
END_TEST

START_TEST(test_size_below_header)
{
	for (uint16_t bad = 0; bad < FERRY_HDR_SIZE; bad++) {
		size_t len = 0, off = 0, size;
		const uint8_t *msg;
		uint16_t type;

		put(&len, 8, 1);
		wire_put_hdr(buf + len, bad, 2);
		len += 8;
		ck_assert_int_eq(rx_next(buf, len, &off, &type, &msg, &size),
		    1);
		/* Size 0 would never advance; 1 to 3 would cut the header. */
		ck_assert_msg(rx_next(buf, len, &off, &type, &msg, &size) ==
		        -EBADMSG,
		    "size %u accepted", bad);
	}
}
END_TEST

START_TEST(test_size_past_end)
{
	size_t len = 0, off = 0, size;
	const uint8_t *msg;
	uint16_t type;

	put(&len, 10, 1);
	put(&len, 20, 2);
	/* The second claims one byte more than there is. */
	wire_put16(buf + 10, 21);
	ck_assert_int_eq(rx_next(buf, len, &off, &type, &msg, &size), 1);
	ck_assert_int_eq(rx_next(buf, len, &off, &type, &msg, &size), -EBADMSG);
	/* And 0xffff. */
	wire_put16(buf + 10, 0xffff);
	ck_assert_int_eq(rx_next(buf, len, &off, &type, &msg, &size), -EBADMSG);
	/* The first one alone, cut short. */
	off = 0;
	ck_assert_int_eq(rx_next(buf, 9, &off, &type, &msg, &size), -EBADMSG);
}
END_TEST

START_TEST(test_trailing_bytes)
{
	for (size_t extra = 1; extra < FERRY_HDR_SIZE; extra++) {
		size_t len = 0, off = 0, size;
		const uint8_t *msg;
		uint16_t type;

		put(&len, 12, 1);
		memset(buf + len, 0, extra);
		ck_assert_int_eq(rx_next(buf, len + extra, &off, &type, &msg,
		                     &size),
		    1);
		ck_assert_msg(rx_next(buf, len + extra, &off, &type, &msg,
		                  &size) == -EBADMSG,
		    "%zu trailing bytes accepted", extra);
	}
}
END_TEST

START_TEST(test_walk_never_overruns)
{
	uint64_t seed = 3;

	/* Random bytes: every message returned lies inside the buffer and
	 * the walk ends, by 0 or -EBADMSG, in at most len / 4 steps. */
	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)(unit_rand(&seed) % sizeof(buf));
		size_t off = 0, size, steps = 0;
		const uint8_t *msg;
		uint16_t type;
		int r;

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)unit_rand(&seed);
		if (len >= 2 && round % 2)
			wire_put16(buf, (uint16_t)(4 + unit_rand(&seed) % len));
		while ((r = rx_next(buf, len, &off, &type, &msg, &size)) == 1) {
			ck_assert(size >= FERRY_HDR_SIZE);
			ck_assert(msg >= buf && msg + size <= buf + len);
			ck_assert_uint_eq(off, (size_t)(msg - buf) + size);
			ck_assert_uint_le(++steps, len / FERRY_HDR_SIZE);
		}
		ck_assert(r == 0 || r == -EBADMSG);
		if (r == 0)
			ck_assert_uint_eq(off, len);
	}
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_rx");
	TCase *tc = tcase_create("rx_next");

	tcase_add_test(tc, test_valid_sequence);
	tcase_add_test(tc, test_size_below_header);
	tcase_add_test(tc, test_size_past_end);
	tcase_add_test(tc, test_trailing_bytes);
	tcase_add_test(tc, test_walk_never_overruns);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
