/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Parsed [core] and [testing] settings, core layer (see core_cfg.c). */
#ifndef FERRY_CORE_CORE_CFG_H
#define FERRY_CORE_CORE_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/cfg.h"

extern const struct cfg_schema_key core_cfg_keys[];

/* [testing]: link emulation applied to what transports send. */
struct emu_cfg {
	bool enable;
	uint64_t delay_us;
	uint64_t jitter_us;
	double loss;
	uint64_t rate; /* bytes per second, 0: unlimited */
};

/* [core] LINK_POLICY: who chooses the peers to link to (core_links.h). */
enum core_link_policy {
	CORE_LINKS_AUTO,   /* a layer above if one claims it, else the core */
	CORE_LINKS_CORE,   /* the core: every validated address, gossip */
	CORE_LINKS_MANUAL, /* a layer above, the operator, peers linking in */
};

struct core_cfg {
	uint32_t max_peers;
	enum core_link_policy link_policy;
	uint64_t pin_idle_us; /* PIN_IDLE */
	uint64_t helo_lifetime_us;
	uint64_t validation_lifetime_us;
	uint64_t validation_timeout_us;
	uint64_t validation_timeout_slow_us;
	uint64_t ping_interval_us;
	uint32_t pings_per_peer;
	uint32_t pong_rate;
	uint32_t kx_rate;
	uint32_t kx_rate_per_source;
	uint64_t kx_max_skew_us;
	uint64_t rekey_interval_us;
	uint64_t rekey_messages;
	uint64_t keepalive_us;
	uint64_t link_timeout_us;
	uint64_t gossip_interval_us;
	uint64_t queue_bytes;
	uint64_t control_queue_bytes;
	uint64_t cork_us;
	uint64_t recv_window;
	uint64_t initial_window;
	uint64_t reassembly_per_peer;
	uint64_t reassembly_total;
	uint64_t reassembly_timeout_us;
	uint32_t max_unauth_peers;
	struct emu_cfg emu;
};

/* Reads and range-checks every key; logs the first problem with its
 * file and line. 0 or -EINVAL. */
int core_cfg_parse(struct cfg *cfg, struct core_cfg *cc);
/* [core] PLUGIN_DIR, else $FERRY_PLUGIN_DIR, else the install path. */
const char *core_cfg_plugin_dir(const struct cfg *cfg);

#endif /* FERRY_CORE_CORE_CFG_H */
