/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's key space, dht layer: 256-bit keys in the same space as peer
 * identities (both are BLAKE2b-256 hashes), distance is XOR, and a key's
 * bucket relative to a node is the length of their common prefix.
 */
#ifndef FERRY_DHT_DHTKEY_H
#define FERRY_DHT_DHTKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

#define DHTKEY_LEN  FERRY_PEER_ID_LEN
#define DHTKEY_BITS (DHTKEY_LEN * 8)

/* A block key or a peer id: one type, since they share one space. */
struct dhtkey {
	uint8_t b[DHTKEY_LEN];
};

/* The key of a block: BLAKE2b-256 of its bytes. */
void dhtkey_of_block(const void *data, size_t len, struct dhtkey *ret);
/* A peer id seen as a key, and back. */
void dhtkey_from_peer(const struct ferry_peer_id *id, struct dhtkey *ret);
void dhtkey_to_peer(const struct dhtkey *k, struct ferry_peer_id *ret);

/* a XOR b. */
void dhtkey_distance(const struct dhtkey *a, const struct dhtkey *b,
    struct dhtkey *ret);
/* <0, 0, >0 as a is closer to target than b, as close, or farther. */
int dhtkey_closer(const struct dhtkey *target, const struct dhtkey *a,
    const struct dhtkey *b);
/* Bits a and b share from the most significant one: 0 to DHTKEY_BITS
 * (DHTKEY_BITS only when equal). This is b's bucket in a's table. */
unsigned dhtkey_common_prefix(const struct dhtkey *a, const struct dhtkey *b);
bool dhtkey_equal(const struct dhtkey *a, const struct dhtkey *b);
/* A uniformly random key whose common prefix with self is exactly
 * prefix bits (prefix < DHTKEY_BITS): a target for refreshing that
 * bucket. */
void dhtkey_random_in_bucket(const struct dhtkey *self, unsigned prefix,
    struct dhtkey *ret);
/* Lowercase hex, 2 * DHTKEY_LEN characters and a NUL, into buf. */
void dhtkey_hex(const struct dhtkey *k, char buf[2 * DHTKEY_LEN + 1]);
/* Parses 64 hex digits (either case) or a peer id in base32. 0 or
 * -EINVAL. */
int dhtkey_parse(const char *s, struct dhtkey *ret);

#endif /* FERRY_DHT_DHTKEY_H */
