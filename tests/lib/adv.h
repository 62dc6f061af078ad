/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Helpers of the adversarial integration tests (tests/integration/
 * test_adversary_*.c, issue 6 "Adversarial peers"): a lone daemon to
 * attack, what a hostile wirepeer receives back, and the victim's CPU
 * time from /proc (its memory: procstat.h). Like mesh.h, helpers that
 * cannot go on fail the Check test after dumping the daemons' logs.
 */
#ifndef FERRY_TESTS_ADV_H
#define FERRY_TESTS_ADV_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <ferry/proto.h>

#include "harness.h"

struct identity;
struct ping;
struct wirepeer;

/* What arrived at a wirepeer in a time window. */
struct adv_rx {
	unsigned datagrams; /* all of them */
	size_t bytes;       /* their total size */
	size_t largest;     /* the largest one */
	unsigned pings;     /* datagrams holding a PING */
	unsigned pongs;     /* ... a PONG */
	unsigned kxs;       /* ... a KX */
};

/* A started daemon with the UDP transport and extra configuration text
 * (may be NULL). */
struct harness_daemon *adv_daemon(struct harness *h, const char *extra);
/* Hands d a "ferry://" URI, as "ferry connect" does. */
void adv_connect_uri(struct harness_daemon *d, const char *uri);
/* The daemon's own UDP address in HELO form (7 bytes for IPv4). */
size_t adv_daemon_addr(const struct harness_daemon *d, uint8_t *out,
    size_t max);
/* Reads datagrams at w for up to timeout_ms until one holds a PING;
 * decodes it into *ret (pointing into buf) and its sender's address into
 * *ret_from (may be NULL). 0 or -ETIMEDOUT. */
int adv_await_ping(struct wirepeer *w, uint8_t *buf, size_t size,
    struct ping *ret, struct sockaddr_in *ret_from, int timeout_ms);
/* Everything w receives from `from` (NULL: from anyone) for ms
 * milliseconds. */
void adv_collect(struct wirepeer *w, const struct sockaddr_in *from, int ms,
    struct adv_rx *ret);
/* PINGs that arrive at any of the n wirepeers within ms milliseconds. */
unsigned adv_count_pings(struct wirepeer *const *ws, size_t n, int ms);
/* A KX of ident to the peer `to`, signed, with a fresh ephemeral key,
 * timestamp ts_us (real time) and no echo: the first message of a
 * stranger's handshake. */
void adv_kx(const struct identity *ident, const struct ferry_peer_id *to,
    uint64_t ts_us, uint8_t out[FERRY_KX_SIZE]);
/* A new identity from a 64-bit seed (distinct from wirepeer seeds);
 * free it with identity_free(). */
struct identity *adv_identity(uint64_t seed);
/* CPU time (user + system) the process has used, in microseconds. */
uint64_t adv_cpu_us(pid_t pid);

#endif /* FERRY_TESTS_ADV_H */
