/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Link policy (core_links.h, [core] LINK_POLICY), core layer: who chooses
 * links, links made and dropped when the layer above asks (DESIGN.md:
 * "The DHT, not the core, chooses which peers stay linked"), the
 * operator's URIs, pins, HELOs learnt from that layer and handed to it,
 * and BYE, by which a peer hears that its link was dropped.
 */
#define LOG_TAG "core"
#include "core/core_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/handshake.h"
#include "core/helo.h"
#include "core/identity.h"
#include "core/link.h"
#include "core/ownhelo.h"
#include "core/path.h"
#include "core/peer.h"
#include "core/rx.h"
#include "core/tx.h"
#include "core/validate.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/time.h"

static void core_links_run(evutil_socket_t fd, short what, void *cls);

int
core_links_init(struct core *core)
{
	core->unlink_ev = event_new(core->base, -1, 0, core_links_run, core);
	return core->unlink_ev != NULL ? 0 : -ENOMEM;
}

void
core_links_done(struct core *core)
{
	if (core->unlink_ev != NULL)
		event_free(core->unlink_ev);
	core->unlink_ev = NULL;
}

bool
core_links_manual(const struct core *core)
{
	return core->cc.link_policy == CORE_LINKS_MANUAL ||
	    (core->cc.link_policy == CORE_LINKS_AUTO && core->links_claimed);
}

int
core_links_claim(struct core *core)
{
	if (core->cc.link_policy == CORE_LINKS_CORE) {
		log_notice("links stay the core's choice (LINK_POLICY = core)");
		return -EPERM;
	}
	core->links_claimed = true;
	return 0;
}

void
core_links_pin(struct peer *p)
{
	p->pinned_until_us = time_mono_us() + p->core->cc.pin_idle_us;
}

static bool
core_links_is_self(const struct core *core, const struct ferry_peer_id *id)
{
	return memcmp(id, &core->ident->id, sizeof(*id)) == 0;
}

int
core_link(struct core *core, const struct ferry_peer_id *peer)
{
	struct peer *p;

	if (core_links_is_self(core, peer))
		return -EINVAL;
	p = peer_find(core, peer);
	if (p == NULL || (TAILQ_EMPTY(&p->addrs) && TAILQ_EMPTY(&p->paths)))
		return -ENOENT;
	if (p->connected && !p->unlinking) {
		p->want_link = true;
		return 0;
	}
	if (!p->want_link && core->n_connected >= core->cc.max_peers) {
		(*core->ctr.link_refused)++;
		return -ENOSPC;
	}
	p->want_link = true;
	/* A drop under way goes first; it links again after (see
	 * core_links_drop). */
	if (p->unlinking)
		return 0;
	validate_peer_wanted(p);
	handshake_want(p);
	return 0;
}

int
core_unlink(struct core *core, const struct ferry_peer_id *peer)
{
	struct peer *p = peer_find(core, peer);

	if (p == NULL)
		return -ENOENT;
	p->want_link = false;
	p->asked = false;
	if (!p->link_ok && TAILQ_EMPTY(&p->paths))
		return 0;
	if (p->connected && !p->unlinking)
		(*core->ctr.unlinks)++;
	p->bye_owed |= p->connected;
	p->unlinking = true;
	/* Not here: a caller up the stack (a message handler, a transport's
	 * receive) may be using the sessions this frees. */
	event_active(core->unlink_ev, EV_TIMEOUT, 0);
	return 0;
}

void
core_links_on_bye(struct peer *p)
{
	(*p->core->ctr.byes_in)++;
	peer_log(p, FERRY_LOG_INFO, "the peer dropped the link");
	p->want_link = false;
	p->asked = false;
	p->unlinking = true;
	event_active(p->core->unlink_ev, EV_TIMEOUT, 0);
}

/*
 * Drops p's link: its paths, its keys and what its session had under
 * way (the next link is a new session on both sides, as after a
 * restart). The peer, its addresses and its queued messages that had not
 * begun stay. If a link was asked for again meanwhile, it is made anew.
 */
static void
core_links_drop(struct peer *p)
{
	struct core *core = p->core;
	struct path *pa;

	p->unlinking = false;
	if (p->bye_owed)
		(void)tx_send_bye(p);
	p->bye_owed = false;
	while ((pa = TAILQ_FIRST(&p->paths)) != NULL)
		path_free(pa, true);
	if (p->link_ok) {
		(void)map_remove(core->by_index, &p->link.my_index,
		    sizeof(p->link.my_index));
		link_done(&p->link);
		p->link_ok = false;
	}
	reasm_clear(&p->rs, &core->reasm);
	reasm_init(&p->rs);
	acktrack_init(&p->acks);
	tx_peer_restarted(p);
	p->last_kx_us = 0; /* a new link's first KX is due at once */
	peer_log(p, FERRY_LOG_INFO, "link dropped");
	if (p->want_link) {
		validate_peer_wanted(p);
		handshake_want(p);
	}
}

