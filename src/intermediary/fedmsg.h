/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The federation's formats, intermediary layer (issue 15; ferry-protocol(7)
 * "INTERMEDIARY MESSAGES"): an intermediary's announcement, the value of
 * its DHT record at FEDMSG_TOPIC, and the inner messages intermediaries
 * send each other over their encrypted links to forward a client's
 * queued receipts to the intermediary the client now takes them at:
 *
 * Announcement (a record's value):
 *    0 u8  version      1
 *    1 u8  url_len      1..255
 *    2 u8  url[url_len] its PUBLIC_URL
 *      u8  helos[]      its signed HELOs, back to back (may be none)
 * HERE (0x0301): a client takes its receipts at the sender
 *    0 u8  version      1
 *    1 u8  reserved     0
 *    2 u16 target_len   1..FEDMSG_TARGET_MAX
 *    4 u8  client[32]   and the client's Authorization of that take:
 *   36 u64 time
 *   44 u8  nonce[16]
 *   60 u8  sig[64]      over the sender's id, "GET" and target
 *  124 u8  target[target_len]  printable ASCII, starting /v1/receipts
 * ENTRIES (0x0302): receipts queued for a client, sender's cursors
 *    0 u8  version      1
 *    1 u8  reserved     0
 *    2 u16 n            1..FEDMSG_ENTRIES_MAX
 *    4 u8  client[32]
 *   36 receipts[n], FEDMSG_ENTRY_LEN each, cursors growing:
 *      0 u64 cursor  8 u8 key[32]  40 u8 put_hash[32]
 *     72 u8 storer[32]  104 u64 expiry  112 u8 sig[64]
 *   (the ends of relays, the sender's word on its own relays, are not
 *   forwarded)
 * ACK (0x0303): the entries up to cursor are held by the sender
 *    0 u8  version      1
 *    1 u8  status       FEDMSG_ACK_*
 *    2 u16 reserved     0
 *    4 u8  client[32]
 *   36 u64 cursor
 * Pure: the fuzz target fuzz_fedmsg and the test vectors run it.
 */
#ifndef FERRY_INTERMEDIARY_FEDMSG_H
#define FERRY_INTERMEDIARY_FEDMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "intermediary/imdwire.h"
#include "intermediary/rqueue.h"

/* BLAKE2b-256 of this string is the topic intermediaries announce at. */
#define FEDMSG_TOPIC_NAME   "ferry intermediaries v1"
#define FEDMSG_VERSION      1
#define FEDMSG_URL_MAX      255
#define FEDMSG_TARGET_MAX   512
#define FEDMSG_HERE_FIXED   124
#define FEDMSG_ENTRIES_MAX  64
#define FEDMSG_ENTRY_LEN    176
#define FEDMSG_ENTRIES_HEAD 36
#define FEDMSG_ENTRIES_SIZE_MAX                                                \
	(FEDMSG_ENTRIES_HEAD + FEDMSG_ENTRIES_MAX * FEDMSG_ENTRY_LEN)
#define FEDMSG_ACK_LEN 44

/* An ACK's status. */
enum fedmsg_ack_status {
	FEDMSG_ACK_HELD = 0,     /* durable up to cursor */
	FEDMSG_ACK_FULL = 1,     /* the client's queue here is full */
	FEDMSG_ACK_FAILED = 2,   /* our disk failed; try again later */
	FEDMSG_ACK_UNWANTED = 3, /* no take of that client here: stop */
	FEDMSG_ACK_STATUS_MAX = 3,
};

struct fedmsg_announce {
	char url[FEDMSG_URL_MAX + 1]; /* NUL-terminated */
	const uint8_t *helos;         /* into the value; NULL if none */
	size_t helos_len;
};

struct fedmsg_here {
	struct imdwire_auth auth;           /* the client's, as it signed */
	char target[FEDMSG_TARGET_MAX + 1]; /* NUL-terminated */
};

struct fedmsg_ack {
	enum fedmsg_ack_status status;
	uint8_t client[IMDWIRE_KEY_LEN];
	uint64_t cursor;
};

/* The topic, BLAKE2b-256 of FEDMSG_TOPIC_NAME. */
void fedmsg_topic(uint8_t ret[32]);

/* Writes an announcement of url (1..FEDMSG_URL_MAX bytes) with as many
 * whole HELOs of helos (back to back, as the core gives them) as fit in
 * size bytes; its length, or -EINVAL (url) or -EMSGSIZE (no room for
 * the url). */
int fedmsg_announce_encode(const char *url, const uint8_t *helos,
    size_t helos_len, uint8_t *buf, size_t size);
/* 0 with *ret (helos into p), or -EBADMSG: a version not 1, a url of no
 * bytes, past the end, or not printable ASCII without quote or
 * backslash, a HELO cut short. The HELOs themselves are the core's to
 * check. */
int fedmsg_announce_decode(const uint8_t *p, size_t len,
    struct fedmsg_announce *ret);

/* HERE's length for h, and its bytes (at most FEDMSG_HERE_FIXED +
 * FEDMSG_TARGET_MAX) at p. */
size_t fedmsg_here_encode(const struct fedmsg_here *h, uint8_t *p);
/* 0 or -EBADMSG (see the layout; the signature is not checked). */
int fedmsg_here_decode(const uint8_t *p, size_t len, struct fedmsg_here *ret);

/* ENTRIES of n (1..FEDMSG_ENTRIES_MAX) receipts e (RQUEUE_RECEIPT
 * entries) for client, cursors being e's; its length. */
size_t fedmsg_entries_encode(const uint8_t client[IMDWIRE_KEY_LEN],
    const struct rqueue_entry *e, size_t n, uint8_t *p);
/* Decodes ENTRIES into ret (room for FEDMSG_ENTRIES_MAX), n in *ret_n:
 * 0 or -EBADMSG (a length that is not the one n gives, a cursor 0, over
 * INT64_MAX or not above the one before). Receipts' signatures are not
 * checked. */
int fedmsg_entries_decode(const uint8_t *p, size_t len,
    uint8_t ret_client[IMDWIRE_KEY_LEN], struct rqueue_entry *ret,
    size_t *ret_n);

void fedmsg_ack_encode(const struct fedmsg_ack *a, uint8_t p[FEDMSG_ACK_LEN]);
int fedmsg_ack_decode(const uint8_t *p, size_t len, struct fedmsg_ack *ret);

#endif /* FERRY_INTERMEDIARY_FEDMSG_H */
