/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A network of DHT nodes in one process, in virtual time (see dhtsim.h):
 * the struct dht_env of each node, the queue that carries its messages,
 * link events and store completions, and the clock that drives it.
 */
#include "dhtsim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/map.h"
#include "lib/stats.h"
#include "core/identity.h"

#define DHTSIM_N_MAX 65536 /* a HELO holds the index in 2 bytes */

enum dhtsim_kind { SIM_MSG, SIM_UP, SIM_DOWN, SIM_STORED, SIM_GOT, SIM_WAKE };

struct dhtsim_event {
	enum dhtsim_kind kind;
	int from, to;  /* nodes; a store's and a wake's: to */
	uint16_t type; /* a message's */
	uint8_t *body; /* a message's, owned */
	size_t len;
	struct dhtkey key; /* a get's */
	dht_store_done_fn *done;
	dht_store_got_fn *got;
	void *arg;
};

static int
sim_push(struct dhtsim *s, const struct dhtsim_event *e)
{
	if (s->q_len == s->q_cap) {
		size_t cap = s->q_cap ? s->q_cap * 2 : 1024;
		struct dhtsim_event *q = malloc(cap * sizeof(*q));

		if (q == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < s->q_len; i++)
			q[i] = s->q[(s->q_head + i) % s->q_cap];
		free(s->q);
		s->q = q;
		s->q_cap = cap;
		s->q_head = 0;
	}
	s->q[(s->q_head + s->q_len) % s->q_cap] = *e;
	s->q_len++;
	return 0;
}

static bool
sim_pop(struct dhtsim *s, struct dhtsim_event *ret)
{
	if (s->q_len == 0)
		return false;
	*ret = s->q[s->q_head];
	s->q_head = (s->q_head + 1) % s->q_cap;
	s->q_len--;
	return true;
}

/* An event of kind (a link's coming up or going down) for a about b,
 * then for b about a. */
static int
sim_push_pair(struct dhtsim *s, enum dhtsim_kind kind, int a, int b)
{
	struct dhtsim_event e = { .kind = kind, .from = a, .to = b };
	int r = sim_push(s, &e);

	e.from = b;
	e.to = a;
	return r < 0 ? r : sim_push(s, &e);
}

/* Appends e to a side list (held or parked). */
static int
sim_keep(struct dhtsim_event **list, size_t *n, size_t *cap,
    const struct dhtsim_event *e)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct dhtsim_event *l = realloc(*list, c * sizeof(*l));

		if (l == NULL)
			return -ENOMEM;
		*list = l;
		*cap = c;
	}
	(*list)[(*n)++] = *e;
	return 0;
}

/* a's record of b; made if create (NULL then on OOM). */
static struct dhtsim_link *
sim_link_rec(const struct dhtsim *s, int a, int b, bool create)
{
	struct dhtsim_node *n = &s->nodes[a];
	struct dhtsim_link *l = map_get(n->links, &b, sizeof(b));

	if (l != NULL || !create)
		return l;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	l->peer = b;
	if (map_put(n->links, &l->peer, sizeof(l->peer), l) < 0) {
		free(l);
		return NULL;
	}
	l->next = n->link_list;
	n->link_list = l;
	return l;
}

struct dhtsim_node *
dhtsim_node_of(const struct dhtsim *s, const struct dhtkey *id)
{
	return map_get(s->by_id, id->b, sizeof(id->b));
}

bool
dhtsim_linked(const struct dhtsim *s, int a, int b)
{
	const struct dhtsim_link *l = sim_link_rec(s, a, b, false);

	return l != NULL && l->up;
}

struct dhtsim_link
dhtsim_link_get(const struct dhtsim *s, int a, int b)
{
	const struct dhtsim_link *l = sim_link_rec(s, a, b, false);
	struct dhtsim_link none = { .peer = b };

	return l != NULL ? *l : none;
}

int
dhtsim_pin(struct dhtsim *s, int a, int b, bool pinned)
{
	struct dhtsim_link *l = sim_link_rec(s, a, b, true);

	if (l == NULL)
		return -ENOMEM;
	l->pinned = pinned;
	return 0;
}

