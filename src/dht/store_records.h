/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The records a storing peer keeps (dhtrec.h), dht layer: a table of
 * their own in the block store's database, written and read on its
 * worker thread through store_job(), so that they survive a restart,
 * reach the disk in the store's group commits, and the event loop never
 * waits on them.
 */
#ifndef FERRY_DHT_STORE_RECORDS_H
#define FERRY_DHT_STORE_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "dht/dhtrec.h"
#include "dht/store.h"

/* Result of store_record_list(): status 0 with the n records (values
 * and all borrowed for the call only), or a negative errno with none. */
typedef void store_records_fn(void *cls, int status, const struct dhtrec *recs,
    size_t n);

/*
 * Keeps a copy of r (signature checked by the caller) under the rule of
 * dhtrec_admit() with the bounds per_topic and total_max, records
 * expired at now (seconds since the epoch) not counting. Returns 0 if
 * queued: cb (not NULL) is then called exactly once on the event loop,
 * never from inside this call, with 0 once r is durable (or the same
 * record was held already), -ESTALE if its signer's record held is as
 * new or newer, -ENOSPC if there is no room (nothing expiring before it
 * to make room), or the store's errors (-EIO, -ENOSPC from a full disk,
 * -ECANCELED). Otherwise returns -EINVAL (a value too long), -EAGAIN or
 * -ENOMEM, and cb is never called.
 */
int store_record_put(struct store *st, const struct dhtrec *r, uint64_t now,
    uint64_t per_topic, uint64_t total_max, store_done_fn *cb, void *cls);

/* The records of topic unexpired at now, at most max, the latest
 * expiring first, to cb (not NULL) as store_record_put's. Returns 0,
 * -EINVAL (max 0), -EAGAIN or -ENOMEM. */
int store_record_list(struct store *st, const struct dhtkey *topic,
    uint64_t now, size_t max, store_records_fn *cb, void *cls);

#endif /* FERRY_DHT_STORE_RECORDS_H */
