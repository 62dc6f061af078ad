/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary, a role of ferryd for thin clients (issue 15; seed
 * 001, sections IV-V; ferry-intermediary(7)): an HTTPS API on the
 * daemon's event loop that relays PUTs the clients signed into the DHT
 * unchanged (dht_put_signed), fetches blocks for them, and lists the
 * intermediaries it knows. Off unless [intermediary] LISTEN is set. It
 * holds no client's keys: it checks their signatures and relays.
 */
#ifndef FERRY_INTERMEDIARY_IMD_H
#define FERRY_INTERMEDIARY_IMD_H

#include <stddef.h>
#include <stdint.h>

#include "lib/cfg.h"

struct event_base;
struct stats;
struct core;
struct dht;
struct imd;

extern const struct cfg_schema_key imd_cfg_keys[];

/* Judges the [intermediary] section without running anything (files
 * are not read); logs each problem. 0 or -EINVAL. */
int imd_config_check(struct cfg *cfg);
/* Starts the role if [intermediary] LISTEN is set: loads the
 * certificate and key, opens the receipt queue (RQUEUE_DB_FILE in
 * state_dir; this blocks while it checks the database) and listens.
 * *ret is NULL when the role is off.
 * core (borrowed, outlives the intermediary): its identity names the
 * intermediary, and its links carry the federation's messages (the
 * handler of FERRY_MSG_IMD_MIN..MAX is set); dht (borrowed; NULL without
 * the DHT, which the role needs) relays, and announces and finds the
 * other intermediaries. 0, -EINVAL (a problem logged), -EADDRINUSE and
 * the like, -ENOMEM. */
int imd_new(struct event_base *base, struct cfg *cfg, struct stats *stats,
    const char *state_dir, struct core *core, struct dht *dht,
    struct imd **ret);
/* Applies the bounds, rates and timeouts of a checked cfg; LISTEN and
 * the TLS files need a restart (said once in the log). NULL imd: the
 * role is off, and switching it on needs a restart. 0. */
int imd_reload(struct imd *imd, struct cfg *cfg);
/* Closes every connection, then the queue (what it took is written);
 * relays in flight end unheard. NULL is allowed. */
void imd_free(struct imd *imd);

typedef void imd_left_fn(void *cls);
/* Starts leaving, the daemon's first step at SIGTERM: no new
 * connections (those open are served); the other intermediaries told
 * (the announcement withdrawn in the DHT); relays in flight ended, their
 * receipts queued. left(cls) is called from the event loop once both
 * are done or LEAVE_TIMEOUT passed, never from within this call; the
 * caller then frees imd (it may from left). 0; -ENOENT when there is
 * nothing to wait for (LEAVE_TIMEOUT 0); -EALREADY; -ENOMEM. */
int imd_leave(struct imd *imd, imd_left_fn *left, void *cls);

/* One intermediary of the federation this one knows of. */
struct imd_peer {
	uint8_t id[32];   /* its peer id */
	char url[256];    /* its PUBLIC_URL */
	uint64_t expires; /* when its announcement expires, s */
};
/* Learns of another intermediary (its signed DHT announcement, checked
 * by the caller), replacing what was known of it; those past their
 * expiry are forgotten. 0, -EINVAL (a url that is not one), -ENOBUFS
 * (IMD_PEERS_MAX known). */
int imd_peer_learn(struct imd *imd, const struct imd_peer *p);
/* The intermediaries known now, at most max into ret: how many. */
size_t imd_peers_known(struct imd *imd, struct imd_peer *ret, size_t max);
#define IMD_PEERS_MAX 256

#endif /* FERRY_INTERMEDIARY_IMD_H */