int
dhtsim_link(struct dhtsim *s, int a, int b)
{
	struct dhtsim_link *la, *lb;
	struct dhtsim_node *na, *nb;
	int r;

	if (a == b || a < 0 || b < 0 || a >= s->n || b >= s->n)
		return -EINVAL;
	na = &s->nodes[a];
	nb = &s->nodes[b];
	la = sim_link_rec(s, a, b, true);
	lb = sim_link_rec(s, b, a, true);
	if (la == NULL || lb == NULL)
		return -ENOMEM;
	if (la->up) {
		la->asked = true;
		return 0;
	}
	if (!na->alive || !nb->alive || na->unreachable || nb->unreachable)
		return 0; /* asked in vain, as of a peer that never answers */
	/* An event that made it alone finds the link down: nothing. */
	r = sim_push_pair(s, SIM_UP, a, b);
	if (r < 0)
		return r;
	la->asked = true;
	la->up = lb->up = true;
	la->known = lb->known = true;
	la->born_us = lb->born_us = s->now_us;
	return 0;
}

void
dhtsim_cut(struct dhtsim *s, int a, int b, bool tell)
{
	struct dhtsim_link *la = sim_link_rec(s, a, b, false);
	struct dhtsim_link *lb = sim_link_rec(s, b, a, false);

	if (la == NULL || lb == NULL || !la->up)
		return;
	la->up = lb->up = false;
	la->asked = lb->asked = false;
	if (!tell)
		return;
	/* Without memory a side does not hear of it: as a lost message. */
	(void)sim_push_pair(s, SIM_DOWN, a, b);
}

void
dhtsim_cut_all(struct dhtsim *s, int i, bool tell)
{
	for (struct dhtsim_link *l = s->nodes[i].link_list; l != NULL;
	     l = l->next)
		dhtsim_cut(s, i, l->peer, tell);
}

int
dhtsim_send(struct dhtsim *s, int a, int b, uint16_t type, const void *body,
    size_t len)
{
	struct dhtsim_event e = { .kind = SIM_MSG,
		.from = a,
		.to = b,
		.type = type,
		.len = len };
	enum dhtsim_verdict v = DHTSIM_DELIVER;
	int r;

	if (!dhtsim_linked(s, a, b))
		return -ENOTCONN;
	if (s->filter != NULL)
		v = s->filter(s->filter_arg, a, b, type, len);
	if (v == DHTSIM_FULL) {
		s->c.full++;
		return -EAGAIN;
	}
	if (v == DHTSIM_DROP) {
		s->c.dropped++;
		return 0;
	}
	e.body = malloc(len ? len : 1);
	if (e.body == NULL)
		return -ENOMEM;
	memcpy(e.body, body, len);
	if (v == DHTSIM_HOLD) {
		r = sim_keep(&s->held, &s->n_held, &s->cap_held, &e);
		s->c.held += r == 0;
	} else {
		r = sim_push(s, &e);
	}
	if (r < 0)
		free(e.body);
	return r;
}

void
dhtsim_release(struct dhtsim *s)
{
	size_t i;

	for (i = 0; i < s->n_held; i++)
		if (sim_push(s, &s->held[i]) < 0)
			break;
	/* What did not fit is lost on the way. */
	for (; i < s->n_held; i++) {
		free(s->held[i].body);
		s->c.dropped++;
	}
	s->n_held = 0;
}

/* The env of a node; cls is the node. */

static struct dhtsim_node *
env_peer(void *cls, const struct dhtkey *peer)
{
	return dhtsim_node_of(((struct dhtsim_node *)cls)->sim, peer);
}

static int
env_send(void *cls, const struct dhtkey *peer, uint16_t type, const void *body,
    size_t len)
{
	struct dhtsim_node *n = cls, *to = env_peer(cls, peer);

	if (to == NULL)
		return -ENOTCONN;
	return dhtsim_send(n->sim, n->idx, to->idx, type, body, len);
}

static bool
env_linked(void *cls, const struct dhtkey *peer)
{
	struct dhtsim_node *n = cls, *to = env_peer(cls, peer);

	return to != NULL && dhtsim_linked(n->sim, n->idx, to->idx);
}

