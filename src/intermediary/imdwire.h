/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The wire between a thin client and an intermediary that both ends
 * encode (ferry-intermediary(7)): the upload records of POST /v1/blocks
 * (UPLOAD) and the Authorization header (AUTHENTICATION). Built once, in
 * ferry_codec, for ferryd's intermediary and for the thin client
 * (src/remote), so that one codec, tested against the page, speaks it.
 * Pure; fuzz targets fuzz_putrec and fuzz_auth.
 */
#ifndef FERRY_INTERMEDIARY_IMDWIRE_H
#define FERRY_INTERMEDIARY_IMDWIRE_H

#include <stddef.h>
#include <stdint.h>

struct dhtmsg_put;
struct identity;

/* --- upload records ------------------------------------------------- */

/*
 * The body of POST /v1/blocks is a sequence of
 *    0 u32 len          bytes after this field: 74 + block_len
 *    4 u8  version      IMDWIRE_PUT_VERSION
 *    5 u8  replication
 *    6 u64 expiry
 *   14 u8  sig[64]      the client's DHT PUT signature (dhtmsg_put_sign())
 *   78 u8  block[block_len]
 * origin_pk is not in the record: it is the Authorization header's key.
 * A reader judges a record from its first four bytes (imdwire_put_size())
 * before it waits for the rest, so that a hostile length never makes it
 * buffer one.
 */
#define IMDWIRE_PUT_VERSION 1
#define IMDWIRE_PUT_HEAD    78 /* bytes before the block */

/* The whole size (4 + len) of the record that starts data (len bytes
 * at hand) into *ret_total: 0; -EAGAIN when fewer than 4 bytes are at
 * hand; -EBADMSG for a len under 75; -EMSGSIZE for one over 74 +
 * max_block. */
int imdwire_put_size(const uint8_t *data, size_t len, size_t max_block,
    size_t *ret_total);
/* Decodes the one whole record data is (len its total size) into put:
 * replication as sent (the caller checks its range), expiry, sig, and
 * block pointing into data; origin_pk is left as it was. 0; -EBADMSG for
 * a version other than IMDWIRE_PUT_VERSION or a size imdwire_put_size()
 * refuses or len is not; -EMSGSIZE as it. */
int imdwire_put_decode(const uint8_t *data, size_t len, size_t max_block,
    struct dhtmsg_put *put);
/* Writes the IMDWIRE_PUT_HEAD bytes that go before put's block (its
 * block_len, replication, expiry and sig) into out. */
void imdwire_put_head(const struct dhtmsg_put *put,
    uint8_t out[IMDWIRE_PUT_HEAD]);

/* --- the Authorization header --------------------------------------- */

/*
 *    Authorization: Ferry CLIENT:TIME:NONCE:SIG
 * in base32 but TIME (decimal seconds), and SIG the client key's Ed25519
 * signature over
 *    "ferry intermediary request v1" NUL || intermediary[32] || method ||
 *    NUL || target || NUL || u64 time || nonce[16]
 * so that it binds one intermediary, request, moment and nonce. The time
 * window and the replay cache are the server's (nonces.h).
 */
#define IMDWIRE_AUTH_PREFIX "ferry intermediary request v1"
#define IMDWIRE_KEY_LEN     32 /* the client's Ed25519 key */
#define IMDWIRE_NONCE_LEN   16
#define IMDWIRE_SIG_LEN     64
#define IMDWIRE_ID_LEN      32 /* the intermediary's peer id */
/* The longest header value, "Ferry " and the four fields (TIME at most
 * 20 digits), with its NUL. */
#define IMDWIRE_AUTH_MAX    (sizeof("Ferry ") + 52 + 1 + 20 + 1 + 26 + 1 + 103)

struct imdwire_auth {
	uint8_t client[IMDWIRE_KEY_LEN]; /* the client's Ed25519 key */
	uint64_t time;                   /* the client's clock, s */
	uint8_t nonce[IMDWIRE_NONCE_LEN];
	uint8_t sig[IMDWIRE_SIG_LEN];
};

/* Parses the header's value (len bytes). 0 or -EBADMSG. */
int imdwire_auth_parse(const char *value, size_t len, struct imdwire_auth *ret);
/* Writes a's header value, NUL-terminated, into buf (size at least
 * IMDWIRE_AUTH_MAX for any a). 0 or -ENOSPC. */
int imdwire_auth_format(const struct imdwire_auth *a, char *buf, size_t size);
/* Signs, as key, the request method target (path and query exactly as
 * sent) to intermediary id at time with nonce, into *ret. 0; -EINVAL
 * for an empty method or target; -ENOMEM. */
int imdwire_auth_sign(const struct identity *key,
    const uint8_t id[IMDWIRE_ID_LEN], const char *method, const char *target,
    uint64_t time, const uint8_t nonce[IMDWIRE_NONCE_LEN],
    struct imdwire_auth *ret);
/* 0 if a's signature is its client's over the request (method and
 * target as sent) to the intermediary id; -EBADMSG if not; -ENOMEM. */
int imdwire_auth_verify(const struct imdwire_auth *a,
    const uint8_t id[IMDWIRE_ID_LEN], const char *method, const char *target);

#endif /* FERRY_INTERMEDIARY_IMDWIRE_H */
