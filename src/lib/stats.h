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
/* Value of a counter, 0 if it does not exist. */
uint64_t stats_get(const struct stats *st, const char *name);
/* Visits every counter in name order. */
void stats_foreach(const struct stats *st, stats_visit_fn *fn, void *cls);
size_t stats_count(const struct stats *st);

#endif /* FERRY_LIB_STATS_H */
