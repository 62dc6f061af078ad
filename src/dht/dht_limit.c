/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-neighbour request limits, dht layer: each linked peer that hands
 * us requests has a token bucket of cfg.request_rate a second (bursts of
 * twice that), so that one peer flooding requests is slowed to its share
 * and the others' go on. Keyed by the peer the request came from, which
 * the link authenticates, not by the requester the request names, which
 * anyone can write. At most DHT_LIMIT_PEERS buckets; the least recently
 * used goes when a new peer needs one.
 *
 * And per-origin storage limits: the bytes this node has stored for the
 * key that signed the PUTs, at most cfg.origin_quota, so that one
 * originator cannot fill its store however many neighbours it sends
 * through. The count lives in memory, for at most DHT_LIMIT_PEERS
 * origins (the least recently seen is forgotten): a bound on what one
 * originator takes between restarts, not an account kept for ever.
 */
#include "dht/dht_int.h"

#include <stdlib.h>
#include <string.h>

#include "lib/map.h"
#include "lib/ratelimit.h"

struct dht_limit {
	TAILQ_ENTRY(dht_limit) link; /* d->limits, least recent first */
	struct dhtkey peer;
	struct ratelimit rl;
};

static void
dht_limit_drop(struct dht *d, struct dht_limit *l)
{
	(void)map_remove(d->limit_by_peer, l->peer.b, DHTKEY_LEN);
	TAILQ_REMOVE(&d->limits, l, link);
	d->n_limits--;
	free(l);
}

bool
dht_limit_take(struct dht *d, const struct dhtkey *from)
{
	struct dht_limit *l;

	if (d->cfg.request_rate == 0)
		return true;
	l = map_get(d->limit_by_peer, from->b, DHTKEY_LEN);
	if (l != NULL) {
		TAILQ_REMOVE(&d->limits, l, link);
		TAILQ_INSERT_TAIL(&d->limits, l, link);
		return ratelimit_take(&l->rl, dht_now(d), 1.0);
	}
	if (d->n_limits == DHT_LIMIT_PEERS)
		dht_limit_drop(d, TAILQ_FIRST(&d->limits));
	l = calloc(1, sizeof(*l));
	/* Out of memory: the request goes through unlimited rather than
	 * honest traffic being refused. */
	if (l == NULL)
		return true;
	l->peer = *from;
	ratelimit_init(&l->rl, (double)d->cfg.request_rate,
	    2.0 * (double)d->cfg.request_rate);
	if (map_put(d->limit_by_peer, l->peer.b, DHTKEY_LEN, l) < 0) {
		free(l);
		return true;
	}
	TAILQ_INSERT_TAIL(&d->limits, l, link);
	d->n_limits++;
	return ratelimit_take(&l->rl, dht_now(d), 1.0);
}

struct dht_origin {
	TAILQ_ENTRY(dht_origin) link; /* d->origins, least recent first */
	uint8_t pk[FERRY_PUBKEY_LEN];
	uint64_t bytes;               /* stored for it */
};

static void
dht_origin_drop(struct dht *d, struct dht_origin *o)
{
	(void)map_remove(d->origin_by_pk, o->pk, sizeof(o->pk));
	TAILQ_REMOVE(&d->origins, o, link);
	d->n_origins--;
	free(o);
}

bool
dht_origin_charge(struct dht *d, const uint8_t pk[FERRY_PUBKEY_LEN],
    size_t len)
{
	struct dht_origin *o;

	if (d->cfg.origin_quota == 0)
		return true;
	if (len > d->cfg.origin_quota)
		return false;
	o = map_get(d->origin_by_pk, pk, FERRY_PUBKEY_LEN);
	if (o == NULL) {
		if (d->n_origins == DHT_LIMIT_PEERS)
			dht_origin_drop(d, TAILQ_FIRST(&d->origins));
		o = calloc(1, sizeof(*o));
		if (o == NULL)
			return true; /* as for the request buckets */
		memcpy(o->pk, pk, FERRY_PUBKEY_LEN);
		if (map_put(d->origin_by_pk, o->pk, sizeof(o->pk), o) < 0) {
			free(o);
			return true;
		}
		d->n_origins++;
	} else {
		TAILQ_REMOVE(&d->origins, o, link);
	}
	TAILQ_INSERT_TAIL(&d->origins, o, link);
	if (o->bytes + len > d->cfg.origin_quota)
		return false;
	o->bytes += len;
	return true;
}

void
dht_limit_done(struct dht *d)
{
	while (!TAILQ_EMPTY(&d->limits))
		dht_limit_drop(d, TAILQ_FIRST(&d->limits));
	while (!TAILQ_EMPTY(&d->origins))
		dht_origin_drop(d, TAILQ_FIRST(&d->origins));
}
