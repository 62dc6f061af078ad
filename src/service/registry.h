/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Which clients registered for which application message type, service
 * layer: the fan-out table of inbound RECEIVE messages (FERRY_C_REGISTER).
 */
#ifndef FERRY_SERVICE_REGISTRY_H
#define FERRY_SERVICE_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

struct client;
struct registry;

/* NULL on OOM. */
struct registry *registry_new(void);
/* Frees the table; the clients are not touched. NULL is allowed. */
void registry_free(struct registry *reg);
/* Adds c to type's list (the pointer is kept until registry_remove).
 * Adding twice is harmless. 0 or -ENOMEM. */
int registry_add(struct registry *reg, uint16_t type, struct client *c);
/* Removes c from type's list if it is there. */
void registry_remove(struct registry *reg, uint16_t type, struct client *c);
/* The clients registered for type and their number, or NULL and 0. The
 * array is valid until the registry next changes. */
struct client *const *registry_lookup(const struct registry *reg, uint16_t type,
    size_t *ret_n);

#endif /* FERRY_SERVICE_REGISTRY_H */
