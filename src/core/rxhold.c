/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Receive back-pressure (core.h), core layer: the layers' backlog
 * accounts, whose sum holds every peer back, and the holds an account
 * puts on single peers (DESIGN.md, BPCC: "per-peer receive back-pressure
 * in the core"). The window itself is written by tx.c, the reading of
 * streams stopped through path.c.
 */
#define LOG_TAG "core"
#include "core/core_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/path.h"
#include "core/peer.h"
#include "core/tx.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/time.h"

struct core_rx_account {
	struct core *core; /* borrowed; outlives the account */
	unsigned slot;	   /* in core->rx_accounts; bit of its holds */
	uint64_t backlog;  /* bytes this layer has not passed on yet */
};

/* The accounts holding one peer id. */
struct rxhold {
	struct ferry_peer_id id; /* the map's key points here */
	uint32_t accounts;	 /* bit i: the account in slot i */
};

int
core_rx_init(struct core *core)
{
	core->rx_holds = map_new();
	return core->rx_holds != NULL ? 0 : -ENOMEM;
}

static bool
rxhold_free_one(void *cls, const void *key, size_t len, void *value)
{
	(void)cls;
	(void)key;
	(void)len;
	free(value);
	return true;
}

void
core_rx_done(struct core *core)
{
	for (unsigned i = 0; i < CORE_RX_ACCOUNTS_MAX; i++)
		(void)FERRY_BUG(core->rx_accounts[i] != NULL);
	if (core->rx_holds != NULL)
		map_foreach(core->rx_holds, rxhold_free_one, NULL);
	map_free(core->rx_holds);
	core->rx_holds = NULL;
}

bool
core_rx_is_held(const struct core *core, const struct ferry_peer_id *id)
{
	return core->rx_holds != NULL &&
	    map_get(core->rx_holds, id->bytes, sizeof(id->bytes)) != NULL;
}

void
core_rx_pause(struct core *core, bool pause)
{
	struct peer *p;
	struct path *pa;

	core->rx_paused = pause;
	TAILQ_FOREACH(p, &core->peers_by_age, age_link)
		TAILQ_FOREACH(pa, &p->paths, link)
			path_recv_pause(pa, pause || p->rx_held);
}

/* Over unreliable transports the window in our ACKs holds senders back
 * (and a window update tells them when it opens again); over streams,
 * not reading does (the transport's own flow control then fills the
 * sender's queue). Hysteresis: pause above the window, resume at half of
 * it. */
static void
rxhold_total_changed(struct core *core, uint64_t before)
{
	uint64_t bytes = core->rx_backlog;

	if (bytes < before)
		tx_window_opened(core);
	if (!core->rx_paused && bytes > core->cc.recv_window)
		core_rx_pause(core, true);
	else if (core->rx_paused && bytes <= core->cc.recv_window / 2)
		core_rx_pause(core, false);
}

int
core_rx_account_new(struct core *core, struct core_rx_account **ret)
{
	struct core_rx_account *acct;
	unsigned i;

	for (i = 0; i < CORE_RX_ACCOUNTS_MAX; i++)
		if (core->rx_accounts[i] == NULL)
			break;
	if (i == CORE_RX_ACCOUNTS_MAX)
		return -ENOSPC;
	acct = calloc(1, sizeof(*acct));
	if (acct == NULL)
		return -ENOMEM;
	acct->core = core;
	acct->slot = i;
	core->rx_accounts[i] = acct;
	*ret = acct;
	return 0;
}

void
core_rx_account_set(struct core_rx_account *acct, uint64_t bytes)
{
	struct core *core = acct->core;
	uint64_t before = core->rx_backlog;

	core->rx_backlog = before - acct->backlog + bytes;
	acct->backlog = bytes;
	rxhold_total_changed(core, before);
}

/* p is held now, or no longer. */
static void
rxhold_apply(struct peer *p, bool held)
{
	struct path *pa;

	if (p->rx_held == held)
		return;
	p->rx_held = held;
	TAILQ_FOREACH(pa, &p->paths, link)
		path_recv_pause(pa, held || p->core->rx_paused);
	peer_log(p, FERRY_LOG_DEBUG, held ? "held" : "no longer held");
	if (held)
		return;
	/* A stream that was not read said nothing: the silence while held
	 * is ours, not a sign that the link died. */
	p->last_rx_us = time_mono_us();
	tx_peer_window_opened(p);
}

/* Sets or clears bit in the hold of id; the hold entry is made or freed
 * as needed. Returns whether id is held after, or -ENOMEM. */
static int
rxhold_mark(struct core *core, const struct ferry_peer_id *id, uint32_t bit,
    bool hold)
{
	struct rxhold *h =
	    map_get(core->rx_holds, id->bytes, sizeof(id->bytes));

	if (hold && h == NULL) {
		h = calloc(1, sizeof(*h));
		if (h == NULL)
			return -ENOMEM;
		h->id = *id;
		if (map_put(core->rx_holds, h->id.bytes, sizeof(h->id.bytes),
			h) < 0) {
			free(h);
			return -ENOMEM;
		}
	}
	if (h == NULL)
		return 0;
	if (hold)
		h->accounts |= bit;
	else
		h->accounts &= ~bit;
	if (h->accounts != 0)
		return 1;
	(void)map_remove(core->rx_holds, h->id.bytes, sizeof(h->id.bytes));
	free(h);
	return 0;
}

int
core_rx_account_hold(struct core_rx_account *acct,
    const struct ferry_peer_id *peer, bool hold)
{
	struct core *core = acct->core;
	struct peer *p;
	int r = rxhold_mark(core, peer, 1u << acct->slot, hold);

	if (r < 0)
		return r;
	*core->ctr.peers_held = map_size(core->rx_holds);
	p = peer_find(core, peer);
	if (p != NULL)
		rxhold_apply(p, r > 0);
	return 0;
}

struct rxhold_release {
	struct rxhold *v[64]; /* holds of the account, a batch */
	size_t n;
	uint32_t bit;
};

static bool
rxhold_collect(void *cls, const void *key, size_t len, void *value)
{
	struct rxhold_release *rel = cls;
	struct rxhold *h = value;

	(void)key;
	(void)len;
	if (h->accounts & rel->bit)
		rel->v[rel->n++] = h;
	return rel->n < sizeof(rel->v) / sizeof(rel->v[0]);
}

void
core_rx_account_free(struct core_rx_account *acct)
{
	struct rxhold_release rel;
	struct core *core;

	if (acct == NULL)
		return;
	core = acct->core;
	rel.bit = 1u << acct->slot;
	/* The map may not change during a walk: release in batches. */
	do {
		rel.n = 0;
		map_foreach(core->rx_holds, rxhold_collect, &rel);
		for (size_t i = 0; i < rel.n; i++) {
			struct ferry_peer_id id = rel.v[i]->id;

			(void)core_rx_account_hold(acct, &id, false);
		}
	} while (rel.n > 0);
	core_rx_account_set(acct, 0);
	core->rx_accounts[acct->slot] = NULL;
	free(acct);
}
