/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Forged HELOs and HELO floods (issue 6, "Adversarial peers"; seed 004,
 * II-C). A hostile peer sends a daemon HELOs with a bad signature, an
 * expiry in the past, someone else's key, another peer's genuine HELO
 * with its address changed or resent from elsewhere, and addresses the
 * UDP transport must refuse: each is refused and counted (core.helo_bad,
 * helo_expired, helo_refused), no PING goes out for it, no peer appears
 * and nothing of it reaches a third daemon through gossip. Floods of
 * HELOs for one victim address, spread over several authenticated
 * advertisers, cost the victim one PING per PING_INTERVAL; many victim
 * addresses from one advertiser cost PINGS_PER_PEER PINGs at most.
 */
/* ctest: TIMEOUT=300 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "lib/time.h"
#include "lib/wire.h"
#include "core/helo.h"
#include "core/identity.h"
#include "core/pingpong.h"
#include "adv.h"
#include "harness.h"
#include "mesh.h"
#include "wirelink.h"
#include "wirepeer.h"

#define LINK_MS         15000
/* Gossip of others' HELOs is the core's when it chooses links (with the
 * DHT on, the DHT hands HELOs on instead): these tests are of the core's
 * gossip and validation, so the core chooses. */
#define CORE_CHOICE     "[core]\nLINK_POLICY = core\n"
#define HELO_MAX        (FERRY_HELO_FIXED + FERRY_ADDR_MAX)
/* The signing context of HELOs on the wire (<ferry/proto.h>). */
#define HELO_SIG_PREFIX "ferry helo v1"

/* A UDP address in HELO form: family 4, IPv4, port. */
static size_t
addr_v4(const char *ip, uint16_t port, uint8_t *out)
{
	out[0] = 4;
	ck_assert_int_eq(inet_pton(AF_INET, ip, out + 1), 1);
	wire_put16(out + 5, port);
	return 7;
}

/* A HELO of ident for addr, valid lifetime_s from now (negative: in the
 * past). Returns its size. */
static size_t
helo_for(const struct identity *ident, uint16_t proto, const uint8_t *addr,
    size_t alen, int64_t lifetime_s, uint8_t *out)
{
	int n = helo_build(ident, proto, 1452,
	    (uint64_t)((int64_t)time_real_s() + lifetime_s), addr, alen, out,
	    HELO_MAX);

	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* The Ed25519 key of a daemon, from the HELO it hands out. */
static void
daemon_pk(struct harness_daemon *d, uint8_t pk[FERRY_PUBKEY_LEN])
{
	char *uri = mesh_hello(d);
	uint8_t *helos;
	size_t len;

	ck_assert_int_eq(helo_uri_decode(uri, &helos, &len), 0);
	memcpy(pk, helos + 4, FERRY_PUBKEY_LEN);
	free(helos);
	free(uri);
}

/* Counters of a daemon that a forged HELO may move. */
struct helo_ctr {
	uint64_t in, bad, expired, refused, no_transport, ping_sent, peers;
	uint64_t validations;
};

static void
helo_ctr(struct harness_daemon *d, struct helo_ctr *c)
{
	c->in = mesh_stat(d, "core.helo_in");
	c->bad = mesh_stat(d, "core.helo_bad");
	c->expired = mesh_stat(d, "core.helo_expired");
	c->refused = mesh_stat(d, "core.helo_refused");
	c->no_transport = mesh_stat(d, "core.helo_no_transport");
	c->ping_sent = mesh_stat(d, "core.ping_sent");
	c->peers = mesh_stat(d, "core.peers_known");
	c->validations = mesh_stat(d, "core.validations");
}

/* Sends one HELO from w to d and waits until d has looked at it. */
static void
send_helo(struct harness_daemon *d, struct wirepeer *w, const uint8_t *helo,
    size_t len)
{
	uint64_t before = mesh_stat(d, "core.helo_in");

	ck_assert_int_eq(wirepeer_send(w, &d->addr, helo, len), 0);
	ck_assert(mesh_wait_stat(d, "core.helo_in", before + 1, 5000));
}

/* The malformed UDP addresses, each correctly signed: refused by the
 * transport. Returns how many were sent. */
static unsigned
send_bad_addresses(struct harness_daemon *a, struct wirepeer *w)
{
	uint8_t addr[32], helo[HELO_MAX];
	unsigned n = 0;
	size_t alen;

	/* Family 5. */
	alen = addr_v4("127.0.0.1", w->port, addr);
	addr[0] = 5;
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, alen, 3600, helo));
	n++;
	/* Family 4 with an IPv6 length, and one byte short. */
	memset(addr + 7, 0, 12);
	addr[0] = 4;
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, 19, 3600, helo));
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, 6, 3600, helo));
	n += 2;
	/* Family 6 with an IPv4 length. */
	addr[0] = 6;
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, 7, 3600, helo));
	n++;
	/* Port 0, multicast, unspecified, broadcast. */
	alen = addr_v4("127.0.0.1", 0, addr);
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, alen, 3600, helo));
	alen = addr_v4("224.0.0.1", w->port, addr);
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, alen, 3600, helo));
	alen = addr_v4("0.0.0.0", w->port, addr);
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, alen, 3600, helo));
	alen = addr_v4("255.255.255.255", w->port, addr);
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, alen, 3600, helo));
	n += 4;
	/* IPv6 multicast, and IPv4-mapped (which has an IPv4 form). */
	memset(addr, 0, sizeof(addr));
	addr[0] = 6;
	addr[1] = 0xff;
	addr[2] = 0x02;
	addr[16] = 1;
	wire_put16(addr + 17, w->port);
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, 19, 3600, helo));
	memset(addr + 1, 0, 16);
	addr[11] = addr[12] = 0xff;
	addr[13] = 127;
	addr[16] = 1;
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, 19, 3600, helo));
	n += 2;
	return n;
}

