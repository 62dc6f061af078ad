/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of src/lib/netaddr.c: HELO form, text form, CIDR lists. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "unit.h"

#include "lib/netaddr.h"

static struct sockaddr_storage
parse_ok(const char *s)
{
	struct sockaddr_storage ss;

	ck_assert_int_eq(netaddr_parse(s, strlen(s), &ss), 0);
	return ss;
}

static int
parse(const char *s)
{
	struct sockaddr_storage ss;

	return netaddr_parse(s, strlen(s), &ss);
}

START_TEST(encode_decode_v4)
{
	struct sockaddr_storage ss = parse_ok("192.0.2.7:2086"), back;
	static const uint8_t want[] = { 4, 192, 0, 2, 7, 0x08, 0x26 };
	uint8_t buf[NETADDR_HELO_MAX];
	size_t len = 99;

	ck_assert_int_eq(netaddr_encode(&ss, buf, sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, sizeof(want));
	ck_assert_mem_eq(buf, want, sizeof(want));
	ck_assert_int_eq(netaddr_decode(buf, len, &back), 0);
	ck_assert_int_eq(back.ss_family, AF_INET);
	ck_assert_uint_eq(netaddr_port(&back), 2086);
	ck_assert_int_eq(netaddr_encode(&ss, buf, 6, &len), -ENOSPC);
	ck_assert_uint_eq(len, sizeof(want)); /* untouched on failure */
}
END_TEST

START_TEST(encode_decode_v6)
{
	struct sockaddr_storage ss = parse_ok("[2001:db8::1]:65535"), back;
	uint8_t buf[NETADDR_HELO_MAX];
	char text[NETADDR_STRLEN];
	size_t len;

	ck_assert_int_eq(netaddr_encode(&ss, buf, sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, NETADDR_HELO_V6_LEN);
	ck_assert_uint_eq(buf[0], 6);
	ck_assert_uint_eq(buf[17], 0xff);
	ck_assert_uint_eq(buf[18], 0xff);
	ck_assert_int_eq(netaddr_decode(buf, len, &back), 0);
	ck_assert_int_eq(netaddr_format(&back, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "[2001:db8::1]:65535");
}
END_TEST

START_TEST(decode_rejects)
{
	static const uint8_t v4[] = { 4, 10, 0, 0, 1, 0x08, 0x26 };
	static const uint8_t port0[] = { 4, 10, 0, 0, 1, 0, 0 };
	static const uint8_t fam5[] = { 5, 10, 0, 0, 1, 0x08, 0x26 };
	uint8_t mapped[NETADDR_HELO_V6_LEN] = { 6 };
	uint8_t v6as4[NETADDR_HELO_V4_LEN + 12] = { 4 };
	struct sockaddr_storage ss;

	ck_assert_int_eq(netaddr_decode(v4, sizeof(v4), &ss), 0);
	for (size_t n = 0; n < sizeof(v4); n++)
		ck_assert_int_eq(netaddr_decode(v4, n, &ss), -EINVAL);
	ck_assert_int_eq(netaddr_decode(port0, sizeof(port0), &ss), -EINVAL);
	ck_assert_int_eq(netaddr_decode(fam5, sizeof(fam5), &ss), -EINVAL);
	ck_assert_int_eq(netaddr_decode(v6as4, sizeof(v6as4), &ss), -EINVAL);
	/* ::ffff:10.0.0.1 must travel in its IPv4 form */
	mapped[11] = 0xff;
	mapped[12] = 0xff;
	mapped[13] = 10;
	mapped[16] = 1;
	mapped[18] = 1;
	ck_assert_int_eq(netaddr_decode(mapped, sizeof(mapped), &ss), -EINVAL);
}
END_TEST

START_TEST(mapped_encodes_as_v4)
{
	struct sockaddr_storage ss = parse_ok("[::ffff:10.1.2.3]:80");
	uint8_t buf[NETADDR_HELO_MAX];
	const uint8_t *ip;
	char text[NETADDR_STRLEN];
	size_t len;

	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_int_eq(netaddr_encode(&ss, buf, sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, NETADDR_HELO_V4_LEN);
	ck_assert_uint_eq(netaddr_ip_bytes(&ss, &ip), 4);
	ck_assert_uint_eq(ip[0], 10);
	ck_assert_int_eq(netaddr_format(&ss, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "10.1.2.3:80");
	netaddr_unmap(&ss);
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_uint_eq(netaddr_port(&ss), 80);
}
END_TEST

START_TEST(parse_forms)
{
	char text[NETADDR_STRLEN];
	struct sockaddr_storage ss = parse_ok("1.2.3.4:2086");

	ck_assert_int_eq(netaddr_format(&ss, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "1.2.3.4:2086");
	ss = parse_ok("[::1]:1");
	ck_assert_int_eq(netaddr_format(&ss, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "[::1]:1");
	ck_assert_int_eq(netaddr_format(&ss, text, 5), -ENOSPC);
	ck_assert_int_eq(parse(""), -EINVAL);
	ck_assert_int_eq(parse(":80"), -EINVAL);
	ck_assert_int_eq(parse("1.2.3.4"), -EINVAL);
	ck_assert_int_eq(parse("1.2.3.4:"), -EINVAL);
	ck_assert_int_eq(parse("1.2.3.4:0"), -EINVAL);
	ck_assert_int_eq(parse("1.2.3.4:65536"), -EINVAL);
	ck_assert_int_eq(parse("1.2.3.4:080"), -EINVAL);
	ck_assert_int_eq(parse("1.2.3.4:+80"), -EINVAL);
	ck_assert_int_eq(parse("1.2.3.4: 80"), -EINVAL);
	ck_assert_int_eq(parse("1.2.3:80"), -EINVAL);
	ck_assert_int_eq(parse("::1:80"), -EINVAL);
	ck_assert_int_eq(parse("[::1]"), -EINVAL);
	ck_assert_int_eq(parse("[::1:80"), -EINVAL);
	ck_assert_int_eq(parse("[1.2.3.4]:80"), -EINVAL);
	ck_assert_int_eq(parse("[fe80::1%eth0]:80"), -EINVAL);
	ck_assert_int_eq(parse("host.example:80"), -EINVAL);
	/* only len bytes count: the rest of the string is not looked at */
	ck_assert_int_eq(netaddr_parse("1.2.3.4:80 junk", 10, &ss), 0);
	ck_assert_uint_eq(netaddr_port(&ss), 80);
}
END_TEST

START_TEST(parse_ip_forms)
{
	struct sockaddr_storage ss;

	ck_assert_int_eq(netaddr_parse_ip("0.0.0.0", 7, 5, &ss), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_uint_eq(netaddr_port(&ss), 5);
	ck_assert_int_eq(netaddr_parse_ip("::", 2, 0, &ss), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_int_eq(netaddr_parse_ip("[::1]", 5, 0, &ss), 0);
	ck_assert_int_eq(netaddr_parse_ip("1.2.3.4:5", 9, 0, &ss), -EINVAL);
	ck_assert_int_eq(netaddr_parse_ip("", 0, 0, &ss), -EINVAL);
}
END_TEST

static bool
is(bool (*pred)(const struct sockaddr_storage *), const char *s)
{
	struct sockaddr_storage ss = parse_ok(s);

	return pred(&ss);
}

START_TEST(predicates)
{
	ck_assert(is(netaddr_is_unspecified, "0.0.0.0:1"));
	ck_assert(is(netaddr_is_unspecified, "0.1.2.3:1"));
	ck_assert(is(netaddr_is_unspecified, "[::]:1"));
	ck_assert(is(netaddr_is_multicast, "224.0.0.1:1"));
	ck_assert(is(netaddr_is_multicast, "239.255.255.255:1"));
	ck_assert(is(netaddr_is_multicast, "[ff02::1]:1"));
	ck_assert(!is(netaddr_is_multicast, "223.255.255.255:1"));
	ck_assert(is(netaddr_is_broadcast, "255.255.255.255:1"));
	ck_assert(!is(netaddr_is_broadcast, "255.255.255.254:1"));
	ck_assert(is(netaddr_is_loopback, "127.9.9.9:1"));
	ck_assert(is(netaddr_is_loopback, "[::1]:1"));
	ck_assert(is(netaddr_is_link_local, "[fe80::1]:1"));
	ck_assert(is(netaddr_is_link_local, "169.254.1.1:1"));
	ck_assert(is(netaddr_is_refused, "[::ffff:224.1.1.1]:1"));
	ck_assert(is(netaddr_is_refused, "0.0.0.0:1"));
	ck_assert(is(netaddr_is_refused, "255.255.255.255:1"));
	ck_assert(!is(netaddr_is_refused, "192.0.2.1:1"));
	ck_assert(!is(netaddr_is_refused, "[2001:db8::1]:1"));
}
END_TEST

START_TEST(net_parse)
{
	struct netaddr_net net;

	ck_assert_int_eq(netaddr_net_parse("10.0.0.0/8", 10, &net), 0);
	ck_assert_uint_eq(net.family, 4);
	ck_assert_uint_eq(net.prefix, 8);
	ck_assert_int_eq(netaddr_net_parse("fc00::/7", 8, &net), 0);
	ck_assert_uint_eq(net.family, 6);
	ck_assert_uint_eq(net.prefix, 7);
	ck_assert_int_eq(netaddr_net_parse("192.0.2.1", 9, &net), 0);
	ck_assert_uint_eq(net.prefix, 32);
	ck_assert_int_eq(netaddr_net_parse("0.0.0.0/0", 9, &net), 0);
	ck_assert_int_eq(netaddr_net_parse("10.0.0.1/8", 10, &net), -EINVAL);
	ck_assert_int_eq(netaddr_net_parse("10.0.0.0/33", 11, &net), -EINVAL);
	ck_assert_int_eq(netaddr_net_parse("::/129", 6, &net), -EINVAL);
	ck_assert_int_eq(netaddr_net_parse("10.0.0.0/", 9, &net), -EINVAL);
	ck_assert_int_eq(netaddr_net_parse("10.0.0.0/08", 11, &net), -EINVAL);
	ck_assert_int_eq(netaddr_net_parse("10.0.0.0/-1", 11, &net), -EINVAL);
	ck_assert_int_eq(netaddr_net_parse("/8", 2, &net), -EINVAL);
}
END_TEST

START_TEST(netlist_match)
{
	struct netaddr_netlist list;
	struct sockaddr_storage ss;

	ck_assert_int_eq(netaddr_netlist_parse(
	    "10.0.0.0/8, fc00::/7\t192.168.1.128/25 ::1", &list), 0);
	ck_assert_uint_eq(list.n, 4);
	ss = parse_ok("10.200.3.4:1");
	ck_assert(netaddr_netlist_match(&list, &ss));
	ss = parse_ok("11.0.0.1:1");
	ck_assert(!netaddr_netlist_match(&list, &ss));
	ss = parse_ok("192.168.1.200:1");
	ck_assert(netaddr_netlist_match(&list, &ss));
	ss = parse_ok("192.168.1.127:1");
	ck_assert(!netaddr_netlist_match(&list, &ss));
	ss = parse_ok("[fd12::5]:1");
	ck_assert(netaddr_netlist_match(&list, &ss));
	ss = parse_ok("[fe00::5]:1");
	ck_assert(!netaddr_netlist_match(&list, &ss));
	ss = parse_ok("[::1]:1");
	ck_assert(netaddr_netlist_match(&list, &ss));
	/* an IPv4-mapped address is judged as the IPv4 address it is */
	ss = parse_ok("[::ffff:10.9.9.9]:1");
	ck_assert(netaddr_netlist_match(&list, &ss));
	netaddr_netlist_done(&list);
	ck_assert_uint_eq(list.n, 0);

	ck_assert_int_eq(netaddr_netlist_parse("", &list), 0);
	ck_assert_uint_eq(list.n, 0);
	ck_assert(!netaddr_netlist_match(&list, &ss));
	netaddr_netlist_done(&list);
	ck_assert_int_eq(netaddr_netlist_parse("0.0.0.0/0 ::/0", &list), 0);
	ck_assert(netaddr_netlist_match(&list, &ss));
	netaddr_netlist_done(&list);

	list.n = 77;
	ck_assert_int_eq(netaddr_netlist_parse("10.0.0.0/8 bogus", &list),
	    -EINVAL);
	ck_assert_uint_eq(list.n, 77); /* untouched on failure */
}
END_TEST

static Suite *
netaddr_suite(void)
{
	Suite *s = suite_create("netaddr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, encode_decode_v4);
	tcase_add_test(tc, encode_decode_v6);
	tcase_add_test(tc, decode_rejects);
	tcase_add_test(tc, mapped_encodes_as_v4);
	tcase_add_test(tc, parse_forms);
	tcase_add_test(tc, parse_ip_forms);
	tcase_add_test(tc, predicates);
	tcase_add_test(tc, net_parse);
	tcase_add_test(tc, netlist_match);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(netaddr_suite());
}
