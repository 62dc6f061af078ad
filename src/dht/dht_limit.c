/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-neighbour request limits, dht layer: each linked peer that hands
 * us requests has a token bucket of cfg.request_rate a second (bursts of
 * twice that), so that one peer flooding requests is slowed to its share
 * and the others' go on; a request over it is answered with a FAIL
 * (rate) so that its requester hears of it at once, and those FAILs
 * have an allowance of their own, a DHT_FAIL_SHARE-th of the requests',
 * so that a flood is not answered in kind. Keyed by the peer the
 * request came from, which
 * the link authenticates, not by the requester the request names, which
 * anyone can write.
 *
 * And per-origin storage limits: the bytes this node has stored for the
 * key that signed the PUTs, at most cfg.origin_quota, so that one
 * originator cannot fill its store however many neighbours it sends
 * through. The count lives in memory: a bound on what one originator
 * takes between restarts, not an account kept for ever.
 *
 * Both are records of one kind of table, an LRU keyed by 32 bytes (a
 * peer id, a signer's public key) of at most DHT_LIMIT_PEERS records:
 * the least recently used goes when a new key needs one, so that
 * neither can grow without bound however many keys a flood invents.
 */
#include "dht/dht_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/map.h"
#include "lib/ratelimit.h"

_Static_assert(FERRY_PUBKEY_LEN == DHTKEY_LEN,
    "signer keys and peer ids key the same table");

/* One record: a neighbour's buckets or a signer's bytes. */
struct dht_lru_rec {
	TAILQ_ENTRY(dht_lru_rec) link; /* lru->recs, least recent first */
	uint8_t key[DHTKEY_LEN];
	union {
		struct {
			struct ratelimit requests; /* taken */
			struct ratelimit fails;    /* FAILs for the rest */
		} peer;         /* a neighbour's */
		uint64_t bytes; /* a signer's: bytes stored for it */
	} u;
};

struct dht_lru {
	TAILQ_HEAD(, dht_lru_rec) recs;
	struct map *by_key; /* key -> record */
	size_t n;
};

static struct dht_lru *
dht_lru_new(void)
{
	struct dht_lru *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	TAILQ_INIT(&l->recs);
	l->by_key = map_new();
	if (l->by_key == NULL) {
		free(l);
		return NULL;
	}
	return l;
}

static void
dht_lru_drop(struct dht_lru *l, struct dht_lru_rec *r)
{
	(void)map_remove(l->by_key, r->key, sizeof(r->key));
	TAILQ_REMOVE(&l->recs, r, link);
	l->n--;
	free(r);
}

static void
dht_lru_free(struct dht_lru *l)
{
	if (l == NULL)
		return;
	while (!TAILQ_EMPTY(&l->recs))
		dht_lru_drop(l, TAILQ_FIRST(&l->recs));
	map_free(l->by_key);
	free(l);
}

/* The record of key, made the most recently used; a new one (zeroed,
 * *ret_new set) if there was none, in place of the least recently used
 * when the table is full. NULL on OOM. */
static struct dht_lru_rec *
dht_lru_use(struct dht_lru *l, const uint8_t key[DHTKEY_LEN], bool *ret_new)
{
	struct dht_lru_rec *r = map_get(l->by_key, key, DHTKEY_LEN);

	*ret_new = r == NULL;
	if (r != NULL) {
		TAILQ_REMOVE(&l->recs, r, link);
		TAILQ_INSERT_TAIL(&l->recs, r, link);
		return r;
	}
	if (l->n == DHT_LIMIT_PEERS)
		dht_lru_drop(l, TAILQ_FIRST(&l->recs));
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	memcpy(r->key, key, DHTKEY_LEN);
	if (map_put(l->by_key, r->key, sizeof(r->key), r) < 0) {
		free(r);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&l->recs, r, link);
	l->n++;
	return r;
}

int
dht_limit_init(struct dht *d)
{
	d->peers = dht_lru_new();
	d->origins = dht_lru_new();
	return d->peers != NULL && d->origins != NULL ? 0 : -ENOMEM;
}

void
dht_limit_done(struct dht *d)
{
	dht_lru_free(d->peers);
	dht_lru_free(d->origins);
	d->peers = d->origins = NULL;
}

enum dht_limit_verdict
dht_limit_take(struct dht *d, const struct dhtkey *from)
{
	double rate = (double)d->cfg.request_rate, fails;
	struct dht_lru_rec *r;
	uint64_t now;
	bool fresh;

	if (d->cfg.request_rate == 0)
		return DHT_LIMIT_TAKEN;
	r = dht_lru_use(d->peers, from->b, &fresh);
	/* Out of memory: the request goes through unlimited rather than
	 * honest traffic being refused. */
	if (r == NULL)
		return DHT_LIMIT_TAKEN;
	/* New, or made before a reload changed REQUEST_RATE. */
	if (fresh || r->u.peer.requests.rate != rate) {
		fails = rate / DHT_FAIL_SHARE < 1.0 ? 1.0
						    : rate / DHT_FAIL_SHARE;
		ratelimit_init(&r->u.peer.requests, rate, 2.0 * rate);
		ratelimit_init(&r->u.peer.fails, fails, fails);
	}
	now = dht_now(d);
	if (ratelimit_take(&r->u.peer.requests, now, 1.0))
		return DHT_LIMIT_TAKEN;
	/* A flood is not answered in kind: FAILs have an allowance of
	 * their own, a fraction of the requests'. */
	return ratelimit_take(&r->u.peer.fails, now, 1.0) ? DHT_LIMIT_FAIL
							  : DHT_LIMIT_DROP;
}

bool
dht_origin_charge(struct dht *d, const uint8_t pk[FERRY_PUBKEY_LEN],
    size_t len)
{
	struct dht_lru_rec *r;
	bool fresh;

	if (d->cfg.origin_quota == 0)
		return true;
	if (len > d->cfg.origin_quota)
		return false;
	r = dht_lru_use(d->origins, pk, &fresh);
	if (r == NULL)
		return true; /* as for the request buckets */
	if (r->u.bytes + len > d->cfg.origin_quota)
		return false;
	r->u.bytes += len;
	return true;
}