/*
 * Every kind of forged HELO is refused and counted, never used and never
 * gossiped. A genuine HELO of peer X resent by the attacker is usable
 * only as X's: the PING goes to X's address, not the attacker's. Once X
 * answers, X's address is gossiped to the third daemon: the gossip that
 * never carried a forgery works.
 */
START_TEST(test_forged_helos_refused)
{
	struct harness_daemon *d[2], *a, *b;
	struct wirepeer *w, *x;
	struct harness *h;
	struct helo_ctr c0, c1, b0, b1;
	struct adv_rx rx;
	struct ping ping;
	uint8_t helo[HELO_MAX], xhelo[HELO_MAX], addr[32], pong[512];
	uint8_t pk_b[FERRY_PUBKEY_LEN], buf[2048];
	size_t alen, n, xn;
	unsigned bad_addrs;
	struct sockaddr_in from;
	int pn;

	ck_assert_int_eq(harness_new("helo-forged", &h), 0);
	mesh_start(h, d, 2, "udp",
	    CORE_CHOICE "GOSSIP_INTERVAL = 1 s\nVALIDATION_TIMEOUT = 30 s");
	a = d[0];
	b = d[1];
	mesh_wait_peers(h, a, 1, LINK_MS);
	mesh_wait_peers(h, b, 1, LINK_MS);
	/* Let the daemons finish validating each other, so that their own
	 * PINGs do not mix with what the forgeries might cause. */
	ck_assert(mesh_wait_stat(a, "core.validations", 1, LINK_MS));
	ck_assert(mesh_wait_stat(b, "core.validations", 1, LINK_MS));
	ck_assert_int_eq(wirepeer_new(401, &w), 0);
	ck_assert_int_eq(wirepeer_new(402, &x), 0);
	daemon_pk(b, pk_b);
	helo_ctr(a, &c0);
	helo_ctr(b, &b0);
	alen = addr_v4("127.0.0.1", w->port, addr);

	/* Bad signature. */
	n = helo_for(w->ident, FERRY_PROTO_UDP, addr, alen, 3600, helo);
	helo[n - 1] ^= 0x40;
	send_helo(a, w, helo, n);
	/* Expired a minute ago. */
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_UDP, addr, alen, -60, helo));
	/* B's key, the attacker's address, signed by the attacker. */
	n = helo_for(w->ident, FERRY_PROTO_UDP, addr, alen, 3600, helo);
	memcpy(helo + 4, pk_b, FERRY_PUBKEY_LEN);
	identity_sign(w->ident, HELO_SIG_PREFIX, helo, n - FERRY_SIG_LEN,
	    helo + n - FERRY_SIG_LEN);
	send_helo(a, w, helo, n);
	/* X's genuine HELO with the attacker's port in it. */
	xn = (size_t)wirepeer_helo(x, &x->addr, 3600, xhelo, sizeof(xhelo));
	memcpy(helo, xhelo, xn);
	wire_put16(helo + 52 + 5, w->port);
	send_helo(a, w, helo, xn);
	/* The malformed addresses, and a transport A does not run. */
	bad_addrs = send_bad_addresses(a, w);
	send_helo(a, w, helo,
	    helo_for(w->ident, FERRY_PROTO_TCP, addr, alen, 3600, helo));

	helo_ctr(a, &c1);
	ck_assert_uint_eq(c1.bad - c0.bad, 3);
	ck_assert_uint_eq(c1.expired - c0.expired, 1);
	ck_assert_uint_eq(c1.refused - c0.refused, bad_addrs);
	ck_assert_uint_eq(c1.no_transport - c0.no_transport, 1);
	ck_assert_uint_eq(c1.ping_sent, c0.ping_sent);
	ck_assert_uint_eq(c1.peers, c0.peers);
	/* Nothing came back to the attacker's address. */
	adv_collect(w, NULL, 1000, &rx);
	ck_assert_uint_eq(rx.datagrams, 0);

	/* X's HELO as X signed it, resent from the attacker's socket: A
	 * validates the address X signed, so the PING goes to X. */
	send_helo(a, w, xhelo, xn);
	ck_assert_int_eq(adv_await_ping(x, buf, sizeof(buf), &ping, &from,
	                     5000),
	    0);
	ck_assert(harness_sin_eq(&from, &a->addr));
	adv_collect(w, NULL, 500, &rx);
	ck_assert_uint_eq(rx.datagrams, 0);

	/* Two gossip rounds later B has heard of none of it. */
	ck_assert(mesh_wait_stat(b, "core.helo_in", b0.in + 2, 5000));
	harness_sleep_ms(1200);
	helo_ctr(b, &b1);
	ck_assert_uint_eq(b1.peers, 1);
	ck_assert_uint_eq(b1.bad + b1.expired + b1.refused + b1.no_transport,
	    b0.bad + b0.expired + b0.refused + b0.no_transport);
	ck_assert_uint_eq(b1.ping_sent, b0.ping_sent);

	/* X proves its address; then, and only then, B learns of X. */
	pn = pong_build(pong, sizeof(pong), x->ident, ping.challenge,
	    ping.protocol, time_real_s() + 3600, ping.addr, ping.addr_len);
	ck_assert_int_gt(pn, 0);
	ck_assert_int_eq(wirepeer_send(x, &a->addr, pong, (size_t)pn), 0);
	ck_assert(
	    mesh_wait_stat(a, "core.validations", c1.validations + 1, 5000));
	ck_assert(mesh_wait_stat(b, "core.peers_known", 2, 5000));
	wirepeer_free(w);
	wirepeer_free(x);
	harness_free(h);
}
END_TEST

