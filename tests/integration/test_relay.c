/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Application messages through the client socket of two real daemons
 * linked over UDP on loopback (src/service/relay.c, ping.c): REGISTER
 * fan-out to several clients, chunked RECEIVE of a large message, types
 * nobody listens to, PEERS, PING, and a client that leaves while its PING
 * is still running.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include <ferry/client.h>

#include "harness.h"
#include "lib/wire.h"

#define BIG_LEN (300u * 1000)

static struct harness *h;
static struct harness_daemon *a, *b;

static struct harness_daemon *
relay_daemon(void)
{
	struct harness_daemon *d;

	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_transports(d, "udp"), 0);
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[ferryd]\nLOG_LEVEL = info\n"),
	    0);
	if (harness_daemon_start_ready(d) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferryd did not start");
	}
	return d;
}

static bool
has_peer(const struct harness_daemon *d, const struct ferry_peer_id *id,
    struct ferry_peer_info *ret)
{
	struct ferry_client *c;
	struct ferry_peer_info *p;
	bool found = false;
	size_t n;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_peers(c, &p, &n), 0);
	for (size_t i = 0; i < n && !found; i++) {
		if (memcmp(&p[i].id, id, sizeof(*id)) != 0)
			continue;
		found = true;
		if (ret != NULL)
			*ret = p[i];
	}
	ferry_peers_free(p);
	ferry_client_close(c);
	return found;
}

/* Two daemons; b learns a's HELO and both end up linked. */
static void
setup(void)
{
	struct ferry_client *c;
	uint64_t end;
	char *uri;

	ck_assert_int_eq(harness_new("relay", &h), 0);
	a = relay_daemon();
	b = relay_daemon();
	ck_assert_int_eq(harness_daemon_client(a, &c), 0);
	ck_assert_int_eq(ferry_hello(c, &uri), 0);
	ferry_client_close(c);
	ck_assert_int_eq(harness_daemon_client(b, &c), 0);
	ck_assert_int_eq(ferry_connect_uri(c, uri), 0);
	ferry_client_close(c);
	free(uri);
	end = harness_now_ms() + 15000;
	while (!has_peer(a, &b->id, NULL) || !has_peer(b, &a->id, NULL)) {
		if (harness_now_ms() > end) {
			harness_dump_logs(h);
			ck_abort_msg("the daemons did not link up");
		}
		harness_sleep_ms(50);
	}
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

static struct ferry_client *
listener(const struct harness_daemon *d, uint16_t type)
{
	struct ferry_client *c;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_register(c, &type, 1), 0);
	return c;
}

/* Receives one message and checks sender, type and bytes. */
static void
expect(struct ferry_client *c, uint16_t type, const void *data, size_t len)
{
	struct ferry_message m;

	ck_assert_int_eq(ferry_receive(c, &m, 10000), 0);
	ck_assert_mem_eq(m.peer.bytes, b->id.bytes, FERRY_PEER_ID_LEN);
	ck_assert_uint_eq(m.type, type);
	ck_assert_uint_eq(m.len, len);
	ck_assert_int_eq(memcmp(m.data, data, len), 0);
}

static uint64_t
stat_value(const struct harness_daemon *d, const char *name)
{
	struct ferry_client *c;
	struct ferry_stat *st;
	uint64_t v = 0;
	size_t n;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_stats(c, &st, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			v = st[i].value;
	ferry_stats_free(st, n);
	ferry_client_close(c);
	return v;
}

START_TEST(test_fan_out_and_chunks)
{
	struct ferry_client *l1 = listener(a, 0x0500),
	                    *l2 = listener(a, 0x0500);
	struct ferry_client *l3 = listener(a, 0x0501), *s;
	struct ferry_message m;
	uint8_t *big = malloc(BIG_LEN);

	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < BIG_LEN; i++)
		big[i] = (uint8_t)(i * 7 + i / 251);
	ck_assert_int_eq(harness_daemon_client(b, &s), 0);
	ck_assert_int_eq(ferry_send_confirmed(s, &a->id, 0x0500, "small", 5),
	    0);
	/* One message at a time: the network may reorder. */
	expect(l1, 0x0500, "small", 5);
	expect(l2, 0x0500, "small", 5);
	ck_assert_int_eq(ferry_send_confirmed(s, &a->id, 0x0500, big, BIG_LEN),
	    0);
	expect(l1, 0x0500, big, BIG_LEN);
	expect(l2, 0x0500, big, BIG_LEN);
	ck_assert_int_eq(ferry_send(s, &a->id, 0x0502, "nobody", 6), 0);
	ck_assert_int_eq(ferry_send(s, &a->id, 0x0501, "third", 5), 0);
	ck_assert_int_eq(ferry_flush(s), 0);
	expect(l3, 0x0501, "third", 5);
	/* Each listener got only its own type. */
	ck_assert_int_eq(ferry_receive(l1, &m, 200), -ETIMEDOUT);
	ck_assert_int_eq(ferry_receive(l3, &m, 0), -ETIMEDOUT);
	ck_assert_uint_eq(stat_value(a, "service.recv_delivered"), 5);
	ck_assert_uint_ge(stat_value(a, "service.recv_no_listener"), 1);
	ck_assert_uint_ge(stat_value(b, "service.send_ok"), 4);
	ferry_client_close(s);
	ferry_client_close(l1);
	ferry_client_close(l2);
	ferry_client_close(l3);
	free(big);
}
END_TEST

