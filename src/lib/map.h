/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A hash map from byte strings to pointers, layer 0. Keys come from peers
 * (ids, addresses, indexes), so the hash is SipHash with a per-map random
 * key: a remote party cannot aim collisions at one bucket.
 * The map does not own keys or values: a key must stay valid and unchanged
 * while its entry exists (usually it points into the value).
 */
#ifndef FERRY_LIB_MAP_H
#define FERRY_LIB_MAP_H

#include <stdbool.h>
#include <stddef.h>

struct map;

/* Return false to stop the walk. The walk must not change the map. */
typedef bool map_visit_fn(void *cls, const void *key, size_t len,
    void *value);

/* NULL on OOM. */
struct map *map_new(void);
/* Frees the table only. NULL is allowed. */
void map_free(struct map *m);
/* Adds or replaces. 0, or -ENOMEM (map unchanged). */
int map_put(struct map *m, const void *key, size_t len, void *value);
/* The value, or NULL if absent. */
void *map_get(const struct map *m, const void *key, size_t len);
/* Removes and returns the value, or NULL if absent. */
void *map_remove(struct map *m, const void *key, size_t len);
size_t map_size(const struct map *m);
/* Visits entries in no particular order. */
void map_foreach(const struct map *m, map_visit_fn *fn, void *cls);

#endif /* FERRY_LIB_MAP_H */