/* A HELO, if given, must be the peer's; without one the peer's address
 * must be known already, as the core's peer book would. */
static int
env_link(void *cls, const struct dhtkey *peer, const void *helo,
    size_t helo_len)
{
	struct dhtsim_node *n = cls, *to = env_peer(cls, peer);
	struct dhtsim_link *l;
	const uint8_t *h = helo;

	if (n->sim->links_frozen)
		return -EPERM;
	if (to == NULL ||
	    (helo_len > 0 && (helo_len != 2 || (h[0] << 8 | h[1]) != to->idx)))
		return -ENOENT;
	l = sim_link_rec(n->sim, n->idx, to->idx, true);
	if (l == NULL)
		return -ENOMEM;
	if (helo_len > 0)
		l->known = true;
	if (!l->known)
		return -ENOENT;
	return dhtsim_link(n->sim, n->idx, to->idx);
}

static int
env_unlink(void *cls, const struct dhtkey *peer)
{
	struct dhtsim_node *n = cls, *to = env_peer(cls, peer);
	struct dhtsim_link *l;

	l = to != NULL ? sim_link_rec(n->sim, n->idx, to->idx, false) : NULL;
	if (l == NULL || !l->up || !l->asked || l->pinned) {
		/* The DHT drops only what the env lets it. */
		n->sim->c.bad_unlinks++;
		return l == NULL || !l->up ? -ENOTCONN : -EPERM;
	}
	n->unlinks++;
	dhtsim_cut(n->sim, n->idx, to->idx, true);
	return 0;
}

static bool
env_may_unlink(void *cls, const struct dhtkey *peer)
{
	struct dhtsim_node *n = cls, *to = env_peer(cls, peer);
	struct dhtsim_link l;

	if (to == NULL)
		return false;
	l = dhtsim_link_get(n->sim, n->idx, to->idx);
	return l.asked && !l.pinned;
}

static size_t
sim_helo(int idx, uint8_t *buf, size_t size)
{
	if (size < 2)
		return 0;
	buf[0] = (uint8_t)(idx >> 8);
	buf[1] = (uint8_t)idx;
	return 2;
}

static size_t
env_own_helo(void *cls, uint8_t *buf, size_t size)
{
	return sim_helo(((struct dhtsim_node *)cls)->idx, buf, size);
}

static size_t
env_peer_helo(void *cls, const struct dhtkey *peer, uint8_t *buf, size_t size)
{
	struct dhtsim_node *to = env_peer(cls, peer);

	return to == NULL ? 0 : sim_helo(to->idx, buf, size);
}

static uint64_t
env_now(void *cls)
{
	return ((struct dhtsim_node *)cls)->sim->now_us;
}

static uint64_t
env_wall(void *cls)
{
	return DHTSIM_WALL0_S + env_now(cls) / 1000000;
}

const struct dhtsim_block *
dhtsim_block(const struct dhtsim *s, int i, const struct dhtkey *key)
{
	return map_get(s->nodes[i].blocks, key->b, sizeof(key->b));
}

static bool
env_has(void *cls, const struct dhtkey *key)
{
	struct dhtsim_node *n = cls;

	return !n->liar && dhtsim_block(n->sim, n->idx, key) != NULL;
}

/* A copy of data under key in n's store; NULL on OOM. */
static struct dhtsim_block *
sim_store_add(struct dhtsim_node *n, const struct dhtkey *key, const void *data,
    size_t len)
{
	struct dhtsim_block *b = calloc(1, sizeof(*b));

	if (b == NULL || (b->data = malloc(len ? len : 1)) == NULL)
		goto fail;
	b->key = *key;
	memcpy(b->data, data, len);
	b->len = len;
	if (map_put(n->blocks, b->key.b, sizeof(b->key.b), b) < 0)
		goto fail;
	b->next = n->block_list;
	n->block_list = b;
	n->n_blocks++;
	n->bytes += len;
	return b;
fail:
	if (b != NULL)
		free(b->data);
	free(b);
	return NULL;
}

