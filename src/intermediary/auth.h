/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A request's Authorization header, intermediary layer
 * (ferry-intermediary(7), AUTHENTICATION):
 *    Authorization: Ferry CLIENT:TIME:NONCE:SIG
 * and the signature it carries, Ed25519 by the client key over
 *    "ferry intermediary request v1" NUL || intermediary[32] || method ||
 *    NUL || target || NUL || u64 time || nonce[16].
 * Parsing is pure (fuzz target fuzz_auth); the time window and the
 * replay cache are the caller's (nonces.h), in the order the page gives.
 */
#ifndef FERRY_INTERMEDIARY_AUTH_H
#define FERRY_INTERMEDIARY_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define AUTH_PREFIX    "ferry intermediary request v1"
#define AUTH_KEY_LEN   32
#define AUTH_NONCE_LEN 16
#define AUTH_SIG_LEN   64
#define AUTH_ID_LEN    32 /* the intermediary's peer id */

struct auth {
	uint8_t client[AUTH_KEY_LEN]; /* the client's Ed25519 key */
	uint64_t time;                /* the client's clock, s */
	uint8_t nonce[AUTH_NONCE_LEN];
	uint8_t sig[AUTH_SIG_LEN];
};

/* Parses the header's value (len bytes). 0 or -EBADMSG. */
int auth_parse(const char *value, size_t len, struct auth *ret);
/* 0 if a's signature is its client's over the request (method and
 * target as sent) to the intermediary id; -EBADMSG if not; -ENOMEM. */
int auth_verify(const struct auth *a, const uint8_t id[AUTH_ID_LEN],
    const char *method, const char *target);

#endif /* FERRY_INTERMEDIARY_AUTH_H */
