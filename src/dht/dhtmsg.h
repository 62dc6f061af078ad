/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's wire messages, dht layer: pure encoders and length-checked
 * decoders of the bodies the core carries as inner messages of type
 * FERRY_MSG_DHT_* (the core's own {size, type} framing and fragmentation
 * surround them), and the signatures of PUTs and receipts. No I/O and no
 * state, so that the daemon, the tests, the fuzz target and a simulator
 * run exactly this code. ferry-protocol(7) specifies every layout.
 *
 * Requests (PUT, GET, FIND), routed hop by hop toward key:
 *    0 u8  version      DHTMSG_VERSION
 *    1 u8  flags        DHTMSG_F_REPLICA or DHTMSG_F_CANDIDATE (PUT
 *                       only, not both), all others 0
 *    2 u8  hops_left    1..DHTMSG_HOPS_MAX: hops it may still take
 *    3 u8  hops         hops taken so far
 *    4 u64 req_id       chosen by the requester
 *   12 u8  key[32]
 *   44 u8  requester[32]  peer id the answers go to
 *   76 u16 helo_len     0..DHTMSG_HELO_MAX
 *   78 u8  helo[helo_len] the requester's signed HELOs, so that the
 *                       responsible peers can reach it directly
 *   then GET: nothing; FIND: u16 want (1..DHTMSG_FIND_MAX);
 *   PUT: u8 replication (1..DHTMSG_REPL_MAX)  u8 reserved (0)
 *        u64 expiry (s since the epoch)  u8 origin_pk[32]  u8 sig[64]
 *        u32 block_len (1..DHTMSG_BLOCK_MAX)  u8 block[block_len]
 *   PUT's sig: Ed25519 by origin_pk over "ferry dht put v1" NUL || key ||
 *   replication || expiry; key must be BLAKE2b-256(block).
 *   RGET: u8 replication (1..DHTMSG_REPL_MAX)  u8 reserved (0);
 *   RPUT: the same, then one record entry (dhtrec.h) at topic key.
 *   PUT, RPUT and RGET may carry REPLICA or CANDIDATE.
 *
 * Answers (RECEIPT, BLOCK, NODES, FAIL, ACK), to the requester:
 *    0 u8  version      DHTMSG_VERSION
 *    1 u8  flags        DHTMSG_F_ROUTED: travels back along the path
 *    2 u8  hops_left    0..DHTMSG_HOPS_MAX, for the way back
 *    3 u8  hops         0..DHTMSG_HOPS_MAX: hops the request took to
 *                       the responder
 *    4 u64 req_id       of the request answered
 *   12 u8  key[32]
 *   44 u8  requester[32]
 *   76 u8  responder[32] peer id of the answering peer
 *  108 then RECEIPT: u64 expiry  u8 put_hash[32]  u8 storer_pk[32]
 *        u8 sig[64]: Ed25519 by storer_pk over "ferry dht receipt v1" NUL
 *        || key || storer_pk || expiry || put_hash; responder must be
 *        the peer id of storer_pk;
 *   BLOCK: u32 len (1..DHTMSG_BLOCK_MAX)  u8 block[len];
 *   NODES: u16 count (0..DHTMSG_FIND_MAX), then count times
 *        u8 id[32]  u16 helo_len (0..DHTMSG_HELO_MAX)  u8 helo[helo_len];
 *   FAIL:  u16 code (1..65535; enum dhtmsg_fail names those known);
 *   ACK:   nothing: the request reached the peer that answers it, whose
 *        answer, over DHTMSG_ACK_OVER bytes, follows (seed 002, 2.1);
 *   RECORDS: u16 count (0..DHTMSG_RECORDS_MAX), then count record
 *        entries (dhtrec.h) at topic key.
 * put_hash is BLAKE2b-256 of key || replication || expiry || origin_pk
 * || sig: the signed request a receipt honours; an RPUT's is
 * dhtrec_hash().
 */
#ifndef FERRY_DHT_DHTMSG_H
#define FERRY_DHT_DHTMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

#include "dht/dhtkey.h"
#include "dht/dhtrec.h"
#include "lib/buf.h"

struct identity;

