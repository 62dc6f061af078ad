/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the DHT integration tests check a network of real daemons
 * against: a daemon's DHT_STATUS, and the true closest of a key, found
 * by brute force over the ids the test started. Every helper fails the
 * Check test rather than return an error.
 */
#ifndef FERRY_TESTS_DHTCHECK_H
#define FERRY_TESTS_DHTCHECK_H

#include <stddef.h>
#include <stdint.h>

#include <ferry/client.h>

#include "harness.h"

/* A new connection to dd's client socket, for ferry_client_close(). */
struct ferry_client *dhtcheck_client(struct harness_daemon *dd);
/* dd's DHT_STATUS, for ferry_dht_status_free(). */
struct ferry_dht_status *dhtcheck_status(struct harness_daemon *dd);
/* The figures of dd's DHT_STATUS the tests follow. */
struct dhtcheck_figures {
	uint32_t entries; /* peers in its routing table */
	uint64_t blocks;  /* blocks it holds */
};
struct dhtcheck_figures dhtcheck_figures(struct harness_daemon *dd);
/* Waits until each of the n daemons of d holds at least want peers in
 * its routing table; past timeout_ms, dumps h's logs and fails the test,
 * naming the daemon and what its table holds. */
void dhtcheck_wait_tables(struct harness *h, struct harness_daemon *const *d,
    size_t n, uint32_t want, uint64_t timeout_ms);
/* Writes the ids of the n daemons of d that are running to out (room
 * for n), closest to key first (XOR distance), and returns how many. */
size_t dhtcheck_closest(struct harness_daemon *const *d, size_t n,
    const struct ferry_dht_key *key, struct ferry_peer_id *out);
/* The index in d (n daemons) of the one whose id is id, or -1. */
int dhtcheck_index_of(struct harness_daemon *const *d, size_t n,
    const struct ferry_peer_id *id);

#endif /* FERRY_TESTS_DHTCHECK_H */
