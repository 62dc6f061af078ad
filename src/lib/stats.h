/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Named statistics counters, layer 0. A counter is a plain uint64_t whose
 * address stays valid until stats_free(), so hot paths increment it
 * directly. Names are "subsystem.what", e.g. "udp.bytes_out".
 */
#ifndef FERRY_LIB_STATS_H
#define FERRY_LIB_STATS_H

#include <stddef.h>
#include <stdint.h>

struct stats;

typedef void stats_visit_fn(void *cls, const char *name, uint64_t value);

struct stats *stats_new(void);
/* Frees every counter. NULL is allowed. */
void stats_free(struct stats *st);
/* The counter called name, created at zero on first use. NULL on OOM. */
uint64_t *stats_counter(struct stats *st, const char *name);
/* Like stats_counter with "prefix.name". */
uint64_t *stats_counter2(struct stats *st, const char *prefix,
    const char *name);

/*
 * Binding a struct of counter pointers to its counters in one call, so
 * that each layer and plugin lists its counters once, as a table.
 */
struct stats_slot {
	const char *name; /* counter name, without the layer's prefix */
	size_t off;       /* of a uint64_t * in the bound struct */
};
#define STATS_SLOT(type, field) { #field, offsetof(type, field) }
/* Finds or makes the counter called name; NULL on OOM. */
typedef uint64_t *stats_lookup_fn(void *cls, const char *name);
/* Points the uint64_t * at base + off of each of the n slots at the
 * counter lookup(cls, name) gives. 0, or -ENOMEM at the first NULL
 * (the slots before it are set, the rest untouched). */
int stats_bind(void *base, const struct stats_slot *slots, size_t n,
    stats_lookup_fn *lookup, void *cls);
/* stats_bind with the counters "prefix.name" of st. */
int stats_bind_prefix(struct stats *st, const char *prefix, void *base,
    const struct stats_slot *slots, size_t n);

/* Value of a counter, 0 if it does not exist. */
uint64_t stats_get(const struct stats *st, const char *name);
/* Visits every counter in name order. */
void stats_foreach(const struct stats *st, stats_visit_fn *fn, void *cls);
size_t stats_count(const struct stats *st);

#endif /* FERRY_LIB_STATS_H */
