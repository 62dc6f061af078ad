/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's routing table (see rtable.h), dht layer. A bucket keeps its
 * entries oldest first, as Kademlia's least-recently-seen order: a peer
 * that has answered for long is likely to go on answering, so a full
 * bucket keeps it and parks the newcomer in the replacement cache, from
 * which the most recently seen moves up when an entry dies.
 */
#include "dht/rtable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/wire.h"

struct rtable_bucket {
	struct rtable_entry *live;  /* k slots, n_live used, oldest first */
	struct rtable_entry *cache; /* k slots, n_cache used, oldest first */
	unsigned n_live;
	unsigned n_cache;
	uint64_t touched_us; /* last lookup into this bucket's range */
};

struct rtable {
	struct dhtkey self;
	unsigned k;
	unsigned per_net;
	struct rtable_bucket b[DHTKEY_BITS];
	struct rtable_stats st; /* entries, cached, buckets kept current */
};

/* Header of the file form: magic, version, reserved, self, count. */
#define RTABLE_FILE_HDR (4 + 2 + 2 + DHTKEY_LEN + 4)
#define RTABLE_FILE_ENTRY (DHTKEY_LEN + 8 + 2)

struct rtable *
rtable_new(const struct dhtkey *self, unsigned k, unsigned per_net)
{
	struct rtable *rt;

	if (k == 0 || k > RTABLE_K_MAX)
		return NULL;
	rt = calloc(1, sizeof(*rt));
	if (rt == NULL)
		return NULL;
	rt->self = *self;
	rt->k = k;
	rt->per_net = per_net;
	return rt;
}

static void
rtable_entry_done(struct rtable_entry *e)
{
	free(e->helo);
	e->helo = NULL;
	e->helo_len = 0;
}

void
rtable_free(struct rtable *rt)
{
	if (rt == NULL)
		return;
	for (size_t i = 0; i < DHTKEY_BITS; i++) {
		struct rtable_bucket *b = &rt->b[i];

		for (unsigned j = 0; j < b->n_live; j++)
			rtable_entry_done(&b->live[j]);
		for (unsigned j = 0; j < b->n_cache; j++)
			rtable_entry_done(&b->cache[j]);
		free(b->live);
		free(b->cache);
	}
	free(rt);
}

/* The bucket of id, or NULL for self. */
static struct rtable_bucket *
rtable_bucket_of(const struct rtable *rt, const struct dhtkey *id)
{
	unsigned prefix = dhtkey_common_prefix(&rt->self, id);

	if (prefix >= DHTKEY_BITS)
		return NULL;
	return (struct rtable_bucket *)&rt->b[prefix];
}

static int
rtable_bucket_alloc(struct rtable_bucket *b, unsigned k)
{
	if (b->live != NULL)
		return 0;
	b->live = calloc(k, sizeof(*b->live));
	b->cache = calloc(k, sizeof(*b->cache));
	if (b->live == NULL || b->cache == NULL) {
		free(b->live);
		free(b->cache);
		b->live = b->cache = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Index of id in list[0..n), or -1. */
static int
rtable_find(const struct rtable_entry *list, unsigned n,
    const struct dhtkey *id)
{
	for (unsigned i = 0; i < n; i++)
		if (dhtkey_equal(&list[i].id, id))
			return (int)i;
	return -1;
}

/* Takes list[i] out, keeping the order; the caller owns what it held. */
static struct rtable_entry
rtable_take(struct rtable_entry *list, unsigned *n, unsigned i)
{
	struct rtable_entry e = list[i];

	memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof(*list));
	(*n)--;
	return e;
}

static unsigned
rtable_net_count(const struct rtable_bucket *b, uint64_t net)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n_live; i++)
		n += b->live[i].net == net;
	return n;
}

