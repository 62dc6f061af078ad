/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of libtransport_udp.so through the plugin ABI, with real sockets
 * on 127.0.0.1 (and ::1 where the kernel has it): two instances talking,
 * session references, idle timeouts, MTU, the bounded inbound table under
 * a flood, blacklists and stub mode.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plugin_core.h"
#include "unit.h"

static struct event_base *base;
static struct pc a, b;

static void
setup(void)
{
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	pc_init(&a, base, 0xaa);
	pc_init(&b, base, 0xbb);
}

static void
teardown(void)
{
	pc_unload(&a);
	pc_unload(&b);
	event_base_free(base);
}

/* Loads and starts pc on bind with an ephemeral port and no blacklist. */
static void
start(struct pc *pc, const char *bind)
{
	pc_set(pc, "BIND_ADDRESS", bind);
	pc_set(pc, "PORT", "0");
	if (pc_cfg_get(pc, "BLACKLIST") == NULL)
		pc_set(pc, "BLACKLIST", "");
	ck_assert_ptr_nonnull(pc_load(pc, "udp"));
	ck_assert_int_eq(pc->t->start_server(pc->t->cls), 0);
}

static bool
got_units(void *arg)
{
	const struct pc *pc = arg;

	return pc->n_rx > 0;
}

static bool
a_rx_datagrams_200(void *arg)
{
	(void)arg;
	return pc_get(&a, "rx_datagrams") >= 200;
}

/* Connects b to a and returns b's session. */
static struct ferry_tsession *
b_to_a(void)
{
	uint8_t helo[32];
	struct ferry_tsession *ts = NULL;
	size_t len = pc_helo(&a, helo, sizeof(helo));

	ck_assert_int_eq(b.t->connect(b.t->cls, helo, len, &ts), 0);
	ck_assert_ptr_nonnull(ts);
	return ts;
}

static int
b_send(struct ferry_tsession *ts, const char *s)
{
	return b.t->send(b.t->cls, ts, s, strlen(s), true, 0);
}

START_TEST(two_instances_talk)
{
	uint8_t helo_b[32], addr[32];
	struct ferry_tsession *tb, *ta;
	size_t len_b, len;

	start(&a, "127.0.0.1");
	start(&b, "127.0.0.1");
	ck_assert_uint_eq(a.t->caps, FERRY_TCAP_INBOUND_REPLY);
	ck_assert_uint_eq(a.t->mtu, 1452);
	ck_assert_uint_eq(a.t->protocol, FERRY_PROTO_UDP);
	tb = b_to_a();
	ck_assert_int_eq(b_send(tb, "hello"), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	ck_assert_uint_eq(a.last_len, 5);
	ck_assert_mem_eq(a.last, "hello", 5);
	ck_assert(!a.last_has_sender); /* the core's formats name it */
	ck_assert_uint_eq(a.last_src_len, 4);
	ck_assert_mem_eq(a.last_src, "\x7f\x00\x00\x01", 4);
	ta = a.last_ts;
	/* a's session is b's bound address */
	len_b = pc_helo(&b, helo_b, sizeof(helo_b));
	ck_assert_int_eq(a.t->session_address(a.t->cls, ta, addr,
	    sizeof(addr), &len), 0);
	ck_assert_uint_eq(len, len_b);
	ck_assert_mem_eq(addr, helo_b, len);
	ck_assert_int_eq(a.t->session_address(a.t->cls, ta, addr, 3, &len),
	    -ENOSPC);
	/* reply on the inbound session: arrives on b's outbound one */
	ck_assert_int_eq(a.t->associate(a.t->cls, ta), 0);
	ck_assert_int_eq(a.t->send(a.t->cls, ta, "world", 5, true, 0), 0);
	ck_assert(pc_run_until(base, got_units, &b, 2000));
	ck_assert_ptr_eq(b.last_ts, tb);
	ck_assert_mem_eq(b.last, "world", 5);
	ck_assert_uint_eq(pc_get(&a, "rx_datagrams"), 1);
	ck_assert_uint_eq(pc_get(&a, "rx_bytes"), 5);
	ck_assert_uint_eq(pc_get(&a, "tx_datagrams"), 1);
	ck_assert_uint_eq(pc_get(&a, "sessions_created"), 1);
	ck_assert_uint_eq(pc_get(&b, "tx_bytes"), 5);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
}
END_TEST

START_TEST(connect_refcount)
{
	uint8_t helo[32];
	struct ferry_tsession *t1, *t2, *t3;
	size_t len;

	start(&a, "127.0.0.1");
	start(&b, "127.0.0.1");
	len = pc_helo(&a, helo, sizeof(helo));
	ck_assert_int_eq(b.t->connect(b.t->cls, helo, len, &t1), 0);
	ck_assert_int_eq(b.t->connect(b.t->cls, helo, len, &t2), 0);
	ck_assert_ptr_eq(t1, t2);
	ck_assert_uint_eq(pc_get(&b, "sessions_created"), 1);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, t1), 0);
	/* one reference left: still usable */
	ck_assert_int_eq(b_send(t2, "x"), 0);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, t2), 0);
	/* the last one freed it: connect makes a new session */
	ck_assert_int_eq(b.t->connect(b.t->cls, helo, len, &t3), 0);
	ck_assert_uint_eq(pc_get(&b, "sessions_created"), 2);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, t3), 0);
}
END_TEST