#define DHTMSG_VERSION    1
#define DHTMSG_HOPS_MAX   64
#define DHTMSG_HELO_MAX   1024
#define DHTMSG_FIND_MAX   32
#define DHTMSG_REPL_MAX   16
#define DHTMSG_BLOCK_MAX  (4u * 1024 * 1024)
#define DHTMSG_RECORDS_MAX 64 /* records in one RECORDS answer */
/* PUT, RPUT (RGET: answer here); do not route it on. */
#define DHTMSG_F_REPLICA  0x01
/* PUT, RPUT, RGET: as REPLICA if among the closest here, else route it
 * on. */
#define DHTMSG_F_CANDIDATE  0x02
#define DHTMSG_F_ROUTED   0x01 /* answer: going back hop by hop */
#define DHTMSG_REQ_FIXED  78
#define DHTMSG_REC_REQ_FIXED 2 /* RGET's tail, RPUT's ahead of its entry */
#define DHTMSG_PUT_FIXED  (2 + 8 + FERRY_PUBKEY_LEN + FERRY_SIG_LEN + 4)
#define DHTMSG_ANS_FIXED  108
#define DHTMSG_RECEIPT_SIZE (8 + 32 + FERRY_PUBKEY_LEN + FERRY_SIG_LEN)
#define DHTMSG_HASH_LEN   32
/* An answer whose body is larger is preceded by an ACK, so that the
 * requester's congestion control times the request, not the answer's
 * transfer (seed 002, section 2.1: small replies ride on the ACK). */
#define DHTMSG_ACK_OVER   4096

/* FAIL's codes. Any other non-zero code is valid on the wire (a relay
 * passes it back as it is, a requester takes it as a refusal), so that
 * codes can be added without older peers dropping the answers. */
enum dhtmsg_fail {
	DHTMSG_NOT_FOUND = 1, /* GET: no peer on the way holds the block */
	DHTMSG_NO_ROUTE,      /* no hop could take the request further */
	DHTMSG_QUOTA,         /* PUT: the storing peer is full */
	DHTMSG_RATE,          /* a hop's neighbour is over its REQUEST_RATE
			       * there */
	DHTMSG_REFUSED,       /* bad signature, wrong hash, expired */
	DHTMSG_ORIGIN_QUOTA,  /* PUT: its signer is over its ORIGIN_QUOTA at
			       * the storing peer */
	DHTMSG_STALE,         /* RPUT: the storing peer holds a record of
			       * that signer at least as new */
	DHTMSG_BUSY,          /* a hop's queue toward its next hop was at
			       * its bound (BPCC): the request went no
			       * further, and may pass if sent again a
			       * little later */
	DHTMSG_STORE_FAILED,  /* PUT: the storing peer's disk did not
			       * take the block (not for space: an I/O
			       * error, a read-only disk) */
};

/* The signed part of a PUT. */
struct dhtmsg_put {
	uint8_t replication; /* storing peers wanted */
	uint64_t expiry;     /* seconds since the epoch */
	uint8_t origin_pk[FERRY_PUBKEY_LEN];
	uint8_t sig[FERRY_SIG_LEN];
	const uint8_t *block; /* borrowed */
	size_t block_len;
};

struct dhtmsg_req {
	uint16_t type; /* FERRY_MSG_DHT_PUT, _GET, _FIND, _RPUT or _RGET */
	uint8_t flags;
	uint8_t hops_left;
	uint8_t hops;
	uint64_t req_id;
	struct dhtkey key;
	struct dhtkey requester;
	const uint8_t *helo; /* borrowed */
	size_t helo_len;
	uint16_t want;         /* FIND */
	struct dhtmsg_put put; /* PUT */
	uint8_t replication;   /* RPUT, RGET: storing peers wanted */
	struct dhtrec rec;     /* RPUT: topic is key; value borrowed */
};

struct dhtmsg_receipt {
	uint64_t expiry;
	uint8_t put_hash[DHTMSG_HASH_LEN];
	uint8_t storer_pk[FERRY_PUBKEY_LEN];
	uint8_t sig[FERRY_SIG_LEN];
};