/* Newest replacement of b into its live list, if there is one. */
static void
rtable_promote(struct rtable *rt, struct rtable_bucket *b)
{
	for (unsigned i = b->n_cache; i-- > 0;) {
		uint64_t net = b->cache[i].net;

		/* The bound on networks holds for replacements too. */
		if (net != 0 && rt->per_net != 0 &&
		    rtable_net_count(b, net) >= rt->per_net)
			continue;
		b->live[b->n_live++] = rtable_take(b->cache, &b->n_cache, i);
		rt->st.cached--;
		rt->st.entries++;
		rt->st.replaced++;
		return;
	}
	rt->st.removed++;
}

/* Puts e in b's replacement cache, dropping the oldest when it is full. */
static void
rtable_cache(struct rtable *rt, struct rtable_bucket *b,
    const struct dhtkey *id, uint64_t net, uint64_t now)
{
	int at = rtable_find(b->cache, b->n_cache, id);
	struct rtable_entry e;

	if (at >= 0) {
		e = rtable_take(b->cache, &b->n_cache, (unsigned)at);
	} else {
		memset(&e, 0, sizeof(e));
		e.id = *id;
		if (b->n_cache == rt->k) {
			struct rtable_entry old =
			    rtable_take(b->cache, &b->n_cache, 0);

			rtable_entry_done(&old);
		} else {
			rt->st.cached++;
		}
	}
	e.net = net;
	e.last_seen_us = now;
	b->cache[b->n_cache++] = e;
}

enum rtable_verdict
rtable_seen(struct rtable *rt, const struct dhtkey *id, uint64_t net,
    uint64_t now)
{
	struct rtable_bucket *b = rtable_bucket_of(rt, id);
	struct rtable_entry e;
	int at;

	if (b == NULL)
		return RTABLE_SELF;
	at = rtable_find(b->live, b->n_live, id);
	if (at >= 0) {
		e = rtable_take(b->live, &b->n_live, (unsigned)at);
		e.last_seen_us = now;
		e.fails = 0;
		b->live[b->n_live++] = e;
		return RTABLE_UPDATED;
	}
	if (net != 0 && rt->per_net != 0 &&
	    rtable_net_count(b, net) >= rt->per_net) {
		rt->st.diversity++;
		return RTABLE_DIVERSITY;
	}
	if (rtable_bucket_alloc(b, rt->k) < 0)
		return RTABLE_NOMEM;
	if (b->n_live == rt->k) {
		rtable_cache(rt, b, id, net, now);
		return RTABLE_CACHED;
	}
	/* A newcomer that waited in the cache moves up with its HELOs. */
	at = rtable_find(b->cache, b->n_cache, id);
	if (at >= 0) {
		e = rtable_take(b->cache, &b->n_cache, (unsigned)at);
		rt->st.cached--;
	} else {
		memset(&e, 0, sizeof(e));
		e.id = *id;
	}
	e.net = net;
	e.last_seen_us = now;
	e.fails = 0;
	if (b->n_live == 0)
		rt->st.buckets++;
	b->live[b->n_live++] = e;
	rt->st.entries++;
	rt->st.added++;
	return RTABLE_ADDED;
}

/* Removes live entry i of b and lets a replacement in. */
static void
rtable_drop_live(struct rtable *rt, struct rtable_bucket *b, unsigned i)
{
	struct rtable_entry e = rtable_take(b->live, &b->n_live, i);

	rtable_entry_done(&e);
	rt->st.entries--;
	rtable_promote(rt, b);
	if (b->n_live == 0)
		rt->st.buckets--;
}

bool
rtable_failed(struct rtable *rt, const struct dhtkey *id,
    unsigned max_fails)
{
	struct rtable_bucket *b = rtable_bucket_of(rt, id);
	int at;

	if (b == NULL)
		return false;
	at = rtable_find(b->live, b->n_live, id);
	if (at < 0)
		return false;
	if (++b->live[at].fails < max_fails)
		return false;
	rtable_drop_live(rt, b, (unsigned)at);
	return true;
}

