/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The requests a node has seen lately, dht layer: a request seen before
 * (a duplicate, or one that went round a loop) is dropped, and an answer
 * travelling back finds the hop its request came from. Entries live for
 * a fixed time, and the oldest goes first when the cache is full, so
 * that a flood of requests costs bounded memory. Pure bookkeeping with
 * the caller's clock.
 */
#ifndef FERRY_DHT_PATHCACHE_H
#define FERRY_DHT_PATHCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dht/dhtkey.h"

struct pathcache;

/* At most max entries, each kept ttl_us. NULL on OOM or max 0. */
struct pathcache *pathcache_new(size_t max, uint64_t ttl_us);
void pathcache_free(struct pathcache *pc);

/* Notes request (requester, req_id), which came from prev (NULL: this
 * node sent it), at now. 0 if new; -EEXIST if seen within ttl (nothing
 * changes); -ENOMEM. */
int pathcache_add(struct pathcache *pc, const struct dhtkey *requester,
    uint64_t req_id, const struct dhtkey *prev, uint64_t now);
/* Where an answer to (requester, req_id) goes back to: 0 with the hop in
 * *ret_prev, 1 if this node sent the request, -ENOENT if unknown or
 * expired. */
int pathcache_prev(const struct pathcache *pc,
    const struct dhtkey *requester, uint64_t req_id, uint64_t now,
    struct dhtkey *ret_prev);
/* Drops entries older than ttl. */
void pathcache_expire(struct pathcache *pc, uint64_t now);
size_t pathcache_size(const struct pathcache *pc);
/* Entries pushed out by a full cache before their time, ever. */
uint64_t pathcache_evicted(const struct pathcache *pc);

#endif /* FERRY_DHT_PATHCACHE_H */
