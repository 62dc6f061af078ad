/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A network of DHT nodes in one process, in virtual time (see dhtsim.h):
 * its nodes, the queue that carries their messages' turns, link events
 * and store completions, and the clock that drives it. The links are
 * dhtsim_link.c's, the nodes' env dhtsim_env.c's.
 */
#include "dhtsim_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/map.h"
#include "lib/stats.h"
#include "core/identity.h"

#define DHTSIM_N_MAX 65536 /* a HELO holds the index in 2 bytes */

int
dhtsim_q_push(struct dhtsim *s, const struct dhtsim_event *e)
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

int
dhtsim_keep(struct dhtsim_event **list, size_t *n, size_t *cap,
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

struct dhtsim_node *
dhtsim_node_of(const struct dhtsim *s, const struct dhtkey *id)
{
	return map_get(s->by_id, id->b, sizeof(id->b));
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
	dhtsim_env_fill(n, &env);
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
	ret->event_us = DHTSIM_EVENT_US;
	ret->link.cap = DHTSIM_NO_CAP;
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
	/* Before anything draws: the maps' keys too. */
	dhtsim_rand_hook(cfg->seed);
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
	if ((e->kind == SIM_STORED || e->kind == SIM_GOT ||
	        e->kind == SIM_LISTED) &&
	    dhtsim_keep(&s->parked, &s->n_parked, &s->cap_parked, e) == 0)
		return;
	free(e->body);
}

/* The node an event is for: news of a link is for its from side. */
static int
sim_event_node(const struct dhtsim_event *e)
{
	return e->kind == SIM_UP || e->kind == SIM_DOWN ? e->from : e->to;
}

static void
sim_deliver(struct dhtsim *s, struct dhtsim_event *e)
{
	struct dhtsim_node *to = &s->nodes[e->to], *from = &s->nodes[e->from];
	struct dhtsim_node *n = &s->nodes[sim_event_node(e)];
	struct dhtsim_link *l;

	if (e->kind == SIM_MSG) {
		dhtsim_link_turn(s, e->from, e->to);
		return;
	}
	if (!to->alive && e->kind != SIM_UP && e->kind != SIM_DOWN) {
		sim_frozen(s, e);
		return;
	}
	/* A stopped node takes it once it goes on. */
	if (n->alive && n->stopped) {
		if (dhtsim_keep(&s->paused, &s->n_paused, &s->cap_paused, e) <
		    0)
			sim_frozen(s, e);
		return;
	}
	switch (e->kind) {
	case SIM_UP: /* from hears of its link to to */
		l = dhtsim_link_rec(s, e->from, e->to, false);
		if (from->alive && l != NULL && l->up) {
			l->ups++;
			dht_peer_up(from->dht, &to->id, 0);
		}
		break;
	case SIM_DOWN:
		l = dhtsim_link_rec(s, e->from, e->to, false);
		if (from->alive && (l == NULL || !l->up))
			dht_peer_down(from->dht, &to->id);
		break;
	case SIM_STORED:
		e->done(e->arg, e->status);
		break;
	case SIM_LISTED:
		dhtsim_records_listed(s, e);
		break;
	case SIM_GOT:
		dhtsim_store_got(s, e);
		break;
	case SIM_WAKE:
		dht_tick(to->dht);
		break;
	case SIM_MSG:
		break;
	}
}

void
dhtsim_stop(struct dhtsim *s, int i, bool stop)
{
	struct dhtsim_node *n = &s->nodes[i];
	bool was = n->stopped;
	size_t kept = 0;

	n->stopped = stop;
	if (!was || stop)
		return;
	/* Its events, in their order; those that do not fit wait on. */
	for (size_t k = 0; k < s->n_paused; k++) {
		struct dhtsim_event *e = &s->paused[k];

		if (sim_event_node(e) != i || dhtsim_q_push(s, e) < 0)
			s->paused[kept++] = *e;
	}
	s->n_paused = kept;
	dhtsim_link_resume(s, i);
}

/* Node i: alive, not stopped. */
static bool
sim_runs(const struct dhtsim *s, int i)
{
	return s->nodes[i].alive && !s->nodes[i].stopped;
}

void
dhtsim_tick(struct dhtsim *s, int i)
{
	dht_tick(s->nodes[i].dht);
	s->nodes[i].tick_at = dht_next_deadline_us(s->nodes[i].dht);
}

/* With nothing queued: a step of time, up to the next message due. */
static uint64_t
sim_idle_step(const struct dhtsim *s)
{
	uint64_t step =
	    s->cfg.deadline_ticks ? DHTSIM_EVENT_US : DHTSIM_IDLE_US;
	uint64_t next = dhtsim_link_next_us(s);

	if (next > s->now_us && next - s->now_us < step)
		step = next - s->now_us;
	return step;
}

void
dhtsim_run_until(struct dhtsim *s, uint64_t end_us)
{
	struct dhtsim_event e;
	bool deadlines = s->cfg.deadline_ticks;

	while (s->now_us < end_us) {
		dhtsim_link_due(s);
		if (sim_pop(s, &e)) {
			sim_deliver(s, &e);
			s->now_us += s->cfg.event_us;
		} else {
			s->now_us += sim_idle_step(s);
		}
		for (int i = 0; deadlines && i < s->n; i++)
			if (sim_runs(s, i) && s->now_us >= s->nodes[i].tick_at)
				dhtsim_tick(s, i);
		if (s->now_us - s->last_tick_us >= DHTSIM_TICK_US) {
			s->last_tick_us = s->now_us;
			for (int i = 0; i < s->n; i++)
				if (sim_runs(s, i))
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
	else if (e->kind == SIM_LISTED)
		e->listed(e->arg, -ECANCELED, NULL, 0);
}

static void
sim_node_free(struct dhtsim_node *n)
{
	dht_free(n->dht);
	identity_free(n->ident);
	stats_free(n->stats);
	dhtsim_links_free(n);
	dhtsim_store_free(n);
	dhtsim_records_free(n);
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
	for (size_t i = 0; i < s->n_paused; i++)
		sim_cancel(&s->paused[i]);
	s->n_paused = 0;
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
	free(s->paused);
	free(s->due);
	free(s);
	dhtsim_rand_unhook();
}