static void
associate_hook(struct pc *pc, const struct ferry_message_pack *mp)
{
	ck_assert_int_eq(pc->t->associate(pc->t->cls, mp->ts), 0);
}

static bool
a_timed_out(void *arg)
{
	(void)arg;
	return pc_get(&a, "sessions_timed_out") > 0;
}

START_TEST(unassociated_times_out)
{
	struct ferry_tsession *tb;

	pc_set(&a, "IDLE_TIMEOUT", "50 ms");
	start(&a, "127.0.0.1");
	start(&b, "127.0.0.1");
	tb = b_to_a();
	ck_assert_int_eq(b_send(tb, "knock"), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	ck_assert(pc_run_until(base, a_timed_out, NULL, 2000));
	ck_assert_uint_eq(pc_get(&a, "sessions_timed_out"), 1);
	/* the next datagram makes a fresh session */
	a.n_rx = 0;
	ck_assert_int_eq(b_send(tb, "again"), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	ck_assert_uint_eq(pc_get(&a, "sessions_created"), 2);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
}
END_TEST

START_TEST(associated_does_not_time_out)
{
	struct ferry_tsession *tb, *ta;

	pc_set(&a, "IDLE_TIMEOUT", "20 ms");
	start(&a, "127.0.0.1");
	start(&b, "127.0.0.1");
	a.on_receive = associate_hook;
	tb = b_to_a();
	ck_assert_int_eq(b_send(tb, "knock"), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	ta = a.last_ts;
	a.on_receive = NULL;
	pc_run_for(base, 150);
	ck_assert_uint_eq(pc_get(&a, "sessions_timed_out"), 0);
	ck_assert_int_eq(a.t->send(a.t->cls, ta, "still", 5, true, 0), 0);
	ck_assert(pc_run_until(base, got_units, &b, 2000));
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
}
END_TEST

static bool
a_dropped_oversize(void *arg)
{
	(void)arg;
	return pc_get(&a, "drop_oversize") > 0;
}

START_TEST(mtu_enforced)
{
	static uint8_t big[2000];
	struct ferry_tsession *tb;

	pc_set(&a, "MTU", "600");
	start(&a, "127.0.0.1");
	start(&b, "127.0.0.1");
	ck_assert_uint_eq(a.t->mtu, 600);
	tb = b_to_a();
	ck_assert_int_eq(b.t->send(b.t->cls, tb, big, 1453, false, 0),
	    -EMSGSIZE);
	ck_assert_int_eq(b.t->send(b.t->cls, tb, big, 0, false, 0), -EINVAL);
	/* b's MTU allows it, a's does not: a drops and counts it */
	ck_assert_int_eq(b.t->send(b.t->cls, tb, big, 601, false, 0), 0);
	ck_assert(pc_run_until(base, a_dropped_oversize, NULL, 2000));
	ck_assert_uint_eq(a.n_rx, 0);
	ck_assert_int_eq(b.t->send(b.t->cls, tb, big, 600, false, 0), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	ck_assert_uint_eq(a.last_len, 600);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
}
END_TEST

/* Sends one datagram to a from each of n distinct source ports (all open
 * at once: a closed port may come back as the next ephemeral one). */
static void
flood(int n)
{
	uint8_t helo[32];
	struct sockaddr_in to;
	size_t len = pc_helo(&a, helo, sizeof(helo));
	int *fds = calloc((size_t)n, sizeof(*fds));

	ck_assert_ptr_nonnull(fds);
	ck_assert_uint_eq(len, 7);
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	memcpy(&to.sin_addr, helo + 1, 4);
	memcpy(&to.sin_port, helo + 5, 2);
	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
		ck_assert_int_ge(fds[i], 0);
		ck_assert_int_eq(sendto(fds[i], "spoof", 5, 0,
		    (struct sockaddr *)&to, sizeof(to)), 5);
	}
	for (int i = 0; i < n; i++)
		(void)close(fds[i]);
	free(fds);
}

START_TEST(flood_stays_bounded)
{
	uint64_t live;

	pc_set(&a, "MAX_SESSIONS", "16");
	start(&a, "127.0.0.1");
	flood(200);
	ck_assert(pc_run_until(base, a_rx_datagrams_200, NULL, 5000));
	ck_assert_uint_eq(a.n_rx, 200);
	ck_assert_uint_eq(pc_get(&a, "sessions_created"), 200);
	live = pc_get(&a, "sessions_created") -
	    pc_get(&a, "sessions_evicted") -
	    pc_get(&a, "sessions_timed_out");
	ck_assert_uint_eq(live, 16);
}
END_TEST

START_TEST(table_full_when_all_referenced)
{
	pc_set(&a, "MAX_SESSIONS", "4");
	start(&a, "127.0.0.1");
	a.on_receive = associate_hook;
	flood(200);
	ck_assert(pc_run_until(base, a_rx_datagrams_200, NULL, 5000));
	/* the core holds 4: nothing may be evicted, the rest is dropped */
	ck_assert_uint_eq(a.n_rx, 4);
	ck_assert_uint_eq(pc_get(&a, "drop_table_full"), 196);
	ck_assert_uint_eq(pc_get(&a, "sessions_evicted"), 0);
	/* done_transport frees the referenced sessions too (valgrind) */
}
END_TEST

static int
verify(struct pc *pc, const char *text)
{
	uint8_t addr[8];
	size_t len = pc_addr(pc, text, addr);

	return pc->t->verify_helo(pc->t->cls, addr, len);
}

static bool
a_dropped_blacklisted(void *arg)
{
	(void)arg;
	return pc_get(&a, "drop_blacklisted") > 0;
}

START_TEST(blacklist_and_verify)
{
	static const uint8_t bad_family[] = { 5, 1, 2, 3, 4, 0, 80 };
	static const uint8_t short_v6[] = { 6, 1, 2, 3, 4, 0, 80 };
	struct ferry_tsession *ts;
	uint8_t addr[8];
	char text[64];
	size_t len;

	pc_set(&a, "BIND_ADDRESS", "127.0.0.1");
	pc_set(&a, "PORT", "0");
	ck_assert_ptr_nonnull(pc_load(&a, "udp"));
	ck_assert_int_eq(a.t->start_server(a.t->cls), 0);
	/* the default blacklist refuses loopback */
	ck_assert_int_eq(verify(&a, "127.0.0.1:80"), -EPERM);
	ck_assert_int_eq(verify(&a, "192.0.2.1:80"), 0);
	len = pc_addr(&a, "127.0.0.1:80", addr);
	ck_assert_int_eq(a.t->connect(a.t->cls, addr, len, &ts), -EPERM);
	/* ... and datagrams from it (the HELO is taken with the list
	 * cleared for a moment, as a refuses to advertise loopback) */
	pc_set(&a, "BLACKLIST", "");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	start(&b, "127.0.0.1");
	ts = b_to_a();
	pc_set(&a, "BLACKLIST", "127.0.0.0/8");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ck_assert_int_eq(b_send(ts, "x"), 0);
	ck_assert(pc_run_until(base, a_dropped_blacklisted, NULL, 2000));
	ck_assert_uint_eq(a.n_rx, 0);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, ts), 0);

	pc_set(&a, "BLACKLIST", "10.0.0.0/8, 192.168.0.0/16");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ck_assert_int_eq(verify(&a, "127.0.0.1:80"), 0);
	ck_assert_int_eq(verify(&a, "10.9.8.7:80"), -EPERM);
	ck_assert_int_eq(verify(&a, "192.168.3.4:80"), -EPERM);
	ck_assert_int_eq(verify(&a, "192.0.2.1:80"), 0);
	/* refused whatever the configuration says */
	ck_assert_int_eq(verify(&a, "0.0.0.0:80"), -EPERM);
	ck_assert_int_eq(verify(&a, "224.0.0.1:80"), -EPERM);
	ck_assert_int_eq(verify(&a, "255.255.255.255:80"), -EPERM);
	/* malformed */
	ck_assert_int_eq(verify(&a, "192.0.2.1:0"), -EINVAL);
	ck_assert_int_eq(a.t->verify_helo(a.t->cls, bad_family, 7), -EINVAL);
	ck_assert_int_eq(a.t->verify_helo(a.t->cls, short_v6, 7), -EINVAL);
	ck_assert_int_eq(a.t->verify_helo(a.t->cls, addr, 6), -EINVAL);
	ck_assert_int_eq(a.t->address_to_string(a.t->cls, bad_family, 7,
	    text, sizeof(text)), -EINVAL);
	len = pc_addr(&a, "192.0.2.1:2086", addr);
	ck_assert_int_eq(a.t->address_to_string(a.t->cls, addr, len, text,
	    sizeof(text)), 0);
	ck_assert_str_eq(text, "192.0.2.1:2086");
	/* a bad list keeps the old one */
	pc_set(&a, "BLACKLIST", "10.0.0.0/33");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), -EINVAL);
	ck_assert(pc_logged(&a, "BLACKLIST"));
	ck_assert_int_eq(verify(&a, "10.9.8.7:80"), -EPERM);
}
END_TEST

