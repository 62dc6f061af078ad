/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A test seam of the intermediary (issue 15: "a hostile intermediary, a
 * test build that drops PUTs, or forges receipts"): a test build of the
 * daemon (tests/tools/ferryd_hostile.c) sets it before ferryd_main(), so
 * that the thin client's checks meet the real server misbehaving. ferryd
 * never sets it, and no configuration reaches it; with none set (always,
 * in ferryd) the intermediary is as ferry-intermediary(7) says.
 */
#ifndef FERRY_INTERMEDIARY_IMD_TAMPER_H
#define FERRY_INTERMEDIARY_IMD_TAMPER_H

#include <stdbool.h>
#include <stddef.h>

#include "dht/dht.h"
#include "dht/dhtkey.h"
#include "dht/dhtmsg.h"
#include "intermediary/rqueue.h"

struct imd_tamper {
	/* Before a client's PUT is relayed: false drops it, and the client
	 * is told "relayed" all the same. May be NULL. */
	bool (*relay)(void *cls, const struct dhtmsg_put *put);
	/* Before a relay's end is queued for its client: the n entries (its
	 * receipts, then its DONE) may be rewritten in place; returns how
	 * many of the first are queued, 0 to n. May be NULL. */
	size_t (*queue)(void *cls, struct rqueue_entry *e, size_t n);
	void *cls; /* their first argument */
	/* After relay dropped a PUT: true with *ret filled (status, key and
	 * receipts; receipt[] borrowed until the call returns) to have it
	 * queued for the client as if the DHT had ended the relay so; false
	 * queues nothing. May be NULL. */
	bool (*fake)(void *cls, const struct dhtkey *key,
	    const struct dhtmsg_put *put, struct dht_result *ret);
};

/* Sets the process's tamper (borrowed: it must outlive every
 * intermediary), or NULL for none. Call before the daemon starts. */
void imd_tamper_set(const struct imd_tamper *t);
/* The intermediary's side: true if the PUT is to be relayed (always,
 * without a tamper). */
bool imd_tamper_relay(const struct dhtmsg_put *put);
/* The intermediary's side, for a PUT imd_tamper_relay() dropped: true
 * with *ret the end to queue for it (false, always, without a tamper). */
bool imd_tamper_fake(const struct dhtkey *key, const struct dhtmsg_put *put,
    struct dht_result *ret);
/* The intermediary's side: how many of the n entries to queue, after the
 * tamper rewrote them (n, untouched, without one). */
size_t imd_tamper_queue(struct rqueue_entry *e, size_t n);

#endif /* FERRY_INTERMEDIARY_IMD_TAMPER_H */