START_TEST(test_cli_send_and_peers)
{
	struct ferry_client *l = listener(a, 0x0600);
	struct ferry_peer_info pi;
	struct harness_output o;
	char addr[64];

	ck_assert_int_eq(harness_run_cli(b, &o, "send", a->id_str, "0x600",
	                     "from the command line", NULL),
	    0);
	ck_assert_int_eq(o.status, 0);
	harness_output_free(&o);
	expect(l, 0x0600, "from the command line", 21);
	ferry_client_close(l);

	ck_assert(has_peer(a, &b->id, &pi));
	ck_assert_str_eq(pi.transport, "udp");
	ck_assert_uint_eq(pi.protocol, FERRY_PROTO_UDP);
	/* b's own address (harness.h, "The test network"). */
	ck_assert_int_lt(snprintf(addr, sizeof(addr), "%s:%u", b->ip, b->port),
	    (int)sizeof(addr));
	ck_assert_str_eq(pi.address, addr);
	ck_assert_int_eq(harness_run_cli(a, &o, "peers", "--json", NULL), 0);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, b->id_str));
	harness_output_free(&o);
}
END_TEST

START_TEST(test_ping)
{
	struct ferry_ping_result res;
	struct ferry_client *c;
	struct harness_output o;

	ck_assert_int_eq(harness_daemon_client(b, &c), 0);
	ck_assert_int_eq(ferry_ping(c, &a->id, 3, 100, 5000, &res), 0);
	ck_assert_uint_eq(res.count, 3);
	ck_assert_uint_gt(res.min_ns, 0);
	ck_assert_uint_le(res.min_ns, res.max_ns);
	ck_assert_uint_le(res.max_ns, res.total_ns);
	ferry_client_close(c);
	ck_assert_int_eq(harness_run_cli(b, &o, "ping", a->id_str, "--count",
	                     "2", "--interval", "10", NULL),
	    0);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, "2 sent, 2 received"));
	harness_output_free(&o);
}
END_TEST

/* The answer to a PING comes back after its client has gone. */
START_TEST(test_ping_client_gone)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ferry_ping_result res;
	struct ferry_client *c;
	uint8_t f[FERRY_C_PING_FIXED];
	int fd;

	for (int i = 0; i < 5; i++) {
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		memcpy(sun.sun_path, b->socket, strlen(b->socket) + 1);
		ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun,
		                     sizeof(sun)),
		    0);
		memset(f, 0, sizeof(f));
		wire_put_hdr(f, sizeof(f), FERRY_C_PING);
		wire_put32(f + 4, 1);
		memcpy(f + 8, a->id.bytes, FERRY_PEER_ID_LEN);
		wire_put32(f + 40, 20);
		wire_put16(f + 44, 64);
		wire_put32(f + 48, 2000);
		ck_assert_int_eq(write(fd, f, sizeof(f)), (ssize_t)sizeof(f));
		close(fd);
	}
	harness_sleep_ms(300);
	ck_assert_int_eq(harness_daemon_client(b, &c), 0);
	ck_assert_int_eq(ferry_ping(c, &a->id, 1, 0, 5000, &res), 0);
	ferry_client_close(c);
	ck_assert(harness_daemon_running(b));
}
END_TEST

static Suite *
relay_suite(void)
{
	Suite *s = suite_create("relay");
	TCase *tc = tcase_create("two daemons");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_fan_out_and_chunks);
	tcase_add_test(tc, test_cli_send_and_peers);
	tcase_add_test(tc, test_ping);
	tcase_add_test(tc, test_ping_client_gone);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(relay_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
