/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The replay cache of client requests, intermediary layer: every (client
 * key, nonce) an authenticated request used, kept until its TIME can no
 * longer pass the clock-skew check, so that a request sent again within
 * its window is refused (401 replayed). Bounded: when the cache is full
 * of entries still in their window, new requests are refused as busy
 * rather than old nonces forgotten, which would let them be replayed.
 */
#ifndef FERRY_INTERMEDIARY_NONCES_H
#define FERRY_INTERMEDIARY_NONCES_H

#include <stddef.h>
#include <stdint.h>

#include "intermediary/imdwire.h"

struct nonces;

/* A cache of at most max entries; NULL on OOM. */
struct nonces *nonces_new(size_t max);
/* NULL is allowed. */
void nonces_free(struct nonces *n);
/* Records client's nonce until now_us + keep_us (monotonic), first
 * forgetting those past their time. 0 when it was new; -EALREADY when
 * it is remembered; -ENOBUFS when the cache is full; -ENOMEM. */
int nonces_add(struct nonces *n, const uint8_t client[IMDWIRE_KEY_LEN],
    const uint8_t nonce[IMDWIRE_NONCE_LEN], uint64_t now_us, uint64_t keep_us);
/* A new bound (entries over it stay until their time). */
void nonces_set_max(struct nonces *n, size_t max);
/* Entries held now. */
size_t nonces_count(const struct nonces *n);

#endif /* FERRY_INTERMEDIARY_NONCES_H */