void
rtable_remove(struct rtable *rt, const struct dhtkey *id)
{
	struct rtable_bucket *b = rtable_bucket_of(rt, id);
	struct rtable_entry e;
	int at;

	if (b == NULL)
		return;
	at = rtable_find(b->live, b->n_live, id);
	if (at >= 0) {
		rtable_drop_live(rt, b, (unsigned)at);
		return;
	}
	at = rtable_find(b->cache, b->n_cache, id);
	if (at >= 0) {
		e = rtable_take(b->cache, &b->n_cache, (unsigned)at);
		rtable_entry_done(&e);
		rt->st.cached--;
	}
}

bool
rtable_has_room(const struct rtable *rt, const struct dhtkey *id)
{
	const struct rtable_bucket *b = rtable_bucket_of(rt, id);

	return b != NULL && (b->n_live < rt->k ||
	    rtable_find(b->live, b->n_live, id) >= 0);
}

bool
rtable_knows_near(const struct rtable *rt, const struct dhtkey *key)
{
	/* Peers closer to key than this node are those of key's bucket and
	 * some of the deeper ones (sharing more of our prefix). */
	for (unsigned p = dhtkey_common_prefix(&rt->self, key); p < DHTKEY_BITS;
	     p++)
		if (rt->b[p].n_live >= rt->k)
			return false;
	return true;
}

const struct rtable_entry *
rtable_get(const struct rtable *rt, const struct dhtkey *id)
{
	const struct rtable_bucket *b = rtable_bucket_of(rt, id);
	int at;

	if (b == NULL)
		return NULL;
	at = rtable_find(b->live, b->n_live, id);
	return at >= 0 ? &b->live[at] : NULL;
}

int
rtable_set_helo(struct rtable *rt, const struct dhtkey *id,
    const void *helo, size_t len)
{
	struct rtable_bucket *b = rtable_bucket_of(rt, id);
	struct rtable_entry *e = NULL;
	uint8_t *copy;
	int at;

	if (len > RTABLE_HELO_MAX)
		return -EMSGSIZE;
	if (b == NULL)
		return -ENOENT;
	if ((at = rtable_find(b->live, b->n_live, id)) >= 0)
		e = &b->live[at];
	else if ((at = rtable_find(b->cache, b->n_cache, id)) >= 0)
		e = &b->cache[at];
	if (e == NULL)
		return -ENOENT;
	copy = malloc(len > 0 ? len : 1);
	if (copy == NULL)
		return -ENOMEM;
	if (len > 0)
		memcpy(copy, helo, len);
	free(e->helo);
	e->helo = copy;
	e->helo_len = len;
	return 0;
}

/* Inserts e into the n-long list ret, sorted by distance to key, that
 * may hold max; returns the new length. */
static size_t
rtable_insert_sorted(const struct dhtkey *key, const struct rtable_entry **ret,
    size_t n, size_t max, const struct rtable_entry *e)
{
	size_t at = n;

	while (at > 0 && dhtkey_closer(key, &e->id, &ret[at - 1]->id) < 0)
		at--;
	if (at >= max)
		return n;
	if (n == max)
		n--;
	memmove(&ret[at + 1], &ret[at], (n - at) * sizeof(*ret));
	ret[at] = e;
	return n + 1;
}

size_t
rtable_closest(const struct rtable *rt, const struct dhtkey *key, size_t n,
    const struct rtable_entry **ret)
{
	size_t got = 0;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < DHTKEY_BITS; i++)
		for (unsigned j = 0; j < rt->b[i].n_live; j++)
			got = rtable_insert_sorted(key, ret, got, n,
			    &rt->b[i].live[j]);
	return got;
}

/* Bit i of k, the most significant first. */
static unsigned
rtable_bit(const struct dhtkey *k, unsigned i)
{
	return (k->b[i / 8] >> (7 - i % 8)) & 1;
}

/*
 * The buckets in the order of their entries' distance to key, closest
 * first, into order; how many of them come before this node. With p the
 * prefix key shares with self: bucket p's entries agree with key on bit
 * p, where self does not, and are the closest. An entry of bucket i > p
 * agrees with self up to bit i and differs from it there, so it is
 * closer than self when key differs from self on bit i, and those
 * buckets come next, shallowest first; the other buckets past p are
 * farther than self, deepest first; last the buckets i < p, whose
 * entries differ from key on bit i already, deepest first.
 */
