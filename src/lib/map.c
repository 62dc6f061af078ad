/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Hash map (see map.h), layer 0: open addressing with linear probing and
 * backward-shift deletion, so there are no tombstones to clean up.
 */
#include "lib/map.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

struct map_slot {
	uint64_t hash;	 /* 0 marks an empty slot */
	const void *key; /* borrowed */
	size_t len;
	void *value;
};

struct map {
	struct map_slot *slots;
	size_t cap; /* power of two */
	size_t n;
	uint8_t sipkey[crypto_shorthash_KEYBYTES];
};

static uint64_t
map_hash(const struct map *m, const void *key, size_t len)
{
	uint8_t out[crypto_shorthash_BYTES];
	uint64_t h;

	(void)crypto_shorthash(out, key, len, m->sipkey);
	memcpy(&h, out, sizeof(h));
	return h != 0 ? h : 1;
}

struct map *
map_new(void)
{
	struct map *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	m->cap = 16;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (m->slots == NULL) {
		free(m);
		return NULL;
	}
	randombytes_buf(m->sipkey, sizeof(m->sipkey));
	return m;
}

void
map_free(struct map *m)
{
	if (m == NULL)
		return;
	free(m->slots);
	free(m);
}

static struct map_slot *
map_find(const struct map *m, uint64_t h, const void *key, size_t len)
{
	size_t mask = m->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct map_slot *s = &m->slots[i];

		if (s->hash == 0)
			return s;
		if (s->hash == h && s->len == len &&
		    memcmp(s->key, key, len) == 0)
			return s;
	}
}

static int
map_grow(struct map *m)
{
	struct map_slot *old = m->slots;
	size_t oldcap = m->cap;
	struct map_slot *slots = calloc(oldcap * 2, sizeof(*slots));

	if (slots == NULL)
		return -ENOMEM;
	m->slots = slots;
	m->cap = oldcap * 2;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].hash != 0)
			*map_find(m, old[i].hash, old[i].key, old[i].len) =
			    old[i];
	free(old);
	return 0;
}

int
map_put(struct map *m, const void *key, size_t len, void *value)
{
	uint64_t h = map_hash(m, key, len);
	struct map_slot *s = map_find(m, h, key, len);

	if (s->hash != 0) {
		s->key = key;
		s->value = value;
		return 0;
	}
	/* Keep the load under 1/2 so probe runs stay short. */
	if ((m->n + 1) * 2 > m->cap) {
		if (map_grow(m) < 0)
			return -ENOMEM;
		s = map_find(m, h, key, len);
	}
	s->hash = h;
	s->key = key;
	s->len = len;
	s->value = value;
	m->n++;
	return 0;
}

void *
map_get(const struct map *m, const void *key, size_t len)
{
	struct map_slot *s = map_find(m, map_hash(m, key, len), key, len);

	return s->hash != 0 ? s->value : NULL;
}

void *
map_remove(struct map *m, const void *key, size_t len)
{
	size_t mask = m->cap - 1;
	struct map_slot *s = map_find(m, map_hash(m, key, len), key, len);
	size_t i, j;
	void *value;

	if (s->hash == 0)
		return NULL;
	value = s->value;
	i = (size_t)(s - m->slots);
	/* Backward shift: move later members of the run into the hole when
	 * their home slot is not between the hole and themselves. */
	for (j = (i + 1) & mask; m->slots[j].hash != 0; j = (j + 1) & mask) {
		size_t home = m->slots[j].hash & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	memset(&m->slots[i], 0, sizeof(m->slots[i]));
	m->n--;
	return value;
}

size_t
map_size(const struct map *m)
{
	return m->n;
}

void
map_foreach(const struct map *m, map_visit_fn *fn, void *cls)
{
	for (size_t i = 0; i < m->cap; i++) {
		const struct map_slot *s = &m->slots[i];

		if (s->hash != 0 && !fn(cls, s->key, s->len, s->value))
			return;
	}
}
