/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Memory for unauthenticated traffic is capped by [transport-udp]
 * MAX_SESSIONS (inbound sources), [core] MAX_UNAUTH_PEERS (identities
 * known only from HELOs) and [transport-tcp] MAX_CONNECTIONS (inbound
 * connections), issue 6 "Resource bounds". Each test floods a lone daemon
 * from the outside past its cap, checks the count and the peak RSS, and
 * repeats the flood with the cap lifted to show what it saves.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include "core/helo.h"
#include "core/identity.h"
#include "harness.h"
#include "lib/netaddr.h"
#include "lib/time.h"
#include "lib/wire.h"
#include "mesh.h"
#include "test_bounds.h"

#define LINK_MS  20000
#define HELO_MAX (FERRY_HELO_FIXED + FERRY_ADDR_MAX)

/* A started daemon with one transport and the config text conf. */
static struct harness_daemon *
lone_conf(struct harness *h, const char *tr, const char *conf)
{
	struct harness_daemon *d;

	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	procstat_daemon_env(d);
	ck_assert_int_eq(harness_daemon_transports(d, tr), 0);
	ck_assert_int_eq(harness_daemon_config(d, "%s", conf), 0);
	ck_assert_int_eq(harness_daemon_start_ready(d), 0);
	return d;
}

/* A started daemon with one transport and the setting [section] key. */
static struct harness_daemon *
lone(struct harness *h, const char *tr, const char *section, const char *key,
    unsigned long v)
{
	char conf[128];

	(void)snprintf(conf, sizeof(conf), "[%s]\n%s = %lu\n", section, key, v);
	return lone_conf(h, tr, conf);
}

static void
sin_loopback(struct sockaddr_in *sin, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(port);
}

/* One datagram of junk to `to` from each of n distinct source ports of
 * 127.0.0.1, taken upwards from 2000 (below the ephemeral range, so that
 * no two are the same; ports someone holds are skipped). */
static void
flood_sources(const struct sockaddr_in *to, unsigned n)
{
	static const uint8_t junk[64];
	struct sockaddr_in from;
	uint16_t next = 2000;

	for (unsigned i = 0; i < n; next++) {
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		ck_assert_int_ge(fd, 0);
		ck_assert_uint_lt(next, 32000);
		sin_loopback(&from, next);
		if (bind(fd, (struct sockaddr *)&from, sizeof(from)) == 0) {
			(void)sendto(fd, junk, sizeof(junk), 0,
			    (const struct sockaddr *)to, sizeof(*to));
			i++;
		}
		(void)close(fd);
	}
}

struct flood_result {
	unsigned long growth_kib; /* peak RSS growth */
	uint64_t live;            /* what the cap bounds, at the end */
	uint64_t counted;         /* refusals or evictions the cap caused */
	uint64_t evicted;         /* peers: core.peers_evicted */
	uint64_t limited;         /* peers: core.ping_limited (any cause) */
};

/* UDP sessions a lone daemon keeps after datagrams from n sources. */
static void
udp_sessions(unsigned long max, unsigned n, struct flood_result *ret)
{
	struct harness_daemon *d;
	struct harness *h;
	unsigned long base;
	uint64_t created, evicted, timed_out;

	ck_assert_int_eq(harness_new("budp", &h), 0);
	d = lone(h, "udp", "transport-udp", "MAX_SESSIONS", max);
	base = bounds_rss_kib(d->pid);
	bounds_reset_peak(d->pid);
	flood_sources(&d->addr, n);
	/* A few may overflow the socket buffer; most must arrive. */
	ck_assert(mesh_wait_stat(d, "udp.rx_datagrams", n - n / 20, 20000));
	harness_sleep_ms(300);
	ret->growth_kib = bounds_peak_kib(d->pid) - base;
	created = mesh_stat(d, "udp.sessions_created");
	evicted = mesh_stat(d, "udp.sessions_evicted");
	timed_out = mesh_stat(d, "udp.sessions_timed_out");
	ret->live = created - evicted - timed_out;
	ret->counted = evicted;
	fprintf(stderr,
	    "MAX_SESSIONS %lu, %u sources: %llu sessions made, %llu evicted, "
	    "%llu kept; RSS %lu KiB + peak growth %lu KiB\n",
	    max, n, (unsigned long long)created, (unsigned long long)evicted,
	    (unsigned long long)ret->live, base, ret->growth_kib);
	harness_free(h);
}

