/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The [dht] section (see dhtnode.h), dht layer. */
#define LOG_TAG "dht"
#include "dht/dhtnode_int.h"
#include "dht/dht_bpcc.h"

#include <errno.h>
#include <string.h>

#include "lib/log.h"

const struct cfg_schema_key dhtnode_cfg_keys[] = {
	{ "dht", "ENABLE", "yes",
	    "run the DHT: route requests, store blocks for others" },
	{ "dht", "K", "20",
	    "peers per routing-table bucket, and the peers FIND answers with" },
	{ "dht", "REPLICATION", "3",
	    "peers that store a block put without a count of its own" },
	{ "dht", "PER_NETWORK", "2",
	    "entries of one network (IPv4 /24, IPv6 /48) in a bucket; 0: no bound" },
	{ "dht", "MAX_HOPS", "32", "hops a request may take" },
	{ "dht", "MAX_BLOCK", "1 MiB", "largest block stored or sent" },
	{ "dht", "QUOTA", "1 GiB", "bytes of blocks stored for the network" },
	{ "dht", "REQUEST_TIMEOUT", "10 s",
	    "a request of ours that has no answer by then fails" },
	{ "dht", "REQUEST_RATE", "1000",
	    "requests a second taken from one neighbour (bursts of twice that); 0: no limit" },
	{ "dht", "ORIGIN_QUOTA", "256 MiB",
	    "bytes stored for the key that signed the PUTs; 0: no limit" },
	{ "dht", "REFRESH_INTERVAL", "60 s",
	    "a bucket not looked into for this long is looked into" },
	{ "dht", "SPARE_LINKS", "8",
	    "links this node asked for that neither its routing table nor a local client needs, kept before it drops them (down to half)" },
	{ "dht", "LINK_GRACE", "60 s",
	    "no link is dropped before it has been up and idle this long" },
	{ "dht", "CONGESTION", "none",
	    "congestion control for routed requests: none, cscc or bpcc" },
	{ "dht", "BPCC_QUEUE", "25",
	    "BPCC: requests waiting for one neighbour before the neighbours that send them are held" },
	{ "dht", "BPCC_BLOCK_MAX", "4 s",
	    "BPCC: a neighbour that takes no request for this long is given up on: its requests go another way" },
	{ NULL, NULL, NULL, NULL },
};

/* One key, logged once on failure. */
static int
dhtnode_cfg_uint(struct cfg *cfg, const char *key, uint64_t min,
    uint64_t max, uint64_t *ret)
{
	if (cfg_get_uint(cfg, "dht", key, min, max, ret) < 0) {
		log_err("%s", cfg_error(cfg));
		return -EINVAL;
	}
	return 0;
}

static int
dhtnode_cfg_dur(struct cfg *cfg, const char *key, uint64_t *ret)
{
	if (cfg_get_duration(cfg, "dht", key, 100000, 86400000000ull, ret) <
	    0) {
		log_err("%s", cfg_error(cfg));
		return -EINVAL;
	}
	return 0;
}

static int
dhtnode_cfg_size(struct cfg *cfg, const char *key, uint64_t min,
    uint64_t max, uint64_t *ret)
{
	if (cfg_get_size(cfg, "dht", key, min, max, ret) < 0) {
		log_err("%s", cfg_error(cfg));
		return -EINVAL;
	}
	return 0;
}

/* [dht] CONGESTION. BPCC is this file's; cscc is accepted, and leaves
 * BPCC off. */
static int
dhtnode_cfg_congestion(struct cfg *cfg, bool *ret_bpcc)
{
	const char *v = cfg_get(cfg, "dht", "CONGESTION");

	if (v != NULL &&
	    (strcmp(v, "none") == 0 || strcmp(v, "cscc") == 0 ||
	        strcmp(v, "bpcc") == 0)) {
		*ret_bpcc = strcmp(v, "bpcc") == 0;
		return 0;
	}
	(void)cfg_fail(cfg, "dht", "CONGESTION", "expected none, cscc or bpcc");
	log_err("%s", cfg_error(cfg));
	return -EINVAL;
}

int
dhtnode_cfg_parse(struct cfg *cfg, struct dhtnode_cfg *ret)
{
	struct dhtnode_cfg c;
	uint64_t v[7];
	bool bad = false;

	memset(&c, 0, sizeof(c));
	dht_cfg_default(&c.dht);
	/* Every key is read, so that each bad one is logged, not only the
	 * first. */
	if (cfg_get_bool(cfg, "dht", "ENABLE", &c.enable) < 0) {
		log_err("%s", cfg_error(cfg));
		bad = true;
	}
	if (dhtnode_cfg_uint(cfg, "K", 1, RTABLE_K_MAX, &v[0]) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "REPLICATION", 1, DHTMSG_REPL_MAX, &v[1]) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "PER_NETWORK", 0, RTABLE_K_MAX, &v[2]) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "MAX_HOPS", 1, DHTMSG_HOPS_MAX, &v[3]) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "REQUEST_RATE", 0, 1000000, &v[4]) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "SPARE_LINKS", 0, DHT_SPARE_LINKS_MAX,
	        &v[5]) < 0)
		bad = true;
	if (dhtnode_cfg_size(cfg, "MAX_BLOCK", 1, DHTMSG_BLOCK_MAX,
	        &c.max_block) < 0)
		bad = true;
	if (dhtnode_cfg_size(cfg, "QUOTA", 0, UINT64_MAX, &c.quota) < 0)
		bad = true;
	if (dhtnode_cfg_size(cfg, "ORIGIN_QUOTA", 0, UINT64_MAX,
	        &c.dht.origin_quota) < 0)
		bad = true;
	if (dhtnode_cfg_dur(cfg, "REQUEST_TIMEOUT", &c.dht.timeout_us) < 0)
		bad = true;
	if (dhtnode_cfg_dur(cfg, "REFRESH_INTERVAL", &c.dht.refresh_us) < 0)
		bad = true;
	if (dhtnode_cfg_dur(cfg, "LINK_GRACE", &c.dht.link_grace_us) < 0)
		bad = true;
	if (dhtnode_cfg_congestion(cfg, &c.dht.bpcc) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "BPCC_QUEUE", 1, DHT_BPCC_QUEUE_MAX, &v[6]) <
	    0)
		bad = true;
	if (dhtnode_cfg_dur(cfg, "BPCC_BLOCK_MAX", &c.dht.bpcc_block_max_us) <
	    0)
		bad = true;
	if (bad)
		return -EINVAL;
	c.dht.k = (unsigned)v[0];
	c.dht.replication = (unsigned)v[1];
	c.dht.per_net = (unsigned)v[2];
	c.dht.hops_max = (unsigned)v[3];
	c.dht.request_rate = (unsigned)v[4];
	c.dht.spare_links = (unsigned)v[5];
	c.dht.bpcc_queue = (unsigned)v[6];
	c.dht.max_block = (size_t)c.max_block;
	*ret = c;
	return 0;
}

int
dhtnode_config_check(struct cfg *cfg)
{
	struct dhtnode_cfg c;

	return dhtnode_cfg_parse(cfg, &c);
}
