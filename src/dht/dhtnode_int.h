/* SPDX-License-Identifier: GPL-3.0-or-later */
/* State shared by dhtnode*.c (see dhtnode.h), dht layer. */
#ifndef FERRY_DHT_DHTNODE_INT_H
#define FERRY_DHT_DHTNODE_INT_H

#include <stdbool.h>

#include "core/core.h"
#include "dht/dht.h"
#include "dht/dhtnode.h"
#include "dht/rtable.h"

/* [dht], parsed. */
struct dhtnode_cfg {
	bool enable;
	struct dht_cfg dht;
	uint64_t max_block;
	uint64_t quota;
};

#define DHTNODE_TICK_US (100u * 1000) /* dht_tick at least this often */

struct store;

/* The block store's figures as "dht.store_*" counters, copied from
 * store_stats() at every tick. */
struct dhtnode_counters {
	uint64_t *store_blocks;  /* gauge */
	uint64_t *store_bytes;   /* gauge */
	uint64_t *store_puts;
	uint64_t *store_commits;
	uint64_t *store_evicted;
	uint64_t *store_refused;
	uint64_t *store_expired;
	uint64_t *store_failed;
};

struct dhtnode {
	struct event_base *base; /* borrowed */
	struct core *core;       /* borrowed */
	struct stats *stats;     /* borrowed */
	struct store *store;     /* owned */
	struct dht *dht;         /* owned */
	struct event *ev_tick;   /* dht_tick, and saving the table */
	uint64_t tick_at_us;     /* when it is due next (time_mono_us) */
	struct core_sub peer_sub;
	struct core_sub drain_sub;   /* BPCC: queues to peers with room */
	struct core_rx_account *rx;  /* BPCC: the peers the DHT holds */
	bool handler_set;
	bool store_closing;      /* store_free() runs: no more calls */
	bool links_chosen;       /* the core left links to us */
	uint64_t sink;           /* counter of last resort */
	struct dhtnode_counters c;
	uint64_t saved_us;       /* when the table was last written */
	char table_path[4096];
	char state_dir[4096];
};

/* dhtnode_cfg.c */
int dhtnode_cfg_parse(struct cfg *cfg, struct dhtnode_cfg *ret);

/* dhtnode_env.c */
/* Fills env with the calls that go to n's core and store. */
void dhtnode_env_fill(struct dhtnode *n, struct dht_env *env);
/* Arms the tick's event for at_us (time_mono_us; past: at once), or for
 * DHTNODE_TICK_US from now if that is sooner. 0 or -ENOMEM. */
int dhtnode_tick_arm(struct dhtnode *n, uint64_t at_us);

#endif /* FERRY_DHT_DHTNODE_INT_H */
