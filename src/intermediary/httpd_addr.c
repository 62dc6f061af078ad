/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The HTTPS server's table of client addresses (httpd_addr.h), their
 * connections and request buckets; intermediary layer. */
#include "intermediary/httpd_addr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/map.h"
#include "lib/netaddr.h"

int
httpd_addrs_init(struct httpd_addrs *t, size_t max_idle)
{
	memset(t, 0, sizeof(*t));
	TAILQ_INIT(&t->idle);
	t->max_idle = max_idle;
	t->map = map_new();
	return t->map == NULL ? -ENOMEM : 0;
}

void
httpd_addrs_done(struct httpd_addrs *t)
{
	struct httpd_addr *a;

	/* Entries with connections are in no list: the server frees its
	 * connections (giving them back) before the table. */
	while ((a = TAILQ_FIRST(&t->idle)) != NULL) {
		TAILQ_REMOVE(&t->idle, a, idle);
		(void)map_remove(t->map, a->key, sizeof(a->key));
		free(a);
	}
	map_free(t->map);
	t->map = NULL;
	t->n = t->n_idle = 0;
}

/* The key of ss: one host's IPv6 addresses (a /64) count together. */
static void
httpd_addr_key(const struct sockaddr_storage *ss, uint8_t key[HTTPD_ADDR_KEY])
{
	struct sockaddr_storage u = *ss;
	const uint8_t *ip;
	size_t n;

	netaddr_unmap(&u);
	memset(key, 0, HTTPD_ADDR_KEY);
	n = netaddr_ip_bytes(&u, &ip);
	if (n == 4) {
		key[0] = 4;
		memcpy(key + 1, ip, 4);
	} else if (n == 16) {
		key[0] = 6;
		memcpy(key + 1, ip, 8);
	}
}

/* Forgetting an address without connections loses only its bucket, and
 * it comes back full: at most one burst more for an address that had to
 * be least recently seen of HTTPD_ADDRS_MAX, that is, for a client that
 * has that many addresses and so that much rate anyway. */
static void
httpd_addrs_forget_idle(struct httpd_addrs *t)
{
	struct httpd_addr *a = TAILQ_FIRST(&t->idle);

	TAILQ_REMOVE(&t->idle, a, idle);
	(void)map_remove(t->map, a->key, sizeof(a->key));
	free(a);
	t->n--;
	t->n_idle--;
}

struct httpd_addr *
httpd_addrs_get(struct httpd_addrs *t, const struct sockaddr_storage *ss)
{
	uint8_t key[HTTPD_ADDR_KEY];
	struct httpd_addr *a;

	httpd_addr_key(ss, key);
	a = map_get(t->map, key, sizeof(key));
	if (a != NULL) {
		if (a->conns == 0) {
			TAILQ_REMOVE(&t->idle, a, idle);
			TAILQ_INSERT_TAIL(&t->idle, a, idle);
		}
		return a;
	}
	while (t->n_idle > 0 && t->n_idle >= t->max_idle)
		httpd_addrs_forget_idle(t);
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	memcpy(a->key, key, sizeof(key));
	if (map_put(t->map, a->key, sizeof(a->key), a) < 0) {
		free(a);
		return NULL;
	}
	/* No rate yet: the first take sets the one in force then. */
	ratelimit_init(&a->rl, 0, 0);
	TAILQ_INSERT_TAIL(&t->idle, a, idle);
	t->n++;
	t->n_idle++;
	return a;
}

bool
httpd_addr_connect(struct httpd_addrs *t, struct httpd_addr *a, unsigned max)
{
	if (max != 0 && a->conns >= max)
		return false;
	if (a->conns++ == 0) {
		TAILQ_REMOVE(&t->idle, a, idle);
		t->n_idle--;
	}
	return true;
}

void
httpd_addr_disconnect(struct httpd_addrs *t, struct httpd_addr *a)
{
	if (--a->conns > 0)
		return;
	TAILQ_INSERT_TAIL(&t->idle, a, idle);
	t->n_idle++;
	while (t->n_idle > t->max_idle)
		httpd_addrs_forget_idle(t);
}

bool
httpd_addr_take(struct httpd_addr *a, unsigned rate, uint64_t now_us)
{
	if (rate == 0)
		return true;
	/* A reload may have changed the rate; a bucket that had none (new,
	 * or under no bound) starts full. */
	if (a->rl.rate != (double)rate) {
		if (a->rl.rate == 0)
			a->rl.tokens = 2.0 * rate;
		a->rl.rate = rate;
		a->rl.burst = 2.0 * rate;
	}
	return ratelimit_take(&a->rl, now_us, 1);
}