/*
 * MAX_SESSIONS: datagrams from 20000 source ports leave 64 sessions and
 * 19936 evictions; lifted to the maximum, the same flood keeps 20000
 * sessions and costs measurably more memory.
 */
START_TEST(test_udp_max_sessions)
{
	enum { N = 20000, MAX = 64 };
	const unsigned long slack_kib = 4096;
	struct flood_result capped, open;

	udp_sessions(MAX, N, &capped);
	ck_assert_uint_le(capped.live, MAX);
	ck_assert_uint_ge(capped.counted, N - N / 20 - MAX);
	ck_assert_uint_le(capped.growth_kib, procstat_allow_kib(MAX, slack_kib));
	udp_sessions(1048576, N, &open);
	ck_assert_uint_ge(open.live, N - N / 20);
	fprintf(stderr, "a UDP session costs about %.0f bytes\n",
	    (double)(open.growth_kib - capped.growth_kib) * 1024.0 /
	        (double)(open.live > MAX ? open.live - MAX : 1));
}
END_TEST

/* n valid, signed UDP HELOs of fresh identities, all naming the address
 * 127.0.0.1:port, sent to the daemon at `to` from one socket. */
static void
flood_helos(const struct sockaddr_in *to, uint16_t port, unsigned n,
    uint64_t seed)
{
	uint8_t unit[1400], addr[NETADDR_HELO_MAX], s[32];
	struct sockaddr_storage ss;
	size_t off = 0, alen;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memset(&ss, 0, sizeof(ss));
	sin_loopback((struct sockaddr_in *)&ss, port);
	ck_assert_int_eq(netaddr_encode(&ss, addr, sizeof(addr), &alen), 0);
	for (unsigned i = 0; i < n; i++) {
		struct identity *id;
		int len;

		memset(s, 0, sizeof(s));
		wire_put64(s, seed + i);
		memcpy(s + 8, "bounds", 6);
		ck_assert_int_eq(identity_from_seed(s, &id), 0);
		len =
		    helo_build(id, FERRY_PROTO_UDP, 1452, time_real_s() + 3600,
		        addr, alen, unit + off, sizeof(unit) - off);
		identity_free(id);
		ck_assert_int_gt(len, 0);
		off += (size_t)len;
		/* Several HELOs share a datagram; send when the next one
		 * might not fit. */
		if (sizeof(unit) - off < (size_t)len || i == n - 1) {
			(void)sendto(fd, unit, off, 0,
			    (const struct sockaddr *)to, sizeof(*to));
			off = 0;
			harness_sleep_ms(1);
		}
	}
	(void)close(fd);
}