static unsigned
rtable_bucket_order(const struct dhtkey *self, const struct dhtkey *key,
    uint16_t order[DHTKEY_BITS], unsigned *ret_closer)
{
	unsigned p = dhtkey_common_prefix(self, key), n = 0;

	if (p < DHTKEY_BITS)
		order[n++] = (uint16_t)p;
	for (unsigned i = p + 1; i < DHTKEY_BITS; i++)
		if (rtable_bit(key, i) != rtable_bit(self, i))
			order[n++] = (uint16_t)i;
	*ret_closer = n;
	for (unsigned i = DHTKEY_BITS; i-- > p + 1;)
		if (rtable_bit(key, i) == rtable_bit(self, i))
			order[n++] = (uint16_t)i;
	for (unsigned i = p < DHTKEY_BITS ? p : DHTKEY_BITS; i-- > 0;)
		order[n++] = (uint16_t)i;
	return n;
}

const struct rtable_entry *
rtable_closest_match(const struct rtable *rt, const struct dhtkey *key,
    bool closer_only, rtable_match_fn *match, void *cls)
{
	const struct rtable_entry *best = NULL;
	uint16_t order[DHTKEY_BITS];
	unsigned closer, n;

	n = rtable_bucket_order(&rt->self, key, order, &closer);
	if (closer_only)
		n = closer;
	/* Every entry of a bucket is closer than every entry of the buckets
	 * after it: the first bucket with a match holds the answer. */
	for (unsigned i = 0; i < n && best == NULL; i++) {
		const struct rtable_bucket *b = &rt->b[order[i]];

		for (unsigned j = 0; j < b->n_live; j++) {
			const struct rtable_entry *e = &b->live[j];

			if ((best == NULL ||
			        dhtkey_closer(key, &e->id, &best->id) < 0) &&
			    (match == NULL || match(cls, e)))
				best = e;
		}
	}
	return best;
}

void
rtable_foreach(const struct rtable *rt, rtable_visit_fn *fn, void *cls)
{
	for (size_t i = 0; i < DHTKEY_BITS; i++)
		for (unsigned j = 0; j < rt->b[i].n_live; j++)
			fn(cls, &rt->b[i].live[j]);
}

void
rtable_get_stats(const struct rtable *rt, struct rtable_stats *ret)
{
	*ret = rt->st;
}

unsigned
rtable_k(const struct rtable *rt)
{
	return rt->k;
}

const struct dhtkey *
rtable_self(const struct rtable *rt)
{
	return &rt->self;
}

void
rtable_touch(struct rtable *rt, unsigned prefix, uint64_t now)
{
	if (prefix < DHTKEY_BITS)
		rt->b[prefix].touched_us = now;
}

int
rtable_stale_bucket(const struct rtable *rt, uint64_t now,
    uint64_t interval_us, unsigned *ret_prefix)
{
	unsigned deepest = 0;

	for (unsigned i = 0; i < DHTKEY_BITS; i++)
		if (rt->b[i].n_live > 0)
			deepest = i + 1;
	/* Beyond the deepest non-empty bucket and one more, no peer is
	 * known to exist: looking there would find nothing. */
	for (unsigned i = 0; i <= deepest && i < DHTKEY_BITS; i++) {
		if (now >= interval_us &&
		    rt->b[i].touched_us > now - interval_us)
			continue;
		if (now < interval_us && rt->b[i].touched_us != 0)
			continue;
		*ret_prefix = i;
		return 0;
	}
	return -ENOENT;
}

uint64_t
rtable_net_of(const uint8_t *addr, size_t len)
{
	uint64_t net = 0;
	size_t n = len == 4 ? 3 : len == 16 ? 6 : 0;

	/* The length goes in too, so that no v4 network equals a v6 one;
	 * and it keeps a known network from ever being 0. */
	for (size_t i = 0; i < n; i++)
		net = net << 8 | addr[i];
	return n == 0 ? 0 : net | (uint64_t)len << 56;
}