START_TEST(advertise_modes)
{
	uint8_t helo[32];
	size_t len = 0;

	start(&a, "127.0.0.1");
	len = pc_helo(&a, helo, sizeof(helo));
	ck_assert_uint_eq(len, 7);
	ck_assert_mem_eq(helo, "\x04\x7f\x00\x00\x01", 5);
	ck_assert_int_eq(a.t->create_helo(a.t->cls, helo, 6, &len), -ENOSPC);
	pc_set(&a, "ADVERTISE", "none");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ck_assert_int_eq(a.t->create_helo(a.t->cls, helo, sizeof(helo), &len),
	    -ENOENT);
	pc_set(&a, "ADVERTISE", "198.51.100.7:4000, [2001:db8::2]:4000");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	len = pc_helo(&a, helo, sizeof(helo));
	ck_assert_mem_eq(helo, "\x04\xc6\x33\x64\x07\x0f\xa0", 7);
	/* Every listed address is advertised, in order: a dual-stack peer
	 * offers both families. */
	ck_assert_int_eq(a.t->create_helo_at(a.t->cls, 0, helo, sizeof(helo),
			     &len),
	    0);
	ck_assert_uint_eq(len, 7);
	ck_assert_int_eq(a.t->create_helo_at(a.t->cls, 1, helo, sizeof(helo),
			     &len),
	    0);
	ck_assert_uint_eq(len, 19);
	ck_assert_uint_eq(helo[0], 6);
	ck_assert_int_eq(a.t->create_helo_at(a.t->cls, 2, helo, sizeof(helo),
			     &len),
	    -ENOENT);
	/* auto, with loopback blacklisted, has nothing to offer here */
	pc_set(&a, "ADVERTISE", "auto");
	pc_set(&a, "BLACKLIST", "127.0.0.0/8");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ck_assert_int_eq(a.t->create_helo(a.t->cls, helo, sizeof(helo), &len),
	    -ENOENT);
}
END_TEST

