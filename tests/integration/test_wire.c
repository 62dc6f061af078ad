/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What crosses the wire between real daemons (issue 3): application bytes
 * are never visible; an address nobody answers for is never used or
 * gossiped; a HELO flood naming one address costs that address at most
 * one PING; forged PONGs and replayed frames are refused and counted.
 * Relays record the traffic; a wire-speaking test peer forges it.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <check.h>

#include "core/helo.h"
#include "core/identity.h"
#include "core/pingpong.h"
#include "core/rx.h"
#include "harness.h"
#include "lib/time.h"
#include "lib/wire.h"
#include "mesh.h"
#include "relay.h"
#include "wirepeer.h"

#define LINK_MS 15000
static const char marker[] = "PLAINTEXT-MARKER-5f3a9c1e";

/* Two daemons whose advertised addresses are relays in front of them. */
static void
relayed_pair(struct harness *h, const char *tr, int socktype,
    struct harness_daemon **d, struct relay **rel)
{
	uint16_t rport[2];
	char *uri = NULL;

	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(harness_daemon_new(h, &d[i]), 0);
		ck_assert_int_eq(harness_free_port(&rport[i]), 0);
		ck_assert_int_eq(relay_new(socktype, rport[i], &d[i]->addr,
				     &rel[i]),
		    0);
		ck_assert_int_eq(harness_daemon_transports(d[i], tr), 0);
		ck_assert_int_eq(harness_daemon_config(d[i],
				     "[transport-%s]\nADVERTISE = 127.0.0.1:%u\n",
				     tr, rport[i]),
		    0);
		if (i == 1)
			ck_assert_int_eq(harness_daemon_config(d[i],
					     "[core]\nBOOTSTRAP = %s\n", uri),
			    0);
		ck_assert_int_eq(harness_daemon_start_ready(d[i]), 0);
		if (i == 0)
			uri = mesh_hello(d[0]);
	}
	free(uri);
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
}

static void
no_plaintext(const char *tr, int socktype)
{
	struct harness_daemon *d[2];
	struct relay *rel[2];
	struct ferry_client *l0, *l1;
	struct harness *h;
	char big[5000];

	ck_assert_int_eq(harness_new("plain", &h), 0);
	relayed_pair(h, tr, socktype, d, rel);
	l0 = mesh_listener(d[0]);
	l1 = mesh_listener(d[1]);
	mesh_send(d[0], d[1], marker, sizeof(marker));
	mesh_expect(h, l1, d[0], marker, sizeof(marker), 5000);
	mesh_send(d[1], d[0], marker, sizeof(marker));
	mesh_expect(h, l0, d[1], marker, sizeof(marker), 5000);
	/* A message cut into fragments, the marker at a piece boundary's
	 * likely place and everywhere else. */
	for (size_t i = 0; i + sizeof(marker) <= sizeof(big); i += sizeof(marker))
		memcpy(big + i, marker, sizeof(marker));
	mesh_send(d[0], d[1], big, sizeof(big));
	mesh_expect(h, l1, d[0], big, sizeof(big), 5000);
	/* Each daemon advertises only its relay, so every byte between them
	 * passed a relay (which one depends on the path each side chose):
	 * at least the messages' size, and none of it showed them. */
	ck_assert_uint_gt(relay_bytes(rel[0]) + relay_bytes(rel[1]),
	    2 * sizeof(marker) + sizeof(big));
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(!relay_saw(rel[i], marker, 16),
		    "application bytes visible on the %s wire", tr);
		ck_assert(!relay_saw(rel[i], "PLAINTEXT", 9));
	}
	ferry_client_close(l0);
	ferry_client_close(l1);
	harness_free(h);
	relay_free(rel[0]);
	relay_free(rel[1]);
}

START_TEST(test_no_plaintext_udp)
{
	no_plaintext("udp", SOCK_DGRAM);
}
END_TEST