/* A UDP socket that takes the daemon's PINGs and never answers. */
static int
blackhole(uint16_t *ret_port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	sin_loopback(&sin, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*ret_port = ntohs(sin.sin_port);
	return fd;
}

/* Peers a lone daemon with MAX_UNAUTH_PEERS max and PINGS_PER_PEER pings
 * keeps after HELOs of n identities, all from one source. */
static void
unauth_peers(unsigned long max, unsigned long pings, unsigned n,
    struct flood_result *ret)
{
	struct harness_daemon *d;
	struct harness *h;
	unsigned long base;
	char conf[128];
	uint16_t port;
	int hole = blackhole(&port);

	ck_assert_int_eq(harness_new("bhelo", &h), 0);
	(void)snprintf(conf, sizeof(conf),
	    "[core]\nMAX_UNAUTH_PEERS = %lu\nPINGS_PER_PEER = %lu\n", max,
	    pings);
	d = lone_conf(h, "udp", conf);
	base = bounds_rss_kib(d->pid);
	bounds_reset_peak(d->pid);
	flood_helos(&d->addr, port, n, 1000);
	ck_assert(mesh_wait_stat(d, "core.helo_in", n, 30000));
	harness_sleep_ms(300);
	ret->growth_kib = bounds_peak_kib(d->pid) - base;
	ret->live = mesh_stat(d, "core.peers_known");
	ret->evicted = mesh_stat(d, "core.peers_evicted");
	ret->counted = ret->evicted;
	ret->limited = mesh_stat(d, "core.ping_limited");
	fprintf(stderr,
	    "MAX_UNAUTH_PEERS %lu, PINGS_PER_PEER %lu, HELOs of %u "
	    "identities from one source: %llu peers kept, %llu evicted, "
	    "core.ping_limited %llu; RSS %lu KiB + peak "
	    "growth %lu KiB\n",
	    max, pings, n, (unsigned long long)ret->live,
	    (unsigned long long)ret->evicted, (unsigned long long)ret->limited,
	    base, ret->growth_kib);
	harness_free(h);
	(void)close(hole);
}

/*
 * MAX_UNAUTH_PEERS: signed HELOs of 4000 identities (the source's PING
 * budget lifted) leave 64 peers, the older ones evicted for the newer;
 * with the cap at 100000 all 4000 stay and the memory shows what each
 * costs. With the default budget of PINGS_PER_PEER per source, the
 * flood makes no more peers than that budget, whatever the cap.
 */
START_TEST(test_max_unauth_peers)
{
	enum { N = 4000, MAX = 64, PINGS = 16 };
	const unsigned long slack_kib = 4096;
	struct flood_result capped, open, budget;
	double per_peer;

	unauth_peers(MAX, 100000, N, &capped);
	unauth_peers(100000, 100000, N, &open);
	unauth_peers(100000, PINGS, N, &budget);
	per_peer = (double)(open.growth_kib - capped.growth_kib) /
	    (double)(open.live > MAX ? open.live - MAX : 1);
	fprintf(stderr,
	    "an unauthenticated peer costs about %.2f KiB; the "
	    "default cap of 4096 so about %.0f MiB\n",
	    per_peer, per_peer * 4096 / 1024);
	ck_assert_uint_eq(capped.live, MAX);
	ck_assert_uint_eq(capped.evicted, N - MAX);
	ck_assert_uint_eq(open.live, N);
	ck_assert_uint_eq(open.evicted, 0);
	ck_assert_uint_le(budget.live, PINGS);
	ck_assert_uint_le(capped.growth_kib,
	    procstat_allow_kib((unsigned long)(MAX * per_peer) + 1, slack_kib));
	ck_assert_uint_ge(open.growth_kib, capped.growth_kib + N / 4);
}
END_TEST

/* Links a fresh daemon bootstrapped from v; ms it took, or timeout_ms + 1
 * if it did not link. */
static uint64_t
newcomer_link_ms(struct harness *h, struct harness_daemon *v, int timeout_ms)
{
	struct harness_daemon *l;
	char *uri = mesh_hello(v);
	uint64_t start, end;

	ck_assert_int_eq(harness_daemon_new(h, &l), 0);
	ck_assert_int_eq(harness_daemon_transports(l, "udp"), 0);
	ck_assert_int_eq(harness_daemon_config(l, "[core]\nBOOTSTRAP = %s\n",
	                     uri),
	    0);
	free(uri);
	start = harness_now_ms();
	end = start + (uint64_t)timeout_ms;
	ck_assert_int_eq(harness_daemon_start_ready(l), 0);
	while (harness_now_ms() < end) {
		if (mesh_peer_count(l) > 0 && mesh_peer_count(v) > 0)
			return harness_now_ms() - start;
		harness_sleep_ms(100);
	}
	return (uint64_t)timeout_ms + 1;
}

/*
 * HELOs of strangers fill MAX_UNAUTH_PEERS with peers whose addresses
 * never answer; a legitimate newcomer's handshake still finds room (the
 * oldest half-open peer makes way) and links at once.
 */
START_TEST(test_unauth_table_full_newcomer)
{
	enum { N = 200, MAX = 16, LINK = 10000 };
	struct harness_daemon *v;
	struct harness *h;
	uint64_t ms;
	uint16_t port;
	int hole;

	hole = blackhole(&port);
	ck_assert_int_eq(harness_new("bfull", &h), 0);
	v = lone_conf(h, "udp",
	    "[core]\nMAX_UNAUTH_PEERS = 16\nPINGS_PER_PEER = 1000\n");
	flood_helos(&v->addr, port, N, 5000);
	ck_assert(mesh_wait_stat(v, "core.peers_known", MAX, 10000));
	ms = newcomer_link_ms(h, v, LINK);
	fprintf(stderr,
	    "table of %d filled by HELOs: a newcomer %s "
	    "(core.peers_evicted %llu)\n",
	    MAX, ms <= LINK ? "linked" : "did not link within 10 s",
	    (unsigned long long)mesh_stat(v, "core.peers_evicted"));
	ck_assert_uint_le(ms, LINK);
	ck_assert_uint_gt(mesh_stat(v, "core.peers_evicted"), 0);
	harness_free(h);
	(void)close(hole);
}
END_TEST

/* n TCP connections to `to` that each send what `hello` holds (hlen
 * bytes) and then nothing; returns how many connected. fds gets them. */
static unsigned
flood_connections(const struct sockaddr_in *to, unsigned n,
    const uint8_t *hello, size_t hlen, int *fds)
{
	unsigned ok = 0;

	for (unsigned i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(fds[i], 0);
		if (connect(fds[i], (const struct sockaddr *)to, sizeof(*to)) <
		    0) {
			(void)close(fds[i]);
			fds[i] = -1;
			continue;
		}
		ok++;
		if (hlen > 0)
			(void)send(fds[i], hello, hlen,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	return ok;
}

/* Inbound connections a lone daemon keeps from n connections that each
 * send a welcome and most of a 64 KiB unit, then wait. */
static void
tcp_connections(unsigned long max, unsigned n, struct flood_result *ret)
{
	enum { PART = 60000 };
	static uint8_t hello[FERRY_PEER_ID_LEN + 16 + PART];
	struct harness_daemon *d;
	struct harness *h;
	unsigned long base;
	uint64_t in;
	int *fds = calloc(n, sizeof(*fds));
	unsigned ok;

	ck_assert_ptr_nonnull(fds);
	/* welcome: "FERRYTCP", u16 version 1, u16 0, a peer id; then a unit
	 * header for 65535 bytes and PART of them. */
	memcpy(hello, "FERRYTCP", 8);
	wire_put16(hello + 8, 1);
	wire_put16(hello + 10, 0);
	randombytes_buf(hello + 12, FERRY_PEER_ID_LEN);
	wire_put32(hello + 12 + FERRY_PEER_ID_LEN, 65535);
	ck_assert_int_eq(harness_new("btcp", &h), 0);
	d = lone(h, "tcp", "transport-tcp", "MAX_CONNECTIONS", max);
	base = bounds_rss_kib(d->pid);
	bounds_reset_peak(d->pid);
	ok = flood_connections(&d->addr, n, hello, sizeof(hello), fds);
	ck_assert(
	    mesh_wait_stat(d, "tcp.connections_in", max < n ? max : n, 10000));
	harness_sleep_ms(1000);
	ret->growth_kib = bounds_peak_kib(d->pid) - base;
	in = mesh_stat(d, "tcp.connections_in");
	ret->counted = mesh_stat(d, "tcp.refused");
	ret->live =
	    in - mesh_stat(d, "tcp.idle_closes") - mesh_stat(d, "tcp.lost");
	fprintf(stderr,
	    "MAX_CONNECTIONS %lu, %u connections (%u connected): %llu "
	    "accepted, %llu refused, %llu kept; RSS %lu KiB + peak growth "
	    "%lu KiB\n",
	    max, n, ok, (unsigned long long)in,
	    (unsigned long long)ret->counted, (unsigned long long)ret->live,
	    base, ret->growth_kib);
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			(void)close(fds[i]);
	free(fds);
	harness_free(h);
}

/*
 * MAX_CONNECTIONS: 400 connections that send a welcome and most of a
 * 64 KiB unit and then wait against a cap of 32: 32 are kept (each
 * holding its partial unit), the others refused and counted; without
 * the cap all 400 hold their partial units.
 */
START_TEST(test_tcp_max_connections)
{
	enum { N = 400, MAX = 32, HELD_KIB = 64 + 8 };
	const unsigned long slack_kib = 4096;
	struct flood_result capped, open;

	tcp_connections(MAX, N, &capped);
	ck_assert_uint_le(capped.live, MAX);
	ck_assert_uint_ge(capped.counted, N / 2);
	ck_assert_uint_le(capped.growth_kib,
	    procstat_allow_kib(MAX * HELD_KIB, slack_kib));
	tcp_connections(N, N, &open);
	ck_assert_uint_ge(open.live, N - N / 10);
	ck_assert_uint_ge(open.growth_kib, capped.growth_kib + N * 32);
}
END_TEST

static Suite *
bounds_suite(void)
{
	Suite *s = suite_create("bounds_unauth");
	TCase *tc = tcase_create("unauth");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_udp_max_sessions);
	tcase_add_test(tc, test_max_unauth_peers);
	tcase_add_test(tc, test_unauth_table_full_newcomer);
	tcase_add_test(tc, test_tcp_max_connections);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	if (sodium_init() < 0)
		return 1;
	sr = srunner_create(bounds_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
