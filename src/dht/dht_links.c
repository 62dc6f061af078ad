/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's choice of links, dht layer (DESIGN.md: "The DHT, not the
 * core, chooses which peers stay linked"; issue 12). It asks for links to
 * the entries of its routing table, and, where the node below lets it
 * drop links (env.unlink), drops those it asked for that neither its
 * table nor a local client needs, once it has more of them than it keeps
 * spare. A link the peer asked for is the peer's to drop (core_links.h).
 *
 * What keeps links from flapping: a link is dropped only once it has
 * been up and idle (no DHT message from the peer) for LINK_GRACE, so that
 * a link in use stays; surplus links are dropped only past SPARE_LINKS,
 * and then down to half of it, least recently used first; a table entry whose
 * link went down is asked for again at once if the link had lasted
 * LINK_GRACE (the peer dropped a link it had asked for: ours will stay),
 * else after a wait that doubles each time one came and went. A request that
 * brought no link within DHT_LINK_RETRY_US counts as an unanswered
 * request, so that an entry nobody can reach leaves its bucket for a
 * replacement (Kademlia).
 */
#define LOG_TAG "dht"
#include "dht/dht_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/map.h"
#include "lib/stats.h"

#define DHT_LINK_PASS_US      (1000u * 1000)             /* policy pass */
#define DHT_LINK_RETRY_US     (30ull * 1000 * 1000)      /* for a link */
#define DHT_LINK_RETRY_MAX_US (30ull * 60 * 1000 * 1000) /* longest */

/* A peer linked now, or a table entry the DHT asked a link for. */
struct dht_link {
	TAILQ_ENTRY(dht_link) next; /* in dht_links.all */
	struct dhtkey id;           /* key in dht_links.by_id */
	uint64_t up_us;             /* its link came up then; 0: down */
	uint64_t used_us;           /* last DHT message from it */
	uint64_t retry_us;          /* no request before then */
	uint64_t backoff_us;        /* the wait after the next request */
	bool asked;                 /* a request of ours is under way */
};

/* The "dht.links*" counters. */
struct dht_links_counters {
	uint64_t *links;         /* gauge: peers linked now */
	uint64_t *links_surplus; /* gauge: ours, needed by nobody */
	uint64_t *links_asked;   /* links the DHT asked for */
	uint64_t *links_made;    /* of them, links that came up */
	uint64_t *links_dropped; /* surplus links the DHT dropped */
};

struct dht_links {
	TAILQ_HEAD(, dht_link) all;
	struct map *by_id;
	size_t n_up;
	uint64_t next_pass_us;
	struct dht_links_counters c;
};

int
dht_links_new(struct dht *d)
{
	static const struct stats_slot slots[] = {
#define C(f) STATS_SLOT(struct dht_links_counters, f)
		C(links), C(links_surplus), C(links_asked), C(links_made),
		C(links_dropped),
#undef C
	};
	struct dht_links *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return -ENOMEM;
	TAILQ_INIT(&l->all);
	l->by_id = map_new();
	d->links = l;
	if (l->by_id == NULL ||
	    stats_bind(&l->c, slots, sizeof(slots) / sizeof(slots[0]),
	        d->env.stat, d->env.cls) < 0)
		return -ENOMEM;
	return 0;
}

static void
dht_link_free(struct dht_links *l, struct dht_link *k)
{
	TAILQ_REMOVE(&l->all, k, next);
	(void)map_remove(l->by_id, k->id.b, sizeof(k->id.b));
	free(k);
}

void
dht_links_free(struct dht *d)
{
	struct dht_links *l = d->links;
	struct dht_link *k;

	if (l == NULL)
		return;
	while ((k = TAILQ_FIRST(&l->all)) != NULL)
		dht_link_free(l, k);
	map_free(l->by_id);
	free(l);
	d->links = NULL;
}

static struct dht_link *
dht_link_find(struct dht *d, const struct dhtkey *id)
{
	return map_get(d->links->by_id, id->b, sizeof(id->b));
}

/* The state of id, made if need be; NULL on OOM. */
static struct dht_link *
dht_link_get(struct dht *d, const struct dhtkey *id)
{
	struct dht_links *l = d->links;
	struct dht_link *k = dht_link_find(d, id);

	if (k != NULL)
		return k;
	k = calloc(1, sizeof(*k));
	if (k == NULL)
		return NULL;
	k->id = *id;
	k->backoff_us = DHT_LINK_RETRY_US;
	if (map_put(l->by_id, k->id.b, sizeof(k->id.b), k) < 0) {
		free(k);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&l->all, k, next);
	return k;
}

int
dht_links_ask(struct dht *d, const struct dhtkey *peer, const void *helo,
    size_t helo_len)
{
	struct dht_link *k;
	int r;

	if (d->env.linked(d->env.cls, peer))
		return 0;
	r = d->env.link(d->env.cls, peer, helo, helo_len);
	if (r < 0)
		return r;
	(*d->links->c.links_asked)++;
	k = dht_link_get(d, peer);
	if (k != NULL)
		k->asked = true;
	return 0;
}

void
dht_links_up(struct dht *d, const struct dhtkey *peer)
{
	struct dht_link *k = dht_link_get(d, peer);
	uint64_t now = dht_now(d);

	if (k == NULL || k->up_us != 0)
		return;
	if (k->asked)
		(*d->links->c.links_made)++;
	k->asked = false;
	k->up_us = now;
	k->used_us = now;
	*d->links->c.links = ++d->links->n_up;
}

/* Asks for a link to table entry id if it has none and its wait is
 * over. A request that brought no link by then counts as unanswered. */