static void
core_links_run(evutil_socket_t fd, short what, void *cls)
{
	struct core *core = cls;
	struct peer *p;

	(void)fd;
	(void)what;
	/* Dropping frees no peer, but its link-down event may mark others:
	 * start over until none is left. */
	for (;;) {
		TAILQ_FOREACH(p, &core->peers_by_age, age_link)
			if (p->unlinking && !p->dying)
				break;
		if (p == NULL)
			return;
		core_links_drop(p);
	}
}

/* How core_links_learn treats the peers of the HELOs it takes. */
enum core_links_want {
	CORE_LINKS_LEARN, /* only learn their addresses */
	CORE_LINKS_LINK,  /* and link to them, as core_link would */
	CORE_LINKS_PIN,   /* and pin the link for a local client */
};

/* The HELO was taken; as want says, its peer is also to be linked to (as
 * core_link would, where links are not the core's own choice anyway)
 * and pinned. Whatever comes of that, the HELO was taken. */
static void
core_links_want(struct core *core, const uint8_t *msg, size_t len,
    enum core_links_want want)
{
	struct peer *p;
	struct helo h;

	if (helo_decode(msg, len, &h) != 0)
		return;
	if (want != CORE_LINKS_LEARN && core_links_manual(core))
		(void)core_link(core, &h.id);
	if (want == CORE_LINKS_PIN && (p = peer_find(core, &h.id)) != NULL)
		core_links_pin(p);
}

/* Learns the HELO messages back to back in buf (len bytes, framing
 * checked), as validate_learn does each, for the operator (local) or from
 * advertiser, and treats their peers as want says. Returns how many were
 * taken, or the error of the last when none was: -EBADMSG (malformed or
 * forged), -ESTALE, or another of validate_learn's. */
static int
core_links_learn(struct core *core, const uint8_t *buf, size_t len,
    struct peer *advertiser, bool local, enum core_links_want want)
{
	const uint8_t *msg;
	size_t off = 0, size;
	uint16_t type;
	int r, taken = 0, err = -EBADMSG;

	/* The whole framing first: nothing is learnt from a broken list. */
	while ((r = rx_next(buf, len, &off, &type, &msg, &size)) > 0)
		if (type != FERRY_P2P_HELO)
			return -EBADMSG;
	if (r < 0 || len == 0)
		return -EBADMSG;
	off = 0;
	while (rx_next(buf, len, &off, &type, &msg, &size) > 0) {
		r = validate_learn(core, msg, size, advertiser, local, NULL, 0);
		if (r < 0) {
			err = r;
			continue;
		}
		taken++;
		core_links_want(core, msg, size, want);
	}
	return taken > 0 ? taken : err;
}

int
core_links_add_uri(struct core *core, const char *uri, bool pin)
{
	uint8_t *helos;
	size_t len;
	int r;

	r = helo_uri_decode(uri, &helos, &len);
	if (r < 0) {
		log_info("not a usable ferry:// URI");
		return -EINVAL;
	}
	/* The operator's peers are linked to whatever the policy: under
	 * LINK_POLICY = core validation links them anyway. */
	r = core_links_learn(core, helos, len, NULL, true,
	    pin ? CORE_LINKS_PIN : CORE_LINKS_LINK);
	free(helos);
	if (r > 0)
		return 0;
	return r == -EBADMSG || r == -ESTALE ? -EBADMSG : -ENOENT;
}

int
core_add_uri(struct core *core, const char *uri)
{
	return core_links_add_uri(core, uri, true);
}

int
core_learn_helo(struct core *core, const struct ferry_peer_id *from,
    const void *helos, size_t len)
{
	struct peer *adv = NULL;
	int r;

	if (from != NULL) {
		adv = peer_find(core, from);
		if (adv == NULL || !adv->connected)
			return -ENOTCONN;
	}
	r = core_links_learn(core, helos, len, adv, from == NULL,
	    CORE_LINKS_LEARN);
	return r > 0 ? 0 : r;
}

int
core_peer_helos(struct core *core, const struct ferry_peer_id *peer,
    void *buf, size_t size, size_t *ret_len)
{
	const struct addr *a;
	struct peer *p;
	size_t n = 0;

	if (core_links_is_self(core, peer)) {
		ownhelo_maybe_refresh(core);
		if (core->own_helos_len == 0)
			return -ENOENT;
		if (core->own_helos_len > size)
			return -ENOSPC;
		memcpy(buf, core->own_helos, core->own_helos_len);
		*ret_len = core->own_helos_len;
		return 0;
	}
	p = peer_find(core, peer);
	if (p == NULL)
		return -ENOENT;
	/* Only what we validated ourselves is handed on (seed 004, II-C). */
	TAILQ_FOREACH(a, &p->addrs, link)
		if (a->state == ADDR_VALID)
			n += a->helo_len;
	if (n == 0)
		return -ENOENT;
	if (n > size)
		return -ENOSPC;
	n = 0;
	TAILQ_FOREACH(a, &p->addrs, link) {
		if (a->state != ADDR_VALID)
			continue;
		memcpy((uint8_t *)buf + n, a->helo, a->helo_len);
		n += a->helo_len;
	}
	*ret_len = n;
	return 0;
}
