/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Statistics counters (see stats.h), layer 0: a sorted array of nodes. */
#include "lib/stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stats_node {
	uint64_t value; /* first: the pointer handed out is to this */
	char name[];
};

struct stats {
	struct stats_node **nodes; /* sorted by name */
	size_t n, cap;
};

struct stats *
stats_new(void)
{
	return calloc(1, sizeof(struct stats));
}

void
stats_free(struct stats *st)
{
	if (st == NULL)
		return;
	for (size_t i = 0; i < st->n; i++)
		free(st->nodes[i]);
	free(st->nodes);
	free(st);
}

/* Index of name, or of where it would be inserted (found says which). */
static size_t
stats_find(const struct stats *st, const char *name, int *found)
{
	size_t lo = 0, hi = st->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(st->nodes[mid]->name, name);

		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

uint64_t *
stats_counter(struct stats *st, const char *name)
{
	struct stats_node *node, **nodes;
	size_t at, len;
	int found;

	at = stats_find(st, name, &found);
	if (found)
		return &st->nodes[at]->value;
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 64;

		nodes = realloc(st->nodes, cap * sizeof(*nodes));
		if (nodes == NULL)
			return NULL;
		st->nodes = nodes;
		st->cap = cap;
	}
	len = strlen(name);
	node = malloc(sizeof(*node) + len + 1);
	if (node == NULL)
		return NULL;
	node->value = 0;
	memcpy(node->name, name, len + 1);
	memmove(&st->nodes[at + 1], &st->nodes[at],
	    (st->n - at) * sizeof(*st->nodes));
	st->nodes[at] = node;
	st->n++;
	return &node->value;
}

uint64_t *
stats_counter2(struct stats *st, const char *prefix, const char *name)
{
	char full[128];

	if (snprintf(full, sizeof(full), "%s.%s", prefix, name) >=
	    (int)sizeof(full))
		return NULL;
	return stats_counter(st, full);
}

int
stats_bind(void *base, const struct stats_slot *slots, size_t n,
    stats_lookup_fn *lookup, void *cls)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t *p = lookup(cls, slots[i].name);

		if (p == NULL)
			return -ENOMEM;
		/* memcpy: base is a struct of pointers seen as bytes. */
		memcpy((char *)base + slots[i].off, &p, sizeof(p));
	}
	return 0;
}

struct stats_prefixed {
	struct stats *st;
	const char *prefix;
};

static uint64_t *
stats_lookup_prefixed(void *cls, const char *name)
{
	const struct stats_prefixed *sp = cls;

	return stats_counter2(sp->st, sp->prefix, name);
}

int
stats_bind_prefix(struct stats *st, const char *prefix, void *base,
    const struct stats_slot *slots, size_t n)
{
	struct stats_prefixed sp = { st, prefix };

	return stats_bind(base, slots, n, stats_lookup_prefixed, &sp);
}

uint64_t
stats_get(const struct stats *st, const char *name)
{
	int found;
	size_t at = stats_find(st, name, &found);

	return found ? st->nodes[at]->value : 0;
}

void
stats_foreach(const struct stats *st, stats_visit_fn *fn, void *cls)
{
	for (size_t i = 0; i < st->n; i++)
		fn(cls, st->nodes[i]->name, st->nodes[i]->value);
}

size_t
stats_count(const struct stats *st)
{
	return st->n;
}