struct dhtmsg_ans {
	uint16_t type; /* FERRY_MSG_DHT_RECEIPT, _BLOCK, _NODES, _FAIL,
			* _ACK or _RECORDS */
	uint8_t flags;
	uint8_t hops_left;
	uint8_t hops;
	uint64_t req_id;
	struct dhtkey key;
	struct dhtkey requester;
	struct dhtkey responder;
	struct dhtmsg_receipt receipt; /* RECEIPT */
	const uint8_t *block;          /* BLOCK, borrowed */
	size_t block_len;
	uint16_t count;                /* NODES, RECORDS: entries */
	const uint8_t *nodes;          /* NODES: their bytes, borrowed */
	size_t nodes_len;
	const uint8_t *records;        /* RECORDS: their bytes, borrowed */
	size_t records_len;
	uint16_t code;                 /* FAIL: enum dhtmsg_fail */
};

/* One entry of a NODES answer, as dhtmsg_nodes_next() yields it. */
struct dhtmsg_node {
	struct dhtkey id;
	const uint8_t *helo; /* borrowed */
	size_t helo_len;
};

/* True for the request and answer types. */
bool dhtmsg_is_request(uint16_t type);
bool dhtmsg_is_answer(uint16_t type);

/* Decodes a request body of type. 0 with *ret filled (pointers into
 * body), or -EBADMSG for anything out of its layout or ranges. */
int dhtmsg_req_decode(uint16_t type, const void *body, size_t len,
    struct dhtmsg_req *ret);
/* Appends m's body to out. 0, -EINVAL if a field is out of range, or
 * -ENOMEM. */
int dhtmsg_req_encode(const struct dhtmsg_req *m, struct buf *out);
int dhtmsg_ans_decode(uint16_t type, const void *body, size_t len,
    struct dhtmsg_ans *ret);
int dhtmsg_ans_encode(const struct dhtmsg_ans *m, struct buf *out);

/* Walks a NODES answer: *off starts at 0. 1 with *ret filled, 0 at the
 * end (the decoder checked the layout). */
int dhtmsg_nodes_next(const struct dhtmsg_ans *m, size_t *off,
    struct dhtmsg_node *ret);
/* Appends one NODES entry to out (the caller counts them). */
int dhtmsg_nodes_put(struct buf *out, const struct dhtkey *id,
    const void *helo, size_t helo_len);

/* Walks a RECORDS answer: *off starts at 0. 1 with *ret filled (topic
 * m's key, value borrowed from m), 0 at the end (the decoder checked the
 * layout; signatures are the caller's to check). */
int dhtmsg_records_next(const struct dhtmsg_ans *m, size_t *off,
    struct dhtrec *ret);
/* Appends r's entry to out (the caller counts them). 0, -EINVAL (value
 * too long) or -ENOMEM. */
int dhtmsg_records_put(struct buf *out, const struct dhtrec *r);

/* Signs put (origin_pk and sig are set) for key with ident's key. */
void dhtmsg_put_sign(const struct identity *ident, const struct dhtkey *key,
    struct dhtmsg_put *put);
/* 0 if put's signature is origin_pk's over key and its fields, and key is
 * the hash of its block; else -EBADMSG. */
int dhtmsg_put_verify(const struct dhtkey *key, const struct dhtmsg_put *put);
/* dhtmsg_put_verify() for a key the caller computed from put's block
 * itself: the signature alone. */
int dhtmsg_put_verify_sig(const struct dhtkey *key,
    const struct dhtmsg_put *put);
/* The hash of the signed request that receipts name. */
void dhtmsg_put_hash(const struct dhtkey *key, const struct dhtmsg_put *put,
    uint8_t ret[DHTMSG_HASH_LEN]);
/* Fills a receipt by ident for key, put_hash and expiry. */
void dhtmsg_receipt_sign(const struct identity *ident,
    const struct dhtkey *key, const uint8_t put_hash[DHTMSG_HASH_LEN],
    uint64_t expiry, struct dhtmsg_receipt *ret);
/* 0 if r is storer_pk's signature over key, put_hash and its expiry, and
 * storer_pk's peer id is responder; else -EBADMSG. */
int dhtmsg_receipt_verify(const struct dhtkey *key,
    const struct dhtkey *responder, const uint8_t put_hash[DHTMSG_HASH_LEN],
    const struct dhtmsg_receipt *r);

#endif /* FERRY_DHT_DHTMSG_H */
