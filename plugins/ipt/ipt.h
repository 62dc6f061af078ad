/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the UDP and TCP transports share, compiled into each plugin: the
 * common keys of their sections (BIND_ADDRESS, PORT, ADVERTISE,
 * BLACKLIST, MTU, COST, IDLE_TIMEOUT), HELO addresses in netaddr form
 * (seed 004, II-B createHELO/verifyHelo and II-C blacklists), bound
 * sockets, and the forwarding of log lines and counters to the core.
 */
#ifndef FERRY_PLUGINS_IPT_H
#define FERRY_PLUGINS_IPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ferry/transport.h>

#include "lib/netaddr.h"
#include "lib/ratelimit.h"
#include "plog.h"

#define IPT_BIND_MAX	8 /* addresses in BIND_ADDRESS */
#define IPT_ADV_MAX	8 /* addresses in an explicit ADVERTISE */

enum ipt_adv_mode {
	IPT_ADV_AUTO, /* interface addresses of the bound sockets */
	IPT_ADV_NONE, /* NAT or send-only: no HELO */
	IPT_ADV_LIST, /* the configured ip:port list */
};

/* The settings of the common keys. Owned by the struct ipt holding it. */
struct ipt_cfg {
	struct sockaddr_storage bind[IPT_BIND_MAX]; /* port is PORT */
	size_t n_bind;
	uint16_t port;			     /* 0: the kernel picks one */
	enum ipt_adv_mode adv_mode;
	struct sockaddr_storage adv[IPT_ADV_MAX]; /* for IPT_ADV_LIST */
	size_t n_adv;
	struct netaddr_netlist blacklist; /* refused networks */
	uint32_t mtu;			  /* largest unit */
	uint32_t cost;			  /* the api's cost */
	uint64_t idle_us;		  /* IDLE_TIMEOUT */
};

/* Bounds a plugin puts on the common keys. */
struct ipt_limits {
	uint32_t mtu_min, mtu_max; /* MTU range */
};

/* Common state, embedded in each plugin's state. */
struct ipt {
	const struct ferry_core_api *core; /* borrowed until done_transport */
	const struct ferry_cfg_key *keys;  /* the plugin's table (defaults) */
	char section[32];		   /* "transport-udp", for messages */
	bool stub;			   /* core->receive == NULL */
	struct ipt_cfg cfg;		   /* settings in force */
	struct plog log;		   /* lines and counters to the core */
};

/* Sets up ipt for core and routes this plugin's log lines to core->vlog,
 * filtered by *core->log_level (plog.h). keys is borrowed for ipt's
 * lifetime. Call ipt_done on every path afterwards. */
void ipt_init(struct ipt *ipt, const struct ferry_core_api *core,
    const char *name, const struct ferry_cfg_key *keys);
/* Frees the settings and stops forwarding log lines through ipt->core. */
void ipt_done(struct ipt *ipt);

/*
 * ipt_cfg.c
 */

/* The section's value of key, else the plugin table's default, else "". */
const char *ipt_cfg_value(const struct ipt *ipt, const char *key);
/* Typed values of a key. 0 and *ret, or -EINVAL after logging key, value
 * and what was expected. */
int ipt_cfg_uint(const struct ipt *ipt, const char *key, uint64_t min,
    uint64_t max, uint64_t *ret);
int ipt_cfg_size(const struct ipt *ipt, const char *key, uint64_t min,
    uint64_t max, uint64_t *ret);
int ipt_cfg_duration(const struct ipt *ipt, const char *key,
    uint64_t min_us, uint64_t max_us, uint64_t *ret_us);
/* Logs a bad value of key with why, and returns -EINVAL. */
int ipt_cfg_bad(const struct ipt *ipt, const char *key, const char *why);
/* Reads the common keys into *ret (which the caller then frees with
 * ipt_cfg_done). 0, or -EINVAL / -ENOMEM after logging the key. */
int ipt_cfg_load(const struct ipt *ipt, const struct ipt_limits *lim,
    struct ipt_cfg *ret);
/* Frees what ipt_cfg_load allocated. */
void ipt_cfg_done(struct ipt_cfg *cfg);
/* Puts next in force (taking it over). Bind addresses and port cannot
 * change under open sockets: a change is logged as needing a restart and
 * the old ones are kept. */
void ipt_cfg_commit(struct ipt *ipt, struct ipt_cfg *next);

/*
 * ipt_addr.c
 */

/* Checks a HELO address: -EINVAL if malformed, -EPERM if refused by
 * netaddr_is_refused or the blacklist, else 0 and *ret (may be NULL). */
int ipt_verify(const struct ipt *ipt, const void *addr, size_t len,
    struct sockaddr_storage *ret);
/* Whether traffic from or to ss is allowed (not refused, not
 * blacklisted). */
bool ipt_allowed(const struct ipt *ipt, const struct sockaddr_storage *ss);
/* Formats a HELO address. 0, -EINVAL (malformed) or -ENOSPC. */
int ipt_address_to_string(const void *addr, size_t len, char *buf,
    size_t size);
/* create_helo_at: the index-th address to advertise per ADVERTISE (at
 * most IPT_ADV_MAX). bound holds the local names of the bound sockets (or
 * the configured bind addresses in stub mode). 0 and *ret_len, -ENOENT
 * past the last, -ENOSPC if max is too small. */
int ipt_create_helo(const struct ipt *ipt,
    const struct sockaddr_storage *bound, size_t n_bound, unsigned index,
    void *addr, size_t max, size_t *ret_len);
/* Opens a non-blocking, close-on-exec socket of type (SOCK_DGRAM or
 * SOCK_STREAM) bound to ss (IPv6 sockets are IPv6-only; reuse_addr sets
 * SO_REUSEADDR). 0, *ret_fd and *ret_name (the bound name), or a negative
 * errno with nothing left open. */
int ipt_socket_bind(const struct sockaddr_storage *ss, int type,
    bool reuse_addr, int *ret_fd, struct sockaddr_storage *ret_name);

#endif /* FERRY_PLUGINS_IPT_H */