START_TEST(test_no_plaintext_tcp)
{
	no_plaintext("tcp", SOCK_STREAM);
}
END_TEST

/* Replays every encrypted datagram a relay carried in one direction;
 * returns how many. */
static size_t
replay_enc(struct relay *r, int dir)
{
	uint8_t dg[2048];
	size_t n = relay_datagrams(r, dir), sent = 0;

	for (size_t i = 0; i < n; i++) {
		int len = relay_datagram(r, dir, i, dg, sizeof(dg));

		if (len >= 4 && wire_get16(dg + 2) == FERRY_P2P_ENC &&
		    relay_replay(r, dir, i) == 0)
			sent++;
	}
	return sent;
}

/* Datagrams replayed from the wire are refused and counted; the
 * messages in them are not delivered twice. */
START_TEST(test_replayed_datagrams)
{
	struct harness_daemon *d[2];
	struct relay *rel[2];
	struct ferry_client *l0, *l1;
	struct ferry_message m;
	struct harness *h;
	uint64_t before;
	size_t sent = 0;

	ck_assert_int_eq(harness_new("replay", &h), 0);
	relayed_pair(h, "udp", SOCK_DGRAM, d, rel);
	l0 = mesh_listener(d[0]);
	l1 = mesh_listener(d[1]);
	mesh_send(d[0], d[1], "once", 4);
	mesh_expect(h, l1, d[0], "once", 4, 5000);
	mesh_send(d[1], d[0], "once", 4);
	mesh_expect(h, l0, d[1], "once", 4, 5000);
	/* Let acknowledgements settle, so nothing in flight is replayed. */
	harness_sleep_ms(200);
	before = mesh_stat(d[0], "core.enc_replay") +
	    mesh_stat(d[1], "core.enc_replay");
	for (int i = 0; i < 2; i++)
		for (int dir = 0; dir < 2; dir++)
			sent += replay_enc(rel[i], dir);
	ck_assert_uint_ge(sent, 2);
	for (uint64_t end = harness_now_ms() + 5000;
	     mesh_stat(d[0], "core.enc_replay") +
		 mesh_stat(d[1], "core.enc_replay") <
	     before + sent;)
		ck_assert_msg(harness_now_ms() < end,
		    "not every replayed frame was refused as a replay");
	ck_assert_int_eq(ferry_receive(l0, &m, 300), -ETIMEDOUT);
	ck_assert_int_eq(ferry_receive(l1, &m, 300), -ETIMEDOUT);
	ferry_client_close(l0);
	ferry_client_close(l1);
	harness_free(h);
	relay_free(rel[0]);
	relay_free(rel[1]);
}
END_TEST

/* Starts a daemon with UDP and the given validation timeout. */
static struct harness_daemon *
lone_daemon(struct harness *h, const char *validation_timeout)
{
	struct harness_daemon *d;

	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_transports(d, "udp"), 0);
	ck_assert_int_eq(harness_daemon_config(d,
			     "[core]\nVALIDATION_TIMEOUT = %s\n",
			     validation_timeout),
	    0);
	ck_assert_int_eq(harness_daemon_start_ready(d), 0);
	return d;
}

static void
connect_uri(struct harness_daemon *d, const char *uri)
{
	struct ferry_client *c;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_connect_uri(c, uri), 0);
	ferry_client_close(c);
}

/* Reads datagrams until one holds a PING; returns it decoded (the bytes
 * stay in buf) and where it came from (ret_from may be NULL). */
static int
await_ping(struct wirepeer *w, uint8_t *buf, size_t size, struct ping *ret,
    struct sockaddr_in *ret_from)
{
	for (int tries = 0; tries < 20; tries++) {
		int n = wirepeer_recv(w, buf, size, 3000, ret_from);
		size_t off = 0, msize;
		const uint8_t *msg;
		uint16_t type;

		if (n < 0)
			return n;
		while (rx_next(buf, (size_t)n, &off, &type, &msg, &msize) > 0)
			if (type == FERRY_P2P_PING &&
			    ping_decode(msg, msize, ret) == 0)
				return 0;
	}
	return -ETIMEDOUT;
}