static int
env_put(void *cls, const struct dhtkey *key, const void *data, size_t len,
    uint64_t expiry, dht_store_done_fn *done, void *arg)
{
	struct dhtsim_node *n = cls;
	struct dhtsim_block *b = map_get(n->blocks, key->b, sizeof(key->b));
	struct dhtsim_event e = { .kind = SIM_STORED,
		.to = n->idx,
		.done = done,
		.arg = arg };

	if (b == NULL && (b = sim_store_add(n, key, data, len)) == NULL)
		return -ENOMEM;
	if (expiry > b->expiry)
		b->expiry = expiry;
	return sim_push(n->sim, &e);
}

static int
env_get(void *cls, const struct dhtkey *key, dht_store_got_fn *got, void *arg)
{
	struct dhtsim_node *n = cls;
	struct dhtsim_event e = { .kind = SIM_GOT,
		.to = n->idx,
		.key = *key,
		.got = got,
		.arg = arg };

	return sim_push(n->sim, &e);
}

static void
env_usage(void *cls, struct dht_store_usage *ret)
{
	struct dhtsim_node *n = cls;

	ret->blocks = n->n_blocks;
	ret->bytes = n->bytes;
	ret->quota = n->sim->cfg.store_quota;
}

static void
env_wake(void *cls)
{
	struct dhtsim_node *n = cls;

	struct dhtsim_event e = { .kind = SIM_WAKE, .to = n->idx };

	/* Without memory the next periodic tick does it. */
	(void)sim_push(n->sim, &e);
}

static uint64_t
env_srtt(void *cls, const struct dhtkey *peer)
{
	struct dhtsim_node *n = cls;

	return env_linked(cls, peer) ? n->sim->cfg.srtt_us : 0;
}

static void
env_schedule(void *cls, uint64_t at_us)
{
	struct dhtsim_node *n = cls;

	if (at_us < n->tick_at)
		n->tick_at = at_us;
}

static uint64_t *
env_stat(void *cls, const char *name)
{
	struct dhtsim_node *n = cls;
	uint64_t *p = stats_counter2(n->stats, "dht", name);

	return p != NULL ? p : &n->sink;
}

uint64_t
dhtsim_stat(const struct dhtsim *s, int i, const char *name)
{
	char full[96];

	(void)snprintf(full, sizeof(full), "dht.%s", name);
	return stats_get(s->nodes[i].stats, full);
}

uint64_t
dhtsim_stat_sum(const struct dhtsim *s, const char *name)
{
	uint64_t sum = 0;

	for (int i = 0; i < s->n; i++)
		sum += dhtsim_stat(s, i, name);
	return sum;
}

/* The env of node n, every field not set here NULL (optional ones the
 * DHT may grow default to NULL this way). */
static void
sim_env(struct dhtsim_node *n, struct dht_env *env)
{
	memset(env, 0, sizeof(*env));
	env->cls = n;
	env->ident = n->ident;
	env->send = env_send;
	env->linked = env_linked;
	env->link = env_link;
	if (n->sim->cfg.dht_unlinks) {
		env->unlink = env_unlink;
		env->may_unlink = env_may_unlink;
	}
	env->own_helo = env_own_helo;
	env->peer_helo = env_peer_helo;
	env->now_us = env_now;
	env->wall_s = env_wall;
	env->store_has = env_has;
	env->store_put = env_put;
	env->store_get = env_get;
	env->stat = env_stat;
	env->store_usage = env_usage;
	env->wake = env_wake;
	if (n->sim->cfg.srtt_us > 0)
		env->srtt_us = env_srtt;
	env->schedule = env_schedule;
}

