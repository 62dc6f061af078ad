/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A buffer's traffic with a stream socket (src/lib/bufio.c), over a real
 * non-blocking socketpair: reads up to a bound, nothing waiting, end of
 * file; sends until the socket is full, the rest later, and a peer gone
 * as -EPIPE, not SIGPIPE. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>

#include "lib/bufio.h"
#include "unit.h"

static struct buf b;
static int sv[2] = { -1, -1 };

static void
test_setup(void)
{
	const int type = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC;

	buf_init(&b);
	ck_assert_int_eq(socketpair(AF_UNIX, type, 0, sv), 0);
}

static void
test_teardown(void)
{
	buf_done(&b);
	for (int i = 0; i < 2; i++)
		if (sv[i] >= 0)
			(void)close(sv[i]);
	sv[0] = sv[1] = -1;
}

START_TEST(test_read)
{
	ck_assert_int_eq(bufio_read(&b, sv[0], 4), -EAGAIN);
	ck_assert_int_eq(write(sv[1], "hello", 5), 5);
	ck_assert_int_eq(bufio_read(&b, sv[0], 4), 4);
	ck_assert_int_eq(bufio_read(&b, sv[0], 4), 1);
	ck_assert_uint_eq(buf_size(&b), 5);
	ck_assert_mem_eq(buf_head(&b), "hello", 5);
	ck_assert_int_eq(bufio_read(&b, sv[0], 4), -EAGAIN);
	ck_assert_int_eq(close(sv[1]), 0);
	sv[1] = -1;
	ck_assert_int_eq(bufio_read(&b, sv[0], 4), 0);
	ck_assert_uint_eq(buf_size(&b), 5);
}
END_TEST

START_TEST(test_send_until_full)
{
	enum { BIG = 4 * 1024 * 1024 };
	static uint8_t in[BIG];
	struct buf got;
	size_t left;
	ssize_t n;

	buf_init(&got);
	for (size_t i = 0; i < BIG; i++)
		in[i] = (uint8_t)(i * 13);
	ck_assert_int_eq(buf_append(&b, in, BIG), 0);
	ck_assert_int_eq(bufio_send(&b, sv[0]), 0);
	left = buf_size(&b);
	ck_assert_uint_gt(left, 0); /* the socket took only part */
	ck_assert_uint_lt(left, BIG);
	ck_assert_int_eq(bufio_send(&b, sv[0]), 0);
	ck_assert_uint_eq(buf_size(&b), left);
	/* The peer reads; the rest goes as the socket takes it. */
	while (buf_size(&got) < BIG) {
		n = bufio_read(&got, sv[1], 65536);
		ck_assert(n > 0 || n == -EAGAIN);
		ck_assert_int_eq(bufio_send(&b, sv[0]), 0);
	}
	ck_assert_uint_eq(buf_size(&b), 0);
	ck_assert_int_eq(memcmp(buf_head(&got), in, BIG), 0);
	buf_done(&got);
}
END_TEST

START_TEST(test_send_to_gone_peer)
{
	ck_assert_int_eq(close(sv[1]), 0);
	sv[1] = -1;
	ck_assert_int_eq(buf_append(&b, "late", 4), 0);
	ck_assert_int_eq(bufio_send(&b, sv[0]), -EPIPE);
	ck_assert_uint_eq(buf_size(&b), 4);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("bufio");
	TCase *tc = tcase_create("bufio");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_read);
	tcase_add_test(tc, test_send_until_full);
	tcase_add_test(tc, test_send_to_gone_peer);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