/* Sends HELOs to d as gossip over the link l, several to a frame. */
static void
gossip_helos(struct wirelink *l, const uint8_t *helos, const size_t *lens,
    unsigned n)
{
	uint8_t inner[1400], frame[1400 + FERRY_ENC_OVERHEAD];
	size_t off = 0;

	for (unsigned i = 0; i <= n; i++) {
		int f;

		/* The inner HELO message has the same bytes as the outer
		 * one (FERRY_MSG_HELO == FERRY_P2P_HELO). */
		if (i < n && off + lens[i] <= sizeof(inner)) {
			memcpy(inner + off, helos + (size_t)i * HELO_MAX,
			    lens[i]);
			off += lens[i];
			continue;
		}
		if (off == 0)
			break;
		f = wirelink_seal(l, inner, off, frame, sizeof(frame), NULL);
		ck_assert_int_gt(f, 0);
		ck_assert_int_eq(wirelink_send_raw(l, frame, (size_t)f), 0);
		off = 0;
		if (i < n)
			i--;
	}
}

/* k hostile peers linked to d. */
static void
link_peers(struct harness *h, struct harness_daemon *d, uint64_t seed,
    struct wirepeer **w, struct wirelink **l, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		ck_assert_int_eq(wirepeer_new(seed + i, &w[i]), 0);
		ck_assert_int_eq(
		    wirelink_new(w[i], &d->id, &d->addr, &l[i]), 0);
		if (wirelink_handshake(l[i], LINK_MS) != 0) {
			harness_dump_logs(h);
			ck_abort_msg("hostile peer %u did not link", i);
		}
	}
}

static void
unlink_peers(struct wirepeer **w, struct wirelink **l, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		wirelink_free(l[i]);
		wirepeer_free(w[i]);
	}
}

/* n HELOs of fresh identities, HELO i for port ports[i % n_ports] on
 * 127.0.0.1. */
static uint8_t *
fresh_helos(uint64_t seed, const uint16_t *ports, unsigned n_ports, unsigned n,
    size_t *lens)
{
	uint8_t *helos = malloc((size_t)n * HELO_MAX), addr[8];

	ck_assert_ptr_nonnull(helos);
	for (unsigned i = 0; i < n; i++) {
		struct identity *id = adv_identity(seed + i);
		size_t alen = addr_v4("127.0.0.1", ports[i % n_ports], addr);

		lens[i] = helo_for(id, FERRY_PROTO_UDP, addr, alen, 3600,
		    helos + (size_t)i * HELO_MAX);
		identity_free(id);
	}
	return helos;
}

/*
 * One victim address advertised 200 times by 4 authenticated peers
 * (gossip), each HELO from another fresh identity: the victim gets one
 * PING in the validation period, whoever advertises it.
 */
