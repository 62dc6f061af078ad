/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The struct dht_env of each node of the fake DHT network (dhtsim.h):
 * what its DHT sees of the links, the clock, its HELOs and counters, and
 * its block store, in memory, whose calls complete through the queue.
 */
#include "dhtsim_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/map.h"
#include "lib/stats.h"

/* cls is the node. */

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
	l = dhtsim_link_rec(n->sim, n->idx, to->idx, true);
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

	l = to != NULL ? dhtsim_link_rec(n->sim, n->idx, to->idx, false) : NULL;
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

/* Node idx's HELO, none with no_helos. */
static size_t
sim_helo(const struct dhtsim *s, int idx, uint8_t *buf, size_t size)
{
	if (size < 2 || s->cfg.no_helos)
		return 0;
	buf[0] = (uint8_t)(idx >> 8);
	buf[1] = (uint8_t)idx;
	return 2;
}

static size_t
env_own_helo(void *cls, uint8_t *buf, size_t size)
{
	struct dhtsim_node *n = cls;

	return sim_helo(n->sim, n->idx, buf, size);
}

static size_t
env_peer_helo(void *cls, const struct dhtkey *peer, uint8_t *buf, size_t size)
{
	struct dhtsim_node *to = env_peer(cls, peer);

	return to == NULL ? 0 : sim_helo(to->sim, to->idx, buf, size);
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

int
dhtsim_store(struct dhtsim *s, int i, const struct dhtkey *key,
    const void *data, size_t len, uint64_t expiry)
{
	struct dhtsim_node *n = &s->nodes[i];
	struct dhtsim_block *b = map_get(n->blocks, key->b, sizeof(key->b));

	if (b == NULL && (b = sim_store_add(n, key, data, len)) == NULL)
		return -ENOMEM;
	if (expiry > b->expiry)
		b->expiry = expiry;
	return 0;
}

static int
env_put(void *cls, const struct dhtkey *key, const void *data, size_t len,
    uint64_t expiry, dht_store_done_fn *done, void *arg)
{
	struct dhtsim_node *n = cls;
	struct dhtsim_event e = { .kind = SIM_STORED,
		.to = n->idx,
		.done = done,
		.arg = arg };
	int r = 0;

	e.status = n->sim->cfg.store_status;
	if (e.status == 0)
		r = dhtsim_store(n->sim, n->idx, key, data, len, expiry);
	return r < 0 ? r : dhtsim_q_push(n->sim, &e);
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

	return dhtsim_q_push(n->sim, &e);
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
	(void)dhtsim_q_push(n->sim, &e);
}

/* A round trip at light load: srtt_us, and the delays both ways. */
static uint64_t
env_srtt(void *cls, const struct dhtkey *peer)
{
	struct dhtsim_node *n = cls, *to = env_peer(cls, peer);
	struct dhtsim_link there, back;

	if (to == NULL || !dhtsim_linked(n->sim, n->idx, to->idx))
		return 0;
	there = dhtsim_link_get(n->sim, n->idx, to->idx);
	back = dhtsim_link_get(n->sim, to->idx, n->idx);
	return n->sim->cfg.srtt_us + there.cfg.delay_us + back.cfg.delay_us;
}

static void
env_schedule(void *cls, uint64_t at_us)
{
	struct dhtsim_node *n = cls;

	if (at_us < n->tick_at)
		n->tick_at = at_us;
}

static int
env_hold(void *cls, const struct dhtkey *peer, bool hold)
{
	struct dhtsim_node *n = cls, *to = env_peer(cls, peer);

	n->sim->c.hold_calls++;
	if (to == NULL)
		return -ENOTCONN;
	return dhtsim_hold(n->sim, n->idx, to->idx, hold);
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

/* Every field not set here NULL: optional ones the DHT may grow default
 * to NULL this way. */
void
dhtsim_env_fill(struct dhtsim_node *n, struct dht_env *env)
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
	env->record_put = dhtsim_record_put;
	env->record_list = dhtsim_record_list;
	env->stat = env_stat;
	env->store_usage = env_usage;
	env->wake = env_wake;
	if (n->sim->cfg.srtt_us > 0)
		env->srtt_us = env_srtt;
	env->schedule = env_schedule;
	env->hold = env_hold;
}

/* A get's answer: a copy of the block, a byte flipped if the node
 * serves wrong bytes. */
void
dhtsim_store_got(struct dhtsim *s, struct dhtsim_event *e)
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

void
dhtsim_store_free(struct dhtsim_node *n)
{
	struct dhtsim_block *b, *bn;

	for (b = n->block_list; b != NULL; b = bn) {
		bn = b->next;
		free(b->data);
		free(b);
	}
	n->block_list = NULL;
	map_free(n->blocks);
	n->blocks = NULL;
}
