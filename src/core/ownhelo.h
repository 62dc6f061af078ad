/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Our own HELOs: one per address each transport advertises, signed and
 * re-signed before they expire or when the configuration changes. Core
 * layer.
 */
#ifndef FERRY_CORE_OWNHELO_H
#define FERRY_CORE_OWNHELO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct core;

/* Rebuilds core->own_helos from every transport's create_helo. Returns
 * how many HELOs there are. */
int ownhelo_refresh(struct core *core);
/* Rebuilds them if they are past half their lifetime. */
void ownhelo_maybe_refresh(struct core *core);
/* True if (protocol, addr) is one of the addresses we advertise. */
bool ownhelo_has(const struct core *core, uint16_t protocol,
    const uint8_t *addr, size_t len);
/* Copies as many of our HELOs as fit into out; returns bytes written. */
size_t ownhelo_fill(const struct core *core, uint8_t *out, size_t max);

#endif /* FERRY_CORE_OWNHELO_H */