static void
dht_links_want(struct dht *d, const struct dhtkey *id, uint64_t now)
{
	const struct rtable_entry *e;
	struct dht_link *k;
	int r;

	if (d->env.linked(d->env.cls, id))
		return;
	k = dht_link_get(d, id);
	if (k == NULL || now < k->retry_us)
		return;
	if (k->asked && rtable_failed(d->rt, id, d->cfg.max_fails))
		return; /* gone; a replacement took its place */
	e = rtable_get(d->rt, id);
	if (e == NULL)
		return;
	k->retry_us = now + DHT_LINK_RETRY_US;
	r = dht_links_ask(d, id, e->helo, e->helo_len);
	/* No address known anywhere: nothing will ever reach it. */
	if (r == -ENOENT)
		(void)rtable_failed(d->rt, id, d->cfg.max_fails);
}

void
dht_links_down(struct dht *d, const struct dhtkey *peer)
{
	struct dht_link *k = dht_link_find(d, peer);
	uint64_t now = dht_now(d);

	if (k == NULL || k->up_us == 0)
		return;
	*d->links->c.links = --d->links->n_up;
	/* A link that lasted is asked for again at once: a peer drops only
	 * links it asked for, and this one it will keep. One that came and
	 * went is asked for ever later. */
	if (now - k->up_us >= d->cfg.link_grace_us) {
		k->backoff_us = DHT_LINK_RETRY_US;
		k->retry_us = now;
	} else {
		k->retry_us = now + k->backoff_us;
		if (k->backoff_us < DHT_LINK_RETRY_MAX_US)
			k->backoff_us *= 2;
	}
	k->up_us = 0;
	k->asked = false;
	if (rtable_get(d->rt, peer) == NULL) {
		dht_link_free(d->links, k);
		return;
	}
	/* Now, before the peer asks for the link again for its own
	 * reasons (to answer us), which would make it the peer's to drop. */
	dht_links_want(d, peer, now);
}

void
dht_links_used(struct dht *d, const struct dhtkey *peer)
{
	struct dht_link *k = dht_link_find(d, peer);

	if (k != NULL && k->up_us != 0)
		k->used_us = dht_now(d);
}

struct dht_links_ids {
	struct dhtkey *ids;
	size_t n, cap;
};

static void
dht_links_collect(void *cls, const struct rtable_entry *e)
{
	struct dht_links_ids *s = cls;

	if (s->n < s->cap)
		s->ids[s->n++] = e->id;
}

/* Every table entry is to be linked. The ids are copied first: asking
 * for links may change the table. */
static void
dht_links_fill(struct dht *d, uint64_t now)
{
	struct rtable_stats st;
	struct dht_links_ids s;

	rtable_get_stats(d->rt, &st);
	s.cap = st.entries;
	s.n = 0;
	s.ids = calloc(s.cap ? s.cap : 1, sizeof(*s.ids));
	if (s.ids == NULL)
		return;
	rtable_foreach(d->rt, dht_links_collect, &s);
	for (size_t i = 0; i < s.n; i++)
		dht_links_want(d, &s.ids[i], now);
	free(s.ids);
}

static int
dht_links_by_use(const void *a, const void *b)
{
	const struct dht_link *x = *(struct dht_link *const *)a;
	const struct dht_link *y = *(struct dht_link *const *)b;

	return x->used_us < y->used_us ? -1 : x->used_us > y->used_us;
}

/* True if the link to k is ours, and neither the table nor a local
 * client needs it. */
static bool
dht_links_is_surplus(struct dht *d, const struct dht_link *k)
{
	return k->up_us != 0 && rtable_get(d->rt, &k->id) == NULL &&
	    d->env.linked(d->env.cls, &k->id) &&
	    d->env.may_unlink(d->env.cls, &k->id);
}

/* Drops surplus links idle for LINK_GRACE, least recently used first,
 * once there are more than SPARE_LINKS, until half of that remain. */
static void
dht_links_trim(struct dht *d, uint64_t now)
{
	struct dht_links *l = d->links;
	struct dht_link **old, *k;
	size_t n_surplus = 0, n_old = 0;

	old = calloc(l->n_up ? l->n_up : 1, sizeof(*old));
	if (old == NULL)
		return;
	TAILQ_FOREACH(k, &l->all, next) {
		if (!dht_links_is_surplus(d, k))
			continue;
		n_surplus++;
		if (now - k->used_us >= d->cfg.link_grace_us && n_old < l->n_up)
			old[n_old++] = k;
	}
	*l->c.links_surplus = n_surplus;
	if (n_surplus > d->cfg.spare_links) {
		qsort(old, n_old, sizeof(*old), dht_links_by_use);
		for (size_t i = 0;
		     i < n_old && n_surplus > d->cfg.spare_links / 2; i++) {
			if (d->env.unlink(d->env.cls, &old[i]->id) < 0)
				continue;
			(*l->c.links_dropped)++;
			n_surplus--;
		}
		*l->c.links_surplus = n_surplus;
	}
	free(old);
}

void
dht_links_tick(struct dht *d)
{
	struct dht_links *l = d->links;
	uint64_t now = dht_now(d);
	struct dht_link *k, *next;

	if (now < l->next_pass_us)
		return;
	l->next_pass_us = now + DHT_LINK_PASS_US;
	dht_links_fill(d, now);
	/* What is down and left the table is forgotten. */
	for (k = TAILQ_FIRST(&l->all); k != NULL; k = next) {
		next = TAILQ_NEXT(k, next);
		if (k->up_us == 0 && now >= k->retry_us &&
		    rtable_get(d->rt, &k->id) == NULL)
			dht_link_free(l, k);
	}
	if (d->env.unlink != NULL && d->env.may_unlink != NULL)
		dht_links_trim(d, now);
}
