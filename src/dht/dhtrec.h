/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Signed records at a rendezvous key, dht layer (issue 15: intermediaries
 * announce themselves where the others can list them): a record is a
 * short value its signer puts under a topic, newer (higher seq) replacing
 * older, until its expiry. This file is their one wire entry (as RPUT and
 * RECORDS carry it, ferry-protocol(7) "Records"), their signature, and
 * the rule a storing peer keeps them by; pure, so that the daemon's
 * SQLite store, the simulator's store, the fuzz target and the tests run
 * the same code.
 *
 * Entry (the topic is the message's key, not repeated):
 *    0 u8  signer[32]   Ed25519 public key
 *   32 u64 seq          newer replaces older (the signer's clock, us)
 *   40 u64 expiry       seconds since the epoch
 *   48 u16 value_len    0..DHTREC_VALUE_MAX
 *   50 u8  value[value_len]
 *      u8  sig[64]      by signer over "ferry dht record v1" NUL ||
 *                       topic || signer || seq || expiry || value_len ||
 *                       value
 */
#ifndef FERRY_DHT_DHTREC_H
#define FERRY_DHT_DHTREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

#include "dht/dhtkey.h"

struct identity;

#define DHTREC_VALUE_MAX 1024 /* bytes of a record's value */
#define DHTREC_FIXED     (FERRY_PUBKEY_LEN + 8 + 8 + 2 + FERRY_SIG_LEN)
#define DHTREC_SIZE_MAX  (DHTREC_FIXED + DHTREC_VALUE_MAX)
#define DHTREC_HASH_LEN  32

struct dhtrec {
	struct dhtkey topic;
	uint8_t signer[FERRY_PUBKEY_LEN];
	uint64_t seq;         /* newer replaces older, per signer */
	uint64_t expiry;      /* seconds since the epoch */
	const uint8_t *value; /* borrowed; NULL when value_len is 0 */
	size_t value_len;     /* 0..DHTREC_VALUE_MAX */
	uint8_t sig[FERRY_SIG_LEN];
};

/* The bytes r's entry takes. */
size_t dhtrec_size(const struct dhtrec *r);
/* Decodes the entry at p (len bytes available) for topic: 0 with *ret
 * (value pointing into p) and *ret_used its length, or -EBADMSG. The
 * signature is not checked. */
int dhtrec_decode(const struct dhtkey *topic, const uint8_t *p, size_t len,
    struct dhtrec *ret, size_t *ret_used);
/* Writes r's entry, dhtrec_size(r) bytes, at p. r->value_len must be at
 * most DHTREC_VALUE_MAX. */
void dhtrec_encode(const struct dhtrec *r, uint8_t *p);
/* Signs r (its topic, seq, expiry and value set) with ident's key: sets
 * signer and sig. */
void dhtrec_sign(const struct identity *ident, struct dhtrec *r);
/* 0 if r's sig is its signer's over its fields, else -EBADMSG. */
int dhtrec_verify(const struct dhtrec *r);
/* What receipts for an RPUT of r to replication peers name (their
 * put_hash): BLAKE2b-256 of topic || replication || r's entry. */
void dhtrec_hash(const struct dhtrec *r, uint8_t replication,
    uint8_t ret[DHTREC_HASH_LEN]);
/* Whether a and b are the same signed record (signer, seq and sig). */
bool dhtrec_same(const struct dhtrec *a, const struct dhtrec *b);

/* What a storing peer holds where a record is to go, unexpired records
 * only, as its store sees it inside the write that decides. */
struct dhtrec_room {
	bool has_signer;      /* a record of the same signer is held */
	uint64_t signer_seq;  /* its seq */
	bool signer_same;     /* and it is this very record */
	uint64_t in_topic;    /* records of the topic held */
	uint64_t topic_first; /* the earliest expiry among them */
	uint64_t total;       /* records held, all topics */
	uint64_t total_first; /* the earliest expiry among them */
};

/* The keeping rule's verdicts. */
enum dhtrec_verdict {
	DHTREC_HELD,        /* the same record is held: nothing to write */
	DHTREC_REPLACE,     /* newer than its signer's: replaces it */
	DHTREC_ADD,         /* room for it */
	DHTREC_EVICT_TOPIC, /* replaces the topic's earliest expiring */
	DHTREC_EVICT_ANY,   /* replaces the store's earliest expiring */
	DHTREC_STALE,       /* its signer's held one is as new or newer */
	DHTREC_FULL,        /* no room, and none that expires before it */
};

/*
 * The keeping rule: one record per signer and topic, the highest seq; at
 * most per_topic in a topic and total_max in all. A record that finds
 * its topic (or the store) full takes the place of the one that expires
 * first there if that one expires before it, else it is refused. As
 * storing peers refuse expiries further out than RECORD_LIFETIME, the
 * records kept are the most recently announced: a signer that announces
 * again before its record expires keeps its place, and records put to
 * fill a topic fall out as theirs run out, however many were made.
 */
enum dhtrec_verdict dhtrec_admit(const struct dhtrec_room *room,
    const struct dhtrec *r, uint64_t per_topic, uint64_t total_max);

#endif /* FERRY_DHT_DHTREC_H */
