/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A peer written for the tests that speaks ferry's wire protocol directly
 * over a UDP socket on loopback: it has its own identity and builds
 * HELOs, PONGs and floods with the core's codecs, so tests can send a
 * daemon what no honest ferryd would (forged, replayed, malformed).
 */
#ifndef FERRY_TESTS_WIREPEER_H
#define FERRY_TESTS_WIREPEER_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

struct identity;

struct wirepeer {
	struct identity *ident;	 /* its keys */
	int fd;			 /* UDP socket bound to addr */
	struct sockaddr_in addr; /* 127.0.0.1 (or the ip of _new_at), port */
	uint16_t port;		 /* addr's port, host order */
};

/* A peer whose identity derives from seed, with a socket on a free
 * port of 127.0.0.1. 0 or a negative errno. */
int wirepeer_new(uint64_t seed, struct wirepeer **ret);
/* The same with the socket bound to another loopback address ip (such as
 * "127.0.0.2"), so that a daemon sees it as another network source. */
int wirepeer_new_at(uint64_t seed, const char *ip, struct wirepeer **ret);
void wirepeer_free(struct wirepeer *w);
/* A UDP HELO signed by w for the address at (usually &w->addr; another
 * one to make a daemon PING someone else), valid for lifetime_s seconds
 * (negative: already expired). Returns its size or an error. */
int wirepeer_helo(const struct wirepeer *w, const struct sockaddr_in *at,
    int64_t lifetime_s, uint8_t *out, size_t max);
/* "ferry://" URI with w's HELO for its own address (free() it). */
int wirepeer_uri(const struct wirepeer *w, char **ret);
/* Sends one datagram from w's socket to `to` (a daemon: &d->addr). */
int wirepeer_send(const struct wirepeer *w, const struct sockaddr_in *to,
    const void *buf, size_t len);
/* Receives one datagram (timeout in ms); returns its length, -ETIMEDOUT.
 * *ret_from (may be NULL) gets the sender's address. */
int wirepeer_recv(const struct wirepeer *w, void *buf, size_t size,
    int timeout_ms, struct sockaddr_in *ret_from);

#endif /* FERRY_TESTS_WIREPEER_H */
