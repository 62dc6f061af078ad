/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Recently seen DHT requests (see pathcache.h), dht layer. */
#include "dht/pathcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "lib/map.h"
#include "lib/wire.h"

#define PATHCACHE_KEY_LEN (DHTKEY_LEN + 8)

struct pathcache_entry {
	TAILQ_ENTRY(pathcache_entry) link; /* oldest first */
	uint8_t key[PATHCACHE_KEY_LEN];    /* requester || req_id */
	struct dhtkey prev;
	bool local; /* this node sent it */
	uint64_t added_us;
};

struct pathcache {
	struct map *map; /* key -> entry */
	TAILQ_HEAD(, pathcache_entry) fifo;
	size_t n, max;
	uint64_t ttl_us;
	uint64_t evicted;
};

struct pathcache *
pathcache_new(size_t max, uint64_t ttl_us)
{
	struct pathcache *pc;

	if (max == 0)
		return NULL;
	pc = calloc(1, sizeof(*pc));
	if (pc == NULL)
		return NULL;
	pc->map = map_new();
	if (pc->map == NULL) {
		free(pc);
		return NULL;
	}
	TAILQ_INIT(&pc->fifo);
	pc->max = max;
	pc->ttl_us = ttl_us;
	return pc;
}

static void
pathcache_drop_oldest(struct pathcache *pc)
{
	struct pathcache_entry *e = TAILQ_FIRST(&pc->fifo);

	TAILQ_REMOVE(&pc->fifo, e, link);
	(void)map_remove(pc->map, e->key, PATHCACHE_KEY_LEN);
	pc->n--;
	free(e);
}

void
pathcache_free(struct pathcache *pc)
{
	if (pc == NULL)
		return;
	while (!TAILQ_EMPTY(&pc->fifo))
		pathcache_drop_oldest(pc);
	map_free(pc->map);
	free(pc);
}

static void
pathcache_key(const struct dhtkey *requester, uint64_t req_id,
    uint8_t key[PATHCACHE_KEY_LEN])
{
	memcpy(key, requester->b, DHTKEY_LEN);
	wire_put64(key + DHTKEY_LEN, req_id);
}

static bool
pathcache_live(const struct pathcache *pc, const struct pathcache_entry *e,
    uint64_t now)
{
	return now < e->added_us + pc->ttl_us;
}

int
pathcache_add(struct pathcache *pc, const struct dhtkey *requester,
    uint64_t req_id, const struct dhtkey *prev, uint64_t now)
{
	uint8_t key[PATHCACHE_KEY_LEN];
	struct pathcache_entry *e;

	pathcache_expire(pc, now);
	pathcache_key(requester, req_id, key);
	if (map_get(pc->map, key, sizeof(key)) != NULL)
		return -EEXIST;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	memcpy(e->key, key, sizeof(key));
	e->local = prev == NULL;
	if (prev != NULL)
		e->prev = *prev;
	e->added_us = now;
	if (map_put(pc->map, e->key, sizeof(e->key), e) < 0) {
		free(e);
		return -ENOMEM;
	}
	if (pc->n == pc->max) {
		pathcache_drop_oldest(pc);
		pc->evicted++;
	}
	TAILQ_INSERT_TAIL(&pc->fifo, e, link);
	pc->n++;
	return 0;
}

int
pathcache_prev(const struct pathcache *pc, const struct dhtkey *requester,
    uint64_t req_id, uint64_t now, struct dhtkey *ret_prev)
{
	uint8_t key[PATHCACHE_KEY_LEN];
	const struct pathcache_entry *e;

	pathcache_key(requester, req_id, key);
	e = map_get(pc->map, key, sizeof(key));
	if (e == NULL || !pathcache_live(pc, e, now))
		return -ENOENT;
	if (e->local)
		return 1;
	*ret_prev = e->prev;
	return 0;
}

void
pathcache_expire(struct pathcache *pc, uint64_t now)
{
	struct pathcache_entry *e;

	/* Same ttl for all: the oldest expire first. */
	while ((e = TAILQ_FIRST(&pc->fifo)) != NULL &&
	    !pathcache_live(pc, e, now))
		pathcache_drop_oldest(pc);
}

size_t
pathcache_size(const struct pathcache *pc)
{
	return pc->n;
}

uint64_t
pathcache_evicted(const struct pathcache *pc)
{
	return pc->evicted;
}