START_TEST(reload_settings)
{
	start(&a, "127.0.0.1");
	pc_set(&a, "MTU", "1200");
	pc_set(&a, "COST", "3");
	pc_set(&a, "PORT", "2999");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ck_assert_uint_eq(a.t->mtu, 1200);
	ck_assert_uint_eq(a.t->cost, 3);
	ck_assert(pc_logged(&a, "restart"));
	pc_set(&a, "MTU", "70000");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), -EINVAL);
	ck_assert_uint_eq(a.t->mtu, 1200);
	ck_assert(pc_logged(&a, "MTU = '70000'"));
}
END_TEST

START_TEST(stub_mode)
{
	struct pc s;
	uint8_t helo[32];
	char text[64];
	struct ferry_tsession *ts;
	size_t len;
	int fds;

	pc_init(&s, NULL, 0x55);
	pc_set(&s, "ADVERTISE", "192.0.2.9:2086");
	fds = pc_count_fds();
	ck_assert_ptr_nonnull(pc_load(&s, "udp"));
	ck_assert_int_eq(pc_count_fds(), fds); /* no socket */
	len = pc_helo(&s, helo, sizeof(helo));
	ck_assert_int_eq(s.t->address_to_string(s.t->cls, helo, len, text,
	    sizeof(text)), 0);
	ck_assert_str_eq(text, "192.0.2.9:2086");
	ck_assert_int_eq(s.t->verify_helo(s.t->cls, helo, len), 0);
	ck_assert_int_eq(s.t->connect(s.t->cls, helo, len, &ts), -EOPNOTSUPP);
	ck_assert_int_eq(s.t->start_server(s.t->cls), -EOPNOTSUPP);
	ck_assert_int_eq(pc_count_fds(), fds);
	pc_unload(&s);

	/* config errors name the key and the value */
	pc_init(&s, NULL, 0x55);
	pc_set(&s, "MTU", "100");
	ck_assert_ptr_null(pc_load(&s, "udp"));
	ck_assert(pc_logged(&s, "MTU = '100'"));
	pc_unload(&s);
	pc_init(&s, NULL, 0x55);
	pc_set(&s, "BIND_ADDRESS", "0.0.0.0 eth0");
	ck_assert_ptr_null(pc_load(&s, "udp"));
	ck_assert(pc_logged(&s, "BIND_ADDRESS = '0.0.0.0 eth0'"));
	pc_unload(&s);
	pc_init(&s, NULL, 0x55);
	pc_set(&s, "ADVERTISE", "10.0.0.1");
	ck_assert_ptr_null(pc_load(&s, "udp"));
	ck_assert(pc_logged(&s, "ADVERTISE"));
	pc_unload(&s);
}
END_TEST

