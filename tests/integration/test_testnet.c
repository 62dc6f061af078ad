/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The test network of the harness (tests/lib/harness.h, "The test
 * network"): every daemon on a loopback address of its own, so that the
 * others see its traffic come from there, as from another host. Over UDP
 * and over TCP two daemons name each other by those addresses in PEERS,
 * and the kernel's table of TCP connections shows both ends of their link
 * on them; a test can start 128 daemons and link the first to the last.
 */
/* ctest: TIMEOUT=300 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <ferry/client.h>

#include "harness.h"
#include "mesh.h"

#define LINK_MS 15000
#define MANY    128

/* The PEERS entry of d for peer, which must be there. */
static void
peer_info(struct harness *h, struct harness_daemon *d,
    const struct harness_daemon *peer, struct ferry_peer_info *ret)
{
	struct ferry_client *c;
	struct ferry_peer_info *p;
	bool found = false;
	size_t n = 0;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_peers(c, &p, &n), 0);
	for (size_t i = 0; i < n && !found; i++) {
		if (memcmp(&p[i].id, &peer->id, sizeof(peer->id)) != 0)
			continue;
		*ret = p[i];
		found = true;
	}
	ferry_peers_free(p);
	ferry_client_close(c);
	if (!found) {
		harness_dump_logs(h);
		ck_abort_msg("d%u does not list d%u", d->index, peer->index);
	}
}

/* d lists peer at peer's own address, not at 127.0.0.1: at its port too
 * where the link runs to the address peer advertises, at any port where
 * it runs over a connection peer made (TCP; the port is then the one the
 * kernel gave that connection). */
static void
check_listed(struct harness *h, struct harness_daemon *d,
    const struct harness_daemon *peer, const char *transport)
{
	struct ferry_peer_info pi;
	char want[64];
	size_t ip_len;
	bool ok;

	peer_info(h, d, peer, &pi);
	ck_assert_str_eq(pi.transport, transport);
	(void)snprintf(want, sizeof(want), "%s:%u", peer->ip, peer->port);
	ip_len = strlen(peer->ip);
	ok = strcmp(pi.address, want) == 0 ||
	    (strcmp(transport, "tcp") == 0 &&
	        strncmp(pi.address, want, ip_len + 1) == 0);
	ck_assert_msg(ok, "d%u lists d%u at %s, not at %s", d->index,
	    peer->index, pi.address, want);
}

/* A linked pair with only the given transport. */
static void
pair(struct harness *h, const char *transport, struct harness_daemon **d)
{
	mesh_start(h, d, 2, transport, NULL);
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
}

START_TEST(test_udp_pair)
{
	struct harness_daemon *d[2];
	struct harness *h;

	ck_assert_int_eq(harness_new("net-udp", &h), 0);
	pair(h, "udp", d);
	ck_assert_str_eq(d[0]->ip, "127.0.0.10");
	ck_assert_str_eq(d[1]->ip, "127.0.0.11");
	check_listed(h, d[0], d[1], "udp");
	check_listed(h, d[1], d[0], "udp");
	harness_free(h);
}
END_TEST

/* Established TCP connections in the kernel's table (/proc/net/tcp, this
 * network namespace) whose local end is at, and the remote address of
 * each, up to max. IPv4 addresses appear as the bytes of s_addr. */
static size_t
tcp_accepted(const struct sockaddr_in *at, uint32_t *remote, size_t max)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[512];
	size_t n = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned lip, lport, rip, rport, st;

		if (sscanf(line, " %*u: %8X:%4X %8X:%4X %2X", &lip, &lport,
		        &rip, &rport, &st) != 5)
			continue; /* the heading */
		if (st != 1 || lip != at->sin_addr.s_addr ||
		    lport != ntohs(at->sin_port))
			continue;
		if (n < max)
			remote[n] = rip;
		n++;
	}
	(void)fclose(f);
	return n;
}

START_TEST(test_tcp_pair)
{
	struct harness_daemon *d[2];
	struct harness *h;
	uint32_t remote[16];
	size_t n, total = 0;

	ck_assert_int_eq(harness_new("net-tcp", &h), 0);
	pair(h, "tcp", d);
	check_listed(h, d[0], d[1], "tcp");
	check_listed(h, d[1], d[0], "tcp");
	/* Whoever dialled whom: a connection one daemon accepted comes from
	 * the other's address (the TCP transport binds outgoing connections
	 * to its one listening address), not from 127.0.0.1. */
	for (int i = 0; i < 2; i++) {
		uint32_t want = d[1 - i]->addr.sin_addr.s_addr;

		n = tcp_accepted(&d[i]->addr, remote, 16);
		for (size_t k = 0; k < n && k < 16; k++)
			ck_assert_msg(remote[k] == want,
			    "d%d accepted a connection from %08x, not from "
			    "d%d's %s",
			    i, remote[k], 1 - i, d[1 - i]->ip);
		total += n;
	}
	ck_assert_uint_ge(total, 1);
	harness_free(h);
}
END_TEST

START_TEST(test_many_daemons)
{
	struct harness_daemon *d[HARNESS_MAX_DAEMONS], *extra;
	struct harness *h;
	char ip[INET_ADDRSTRLEN], *uri;

	ck_assert_int_ge(HARNESS_MAX_DAEMONS, MANY);
	ck_assert_int_eq(harness_new("net-many", &h), 0);
	for (unsigned i = 0; i < HARNESS_MAX_DAEMONS; i++) {
		ck_assert_int_eq(harness_daemon_new(h, &d[i]), 0);
		(void)snprintf(ip, sizeof(ip), "127.0.0.%u",
		    HARNESS_ADDR_BASE + i);
		ck_assert_str_eq(d[i]->ip, ip);
		for (unsigned k = 0; k < i; k++)
			ck_assert_uint_ne(d[i]->port, d[k]->port);
	}
	ck_assert_int_eq(harness_daemon_new(h, &extra), -ENOSPC);
	/* MANY of them running at once; then the first and the last of
	 * those link up, each at its own address. */
	for (unsigned i = 0; i < MANY; i++) {
		ck_assert_int_eq(harness_daemon_transports(d[i], "udp"), 0);
		ck_assert_int_eq(harness_daemon_start(d[i]), 0);
	}
	for (unsigned i = 0; i < MANY; i++)
		if (harness_daemon_wait_ready(d[i], 60000) != 0) {
			harness_dump_logs(h);
			ck_abort_msg("d%u did not start", i);
		}
	uri = mesh_hello(d[MANY - 1]);
	{
		struct ferry_client *c;

		ck_assert_int_eq(harness_daemon_client(d[0], &c), 0);
		ck_assert_int_eq(ferry_connect_uri(c, uri), 0);
		ferry_client_close(c);
	}
	free(uri);
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	mesh_wait_peers(h, d[MANY - 1], 1, LINK_MS);
	check_listed(h, d[0], d[MANY - 1], "udp");
	check_listed(h, d[MANY - 1], d[0], "udp");
	harness_free(h);
}
END_TEST

static Suite *
testnet_suite(void)
{
	Suite *s = suite_create("testnet");
	TCase *tc = tcase_create("testnet");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_udp_pair);
	tcase_add_test(tc, test_tcp_pair);
	tcase_add_test(tc, test_many_daemons);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(testnet_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
