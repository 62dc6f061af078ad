/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Application messages through the client socket of two real daemons
 * linked over UDP on loopback (src/service/relay.c, ping.c): REGISTER
 * fan-out to several clients, chunked RECEIVE of a large message, types
 * nobody listens to, PEERS, PING, and a client that leaves while its PING
 * is still running; and the edges of the requests that ferry-client(7)
 * spells out (issue 11): reserved fields, a SEND to the daemon's own
 * identity, the req_ids of a chunked SEND, the largest PING payload and
 * the one answer that overtakes an earlier request's, PONG's.
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

/* A blocking raw connection to d's socket that gives up reading after
 * 5 s. */
static int
raw_connect(const struct harness_daemon *d)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memcpy(sun.sun_path, d->socket, strlen(d->socket) + 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
	                     sizeof(tv)),
	    0);
	return fd;
}

static void
raw_put(int fd, const void *p, size_t len)
{
	ck_assert_int_eq(send(fd, p, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Reads exactly len bytes; fails the test on EOF or timeout. */
static void
raw_get(int fd, uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = recv(fd, p, len, 0);

		ck_assert_msg(n > 0, "no answer from the daemon");
		p += n;
		len -= (size_t)n;
	}
}

/* The next frame's type and req_id; its body goes to body (64 KiB). */
static uint16_t
raw_next(int fd, uint8_t *body, uint32_t *ret_req_id)
{
	uint8_t hdr[FERRY_HDR_SIZE];
	uint16_t size;

	raw_get(fd, hdr, sizeof(hdr));
	size = wire_get16(hdr);
	ck_assert_uint_ge(size, 8);
	raw_get(fd, body, size - FERRY_HDR_SIZE);
	*ret_req_id = wire_get32(body);
	return wire_get16(hdr + 2);
}

/* Expects RESULT {req_id, status} whose text contains text (may be NULL). */
static void
raw_expect_result(int fd, uint32_t req_id, int status, const char *text)
{
	static uint8_t body[65536];
	uint32_t id;

	ck_assert_uint_eq(raw_next(fd, body, &id), FERRY_C_RESULT);
	ck_assert_uint_eq(id, req_id);
	ck_assert_int_eq((int32_t)wire_get32(body + 4), status);
	if (text != NULL)
		ck_assert_msg(memmem(body + 8, sizeof(body) - 8, text,
		                  strlen(text)) != NULL,
		    "RESULT %u does not say \"%s\"", req_id, text);
}

/* One SEND frame: req_id, to peer, flags, a piece of len bytes of a
 * message of total bytes at offset. */
static void
raw_send(int fd, uint32_t req_id, const struct ferry_peer_id *peer,
    uint16_t flags, uint32_t total, uint32_t offset, size_t len)
{
	static uint8_t f[65535];

	ck_assert_uint_le(FERRY_C_SEND_FIXED + len, sizeof(f));
	memset(f, 0x5a, FERRY_C_SEND_FIXED + len);
	wire_put_hdr(f, (uint16_t)(FERRY_C_SEND_FIXED + len), FERRY_C_SEND);
	wire_put32(f + 4, req_id);
	memcpy(f + 8, peer->bytes, FERRY_PEER_ID_LEN);
	wire_put16(f + 40, 0x4400);
	wire_put16(f + 42, flags);
	wire_put32(f + 44, total);
	wire_put32(f + 48, offset);
	raw_put(fd, f, FERRY_C_SEND_FIXED + len);
}

static void
raw_ping(int fd, uint32_t req_id, uint32_t count, uint16_t payload,
    uint16_t reserved, uint32_t timeout_ms)
{
	uint8_t f[FERRY_C_PING_FIXED];

	wire_put_hdr(f, sizeof(f), FERRY_C_PING);
	wire_put32(f + 4, req_id);
	memcpy(f + 8, a->id.bytes, FERRY_PEER_ID_LEN);
	wire_put32(f + 40, count);
	wire_put16(f + 44, payload);
	wire_put16(f + 46, reserved);
	wire_put32(f + 48, timeout_ms);
	raw_put(fd, f, sizeof(f));
}

/* A PING of 3 round trips of 1000 bytes with req_id ping_id and a
 * STATUS request with status_id, in one write. */
static void
raw_ping_status(int fd, uint32_t ping_id, uint32_t status_id)
{
	uint8_t f[FERRY_C_PING_FIXED + 8];

	wire_put_hdr(f, FERRY_C_PING_FIXED, FERRY_C_PING);
	wire_put32(f + 4, ping_id);
	memcpy(f + 8, a->id.bytes, FERRY_PEER_ID_LEN);
	wire_put32(f + 40, 3);
	wire_put16(f + 44, 1000);
	wire_put16(f + 46, 0);
	wire_put32(f + 48, 5000);
	wire_put_hdr(f + FERRY_C_PING_FIXED, 8, FERRY_C_STATUS_REQ);
	wire_put32(f + FERRY_C_PING_FIXED + 4, status_id);
	raw_put(fd, f, sizeof(f));
}

static void
raw_status_req(int fd, uint32_t req_id)
{
	uint8_t f[8];

	wire_put_hdr(f, sizeof(f), FERRY_C_STATUS_REQ);
	wire_put32(f + 4, req_id);
	raw_put(fd, f, sizeof(f));
}

/* Reserved fields that are not 0 and a SEND to the daemon itself are
 * refused with a RESULT that says why; the connection goes on. */
START_TEST(test_refusals_keep_connection)
{
	static uint8_t body[65536];
	int fd = raw_connect(b);
	uint32_t id;

	raw_send(fd, 11, &a->id, 0x0001, 10, 0, 10);
	raw_expect_result(fd, 11, -EINVAL, "flags");
	raw_send(fd, 12, &b->id, 0, 10, 0, 10);
	raw_expect_result(fd, 12, -ENOTCONN, "own peer id");
	raw_ping(fd, 13, 1, 0, 1, 1000);
	raw_expect_result(fd, 13, -EINVAL, "reserved");
	raw_ping(fd, 14, 0, 0, 0, 1000);
	raw_expect_result(fd, 14, -EINVAL, NULL);
	raw_ping(fd, 15, 1, 0, 0, 0);
	raw_expect_result(fd, 15, -EINVAL, NULL);
	/* Flags on a later piece of a chunked SEND count as well. */
	raw_send(fd, 0, &a->id, 0, 70000, 0, 60000);
	raw_send(fd, 16, &a->id, 0x8000, 70000, 60000, 10000);
	raw_expect_result(fd, 16, -EINVAL, "flags");
	raw_status_req(fd, 17);
	ck_assert_uint_eq(raw_next(fd, body, &id), FERRY_C_STATUS);
	ck_assert_uint_eq(id, 17);
	ck_assert_uint_eq(stat_value(b, "service.malformed"), 0);
	(void)close(fd);
}
END_TEST

/* A chunked SEND is answered once, with the req_id of its last piece;
 * the other pieces' req_ids mean nothing, and a last piece without one
 * asks for no answer. */
START_TEST(test_chunked_send_req_ids)
{
	static uint8_t body[65536];
	struct ferry_client *l = listener(a, 0x4400);
	struct ferry_message m;
	int fd = raw_connect(b);
	uint32_t id;

	raw_send(fd, 21, &a->id, 0, 100000, 0, 60000);
	raw_send(fd, 22, &a->id, 0, 100000, 60000, 40000);
	raw_expect_result(fd, 22, 0, NULL);
	raw_send(fd, 23, &a->id, 0, 100000, 0, 60000);
	raw_send(fd, 0, &a->id, 0, 100000, 60000, 40000);
	raw_status_req(fd, 24);
	/* The next frame answers the STATUS: nothing answered the SEND. */
	ck_assert_uint_eq(raw_next(fd, body, &id), FERRY_C_STATUS);
	ck_assert_uint_eq(id, 24);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(ferry_receive(l, &m, 10000), 0);
		ck_assert_uint_eq(m.len, 100000);
	}
	ferry_client_close(l);
	(void)close(fd);
}
END_TEST

/* PING carries up to 65535 bytes of payload, and its PONG comes after
 * the answers to requests read after it. */
START_TEST(test_ping_largest_and_overtaken)
{
	static uint8_t body[65536];
	struct ferry_ping_result res;
	struct ferry_client *c;
	struct harness_output o;
	int fd = raw_connect(b);
	uint32_t id;

	ck_assert_int_eq(harness_daemon_client(b, &c), 0);
	ck_assert_int_eq(ferry_ping(c, &a->id, 2, UINT16_MAX, 5000, &res), 0);
	ck_assert_uint_eq(res.count, 2);
	ferry_client_close(c);
	ck_assert_int_eq(harness_run_cli(b, &o, "ping", a->id_str, "--count",
	                     "1", "--size", "65535", NULL),
	    0);
	ck_assert_int_eq(o.status, 0);
	harness_output_free(&o);
	/* In one write, so that the daemon reads both at once: the STATUS
	 * is answered at once, the PONG when its round trips are done. */
	raw_ping_status(fd, 31, 32);
	ck_assert_uint_eq(raw_next(fd, body, &id), FERRY_C_STATUS);
	ck_assert_uint_eq(id, 32);
	ck_assert_uint_eq(raw_next(fd, body, &id), FERRY_C_PONG);
	ck_assert_uint_eq(id, 31);
	ck_assert_uint_eq(wire_get32(body + 4), 3);
	(void)close(fd);
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
	tcase_add_test(tc, test_refusals_keep_connection);
	tcase_add_test(tc, test_chunked_send_req_ids);
	tcase_add_test(tc, test_ping_largest_and_overtaken);
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