/* An address where no ferry peer answers: one PING, never validated,
 * never gossiped to another peer. */
START_TEST(test_silent_address_unused)
{
	struct harness_daemon *d[2];
	struct wirepeer *w;
	struct harness *h;
	struct ping ping;
	uint8_t buf[2048];
	char *uri;

	ck_assert_int_eq(harness_new("silent", &h), 0);
	mesh_start(h, d, 2, "udp", "[core]\nVALIDATION_TIMEOUT = 1 s");
	mesh_wait_peers(h, d[1], 1, LINK_MS);
	ck_assert_int_eq(wirepeer_new(7, &w), 0);
	ck_assert_int_eq(wirepeer_uri(w, &uri), 0);
	connect_uri(d[0], uri);
	ck_assert_int_eq(await_ping(w, buf, sizeof(buf), &ping, NULL), 0);
	ck_assert_mem_eq(&ping.target, &w->ident->id, sizeof(ping.target));
	ck_assert(mesh_wait_stat(d[0], "core.validation_failures", 1, 5000));
	/* A user-given address gets its PING repeated within the timeout;
	 * after the timeout, nothing more. */
	while (wirepeer_recv(w, buf, sizeof(buf), 200, NULL) > 0)
		;
	/* Gossip runs when links come up and every GOSSIP_INTERVAL; nothing
	 * about w may reach B, and A never treats it as a peer. */
	harness_sleep_ms(1500);
	ck_assert_uint_eq(mesh_peer_count(d[0]), 1);
	ck_assert_uint_eq(mesh_stat(d[1], "core.peers_known"), 1);
	ck_assert_int_eq(wirepeer_recv(w, buf, sizeof(buf), 500, NULL),
	    -ETIMEDOUT);
	free(uri);
	wirepeer_free(w);
	harness_free(h);
}
END_TEST

/* Many identities advertise one victim address: it gets one PING. */
START_TEST(test_helo_flood_one_ping)
{
	enum { FLOOD = 400 };
	struct harness_daemon *d;
	struct wirepeer *victim, *flooder;
	struct harness *h;
	uint8_t unit[1452], buf[2048];
	size_t off = 0;
	int pings = 0;

	ck_assert_int_eq(harness_new("flood", &h), 0);
	d = lone_daemon(h, "1 s");
	ck_assert_int_eq(wirepeer_new(100, &victim), 0);
	ck_assert_int_eq(wirepeer_new(101, &flooder), 0);
	for (unsigned i = 0; i < FLOOD; i++) {
		struct wirepeer *fake;
		int n;

		/* A fresh identity each time; only its HELO is used. */
		ck_assert_int_eq(wirepeer_new(1000 + i, &fake), 0);
		n = wirepeer_helo(fake, &victim->addr, 3600, unit + off,
		    sizeof(unit) - off);
		wirepeer_free(fake);
		if (n == -ENOSPC) {
			ck_assert_int_eq(wirepeer_send(flooder, &d->addr, unit,
					     off),
			    0);
			off = 0;
			i--;
			continue;
		}
		ck_assert_int_gt(n, 0);
		off += (size_t)n;
	}
	if (off > 0)
		ck_assert_int_eq(
		    wirepeer_send(flooder, &d->addr, unit, off), 0);
	ck_assert(mesh_wait_stat(d, "core.helo_in", FLOOD, 10000));
	for (;;) {
		struct ping ping;

		if (await_ping(victim, buf, sizeof(buf), &ping, NULL) != 0)
			break;
		pings++;
	}
	ck_assert_int_le(pings, 1);
	ck_assert_uint_ge(mesh_stat(d, "core.ping_limited"), FLOOD - 1);
	wirepeer_free(victim);
	wirepeer_free(flooder);
	harness_free(h);
}
END_TEST

