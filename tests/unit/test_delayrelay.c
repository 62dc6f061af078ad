/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The delaying TCP relay of the test library (tests/lib/delayrelay.h),
 * over real loopback sockets: bytes arrive whole and in order, no sooner
 * than the delay allows (the handshake's round trip first), a large
 * transfer pays the round trips of slow start, an idle connection starts
 * its window again, and an end of stream passes through. Only lower
 * bounds of time are asserted: a loaded machine makes everything slower,
 * never faster.
 */
/* unit-link: ferry_testlib */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "delayrelay.h"
#include "unit.h"

#define DELAY_US 20000u /* one way: a round trip of 40 ms */
#define RTT_US   (2 * DELAY_US)
#define BIG      (1u << 20)

static int target = -1, client = -1, server = -1;
static struct delayrelay *relay;
static uint64_t connect_us; /* when the client connected */

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void
setup(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	target = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(target, 0);
	ck_assert_int_eq(bind(target, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(target, 4), 0);
	ck_assert_int_eq(getsockname(target, (struct sockaddr *)&sin, &len), 0);
	ck_assert_int_eq(delayrelay_new(&sin, DELAY_US, &relay), 0);
	sin.sin_port = htons(delayrelay_port(relay));
	client = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(client, 0);
	connect_us = now_us();
	ck_assert_int_eq(connect(client, (struct sockaddr *)&sin, sizeof(sin)),
	    0);
	server = accept(target, NULL, NULL);
	ck_assert_int_ge(server, 0);
	ck_assert_uint_eq(delayrelay_accepted(relay), 1);
}

static void
teardown(void)
{
	close(client);
	close(server);
	close(target);
	delayrelay_free(relay);
}

static void
send_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);

		ck_assert_int_gt(w, 0);
		p += w;
		len -= (size_t)w;
	}
}

static void
recv_all(int fd, uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = recv(fd, p, len, 0);

		ck_assert_int_gt(n, 0);
		p += n;
		len -= (size_t)n;
	}
}

/* Sends BIG bytes from one end to the other, checks them; the
 * microseconds from the first byte sent to the last received. A thread
 * would be needed for more than the sockets' buffers: the sender is the
 * relay's reader, and the receiver reads as it goes in this loop. */
static uint64_t
transfer(int from, int to, uint8_t seed)
{
	uint8_t *out = malloc(BIG), *in = malloc(BIG);
	size_t sent = 0, got = 0;
	uint64_t t0 = now_us();

	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(in);
	for (size_t i = 0; i < BIG; i++)
		out[i] = (uint8_t)(i * 7 + seed);
	while (got < BIG) {
		if (sent < BIG) {
			ssize_t w = send(from, out + sent, BIG - sent,
			    MSG_DONTWAIT | MSG_NOSIGNAL);

			ck_assert(w > 0 || errno == EAGAIN);
			if (w > 0)
				sent += (size_t)w;
		}
		ssize_t n = recv(to, in + got, BIG - got, MSG_DONTWAIT);

		ck_assert(n > 0 || (n < 0 && errno == EAGAIN));
		if (n > 0)
			got += (size_t)n;
		else
			usleep(200);
	}
	t0 = now_us() - t0;
	ck_assert_int_eq(memcmp(in, out, BIG), 0);
	free(in);
	free(out);
	return t0;
}

/* The first byte waits for the handshake's round trip from the connect
 * and its own way; the answer takes one way back. */
START_TEST(test_delay)
{
	uint8_t b = 0x5a;
	uint64_t t1, t2;

	send_all(client, &b, 1);
	b = 0;
	recv_all(server, &b, 1);
	t1 = now_us();
	ck_assert_uint_eq(b, 0x5a);
	ck_assert_uint_ge(t1 - connect_us, 3 * DELAY_US);
	send_all(server, &b, 1);
	b = 0;
	recv_all(client, &b, 1);
	t2 = now_us();
	ck_assert_uint_eq(b, 0x5a);
	ck_assert_uint_ge(t2 - t1, DELAY_US);
	ck_assert_uint_lt(t2 - t1, 2 * RTT_US + 1000000);
}
END_TEST

/* 1 MiB from ten segments doubling each round trip needs seven round
 * trips (14480 x 127 > 1 MiB > 14480 x 63): at least six of them and
 * the last way pass before the last byte is in, both ways. After an idle
 * gap the window starts again. */
START_TEST(test_slow_start)
{
	uint64_t up, down, again;
	uint8_t b = 1;

	/* Past the handshake first. */
	send_all(client, &b, 1);
	recv_all(server, &b, 1);
	up = transfer(client, server, 1);
	ck_assert_uint_ge(up, 6 * RTT_US + DELAY_US);
	down = transfer(server, client, 2);
	ck_assert_uint_ge(down, 6 * RTT_US + DELAY_US);
	usleep(3 * RTT_US);
	again = transfer(client, server, 3);
	ck_assert_uint_ge(again, 6 * RTT_US + DELAY_US);
	fprintf(stderr,
	    "delayrelay: 1 MiB at RTT %u ms: %.0f ms up, %.0f ms "
	    "down, %.0f ms after an idle gap\n",
	    RTT_US / 1000, (double)up / 1000, (double)down / 1000,
	    (double)again / 1000);
}
END_TEST

/* A client's end of stream reaches the target once its bytes have, and
 * the target's close reaches the client. */
START_TEST(test_eof)
{
	uint8_t buf[16];

	send_all(client, (const uint8_t *)"bye", 3);
	ck_assert_int_eq(shutdown(client, SHUT_WR), 0);
	recv_all(server, buf, 3);
	ck_assert_int_eq(memcmp(buf, "bye", 3), 0);
	ck_assert_int_eq(recv(server, buf, sizeof(buf), 0), 0);
	close(server);
	server = -1;
	ck_assert_int_eq(recv(client, buf, sizeof(buf), 0), 0);
}
END_TEST

static Suite *
delayrelay_suite(void)
{
	Suite *s = suite_create("delayrelay");
	TCase *tc = tcase_create("relay");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_delay);
	tcase_add_test(tc, test_slow_start);
	tcase_add_test(tc, test_eof);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(delayrelay_suite());
}
