/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the intermediary's HTTPS server (httpd.h) keeps of each client
 * address, intermediary layer: the connections it has open and its
 * request bucket, for MAX_CONNECTIONS_PER_ADDRESS and ADDRESS_RATE
 * (ferryd.conf(5)). An address is an IPv4 address, or an IPv6 /64 (the
 * least one host is given, which it can change at will within);
 * IPv4-mapped IPv6 counts as IPv4.
 *
 * The table keeps at most HTTPD_ADDRS_MAX addresses without open
 * connections, the least recently seen forgotten first; those with open
 * connections are never forgotten (MAX_CONNECTIONS bounds them).
 */
#ifndef FERRY_INTERMEDIARY_HTTPD_ADDR_H
#define FERRY_INTERMEDIARY_HTTPD_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "lib/ratelimit.h"

#define HTTPD_ADDRS_MAX 16384 /* addresses kept without connections */
#define HTTPD_ADDR_KEY  9     /* family byte, then 4 or 8 bytes */

struct map;

/* One address. */
struct httpd_addr {
	uint8_t key[HTTPD_ADDR_KEY];  /* family, IPv4 or the /64, zeros */
	unsigned conns;               /* connections open */
	struct ratelimit rl;          /* ADDRESS_RATE, bursts of twice it */
	TAILQ_ENTRY(httpd_addr) idle; /* in the idle list while conns == 0 */
};

struct httpd_addrs {
	struct map *map;               /* key -> struct httpd_addr */
	TAILQ_HEAD(, httpd_addr) idle; /* no connection; least recent first */
	size_t n;                      /* addresses kept */
	size_t n_idle;                 /* of them without a connection */
	size_t max_idle;               /* HTTPD_ADDRS_MAX, or less in tests */
};

/* An empty table keeping at most max_idle addresses without connections.
 * 0 or -ENOMEM. */
int httpd_addrs_init(struct httpd_addrs *t, size_t max_idle);
/* Forgets every address; a zeroed t is allowed. */
void httpd_addrs_done(struct httpd_addrs *t);
/* The entry of the address of ss (the port ignored), made when new with
 * a full bucket; seen now. Making one may forget the least recently seen
 * address without connections. NULL on -ENOMEM. The entry stays valid
 * while it has connections; without, until the next call on t. */
struct httpd_addr *httpd_addrs_get(struct httpd_addrs *t,
    const struct sockaddr_storage *ss);
/* Takes a connection for a: false (nothing taken) if it has max open
 * already; max 0: no bound. */
bool httpd_addr_connect(struct httpd_addrs *t, struct httpd_addr *a,
    unsigned max);
/* Gives one back; at none a goes to the idle list, most recent last. */
void httpd_addr_disconnect(struct httpd_addrs *t, struct httpd_addr *a);
/* Takes a request from a's bucket at now_us (monotonic), with the rate
 * (a second; bursts of twice it) in force now: whether it may go on.
 * rate 0: no bound, always true. */
bool httpd_addr_take(struct httpd_addr *a, unsigned rate, uint64_t now_us);

#endif /* FERRY_INTERMEDIARY_HTTPD_ADDR_H */
