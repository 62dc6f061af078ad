/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The common keys of [transport-udp] and [transport-tcp] (see ipt.h).
 * Values come from the core's cfg_get, defaults from the plugin's own key
 * table, so the documented default and the applied one cannot drift.
 */
#define LOG_TAG "ipt"
#include "ipt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/cfg.h"
#include "lib/strparse.h"
#include "lib/time.h"

#define IPT_COST_MAX		1000000
#define IPT_IDLE_MIN_US		(10 * USEC_PER_MSEC)
#define IPT_IDLE_MAX_US		(86400 * USEC_PER_SEC)

const char *
ipt_cfg_value(const struct ipt *ipt, const char *key)
{
	const char *v = NULL;

	if (ipt->core->cfg_get != NULL)
		v = ipt->core->cfg_get(ipt->core->cls, key);
	if (v != NULL)
		return v;
	for (const struct ferry_cfg_key *k = ipt->keys; k->name != NULL; k++)
		if (strcasecmp(k->name, key) == 0)
			return k->def != NULL ? k->def : "";
	return "";
}

int
ipt_cfg_bad(const struct ipt *ipt, const char *key, const char *why)
{
	plog(&ipt->log, FERRY_LOG_ERR, "[%s] %s = '%s': %s", ipt->section, key,
	    ipt_cfg_value(ipt, key), why);
	return -EINVAL;
}

/* Logs a range failure of a typed getter. */
static int
ipt_cfg_range(const struct ipt *ipt, const char *key, int r,
    const char *what, uint64_t min, uint64_t max)
{
	char why[128];

	(void)snprintf(why, sizeof(why), "%s %s %llu..%llu",
	    r == -ERANGE ? "out of range" : "expected", what,
	    (unsigned long long)min, (unsigned long long)max);
	return ipt_cfg_bad(ipt, key, why);
}

int
ipt_cfg_uint(const struct ipt *ipt, const char *key, uint64_t min,
    uint64_t max, uint64_t *ret)
{
	int r = parse_uint(ipt_cfg_value(ipt, key), min, max, ret);

	return r < 0 ? ipt_cfg_range(ipt, key, r, "a number in", min, max) : 0;
}

int
ipt_cfg_size(const struct ipt *ipt, const char *key, uint64_t min,
    uint64_t max, uint64_t *ret)
{
	int r = parse_size(ipt_cfg_value(ipt, key), min, max, ret);

	return r < 0 ? ipt_cfg_range(ipt, key, r, "a size in bytes,", min,
	    max) : 0;
}

int
ipt_cfg_duration(const struct ipt *ipt, const char *key, uint64_t min_us,
    uint64_t max_us, uint64_t *ret_us)
{
	int r = parse_duration(ipt_cfg_value(ipt, key), min_us, max_us,
	    ret_us);

	return r < 0 ? ipt_cfg_range(ipt, key, r, "a duration in us,", min_us,
	    max_us) : 0;
}

static int
ipt_cfg_bind(const struct ipt *ipt, struct ipt_cfg *c)
{
	const char *s = ipt_cfg_value(ipt, "BIND_ADDRESS"), *word;
	size_t len;

	c->n_bind = 0;
	while (cfg_next_word(&s, &word, &len)) {
		struct sockaddr_storage *ss = &c->bind[c->n_bind];

		if (c->n_bind == IPT_BIND_MAX)
			return ipt_cfg_bad(ipt, "BIND_ADDRESS",
			    "too many addresses");
		if (netaddr_parse_ip(word, len, c->port, ss) < 0 ||
		    netaddr_is_multicast(ss) || netaddr_is_broadcast(ss))
			return ipt_cfg_bad(ipt, "BIND_ADDRESS",
			    "expected unicast IP addresses such as '0.0.0.0 ::'");
		c->n_bind++;
	}
	if (c->n_bind == 0)
		return ipt_cfg_bad(ipt, "BIND_ADDRESS",
		    "at least one address is needed");
	return 0;
}