/* Node i: its identity from the seed and i, its store, its DHT. */
static int
sim_node_start(struct dhtsim *s, int i)
{
	struct dhtsim_node *n = &s->nodes[i];
	struct dht_env env;
	uint8_t seed[32];
	int r;

	n->idx = i;
	n->sim = s;
	n->alive = true;
	n->tick_at = UINT64_MAX;
	memset(seed, 0, sizeof(seed));
	seed[0] = (uint8_t)i;
	seed[1] = (uint8_t)s->cfg.seed;
	seed[2] = (uint8_t)(i >> 8);
	for (int b = 1; b < 8; b++)
		seed[2 + b] = (uint8_t)(s->cfg.seed >> (8 * b));
	r = identity_from_seed(seed, &n->ident);
	if (r < 0)
		return r;
	dhtkey_from_peer(&n->ident->id, &n->id);
	n->stats = stats_new();
	n->links = map_new();
	n->blocks = map_new();
	if (n->stats == NULL || n->links == NULL || n->blocks == NULL ||
	    map_put(s->by_id, n->id.b, sizeof(n->id.b), n) < 0)
		return -ENOMEM;
	sim_env(n, &env);
	return dht_new(&env, &s->cfg.dht, &n->dht);
}

void
dhtsim_cfg_default(struct dhtsim_cfg *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->seed = 1;
	dht_cfg_default(&ret->dht);
	ret->dht.refresh_us = 2u * 1000 * 1000;
	ret->srtt_us = 500;
	ret->store_quota = 512u << 10;
}

int
dhtsim_new(const struct dhtsim_cfg *cfg, int n, struct dhtsim **ret)
{
	struct dhtsim *s;
	int r = -ENOMEM;

	if (cfg == NULL || n < 1 || n > DHTSIM_N_MAX)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->cfg = *cfg;
	s->rng = cfg->seed;
	s->now_us = DHTSIM_T0_US;
	s->nodes = calloc((size_t)n, sizeof(*s->nodes));
	s->by_id = map_new();
	if (s->nodes == NULL || s->by_id == NULL)
		goto fail;
	for (s->n = 0; s->n < n; s->n++) {
		r = sim_node_start(s, s->n);
		if (r < 0) {
			s->n++; /* freed with the others */
			goto fail;
		}
	}
	*ret = s;
	return 0;
fail:
	dhtsim_free(s);
	return r;
}

/* Node i's event e, which it cannot take now (it is frozen): a store's
 * completion waits, to be cancelled at the end; the rest is lost. */
static void
sim_frozen(struct dhtsim *s, struct dhtsim_event *e)
{
	if ((e->kind == SIM_STORED || e->kind == SIM_GOT) &&
	    sim_keep(&s->parked, &s->n_parked, &s->cap_parked, e) == 0)
		return;
	if (e->kind == SIM_MSG)
		s->c.dropped++;
	free(e->body);
}

/* A get's answer: a copy of the block, a byte flipped if the node
 * serves wrong bytes. */
static void
sim_got(struct dhtsim *s, struct dhtsim_event *e)
{
	struct dhtsim_node *n = &s->nodes[e->to];
	const struct dhtsim_block *b = dhtsim_block(s, e->to, &e->key);
	uint8_t *copy;

	if (b == NULL) {
		e->got(e->arg, -ENOENT, NULL, 0, 0);
		return;
	}
	copy = malloc(b->len ? b->len : 1);
	if (copy == NULL) {
		e->got(e->arg, -ENOMEM, NULL, 0, 0);
		return;
	}
	memcpy(copy, b->data, b->len);
	if (n->corrupt && b->len > 0)
		copy[0] ^= 1;
	e->got(e->arg, 0, copy, b->len, b->expiry);
	free(copy);
}

static void
sim_deliver(struct dhtsim *s, struct dhtsim_event *e)
{
	struct dhtsim_node *to = &s->nodes[e->to], *from = &s->nodes[e->from];
	struct dhtsim_link *l;

	if (!to->alive && e->kind != SIM_UP && e->kind != SIM_DOWN) {
		sim_frozen(s, e);
		return;
	}
	switch (e->kind) {
	case SIM_MSG:
		l = sim_link_rec(s, e->to, e->from, false);
		if (l != NULL && l->up) {
			l->heard_us = s->now_us;
			s->c.delivered++;
			dht_receive(to->dht, &from->id, e->type, e->body,
			    e->len);
		} else {
			s->c.dropped++; /* the link went down meanwhile */
		}
		free(e->body);
		break;
	case SIM_UP: /* from hears of its link to to */
		l = sim_link_rec(s, e->from, e->to, false);
		if (from->alive && l != NULL && l->up) {
			l->ups++;
			dht_peer_up(from->dht, &to->id, 0);
		}
		break;
	case SIM_DOWN:
		l = sim_link_rec(s, e->from, e->to, false);
		if (from->alive && (l == NULL || !l->up))
			dht_peer_down(from->dht, &to->id);
		break;
	case SIM_STORED:
		e->done(e->arg, 0);
		break;
	case SIM_GOT:
		sim_got(s, e);
		break;
	case SIM_WAKE:
		dht_tick(to->dht);
		break;
	}
}

