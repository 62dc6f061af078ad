/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The [dht] section (see dhtnode.h), dht layer. */
#define LOG_TAG "dht"
#include "dht/dhtnode_int.h"
#include "dht/dht_bpcc.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

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
	{ "dht", "CONGESTION", "bpcc",
	    "congestion control for routed requests: none, cscc or bpcc" },
	{ "dht", "CC_QUEUE", "1024",
	    "requests of this daemon that wait for the congestion control to let them start; more are refused" },
	{ "dht", "CSCC_INITIAL_CREDITS", "5",
	    "CSCC: credits (requests out unacknowledged) at the start" },
	{ "dht", "CSCC_MAX_CREDITS", "1000",
	    "CSCC: the most credits, and the slow-start threshold at the start" },
	{ "dht", "CSCC_LOSS_CREDITS", "5", "CSCC: credits after a loss" },
	{ "dht", "CSCC_DECREASE", "0.8",
	    "CSCC: factor of the slow-start threshold on a loss" },
	{ "dht", "CSCC_RTT_GAIN", "0.125",
	    "CSCC: weight of a round trip in the estimate" },
	{ "dht", "CSCC_ERR_GAIN", "0.25",
	    "CSCC: weight of a round trip's error in the error estimate" },
	{ "dht", "CSCC_RTO_ERR_FACTOR", "10",
	    "CSCC: the timeout is the round-trip estimate and this many error estimates" },
	{ "dht", "CSCC_INITIAL_RTO", "1 s",
	    "CSCC: the timeout before a round trip was measured" },
	{ "dht", "BPCC_QUEUE", "25",
	    "BPCC: requests waiting for one neighbour before the neighbours that send them are held" },
	{ "dht", "BPCC_BLOCK_MAX", "4 s",
	    "BPCC: a neighbour that takes no request for this long is given up on: its requests go another way" },
	{ "dht", "RECORDS_PER_TOPIC", "64",
	    "signed records kept at one topic (1 to 64); a newcomer to a full topic replaces the one expiring first if it expires later, else it is refused" },
	{ "dht", "RECORDS_MAX", "65536",
	    "signed records kept for the network in all topics, by the same rule" },
	{ "dht", "RECORD_LIFETIME", "1 d",
	    "a signed record expiring further out than this is refused" },
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

static int
dhtnode_cfg_fraction(struct cfg *cfg, const char *key, double min,
    double max, double *ret)
{
	if (cfg_get_fraction(cfg, "dht", key, min, max, ret) < 0) {
		log_err("%s", cfg_error(cfg));
		return -EINVAL;
	}
	return 0;
}

static int
dhtnode_cfg_scheme(struct cfg *cfg, enum dht_congestion *ret)
{
	const char *v = cfg_get(cfg, "dht", "CONGESTION");

	for (unsigned i = 0; v != NULL && i < DHT_CC_COUNT; i++)
		if (strcasecmp(v, dht_congestion_name((enum dht_congestion)i)) == 0) {
			*ret = (enum dht_congestion)i;
			return 0;
		}
	(void)cfg_fail(cfg, "dht", "CONGESTION",
	    "'%s' is not none, cscc or bpcc", v != NULL ? v : "");
	log_err("%s", cfg_error(cfg));
	return -EINVAL;
}

/* CONGESTION, CC_QUEUE and CSCC_* into c, each bad key logged. */
static int
dhtnode_cfg_cc(struct cfg *cfg, struct dht_cfg *c)
{
	struct dht_cscc_cfg *k = &c->cscc;
	uint64_t v[5];
	bool bad = false;

	if (dhtnode_cfg_scheme(cfg, &c->congestion) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "CC_QUEUE", 0, DHT_CC_QUEUE_MAX, &v[0]) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "CSCC_MAX_CREDITS", 1, DHT_CSCC_CREDITS_MAX,
	        &v[1]) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "CSCC_INITIAL_CREDITS", 1,
	        DHT_CSCC_CREDITS_MAX, &v[2]) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "CSCC_LOSS_CREDITS", 1, DHT_CSCC_CREDITS_MAX,
	        &v[3]) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "CSCC_RTO_ERR_FACTOR", 0, 1000, &v[4]) < 0)
		bad = true;
	if (dhtnode_cfg_fraction(cfg, "CSCC_DECREASE", 0.01, 0.99,
	        &k->decrease) < 0 ||
	    dhtnode_cfg_fraction(cfg, "CSCC_RTT_GAIN", 0.001, 1,
	        &k->rtt_gain) < 0 ||
	    dhtnode_cfg_fraction(cfg, "CSCC_ERR_GAIN", 0.001, 1,
	        &k->err_gain) < 0)
		bad = true;
	if (dhtnode_cfg_dur(cfg, "CSCC_INITIAL_RTO", &k->initial_rto_us) < 0)
		bad = true;
	if (bad)
		return -EINVAL;
	c->cc_queue = (unsigned)v[0];
	k->max_credits = (unsigned)v[1];
	k->initial_credits = (unsigned)v[2];
	k->loss_credits = (unsigned)v[3];
	k->rto_err_factor = (unsigned)v[4];
	if (k->initial_credits > k->max_credits ||
	    k->loss_credits > k->max_credits) {
		log_err("[dht] CSCC_INITIAL_CREDITS and CSCC_LOSS_CREDITS may not exceed CSCC_MAX_CREDITS");
		return -EINVAL;
	}
	return 0;
}

/* RECORDS_PER_TOPIC, RECORDS_MAX and RECORD_LIFETIME into c. */
static int
dhtnode_cfg_records(struct cfg *cfg, struct dht_cfg *c)
{
	uint64_t per_topic, max, life_us;
	bool bad = false;

	if (dhtnode_cfg_uint(cfg, "RECORDS_PER_TOPIC", 1, DHTMSG_RECORDS_MAX,
	        &per_topic) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "RECORDS_MAX", 1, DHT_RECORDS_MAX_MAX, &max) <
	    0)
		bad = true;
	if (cfg_get_duration(cfg, "dht", "RECORD_LIFETIME", 1000000,
	        30ull * 86400 * 1000000, &life_us) < 0) {
		log_err("%s", cfg_error(cfg));
		bad = true;
	}
	if (bad)
		return -EINVAL;
	c->records_per_topic = (unsigned)per_topic;
	c->records_max = max;
	c->record_lifetime_s = life_us / 1000000;
	return 0;
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
	if (dhtnode_cfg_cc(cfg, &c.dht) < 0)
		bad = true;
	if (dhtnode_cfg_uint(cfg, "BPCC_QUEUE", 1, DHT_BPCC_QUEUE_MAX, &v[6]) <
	    0)
		bad = true;
	if (dhtnode_cfg_dur(cfg, "BPCC_BLOCK_MAX", &c.dht.bpcc_block_max_us) <
	    0)
		bad = true;
	if (dhtnode_cfg_records(cfg, &c.dht) < 0)
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
