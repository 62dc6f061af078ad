/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The peer table and each peer's lifecycle (see peer.h), core layer. */
#define LOG_TAG "core"
#include "core/peer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <sodium.h>

#include "core/core_int.h"
#include "core/echo.h"
#include "core/path.h"
#include "core/transport.h"
#include "core/tx.h"
#include "core/validate.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/time.h"

/* Lines about one peer: a burst of 10, then one per 10 s. */
#define PEER_LOG_RATE 0.1
#define PEER_LOG_BURST 10
/* Evicted peers awaiting their free at most: what one receive callback
 * can displace, and so how far the table may overshoot its bound. */
#define PEER_EVICT_PENDING_MAX 256

struct peer *
peer_find(const struct core *core, const struct ferry_peer_id *id)
{
	return map_get(core->peers, id->bytes, sizeof(id->bytes));
}

struct peer *
peer_by_index(const struct core *core, uint32_t idx)
{
	return map_get(core->by_index, &idx, sizeof(idx));
}

/* A receiver index no other peer has; 0 is never used. */
static uint32_t
peer_new_index(const struct core *core)
{
	uint32_t idx;

	do
		idx = randombytes_random();
	while (idx == 0 || peer_by_index(core, idx) != NULL);
	return idx;
}

bool
peer_is_half_open(const struct peer *p)
{
	const struct addr *a;

	if (p->connected)
		return false;
	TAILQ_FOREACH(a, &p->addrs, link)
		if (a->local || a->ever_valid)
			return false;
	return true;
}

/*
 * Makes room in a full table: marks the oldest half-open peer for
 * freeing from the event loop. Without this, identities that never
 * finish a handshake, one KX each, would fill the table and keep out
 * every peer met afterwards; this way they only push each other out,
 * and a real peer is linked, and no longer half-open, one round trip
 * after it arrives.
 */
static bool
peer_evict_oldest(struct core *core)
{
	struct peer *p;

	if (core->n_evicting >= PEER_EVICT_PENDING_MAX)
		return false;
	TAILQ_FOREACH(p, &core->peers_by_age, age_link)
		if (!p->evicting && peer_is_half_open(p))
			break;
	if (p == NULL)
		return false;
	p->evicting = true;
	core->n_evicting++;
	(*core->ctr.peers_evicted)++;
	event_active(core->evict_ev, EV_TIMEOUT, 0);
	return true;
}

void
peer_evict_run(struct core *core)
{
	struct peer *p, *next;

	for (p = TAILQ_FIRST(&core->peers_by_age); p != NULL; p = next) {
		next = TAILQ_NEXT(p, age_link);
		if (!p->evicting)
			continue;
		/* It may have linked since it was marked: then it stays. */
		if (peer_is_half_open(p))
			peer_free(p);
		else {
			p->evicting = false;
			core->n_evicting--;
		}
	}
}

struct peer *
peer_get(struct core *core, const struct ferry_peer_id *id)
{
	struct peer *p = peer_find(core, id);

	if (p != NULL)
		return p;
	if (map_size(core->peers) - core->n_evicting >=
	    core->cc.max_unauth_peers) {
		bool room = peer_evict_oldest(core);

		/* Once per spell of fullness: strangers cause it at will. */
		if (!core->table_full_logged)
			log_notice(room
				? "peer table full (MAX_UNAUTH_PEERS %u): the "
				  "oldest half-open peers make room"
				: "peer table full (MAX_UNAUTH_PEERS %u), none "
				  "half-open: refusing new peers",
			    core->cc.max_unauth_peers);
		core->table_full_logged = true;
		if (!room)
			return NULL;
	} else
		core->table_full_logged = false;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->id = *id;
	p->core = core;
	p->created_us = time_mono_us();
	(void)peer_id_short(id, p->sid);
	TAILQ_INIT(&p->addrs);
	TAILQ_INIT(&p->paths);
	sendq_init(&p->q);
	sendq_set_limit(&p->q, SENDQ_CONTROL, core->cc.control_queue_bytes);
	sendq_set_limit(&p->q, SENDQ_BULK, core->cc.queue_bytes);
	acktrack_init(&p->acks);
	inflight_init(&p->fl);
	reasm_init(&p->rs);
	ratelimit_init(&p->rl_pings,
	    (double)core->cc.pings_per_peer * 1e6 /
		(double)core->cc.ping_interval_us,
	    core->cc.pings_per_peer);
	ratelimit_init(&p->rl_log, PEER_LOG_RATE, PEER_LOG_BURST);
	ratelimit_init(&p->rl_kx, 10, 10);
	p->kx_retry_us = USEC_PER_SEC;
	p->rx_held = core_rx_is_held(core, id);
	/* Message ids start at random, so that a restarted peer's new ids do
	 * not run into those its peers remember from before. */
	p->next_msg_id = randombytes_random();
	if (tx_peer_init(p) < 0 ||
	    map_put(core->peers, p->id.bytes, sizeof(p->id.bytes), p) < 0) {
		tx_peer_done(p);
		free(p);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&core->peers_by_age, p, age_link);
	*core->ctr.peers_known = map_size(core->peers);
	return p;
}