void
dhtsim_tick(struct dhtsim *s, int i)
{
	dht_tick(s->nodes[i].dht);
	s->nodes[i].tick_at = dht_next_deadline_us(s->nodes[i].dht);
}

void
dhtsim_run_until(struct dhtsim *s, uint64_t end_us)
{
	struct dhtsim_event e;
	bool deadlines = s->cfg.deadline_ticks;

	while (s->now_us < end_us) {
		if (sim_pop(s, &e)) {
			sim_deliver(s, &e);
			s->now_us += DHTSIM_EVENT_US;
		} else {
			s->now_us +=
			    deadlines ? DHTSIM_EVENT_US : DHTSIM_IDLE_US;
		}
		for (int i = 0; deadlines && i < s->n; i++)
			if (s->nodes[i].alive &&
			    s->now_us >= s->nodes[i].tick_at)
				dhtsim_tick(s, i);
		if (s->now_us - s->last_tick_us >= DHTSIM_TICK_US) {
			s->last_tick_us = s->now_us;
			for (int i = 0; i < s->n; i++)
				if (s->nodes[i].alive)
					dhtsim_tick(s, i);
		}
	}
}

void
dhtsim_run_ms(struct dhtsim *s, uint64_t ms)
{
	dhtsim_run_until(s, s->now_us + ms * 1000);
}

/* Frees e; a store call's is called back with -ECANCELED, as a store
 * that closes does. */
static void
sim_cancel(struct dhtsim_event *e)
{
	free(e->body);
	if (e->kind == SIM_STORED)
		e->done(e->arg, -ECANCELED);
	else if (e->kind == SIM_GOT)
		e->got(e->arg, -ECANCELED, NULL, 0, 0);
}

static void
sim_node_free(struct dhtsim_node *n)
{
	struct dhtsim_link *l, *ln;
	struct dhtsim_block *b, *bn;

	dht_free(n->dht);
	identity_free(n->ident);
	stats_free(n->stats);
	for (l = n->link_list; l != NULL; l = ln) {
		ln = l->next;
		free(l);
	}
	for (b = n->block_list; b != NULL; b = bn) {
		bn = b->next;
		free(b->data);
		free(b);
	}
	map_free(n->links);
	map_free(n->blocks);
}

void
dhtsim_free(struct dhtsim *s)
{
	struct dhtsim_event e;

	if (s == NULL)
		return;
	/* Whatever the callbacks send is queued, and goes the same way. */
	dhtsim_release(s);
	for (size_t i = 0; i < s->n_parked; i++)
		sim_cancel(&s->parked[i]);
	s->n_parked = 0;
	while (sim_pop(s, &e))
		sim_cancel(&e);
	for (int i = 0; i < s->n; i++)
		sim_node_free(&s->nodes[i]);
	/* What the DHTs sent as they ended their requests. */
	while (sim_pop(s, &e))
		free(e.body);
	free(s->nodes);
	map_free(s->by_id);
	free(s->q);
	free(s->held);
	free(s->parked);
	free(s);
}

uint64_t
dhtsim_rand(struct dhtsim *s)
{
	uint64_t z;

	/* SplitMix64: a Weyl sequence through a 64-bit finaliser. */
	s->rng += 0x9e3779b97f4a7c15ull;
	z = s->rng;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void
dhtsim_random(struct dhtsim *s, void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = dhtsim_rand(s);
		size_t n = len - i < 8 ? len - i : 8;

		memcpy(p + i, &v, n);
	}
}