static int
rtable_encode_entry(const struct rtable_entry *e, struct buf *out)
{
	uint8_t *p = buf_reserve(out, RTABLE_FILE_ENTRY + e->helo_len);

	if (p == NULL)
		return -ENOMEM;
	memcpy(p, e->id.b, DHTKEY_LEN);
	wire_put64(p + DHTKEY_LEN, e->net);
	wire_put16(p + DHTKEY_LEN + 8, (uint16_t)e->helo_len);
	if (e->helo_len > 0)
		memcpy(p + RTABLE_FILE_ENTRY, e->helo, e->helo_len);
	buf_commit(out, RTABLE_FILE_ENTRY + e->helo_len);
	return 0;
}

int
rtable_encode(const struct rtable *rt, struct buf *out)
{
	uint8_t *p = buf_reserve(out, RTABLE_FILE_HDR);
	int r;

	if (p == NULL)
		return -ENOMEM;
	wire_put32(p, RTABLE_FILE_MAGIC);
	wire_put16(p + 4, RTABLE_FILE_VERSION);
	wire_put16(p + 6, 0);
	memcpy(p + 8, rt->self.b, DHTKEY_LEN);
	wire_put32(p + 8 + DHTKEY_LEN, (uint32_t)rt->st.entries);
	buf_commit(out, RTABLE_FILE_HDR);
	for (size_t i = 0; i < DHTKEY_BITS; i++)
		for (unsigned j = 0; j < rt->b[i].n_live; j++) {
			r = rtable_encode_entry(&rt->b[i].live[j], out);
			if (r < 0)
				return r;
		}
	return 0;
}

/* Checks the whole file form before anything is added. */
static int
rtable_check_file(const struct rtable *rt, const uint8_t *p, size_t len,
    uint32_t *ret_count)
{
	uint32_t count;
	size_t off = RTABLE_FILE_HDR;

	if (len < RTABLE_FILE_HDR || wire_get32(p) != RTABLE_FILE_MAGIC ||
	    wire_get16(p + 4) != RTABLE_FILE_VERSION || wire_get16(p + 6) != 0)
		return -EBADMSG;
	count = wire_get32(p + 8 + DHTKEY_LEN);
	for (uint32_t i = 0; i < count; i++) {
		size_t helo_len;

		if (len - off < RTABLE_FILE_ENTRY)
			return -EBADMSG;
		helo_len = wire_get16(p + off + DHTKEY_LEN + 8);
		if (helo_len > RTABLE_HELO_MAX ||
		    len - off - RTABLE_FILE_ENTRY < helo_len)
			return -EBADMSG;
		off += RTABLE_FILE_ENTRY + helo_len;
	}
	if (off != len)
		return -EBADMSG;
	if (memcmp(p + 8, rt->self.b, DHTKEY_LEN) != 0)
		return -ESTALE;
	*ret_count = count;
	return 0;
}

int
rtable_decode(struct rtable *rt, const void *data, size_t len, uint64_t now)
{
	const uint8_t *p = data;
	size_t off = RTABLE_FILE_HDR;
	uint32_t count;
	int r = rtable_check_file(rt, p, len, &count);

	if (r < 0)
		return r;
	for (uint32_t i = 0; i < count; i++) {
		struct dhtkey id;
		size_t helo_len = wire_get16(p + off + DHTKEY_LEN + 8);

		memcpy(id.b, p + off, DHTKEY_LEN);
		/* Whatever the file says, the table's bounds hold. */
		(void)rtable_seen(rt, &id, wire_get64(p + off + DHTKEY_LEN),
		    now);
		if (helo_len > 0) {
			r = rtable_set_helo(rt, &id, p + off + RTABLE_FILE_ENTRY,
			    helo_len);
			if (r == -ENOMEM)
				return r;
		}
		off += RTABLE_FILE_ENTRY + helo_len;
	}
	return 0;
}
