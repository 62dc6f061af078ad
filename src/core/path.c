/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Transport sessions of a peer and the choice among them (see path.h). */
#define LOG_TAG "core"
#include "core/path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "core/peer.h"
#include "core/transport.h"
#include "core/tx.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/time.h"

struct path *
path_by_ts(const struct core *core, const struct ferry_tsession *ts)
{
	return map_get(core->by_ts, &ts, sizeof(ts));
}

bool
path_unreliable(const struct path *pa)
{
	return (pa->t->api->caps & FERRY_TCAP_RELIABLE) == 0;
}

size_t
path_mtu(const struct path *pa)
{
	return pa->t->api->mtu;
}

struct path *
path_add(struct peer *p, struct transport *t, struct ferry_tsession *ts,
    struct addr *addr)
{
	struct core *core = p->core;
	struct path *pa = path_by_ts(core, ts);

	if (pa != NULL) {
		/* Already a path (UDP reuses one session per address): the
		 * caller's reference is one too many. */
		(void)t->api->disconnect(t->api->cls, ts);
		if (addr != NULL && pa->addr == NULL && pa->peer == p) {
			pa->addr = addr;
			addr->path = pa;
		}
		return pa->peer == p ? pa : NULL;
	}
	pa = calloc(1, sizeof(*pa));
	if (pa == NULL)
		goto fail;
	pa->peer = p;
	pa->t = t;
	pa->ts = ts;
	pa->addr = addr;
	pa->created_us = time_mono_us();
	/* The map key is the pointer value stored inside the path. */
	if (map_put(core->by_ts, &pa->ts, sizeof(pa->ts), pa) < 0) {
		free(pa);
		goto fail;
	}
	if (addr != NULL)
		addr->path = pa;
	TAILQ_INSERT_TAIL(&p->paths, pa, link);
	if (core->rx_paused || p->rx_held)
		path_recv_pause(pa, true);
	path_choose(p);
	peer_log(p, FERRY_LOG_DEBUG, "new %s path over %s", t->name,
	    addr != NULL ? "a validated address" : "an inbound session");
	return pa;
fail:
	(void)t->api->disconnect(t->api->cls, ts);
	return NULL;
}

void
path_free(struct path *pa, bool release)
{
	struct peer *p = pa->peer;

	(void)map_remove(p->core->by_ts, &pa->ts, sizeof(pa->ts));
	TAILQ_REMOVE(&p->paths, pa, link);
	if (pa->addr != NULL) {
		pa->addr->path = NULL;
		/* The address's session was this path's. */
		pa->addr->ts = NULL;
	}
	if (release)
		(void)pa->t->api->disconnect(pa->t->api->cls, pa->ts);
	free(pa->pending);
	free(pa);
	if (p->best == pa)
		p->best = NULL;
	path_choose(p);
	peer_update_state(p);
}

void
path_choose(struct peer *p)
{
	struct path *pa, *best = NULL;
	bool best_ok = false;

	TAILQ_FOREACH(pa, &p->paths, link) {
		bool ok = !pa->failed;

		if (best == NULL || (ok && !best_ok) ||
		    (ok == best_ok && pa->t->api->cost < best->t->api->cost))
			best = pa;
		if (best == pa)
			best_ok = ok;
	}
	if (best != p->best) {
		p->best = best;
		if (best != NULL && !p->dying) {
			peer_log(p, FERRY_LOG_INFO, "traffic now goes over %s",
			    best->t->name);
			tx_path_changed(p);
		}
	}
}

void
path_fail(struct path *pa)
{
	if (pa->failed)
		return;
	pa->failed = true;
	(*pa->peer->core->ctr.path_failures)++;
	peer_log(pa->peer, FERRY_LOG_INFO, "%s path stopped answering",
	    pa->t->name);
	path_choose(pa->peer);
}

int
path_send(struct path *pa, const uint8_t *unit, size_t len, bool enc)
{
	int r;

	if (pa->blocked)
		return -EAGAIN;
	r = core_unit_send(pa->peer->core, pa->t, pa->ts, unit, len, enc);
	if (r != -EAGAIN)
		return r;
	pa->pending = malloc(len);
	if (pa->pending == NULL)
		return -ENOMEM;
	memcpy(pa->pending, unit, len);
	pa->pending_len = len;
	pa->pending_enc = enc;
	pa->blocked = true;
	return 0;
}

void
path_on_ready(struct path *pa)
{
	uint8_t *unit = pa->pending;
	int r = 0;

	pa->blocked = false;
	if (unit != NULL) {
		pa->pending = NULL;
		r = path_send(pa, unit, pa->pending_len, pa->pending_enc);
		free(unit);
	}
	if (r == 0 && !pa->blocked)
		tx_schedule(pa->peer);
}

void
path_recv_pause(struct path *pa, bool pause)
{
	const struct ferry_transport_api *api = pa->t->api;

	if (FERRY_HAS(api, struct ferry_transport_api, recv_pause) &&
	    api->recv_pause != NULL)
		(void)api->recv_pause(api->cls, pa->ts, pause);
}

void
path_address_string(const struct path *pa, char *buf, size_t size)
{
	const struct ferry_transport_api *api = pa->t->api;
	uint8_t addr[FERRY_ADDR_MAX];
	size_t len;

	if (pa->addr != NULL &&
	    api->address_to_string(api->cls, pa->addr->bytes, pa->addr->len,
		buf, size) == 0)
		return;
	if (FERRY_HAS(api, struct ferry_transport_api, session_address) &&
	    api->session_address != NULL &&
	    api->session_address(api->cls, pa->ts, addr, sizeof(addr),
		&len) == 0 &&
	    api->address_to_string(api->cls, addr, len, buf, size) == 0)
		return;
	(void)snprintf(buf, size, "(inbound)");
}
