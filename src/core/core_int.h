/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * State shared by the core's .c files and its unit tests only. The layers
 * above use core.h.
 */
#ifndef FERRY_CORE_CORE_INT_H
#define FERRY_CORE_CORE_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "core/core_cfg.h"

#define CORE_MAX_TRANSPORTS 16
#define CORE_MAX_HANDLERS 32

struct identity;
struct transport;

struct core_handler {
	uint16_t lo, hi;     /* inclusive type range */
	core_handler_fn *fn; /* receiver */
	void *cls;
};

struct core {
	struct event_base *base; /* borrowed */
	struct cfg *cfg;	 /* borrowed; replaced on reload */
	struct stats *stats;	 /* borrowed */
	struct core_cfg cc;	 /* parsed [core] and [testing] */
	struct identity *ident;	 /* owned */
	char state_dir[PATH_MAX];
	uint64_t started_us; /* monotonic */

	struct transport *transports[CORE_MAX_TRANSPORTS]; /* owned */
	size_t n_transports;

	struct core_handler handlers[CORE_MAX_HANDLERS];
	size_t n_handlers;
	core_peer_fn *peer_cb;
	void *peer_cb_cls;
	core_drain_fn *drain_cb;
	void *drain_cb_cls;
	uint64_t rx_backlog; /* bytes the service still owes its clients */
};

/* The peer layer (peer.c and friends): set up with the core, started
 * after the transports, stopped before they are unloaded. */
int core_peers_init(struct core *core);
int core_peers_start(struct core *core);
void core_peers_stop(struct core *core);
void core_peers_done(struct core *core);
/* The configuration changed (core->cc and the transport set). */
void core_peers_reconfigured(struct core *core);
/* Drops every session of t before it is unloaded. */
void core_transport_detach(struct core *core, struct transport *t);
/* What the transports call (core_recv.c). */
extern const struct transport_hooks core_transport_hooks_impl;

/* The handler for a message type, or NULL. */
const struct core_handler *core_handler_find(const struct core *core,
    uint16_t type);

#endif /* FERRY_CORE_CORE_INT_H */
