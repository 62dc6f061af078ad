/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The replay cache of client requests (nonces.h), intermediary layer.
 * Entries are kept in the order they came, each for the same keep_us,
 * so the oldest is always the first to go. */
#include "intermediary/nonces.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "lib/map.h"

struct nonce_entry {
	uint8_t key[IMDWIRE_KEY_LEN + IMDWIRE_NONCE_LEN]; /* client || nonce */
	uint64_t until_us;
	TAILQ_ENTRY(nonce_entry) link;
};

struct nonces {
	struct map *map; /* key -> entry */
	TAILQ_HEAD(, nonce_entry) fifo;
	size_t n, max;
};

struct nonces *
nonces_new(size_t max)
{
	struct nonces *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return NULL;
	n->map = map_new();
	if (n->map == NULL) {
		free(n);
		return NULL;
	}
	TAILQ_INIT(&n->fifo);
	n->max = max;
	return n;
}

static void
nonces_drop(struct nonces *n, struct nonce_entry *e)
{
	(void)map_remove(n->map, e->key, sizeof(e->key));
	TAILQ_REMOVE(&n->fifo, e, link);
	free(e);
	n->n--;
}

void
nonces_free(struct nonces *n)
{
	struct nonce_entry *e;

	if (n == NULL)
		return;
	while ((e = TAILQ_FIRST(&n->fifo)) != NULL)
		nonces_drop(n, e);
	map_free(n->map);
	free(n);
}

int
nonces_add(struct nonces *n, const uint8_t client[IMDWIRE_KEY_LEN],
    const uint8_t nonce[IMDWIRE_NONCE_LEN], uint64_t now_us, uint64_t keep_us)
{
	uint8_t key[IMDWIRE_KEY_LEN + IMDWIRE_NONCE_LEN];
	struct nonce_entry *e;

	while ((e = TAILQ_FIRST(&n->fifo)) != NULL && e->until_us <= now_us)
		nonces_drop(n, e);
	memcpy(key, client, IMDWIRE_KEY_LEN);
	memcpy(key + IMDWIRE_KEY_LEN, nonce, IMDWIRE_NONCE_LEN);
	if (map_get(n->map, key, sizeof(key)) != NULL)
		return -EALREADY;
	if (n->n >= n->max)
		return -ENOBUFS;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	memcpy(e->key, key, sizeof(key));
	e->until_us = now_us + keep_us;
	if (map_put(n->map, e->key, sizeof(e->key), e) < 0) {
		free(e);
		return -ENOMEM;
	}
	TAILQ_INSERT_TAIL(&n->fifo, e, link);
	n->n++;
	return 0;
}

size_t
nonces_count(const struct nonces *n)
{
	return n->n;
}

void
nonces_set_max(struct nonces *n, size_t max)
{
	n->max = max;
}