static bool
ipv6_loopback(void)
{
	struct sockaddr_in6 sin6;
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);
	bool ok;

	if (fd < 0)
		return false;
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_addr = in6addr_loopback;
	ok = bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) == 0;
	(void)close(fd);
	return ok;
}

START_TEST(ipv6_talk)
{
	struct ferry_tsession *tb;
	uint8_t helo[32];
	size_t len;

	if (!ipv6_loopback())
		return; /* no IPv6 here: nothing to test */
	start(&a, "::1");
	start(&b, "::1");
	len = pc_helo(&a, helo, sizeof(helo));
	ck_assert_uint_eq(len, 19);
	ck_assert_uint_eq(helo[0], 6);
	tb = b_to_a();
	ck_assert_int_eq(b_send(tb, "six"), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	ck_assert_uint_eq(a.last_src_len, 16);
	ck_assert_uint_eq(a.last_src[15], 1);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
}
END_TEST

static Suite *
udp_suite(void)
{
	Suite *s = suite_create("udp");
	TCase *tc = tcase_create("plugin");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, two_instances_talk);
	tcase_add_test(tc, connect_refcount);
	tcase_add_test(tc, unassociated_times_out);
	tcase_add_test(tc, associated_does_not_time_out);
	tcase_add_test(tc, mtu_enforced);
	tcase_add_test(tc, flood_stays_bounded);
	tcase_add_test(tc, table_full_when_all_referenced);
	tcase_add_test(tc, blacklist_and_verify);
	tcase_add_test(tc, advertise_modes);
	tcase_add_test(tc, reload_settings);
	tcase_add_test(tc, stub_mode);
	tcase_add_test(tc, ipv6_talk);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(udp_suite());
}