static int
ipt_cfg_advertise(const struct ipt *ipt, struct ipt_cfg *c)
{
	const char *s = ipt_cfg_value(ipt, "ADVERTISE"), *word;
	size_t len;

	if (strcasecmp(s, "auto") == 0) {
		c->adv_mode = IPT_ADV_AUTO;
		return 0;
	}
	if (strcasecmp(s, "none") == 0) {
		c->adv_mode = IPT_ADV_NONE;
		return 0;
	}
	c->adv_mode = IPT_ADV_LIST;
	c->n_adv = 0;
	while (cfg_next_word(&s, &word, &len)) {
		struct sockaddr_storage *ss = &c->adv[c->n_adv];

		if (c->n_adv == IPT_ADV_MAX)
			return ipt_cfg_bad(ipt, "ADVERTISE",
			    "too many addresses");
		if (netaddr_parse(word, len, ss) < 0 || netaddr_is_refused(ss))
			return ipt_cfg_bad(ipt, "ADVERTISE",
			    "expected 'auto', 'none' or unicast addresses such as '192.0.2.1:2086 [2001:db8::1]:2086'");
		netaddr_unmap(ss);
		c->n_adv++;
	}
	if (c->n_adv == 0)
		return ipt_cfg_bad(ipt, "ADVERTISE",
		    "expected 'auto', 'none' or a list of addresses");
	return 0;
}

/* MTU, COST, IDLE_TIMEOUT and PORT. */
static int
ipt_cfg_numbers(const struct ipt *ipt, const struct ipt_limits *lim,
    struct ipt_cfg *c)
{
	uint64_t v;

	if (ipt_cfg_uint(ipt, "PORT", 0, 65535, &v) < 0)
		return -EINVAL;
	c->port = (uint16_t)v;
	if (ipt_cfg_size(ipt, "MTU", lim->mtu_min, lim->mtu_max, &v) < 0)
		return -EINVAL;
	c->mtu = (uint32_t)v;
	if (ipt_cfg_uint(ipt, "COST", 0, IPT_COST_MAX, &v) < 0)
		return -EINVAL;
	c->cost = (uint32_t)v;
	return ipt_cfg_duration(ipt, "IDLE_TIMEOUT", IPT_IDLE_MIN_US,
	    IPT_IDLE_MAX_US, &c->idle_us);
}

int
ipt_cfg_load(const struct ipt *ipt, const struct ipt_limits *lim,
    struct ipt_cfg *ret)
{
	struct ipt_cfg c;
	int r;

	memset(&c, 0, sizeof(c));
	r = ipt_cfg_numbers(ipt, lim, &c);
	if (r == 0)
		r = ipt_cfg_bind(ipt, &c);
	if (r == 0)
		r = ipt_cfg_advertise(ipt, &c);
	if (r < 0)
		return r;
	r = netaddr_netlist_parse(ipt_cfg_value(ipt, "BLACKLIST"),
	    &c.blacklist);
	if (r == -ENOMEM)
		return plog_errno(&ipt->log, FERRY_LOG_ERR, r, "[%s] BLACKLIST",
		    ipt->section);
	if (r < 0)
		return ipt_cfg_bad(ipt, "BLACKLIST",
		    "expected networks such as '10.0.0.0/8 fc00::/7'");
	*ret = c;
	return 0;
}

void
ipt_cfg_done(struct ipt_cfg *cfg)
{
	netaddr_netlist_done(&cfg->blacklist);
}

static bool
ipt_cfg_same_bind(const struct ipt_cfg *a, const struct ipt_cfg *b)
{
	if (a->port != b->port || a->n_bind != b->n_bind)
		return false;
	for (size_t i = 0; i < a->n_bind; i++)
		if (memcmp(&a->bind[i], &b->bind[i], sizeof(a->bind[i])) != 0)
			return false;
	return true;
}

void
ipt_cfg_commit(struct ipt *ipt, struct ipt_cfg *next)
{
	if (ipt->cfg.n_bind > 0 && !ipt_cfg_same_bind(&ipt->cfg, next)) {
		plog(&ipt->log, FERRY_LOG_NOTICE,
		    "[%s] new BIND_ADDRESS or PORT takes effect at the next restart",
		    ipt->section);
		memcpy(next->bind, ipt->cfg.bind, sizeof(next->bind));
		next->n_bind = ipt->cfg.n_bind;
		next->port = ipt->cfg.port;
	}
	ipt_cfg_done(&ipt->cfg);
	ipt->cfg = *next;
}