START_TEST(test_helo_flood_many_advertisers)
{
	enum { K = 4, PER = 50 };
	struct wirepeer *w[K], *victim;
	struct wirelink *l[K];
	struct harness_daemon *d;
	struct harness *h;
	size_t lens[PER];
	unsigned pings;

	ck_assert_int_eq(harness_new("helo-advs", &h), 0);
	d = adv_daemon(h, CORE_CHOICE);
	link_peers(h, d, 410, w, l, K);
	ck_assert_int_eq(wirepeer_new(420, &victim), 0);
	for (unsigned i = 0; i < K; i++) {
		uint8_t *helos =
		    fresh_helos(10000 + 1000 * i, &victim->port, 1, PER, lens);

		gossip_helos(l[i], helos, lens, PER);
		free(helos);
	}
	ck_assert(mesh_wait_stat(d, "core.helo_in", K * PER, 10000));
	pings = adv_count_pings(&victim, 1, 3000);
	ck_assert_msg(pings == 1, "the victim address got %u PINGs", pings);
	ck_assert_uint_ge(mesh_stat(d, "core.ping_limited"), K * PER - 1);
	unlink_peers(w, l, K);
	wirepeer_free(victim);
	harness_free(h);
}
END_TEST

/* Victim sockets and their ports. */
static void
victims_new(struct wirepeer **v, uint16_t *ports, unsigned n, uint64_t seed)
{
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(wirepeer_new(seed + i, &v[i]), 0);
		ports[i] = v[i]->port;
	}
}

static void
victims_free(struct wirepeer **v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		wirepeer_free(v[i]);
}

/*
 * One authenticated advertiser gossips 200 distinct victim addresses:
 * the daemon PINGs PINGS_PER_PEER of them in the period and refuses the
 * rest.
 */
START_TEST(test_helo_flood_many_addresses_one_advertiser)
{
	enum { N = 200, PER_PEER = 16 };
	struct wirepeer *w, *v[N];
	struct wirelink *l;
	struct harness_daemon *d;
	struct harness *h;
	uint16_t ports[N];
	size_t lens[N];
	uint8_t *helos;
	unsigned pings;

	ck_assert_int_eq(harness_new("helo-addrs", &h), 0);
	d = adv_daemon(h, CORE_CHOICE "PINGS_PER_PEER = 16\n");
	link_peers(h, d, 430, &w, &l, 1);
	victims_new(v, ports, N, 5000);
	helos = fresh_helos(20000, ports, N, N, lens);
	gossip_helos(l, helos, lens, N);
	free(helos);
	ck_assert(mesh_wait_stat(d, "core.helo_in", N, 10000));
	pings = adv_count_pings(v, N, 3000);
	/* The bucket's burst, and at most one token refilled meanwhile
	 * (16 per 60 s). */
	ck_assert_msg(pings >= 1 && pings <= PER_PEER + 1,
	    "%u victim addresses got %u PINGs", N, pings);
	ck_assert_uint_ge(mesh_stat(d, "core.ping_limited"), N - pings);
	wirelink_free(l);
	wirepeer_free(w);
	victims_free(v, N);
	harness_free(h);
}
END_TEST

/*
 * The same flood sent directly, without a link, from one source: each
 * HELO is signed by a fresh identity, so "the advertiser" is a new peer
 * every time. What an unauthenticated source can make the daemon send
 * must be bounded as tightly as what an authenticated peer can.
 */
START_TEST(test_helo_flood_many_addresses_one_source)
{
	enum { N = 200, PER_PEER = 16 };
	struct wirepeer *src, *v[N];
	struct harness_daemon *d;
	struct harness *h;
	uint16_t ports[N];
	size_t lens[N];
	uint8_t *helos;
	unsigned pings;

	ck_assert_int_eq(harness_new("helo-src", &h), 0);
	d = adv_daemon(h, CORE_CHOICE "PINGS_PER_PEER = 16\n");
	ck_assert_int_eq(wirepeer_new(440, &src), 0);
	victims_new(v, ports, N, 6000);
	helos = fresh_helos(30000, ports, N, N, lens);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(wirepeer_send(src, &d->addr,
		                     helos + (size_t)i * HELO_MAX, lens[i]),
		    0);
	free(helos);
	ck_assert(mesh_wait_stat(d, "core.helo_in", N, 10000));
	pings = adv_count_pings(v, N, 3000);
	ck_assert_msg(pings <= PER_PEER + 1,
	    "one source without a link made the daemon PING %u addresses",
	    pings);
	wirepeer_free(src);
	victims_free(v, N);
	harness_free(h);
}
END_TEST

static Suite *
helo_suite(void)
{
	Suite *s = suite_create("adversary_helo");
	TCase *tc = tcase_create("helo");

	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_forged_helos_refused);
	tcase_add_test(tc, test_helo_flood_many_advertisers);
	tcase_add_test(tc, test_helo_flood_many_addresses_one_advertiser);
	tcase_add_test(tc, test_helo_flood_many_addresses_one_source);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(helo_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
