/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-neighbour request limits, dht layer: each linked peer that hands
 * us requests has a token bucket of cfg.request_rate a second (bursts of
 * twice that), so that one peer flooding requests is slowed to its share
 * and the others' go on. Keyed by the peer the request came from, which
 * the link authenticates, not by the requester the request names, which
 * anyone can write. At most DHT_LIMIT_PEERS buckets; the least recently
 * used goes when a new peer needs one.
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

void
dht_limit_done(struct dht *d)
{
	while (!TAILQ_EMPTY(&d->limits))
		dht_limit_drop(d, TAILQ_FIRST(&d->limits));
}
