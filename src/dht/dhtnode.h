/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT in the daemon, dht layer: the DHT of dht.h on top of the core
 * (its links, messages and identity) and of the block store, with its
 * [dht] configuration, its routing table kept across restarts, and the
 * tick that times requests out. The layers above reach the DHT through
 * dhtnode_dht().
 */
#ifndef FERRY_DHT_DHTNODE_H
#define FERRY_DHT_DHTNODE_H

#include <stdint.h>

#include "lib/cfg.h"

struct core;
struct dht;
struct dhtnode;
struct store;
struct event_base;
struct stats;

#define DHTNODE_TABLE_FILE "dht-table.dat"

/* The [dht] keys with their defaults. */
extern const struct cfg_schema_key dhtnode_cfg_keys[];

/* Checks [dht]; logs each problem. 0 or -EINVAL. */
int dhtnode_config_check(struct cfg *cfg);

/* Builds the DHT if [dht] ENABLE says so, else sets *ret to NULL and
 * returns 0. Opens the block store in state_dir (an unreadable or
 * corrupt one is an error, never recreated) and takes the choice of
 * links from the core (core_links_claim), so call it before core_start.
 * Borrowed: base, cfg (for the call), stats, core. */
int dhtnode_new(struct event_base *base, struct cfg *cfg,
    struct stats *stats, struct core *core, const char *state_dir,
    struct dhtnode **ret);
/* Once the core runs: loads the routing table saved in the state
 * directory and asks for links to its entries. NULL is ok. Returns 0
 * (a table that cannot be read is logged and left aside). */
int dhtnode_start(struct dhtnode *n);
/* Applies a checked [dht]: what can change without a restart does. */
int dhtnode_reload(struct dhtnode *n, struct cfg *cfg);
/* Saves the routing table, ends requests, closes the store. NULL ok. */
void dhtnode_free(struct dhtnode *n);

/* The DHT, or NULL for NULL. */
struct dht *dhtnode_dht(struct dhtnode *n);
/* The block store, or NULL for NULL: the layers above keep records of
 * their own in its database (store_job). Valid until dhtnode_free(). */
struct store *dhtnode_store(struct dhtnode *n);

#endif /* FERRY_DHT_DHTNODE_H */
