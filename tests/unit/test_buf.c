/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The framing buffer (src/lib/buf.c): growth, consumption, the slide of
 * live bytes to the front, and data integrity across all of them. */
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "lib/buf.h"
#include "unit.h"

static struct buf b;

static void
test_setup(void)
{
	buf_init(&b);
}

static void
test_teardown(void)
{
	buf_done(&b);
}

START_TEST(test_empty)
{
	ck_assert_uint_eq(buf_size(&b), 0);
	ck_assert_ptr_null(b.data);
	ck_assert_int_eq(buf_append(&b, "x", 0), 0);
	ck_assert_ptr_null(b.data); /* appending nothing allocates nothing */
	buf_done(&b);
	buf_done(&b); /* twice is fine */
}
END_TEST

START_TEST(test_append_consume)
{
	ck_assert_int_eq(buf_append(&b, "hello ", 6), 0);
	ck_assert_int_eq(buf_append(&b, "world", 5), 0);
	ck_assert_uint_eq(buf_size(&b), 11);
	ck_assert_mem_eq(buf_head(&b), "hello world", 11);
	buf_consume(&b, 6);
	ck_assert_uint_eq(buf_size(&b), 5);
	ck_assert_mem_eq(buf_head(&b), "world", 5);
	buf_consume(&b, 5);
	ck_assert_uint_eq(buf_size(&b), 0);
	/* Consuming everything rewinds to the start of the storage. */
	ck_assert_uint_eq(b.off, 0);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_ptr_nonnull(b.data);
}
END_TEST

START_TEST(test_reserve_commit)
{
	uint8_t *p = buf_reserve(&b, 100);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_ge(b.cap - b.len, 100);
	memset(p, 'a', 40);
	buf_commit(&b, 40);
	ck_assert_uint_eq(buf_size(&b), 40);
	p = buf_reserve(&b, 10);
	ck_assert_ptr_eq(p, buf_head(&b) + 40); /* right after the data */
	memcpy(p, "0123456789", 10);
	buf_commit(&b, 10);
	ck_assert_mem_eq(buf_head(&b) + 40, "0123456789", 10);
}
END_TEST

START_TEST(test_slide_instead_of_grow)
{
	uint8_t *data, *p;
	size_t cap;

	ck_assert_ptr_nonnull(buf_reserve(&b, 200));
	cap = b.cap;
	data = b.data;
	buf_commit(&b, cap);
	memset(b.data, 'z', cap);
	memcpy(b.data + cap - 8, "the tail", 8);
	buf_consume(&b, cap - 8);
	/* Room exists at the front: the live bytes move there. */
	p = buf_reserve(&b, cap - 8);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_eq(b.data, data);
	ck_assert_uint_eq(b.cap, cap);
	ck_assert_uint_eq(b.off, 0);
	ck_assert_mem_eq(buf_head(&b), "the tail", 8);
	ck_assert_ptr_eq(p, b.data + 8);
}
END_TEST

START_TEST(test_grow_keeps_live_bytes)
{
	ck_assert_int_eq(buf_append(&b, "dropme:keep", 11), 0);
	buf_consume(&b, 7);
	ck_assert_ptr_nonnull(buf_reserve(&b, 100000));
	ck_assert_uint_eq(b.off, 0);
	ck_assert_uint_eq(buf_size(&b), 4);
	ck_assert_mem_eq(buf_head(&b), "keep", 4);
}
END_TEST

START_TEST(test_stream_integrity)
{
	/* Appends and consumes of assorted sizes behave like a FIFO. */
	static uint8_t chunk[5000];
	uint64_t seed = 1, wrote = 0, read = 0;

	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)(unit_rand(&seed) % sizeof(chunk));

		for (size_t i = 0; i < n; i++)
			chunk[i] = (uint8_t)(wrote + i);
		ck_assert_int_eq(buf_append(&b, chunk, n), 0);
		wrote += n;
		n = (size_t)(unit_rand(&seed) % (buf_size(&b) + 1));
		for (size_t i = 0; i < n; i++)
			if (buf_head(&b)[i] != (uint8_t)(read + i))
				ck_abort_msg("byte %llu is wrong",
				    (unsigned long long)(read + i));
		buf_consume(&b, n);
		read += n;
	}
	ck_assert_uint_eq(buf_size(&b), wrote - read);
	ck_assert_uint_lt(b.cap, 64 * 1024); /* bounded by the live bytes */
}
END_TEST

START_TEST(test_reset_keeps_storage)
{
	uint8_t *data;

	ck_assert_int_eq(buf_append(&b, "abc", 3), 0);
	data = b.data;
	buf_reset(&b);
	ck_assert_uint_eq(buf_size(&b), 0);
	ck_assert_ptr_eq(b.data, data);
	ck_assert_int_eq(buf_append(&b, "de", 2), 0);
	ck_assert_mem_eq(buf_head(&b), "de", 2);
}
END_TEST

START_TEST(test_impossible_reserve)
{
	ck_assert_int_eq(buf_append(&b, "abc", 3), 0);
	ck_assert_ptr_null(buf_reserve(&b, SIZE_MAX));
	ck_assert_ptr_null(buf_reserve(&b, SIZE_MAX / 2));
	/* A refused reserve changes nothing. */
	ck_assert_uint_eq(buf_size(&b), 3);
	ck_assert_mem_eq(buf_head(&b), "abc", 3);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_append_consume);
	tcase_add_test(tc, test_reserve_commit);
	tcase_add_test(tc, test_slide_instead_of_grow);
	tcase_add_test(tc, test_grow_keeps_live_bytes);
	tcase_add_test(tc, test_stream_integrity);
	tcase_add_test(tc, test_reset_keeps_storage);
	tcase_add_test(tc, test_impossible_reserve);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
