/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's routing table, dht layer: Kademlia k-buckets, one per length
 * of the prefix a peer shares with this node, each with a replacement
 * cache, and a bound on the entries of one network in a bucket so that
 * one host cannot fill a table. Pure bookkeeping: no I/O and no clock of
 * its own (every call that needs the time is given it), so that the
 * daemon, the unit tests and a simulator all run exactly this code.
 */
#ifndef FERRY_DHT_RTABLE_H
#define FERRY_DHT_RTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dht/dhtkey.h"
#include "lib/buf.h"

#define RTABLE_K_MAX       64   /* largest k accepted */
#define RTABLE_HELO_MAX    2048 /* largest HELO set kept for an entry */
#define RTABLE_FILE_MAGIC  0x46525442u /* "FRTB" */
#define RTABLE_FILE_VERSION 1

struct rtable;

/* One known peer. */
struct rtable_entry {
	struct dhtkey id;
	uint64_t last_seen_us; /* when it last answered or asked (caller's
				* clock) */
	uint32_t fails;        /* requests to it unanswered in a row */
	uint64_t net;          /* its network (rtable_net_*), 0: unknown */
	uint8_t *helo;         /* its signed HELOs, owned; may be NULL */
	size_t helo_len;
};

enum rtable_verdict {
	RTABLE_ADDED = 0, /* new in the bucket */
	RTABLE_UPDATED,   /* was there; now the most recently seen */
	RTABLE_CACHED,    /* bucket full: kept as a replacement */
	RTABLE_DIVERSITY, /* its network has its share of the bucket */
	RTABLE_SELF,      /* this node */
	RTABLE_NOMEM,     /* no memory for its bucket: not kept */
};

struct rtable_stats {
	size_t entries;     /* in buckets now */
	size_t cached;      /* in replacement caches now */
	size_t buckets;     /* buckets holding at least one entry */
	uint64_t added;     /* entries ever added */
	uint64_t replaced;  /* dead entries replaced from a cache */
	uint64_t removed;   /* dead entries with no replacement */
	uint64_t diversity; /* refused for their network */
};

typedef void rtable_visit_fn(void *cls, const struct rtable_entry *e);
typedef bool rtable_match_fn(void *cls, const struct rtable_entry *e);

/* A table for self with buckets of k entries (1 to RTABLE_K_MAX) and at
 * most per_net entries of one network in a bucket (0: no bound). NULL on
 * OOM or a bad k. */
struct rtable *rtable_new(const struct dhtkey *self, unsigned k,
    unsigned per_net);
void rtable_free(struct rtable *rt);

/* id asked or answered at now; net tags its network (0: unknown, never
 * bounded). Adds it, refreshes it or caches it as a replacement. */
enum rtable_verdict rtable_seen(struct rtable *rt, const struct dhtkey *id,
    uint64_t net, uint64_t now);
/* A request to id went unanswered. Once it has failed max_fails times
 * in a row it leaves its bucket and the most recently seen replacement
 * takes its place. True if it left. */
bool rtable_failed(struct rtable *rt, const struct dhtkey *id,
    unsigned max_fails);
/* Forgets id wherever it is (a replacement moves up). */
void rtable_remove(struct rtable *rt, const struct dhtkey *id);
/* True if id has a place in its bucket, or there is room for it there
 * now (the bound on networks aside, as id's is not known yet): a peer
 * worth a link. */
bool rtable_has_room(const struct rtable *rt, const struct dhtkey *id);
/* True if the table holds every peer it has been told of that may be
 * closer to key than this node: no bucket from key's on toward this
 * node's id is full (a full one may have parked such peers in its
 * replacement cache). What it cannot tell: peers nobody told it of, or
 * turned away for their network (per_net). */
bool rtable_knows_near(const struct rtable *rt, const struct dhtkey *key);
/* The entry of id in a bucket (not the caches), or NULL. Valid until the
 * next call that changes the table. */
const struct rtable_entry *rtable_get(const struct rtable *rt,
    const struct dhtkey *id);
/* Keeps a copy of id's signed HELOs with its entry or replacement (to
 * hand on in FIND answers and to persist). 0, -ENOENT if not known,
 * -EMSGSIZE above RTABLE_HELO_MAX, -ENOMEM. */
int rtable_set_helo(struct rtable *rt, const struct dhtkey *id,
    const void *helo, size_t len);

/* Writes up to n bucket entries closest to key, closest first, into
 * ret; returns how many. */
size_t rtable_closest(const struct rtable *rt, const struct dhtkey *key,
    size_t n, const struct rtable_entry **ret);
/* The bucket entry closest to key for which match (may be NULL: any)
 * is true, or NULL; with closer_only, among the entries closer to key
 * than this node only. Buckets are visited in the order of their
 * entries' distance to key and the walk stops at the first bucket with
 * a match: it costs O(k) calls of match per bucket visited, and sorts
 * nothing (for the hop of each request, where rtable_closest would sort
 * the whole table). */
const struct rtable_entry *rtable_closest_match(const struct rtable *rt,
    const struct dhtkey *key, bool closer_only, rtable_match_fn *match,
    void *cls);
/* Visits every bucket entry, nearest bucket last. */
void rtable_foreach(const struct rtable *rt, rtable_visit_fn *fn,
    void *cls);
void rtable_get_stats(const struct rtable *rt, struct rtable_stats *ret);
/* The table's k and self. */
unsigned rtable_k(const struct rtable *rt);
const struct dhtkey *rtable_self(const struct rtable *rt);

/* A lookup for a key in bucket prefix happened at now. */
void rtable_touch(struct rtable *rt, unsigned prefix, uint64_t now);
/* A bucket not looked into since before now - interval_us, among those
 * up to one past the deepest non-empty bucket (the ones a lookup can
 * fill): 0 with its prefix in *ret_prefix, or -ENOENT. */
int rtable_stale_bucket(const struct rtable *rt, uint64_t now,
    uint64_t interval_us, unsigned *ret_prefix);

/* The network of an IPv4 address (its /24) or an IPv6 one (its /48),
 * given as the bytes of the address; 0 for any other length. */
uint64_t rtable_net_of(const uint8_t *addr, size_t len);

/*
 * The file form of a table, for restarts:
 *   u32 magic "FRTB"  u16 version  u16 reserved (0)  u8 self[32]
 *   u32 count, then count times:
 *     u8 id[32]  u64 net  u16 helo_len  u8 helo[helo_len]
 * All big-endian. Appends it to out. 0 or -ENOMEM.
 */
int rtable_encode(const struct rtable *rt, struct buf *out);
/* Adds the entries of a file form to rt (each as if seen at now, so
 * that the bucket and network bounds hold). -EBADMSG for a malformed
 * file (nothing added), -ESTALE for another node's table (nothing
 * added), -ENOMEM. */
int rtable_decode(struct rtable *rt, const void *data, size_t len,
    uint64_t now);

#endif /* FERRY_DHT_RTABLE_H */
