/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Application type -> registered clients (see registry.h), service layer.
 * A hash map of small arrays: fan-out walks one array per message.
 */
#include "service/registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/map.h"
#include "lib/wire.h"

struct registry_entry {
	uint8_t key[2];          /* the type, big-endian; the map's key */
	struct client **clients; /* registered, in registration order */
	size_t n, cap;
};

struct registry {
	struct map *map; /* key -> struct registry_entry */
};

struct registry *
registry_new(void)
{
	struct registry *reg = calloc(1, sizeof(*reg));

	if (reg == NULL)
		return NULL;
	reg->map = map_new();
	if (reg->map == NULL) {
		free(reg);
		return NULL;
	}
	return reg;
}

static bool
registry_free_entry(void *cls, const void *key, size_t len, void *value)
{
	struct registry_entry *e = value;

	(void)cls;
	(void)key;
	(void)len;
	free(e->clients);
	free(e);
	return true;
}

void
registry_free(struct registry *reg)
{
	if (reg == NULL)
		return;
	map_foreach(reg->map, registry_free_entry, NULL);
	map_free(reg->map);
	free(reg);
}

static struct registry_entry *
registry_entry_get(const struct registry *reg, uint16_t type)
{
	uint8_t key[2];

	wire_put16(key, type);
	return map_get(reg->map, key, sizeof(key));
}

int
registry_add(struct registry *reg, uint16_t type, struct client *c)
{
	struct registry_entry *e = registry_entry_get(reg, type);

	if (e == NULL) {
		e = calloc(1, sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		wire_put16(e->key, type);
		if (map_put(reg->map, e->key, sizeof(e->key), e) < 0) {
			free(e);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < e->n; i++)
		if (e->clients[i] == c)
			return 0;
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 4;
		struct client **p = realloc(e->clients, cap * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		e->clients = p;
		e->cap = cap;
	}
	e->clients[e->n++] = c;
	return 0;
}

void
registry_remove(struct registry *reg, uint16_t type, struct client *c)
{
	struct registry_entry *e = registry_entry_get(reg, type);

	if (e == NULL)
		return;
	for (size_t i = 0; i < e->n; i++) {
		if (e->clients[i] != c)
			continue;
		memmove(&e->clients[i], &e->clients[i + 1],
		    (e->n - i - 1) * sizeof(e->clients[0]));
		e->n--;
		break;
	}
	if (e->n == 0) {
		(void)map_remove(reg->map, e->key, sizeof(e->key));
		free(e->clients);
		free(e);
	}
}

struct client *const *
registry_lookup(const struct registry *reg, uint16_t type, size_t *ret_n)
{
	struct registry_entry *e = registry_entry_get(reg, type);

	if (e == NULL) {
		*ret_n = 0;
		return NULL;
	}
	*ret_n = e->n;
	return e->clients;
}
