/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The HTTPS server's table of client addresses
 * (src/intermediary/httpd_addr.c): an IPv4 address, or an IPv6 /64,
 * counts as one (IPv4-mapped as IPv4); connections past the bound are
 * refused and given back; the bucket lets twice the rate through at once,
 * then the rate, and follows a new rate; the table forgets the least
 * recently seen addresses without connections first, and never one with
 * connections.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "intermediary/httpd_addr.h"
#include "unit.h"

static struct sockaddr_storage
addr(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
	} else {
		ck_assert_int_eq(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
	}
	return ss;
}

static struct httpd_addr *
get(struct httpd_addrs *t, const char *ip, uint16_t port)
{
	struct sockaddr_storage ss = addr(ip, port);
	struct httpd_addr *a = httpd_addrs_get(t, &ss);

	ck_assert_ptr_nonnull(a);
	return a;
}

START_TEST(test_same_address)
{
	struct httpd_addrs t;
	struct httpd_addr *a;

	ck_assert_int_eq(httpd_addrs_init(&t, 100), 0);
	a = get(&t, "192.0.2.1", 1000);
	ck_assert_ptr_eq(get(&t, "192.0.2.1", 2000), a);
	ck_assert_ptr_eq(get(&t, "::ffff:192.0.2.1", 3000), a);
	ck_assert_ptr_ne(get(&t, "192.0.2.2", 1000), a);
	/* One /64 is one host's. */
	a = get(&t, "2001:db8:1:2::1", 1);
	ck_assert_ptr_eq(get(&t, "2001:db8:1:2:ffff:ffff:ffff:ffff", 1), a);
	ck_assert_ptr_ne(get(&t, "2001:db8:1:3::1", 1), a);
	ck_assert_uint_eq(t.n, 4);
	httpd_addrs_done(&t);
}
END_TEST

START_TEST(test_connections)
{
	struct httpd_addrs t;
	struct httpd_addr *a, *b;

	ck_assert_int_eq(httpd_addrs_init(&t, 100), 0);
	a = get(&t, "192.0.2.1", 1);
	b = get(&t, "192.0.2.2", 1);
	for (int i = 0; i < 3; i++)
		ck_assert(httpd_addr_connect(&t, a, 3));
	ck_assert(!httpd_addr_connect(&t, a, 3));
	ck_assert_uint_eq(a->conns, 3);
	/* Another address is not held back by it. */
	ck_assert(httpd_addr_connect(&t, b, 3));
	httpd_addr_disconnect(&t, a);
	ck_assert(httpd_addr_connect(&t, a, 3));
	ck_assert(!httpd_addr_connect(&t, a, 3));
	/* 0: no bound. */
	for (int i = 0; i < 1000; i++)
		ck_assert(httpd_addr_connect(&t, a, 0));
	ck_assert_uint_eq(t.n_idle, 0);
	for (int i = 0; i < 1003; i++)
		httpd_addr_disconnect(&t, a);
	ck_assert_uint_eq(a->conns, 0);
	ck_assert_uint_eq(t.n_idle, 1);
	httpd_addr_disconnect(&t, b);
	httpd_addrs_done(&t);
}
END_TEST

START_TEST(test_rate)
{
	struct httpd_addrs t;
	struct httpd_addr *a;
	uint64_t now = 1000000;
	int n = 0;

	ck_assert_int_eq(httpd_addrs_init(&t, 100), 0);
	a = get(&t, "192.0.2.1", 1);
	/* 10 a second: 20 at once, then no more. */
	while (n < 100 && httpd_addr_take(a, 10, now))
		n++;
	ck_assert_int_eq(n, 20);
	ck_assert(!httpd_addr_take(a, 10, now));
	/* A tenth of a second later, one more. */
	now += 100000;
	ck_assert(httpd_addr_take(a, 10, now));
	ck_assert(!httpd_addr_take(a, 10, now));
	/* A new rate (a reload) applies at once; 0 is no bound. */
	now += 10000;
	ck_assert(httpd_addr_take(a, 100, now));
	ck_assert(!httpd_addr_take(a, 100, now));
	for (int i = 0; i < 1000; i++)
		ck_assert(httpd_addr_take(a, 0, now));
	/* After two seconds the burst is whole again. */
	now += 2000000;
	n = 0;
	while (n < 1000 && httpd_addr_take(a, 100, now))
		n++;
	ck_assert_int_eq(n, 200);
	httpd_addrs_done(&t);
}
END_TEST

START_TEST(test_forgets_idle_first)
{
	struct httpd_addrs t;
	struct httpd_addr *busy, *a;
	char ip[32];

	ck_assert_int_eq(httpd_addrs_init(&t, 4), 0);
	busy = get(&t, "198.51.100.1", 1);
	ck_assert(httpd_addr_connect(&t, busy, 0));
	while (httpd_addr_take(busy, 1, 1000000))
		;
	for (int i = 1; i <= 4; i++) {
		(void)snprintf(ip, sizeof(ip), "192.0.2.%d", i);
		a = get(&t, ip, 1);
		/* Each spends its bucket, so that a new one shows. */
		while (httpd_addr_take(a, 1, 1000000))
			;
	}
	ck_assert_uint_eq(t.n, 5);
	ck_assert_uint_eq(t.n_idle, 4);
	/* .1 is seen again: .2 is the least recently seen now. */
	a = get(&t, "192.0.2.1", 1);
	ck_assert(!httpd_addr_take(a, 1, 1000000));
	(void)get(&t, "192.0.2.5", 1);
	ck_assert_uint_eq(t.n_idle, 4);
	ck_assert_uint_eq(t.n, 5);
	a = get(&t, "192.0.2.1", 1);
	ck_assert(!httpd_addr_take(a, 1, 1000000)); /* kept */
	a = get(&t, "192.0.2.2", 1);                /* forgotten: new */
	ck_assert(httpd_addr_take(a, 1, 1000000));
	/* The address with a connection outlives them all. */
	for (int i = 10; i < 50; i++) {
		(void)snprintf(ip, sizeof(ip), "192.0.2.%d", i);
		(void)get(&t, ip, 1);
	}
	ck_assert_uint_eq(t.n_idle, 4);
	ck_assert_ptr_eq(get(&t, "198.51.100.1", 1), busy);
	ck_assert(!httpd_addr_take(busy, 1, 1000000));
	ck_assert_uint_eq(busy->conns, 1);
	/* Given back, it is idle, and forgotten in its turn. */
	httpd_addr_disconnect(&t, busy);
	ck_assert_uint_eq(t.n_idle, 4);
	ck_assert_uint_eq(t.n, 4);
	httpd_addrs_done(&t);
	ck_assert_uint_eq(t.n, 0);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("httpd_addr");
	TCase *tc = tcase_create("addresses");

	tcase_add_test(tc, test_same_address);
	tcase_add_test(tc, test_connections);
	tcase_add_test(tc, test_rate);
	tcase_add_test(tc, test_forgets_idle_first);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