/* Sends a PONG for ping from w (signed by signer) with the given
 * challenge and address, to `to`. */
static void
send_pong(struct wirepeer *w, const struct identity *signer,
    const struct ping *ping, const uint8_t *challenge, const uint8_t *addr,
    const struct sockaddr_in *to)
{
	uint8_t pong[FERRY_PONG_FIXED + FERRY_ADDR_MAX];
	int n = pong_build(pong, sizeof(pong), signer, challenge,
	    ping->protocol, time_real_s() + 3600, addr, ping->addr_len);

	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wirepeer_send(w, to, pong, (size_t)n), 0);
}

START_TEST(test_forged_pongs)
{
	struct harness_daemon *d;
	struct wirepeer *w, *other;
	struct harness *h;
	struct ping ping;
	uint8_t buf[2048], chal[FERRY_CHALLENGE_LEN], addr[FERRY_ADDR_MAX];
	struct sockaddr_in from;
	char *uri;

	ck_assert_int_eq(harness_new("pong", &h), 0);
	/* Long enough for all the forgeries below to arrive in time. */
	d = lone_daemon(h, "30 s");
	ck_assert_int_eq(wirepeer_new(11, &w), 0);
	ck_assert_int_eq(wirepeer_new(12, &other), 0);
	ck_assert_int_eq(wirepeer_uri(w, &uri), 0);
	connect_uri(d, uri);
	ck_assert_int_eq(await_ping(w, buf, sizeof(buf), &ping, &from), 0);
	ck_assert(harness_sin_eq(&from, &d->addr));
	memcpy(addr, ping.addr, ping.addr_len);
	/* Wrong challenge. */
	memcpy(chal, ping.challenge, sizeof(chal));
	chal[0] ^= 1;
	send_pong(w, w->ident, &ping, chal, addr, &from);
	ck_assert(mesh_wait_stat(d, "core.pong_unsolicited", 1, 5000));
	/* Right challenge, signed by someone else. */
	send_pong(w, other->ident, &ping, ping.challenge, addr, &from);
	ck_assert(mesh_wait_stat(d, "core.pong_bad", 1, 5000));
	/* Right challenge and signer, but for another address. */
	addr[ping.addr_len - 1] ^= 1;
	send_pong(w, w->ident, &ping, ping.challenge, addr, &from);
	ck_assert(mesh_wait_stat(d, "core.pong_bad", 2, 5000));
	addr[ping.addr_len - 1] ^= 1;
	/* A good PONG with a broken signature. */
	{
		uint8_t pong[FERRY_PONG_FIXED + FERRY_ADDR_MAX];
		int n = pong_build(pong, sizeof(pong), w->ident, ping.challenge,
		    ping.protocol, time_real_s() + 3600, addr, ping.addr_len);

		pong[n - 1] ^= 0x80;
		ck_assert_int_eq(wirepeer_send(w, &from, pong, (size_t)n), 0);
	}
	ck_assert(mesh_wait_stat(d, "core.pong_bad", 3, 5000));
	ck_assert_uint_eq(mesh_stat(d, "core.validations"), 0);
	/* The genuine answer is still accepted: the refusals above were the
	 * checks at work, not a daemon that accepts nothing. */
	send_pong(w, w->ident, &ping, ping.challenge, addr, &from);
	ck_assert(mesh_wait_stat(d, "core.validations", 1, 5000));
	free(uri);
	wirepeer_free(w);
	wirepeer_free(other);
	harness_free(h);
}
END_TEST

static Suite *
wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("wire");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_no_plaintext_udp);
	tcase_add_test(tc, test_no_plaintext_tcp);
	tcase_add_test(tc, test_replayed_datagrams);
	tcase_add_test(tc, test_silent_address_unused);
	tcase_add_test(tc, test_helo_flood_one_ping);
	tcase_add_test(tc, test_forged_pongs);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(wire_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
