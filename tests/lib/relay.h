/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A recording relay for integration tests: listens on a loopback port and
 * forwards UDP datagrams or a TCP stream to a target port, keeping a copy
 * of every byte in both directions. A daemon that advertises the relay's
 * port has all its traffic pass through it, so a test can check what is
 * visible on the wire and replay a captured datagram. Runs in its own
 * thread; the functions below may be called from the test's thread.
 */
#ifndef FERRY_TESTS_RELAY_H
#define FERRY_TESTS_RELAY_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct relay;

/* Starts a relay for SOCK_DGRAM or SOCK_STREAM from 127.0.0.1:listen_port
 * to target (a daemon: &d->addr; copied). What it forwards comes from
 * 127.0.0.1. 0 or a negative errno. */
int relay_new(int socktype, uint16_t listen_port,
    const struct sockaddr_in *target, struct relay **ret);
/* Stops the thread, closes everything, frees. NULL is allowed. */
void relay_free(struct relay *r);
/* Bytes that went through so far (both directions). */
uint64_t relay_bytes(struct relay *r);
/* True if needle occurs in anything relayed (within one datagram, or
 * anywhere in either TCP direction's stream). */
bool relay_saw(struct relay *r, const void *needle, size_t len);
/* Directions of traffic through a relay. */
#define RELAY_TO_TARGET 0   /* from the clients to the target */
#define RELAY_FROM_TARGET 1 /* the target's answers */

/* Datagrams relayed in direction dir so far (UDP). */
size_t relay_datagrams(struct relay *r, int dir);
/* Copies datagram i (0-based) of direction dir into buf; returns its
 * length, or -ENOENT / -ENOSPC. */
int relay_datagram(struct relay *r, int dir, size_t i, void *buf,
    size_t size);
/* Sends datagram i of direction dir again, the way it went the first
 * time. 0 or -ENOENT. */
int relay_replay(struct relay *r, int dir, size_t i);

#endif /* FERRY_TESTS_RELAY_H */