int
peer_link_init(struct peer *p)
{
	uint32_t idx;
	int r;

	if (p->link_ok)
		return 0;
	idx = peer_new_index(p->core);
	r = link_init(&p->link, p->core->ident, &p->id, idx, time_mono_us());
	if (r < 0)
		return r;
	if (map_put(p->core->by_index, &p->link.my_index,
		sizeof(p->link.my_index), p) < 0) {
		link_done(&p->link);
		return -ENOMEM;
	}
	p->link_ok = true;
	return 0;
}

void
peer_free(struct peer *p)
{
	struct core *core = p->core;
	struct addr *a;
	struct path *pa;

	p->dying = true;
	if (p->connected && !core->stopping)
		subs_emit(&core->peer_subs, &p->id, false, CORE_CLASS_CONTROL);
	if (p->connected)
		core->n_connected--;
	echo_cancel_peer(p, -ENOTCONN);
	while ((pa = TAILQ_FIRST(&p->paths)) != NULL)
		path_free(pa, true);
	while ((a = TAILQ_FIRST(&p->addrs)) != NULL)
		validate_addr_free(a);
	tx_peer_done(p);
	reasm_clear(&p->rs, &core->reasm);
	if (p->link_ok) {
		(void)map_remove(core->by_index, &p->link.my_index,
		    sizeof(p->link.my_index));
		link_done(&p->link);
	}
	(void)map_remove(core->peers, p->id.bytes, sizeof(p->id.bytes));
	TAILQ_REMOVE(&core->peers_by_age, p, age_link);
	if (p->evicting)
		core->n_evicting--;
	*core->ctr.peers_known = map_size(core->peers);
	*core->ctr.peers_connected = core->n_connected;
	free(p);
}

void
peer_update_state(struct peer *p)
{
	struct core *core = p->core;
	bool up;

	if (p->dying)
		return;
	up = p->link_ok && link_ready(&p->link) && p->best != NULL;
	if (up == p->connected)
		return;
	p->connected = up;
	if (up) {
		core->n_connected++;
		p->up_since_us = time_mono_us();
		/* A pin taken while the link was being made (CONNECT) counts
		 * from now. */
		if (p->pinned_until_us > p->up_since_us)
			core_links_pin(p);
		peer_log(p, FERRY_LOG_NOTICE, "link up over %s",
		    p->best->t->name);
	} else {
		core->n_connected--;
		peer_log(p, FERRY_LOG_NOTICE, "link down");
		echo_cancel_peer(p, -ENOTCONN);
	}
	*core->ctr.peers_connected = core->n_connected;
	if (!core->stopping)
		subs_emit(&core->peer_subs, &p->id, up, CORE_CLASS_CONTROL);
	if (up)
		tx_link_up(p);
}

void
peer_link_lost(struct peer *p)
{
	struct path *pa;
	struct addr *a;

	peer_log(p, FERRY_LOG_INFO, "nothing heard for too long");
	while ((pa = TAILQ_FIRST(&p->paths)) != NULL)
		path_free(pa, true);
	TAILQ_FOREACH(a, &p->addrs, link)
		if (a->state == ADDR_VALID) {
			a->state = ADDR_NEW;
			a->revalidating = false;
		}
}

bool
peer_is_idle(const struct peer *p)
{
	return TAILQ_EMPTY(&p->addrs) && TAILQ_EMPTY(&p->paths) &&
	    !p->want_link && !p->connected && sendq_empty(&p->q);
}

void
peer_log(struct peer *p, int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (level > log_max_level)
		return;
	/* A peer can provoke lines at will; debug output is for whoever
	 * asked for it and is not limited. */
	if (level <= FERRY_LOG_INFO &&
	    !ratelimit_take(&p->rl_log, time_mono_us(), 1))
		return;
	va_start(ap, fmt);
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_msg(level, LOG_TAG, "peer %s: %s", p->sid, line);
}
