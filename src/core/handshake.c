/* SPDX-License-Identifier: GPL-3.0-or-later */
/* KX sending, receiving and rekeying (see handshake.h), core layer. */
#define LOG_TAG "core"
#include "core/handshake.h"

#include <errno.h>
#include <string.h>

#include "core/ack.h"
#include "core/core_int.h"
#include "core/kx.h"
#include "core/link.h"
#include "core/path.h"
#include "core/peer.h"
#include "core/transport.h"
#include "core/tx.h"
#include "core/validate.h"
#include "lib/log.h"
#include "lib/time.h"

#define HANDSHAKE_RETRY_MAX_US (30 * USEC_PER_SEC)
#define HANDSHAKE_RETRY_SLOW_US (10 * 60 * USEC_PER_SEC)

static uint64_t
handshake_retry_base(const struct peer *p)
{
	if (p->best != NULL &&
	    (p->best->t->api->caps & FERRY_TCAP_HIGH_LATENCY))
		return HANDSHAKE_RETRY_SLOW_US;
	return USEC_PER_SEC;
}

/*
 * Whether a KX may be said again over p's best path. A path is proven
 * when a PONG validated its address, when the transport's own handshake
 * proved the source (a reliable stream), or when the link's keys were
 * confirmed over it. An inbound datagram path is none of these: its
 * source may be forged, and repeating ourselves to it would turn one
 * KX from a stranger into several at someone else's address. There the
 * KX is answered once per KX received, and the initiator, whose path to
 * us is proven, is the one that retransmits.
 */
static bool
handshake_path_proven(const struct peer *p)
{
	const struct path *pa = p->best;

	return (pa->addr != NULL && pa->addr->state == ADDR_VALID) ||
	    (pa->t->api->caps & FERRY_TCAP_RELIABLE) ||
	    (p->link_ok && link_ready(&p->link));
}

/*
 * Whether a KX to p is due after wait_us. The monotonic clock counts from
 * boot, so "never sent" (0) must not be read as "sent at boot": a machine
 * up for less than HANDSHAKE_RETRY_SLOW_US would otherwise say nothing
 * over mail until that much uptime had passed.
 */
static bool
handshake_due(const struct peer *p, uint64_t now_us, uint64_t wait_us)
{
	return p->last_kx_us == 0 || now_us - p->last_kx_us >= wait_us;
}

int
handshake_send(struct peer *p)
{
	struct core *core = p->core;
	uint8_t kx[FERRY_KX_SIZE];
	int r;

	if (p->best == NULL)
		return -ENOTCONN;
	r = peer_link_init(p);
	if (r < 0)
		return r;
	link_build_kx(&p->link, time_real_us(), kx);
	r = path_send(p->best, kx, sizeof(kx), false);
	if (r < 0)
		return r;
	(*core->ctr.kx_sent)++;
	p->last_kx_us = time_mono_us();
	return 0;
}

void
handshake_want(struct peer *p)
{
	struct core *core = p->core;

	if (!p->want_link && !p->connected &&
	    core->n_connected >= core->cc.max_peers)
		return;
	/* Every caller links on this side's behalf (a peer's KX does not
	 * come here): the link is ours to drop (core_links.h). */
	p->want_link = true;
	p->asked = true;
	if (p->best != NULL && (!p->link_ok || !link_ready(&p->link)) &&
	    handshake_due(p, time_mono_us(), handshake_retry_base(p)))
		(void)handshake_send(p);
}

/* Cheap checks before any signature work; the peer if one is known. */
static int
handshake_precheck(struct core *core, const struct kx_msg *m,
    struct peer **ret_peer)
{
	struct peer *p;

	if (memcmp(&m->receiver, &core->ident->id, sizeof(m->receiver)) != 0 ||
	    memcmp(&m->sender, &core->ident->id, sizeof(m->sender)) == 0) {
		(*core->ctr.kx_refused)++;
		return -EINVAL;
	}
	p = peer_find(core, &m->sender);
	if (p != NULL && p->link_ok) {
		if (link_kx_fresh(&p->link, m, time_real_us(),
			core->cc.kx_max_skew_us) < 0) {
			(*core->ctr.kx_stale)++;
			return -EALREADY;
		}
	} else {
		uint64_t now = time_real_us(), skew = core->cc.kx_max_skew_us;

		if (m->timestamp_us > now + skew ||
		    m->timestamp_us + skew < now) {
			(*core->ctr.kx_stale)++;
			return -ERANGE;
		}
	}
	*ret_peer = p;
	return 0;
}

/* The session the KX came over becomes (or stays) a path to p. */
static void
handshake_note_path(struct peer *p, struct transport *t,
    const struct ferry_message_pack *mp)
{
	const struct ferry_transport_api *api = t->api;
	struct path *pa;

	if (mp->ts == NULL || !(api->caps & FERRY_TCAP_INBOUND_REPLY))
		return;
	pa = path_by_ts(p->core, mp->ts);
	if (pa == NULL) {
		if (api->associate(api->cls, mp->ts) < 0)
			return;
		pa = path_add(p, t, mp->ts, NULL);
	}
	if (pa == NULL || pa->peer != p)
		return;
	pa->last_rx_us = time_mono_us();
	if (pa->failed) {
		pa->failed = false;
		path_choose(p);
	}
}

void
handshake_on_kx(struct core *core, struct transport *t,
    const struct ferry_message_pack *mp, const uint8_t *msg, size_t len)
{
	uint64_t now = time_mono_us();
	struct peer *p = NULL;
	struct kx_msg m;
	int bits;

	(*core->ctr.kx_in)++;
	if (kx_decode(msg, len, &m) < 0) {
		(*core->ctr.kx_bad)++;
		return;
	}
	if (handshake_precheck(core, &m, &p) < 0)
		return;
	/* The source's own budget first: a flood from one source must not
	 * spend the budget every other source shares. */
	if (!core_src_allow(core, mp->src, mp->src_len) ||
	    !ratelimit_take(&core->rl_kx, now, 1)) {
		(*core->ctr.kx_limited)++;
		return;
	}
	if (kx_verify(msg, len) < 0) {
		(*core->ctr.kx_bad)++;
		return;
	}
	/* MAX_PEERS bounds the links a peer asks for, whether we knew it
	 * (its HELO, learned from a lookup's answer) or not; one we asked
	 * for, and the link to a peer that re-keys, go on. */
	if (core->n_connected >= core->cc.max_peers &&
	    (p == NULL || (!p->connected && !p->want_link))) {
		(*core->ctr.kx_refused)++;
		return;
	}
	if (p == NULL && (p = peer_get(core, &m.sender)) == NULL) {
		(*core->ctr.kx_refused)++;
		return;
	}
	memcpy(p->pk, m.pk, sizeof(p->pk));
	if (peer_link_init(p) < 0)
		return;
	if (link_kx_fresh(&p->link, &m, time_real_us(),
		core->cc.kx_max_skew_us) < 0) {
		(*core->ctr.kx_stale)++;
		return;
	}
	bits = link_on_kx(&p->link, &m, now);
	if (bits < 0) {
		(*core->ctr.kx_bad)++;
		return;
	}
	p->last_rx_us = now;
	p->want_link = true;
	handshake_note_path(p, t, mp);
	/* Over a one-way transport (mail) the KX brought no path to answer
	 * on: the peer's validated addresses give one, which the core's own
	 * choice of links opens when they validate, but a layer above's
	 * only when it wants the link, as the peer does now. */
	if (p->best == NULL)
		validate_peer_wanted(p);
	if (bits & LINK_KX_RESET) {
		/* A new session of the peer numbers its messages and its
		 * frames afresh: nothing half-received from the old one may
		 * mix in, and the old session's ACK ranges must go, or its
		 * high counters make the new ones look older than the ACK
		 * history and nothing of the new session is acknowledged. */
		peer_log(p, FERRY_LOG_INFO, "peer restarted: new keys");
		reasm_clear(&p->rs, &core->reasm);
		reasm_init(&p->rs);
		acktrack_init(&p->acks);
		tx_peer_restarted(p);
	}
	if (bits & LINK_KX_NEWKEYS) {
		(*core->ctr.key_changes)++;
		p->kx_retry_us = handshake_retry_base(p);
	}
	peer_update_state(p);
	if ((bits & LINK_KX_REPLY) && ratelimit_take(&p->rl_kx, now, 1))
		(void)handshake_send(p);
	if (bits & LINK_KX_NEWKEYS)
		tx_schedule(p);
}

void
handshake_peer_tick(struct peer *p, uint64_t now_us)
{
	struct core *core = p->core;
	uint64_t base;

	if (!p->want_link || p->best == NULL)
		return;
	if (p->link_ok)
		link_expire(&p->link, now_us);
	base = handshake_retry_base(p);
	if (p->kx_retry_us < base)
		p->kx_retry_us = base;
	/* No keys yet, or new ones not confirmed: say it again, backing
	 * off. */
	if (!p->link_ok || !link_ready(&p->link) || p->link.next != NULL) {
		if (handshake_due(p, now_us, p->kx_retry_us) &&
		    handshake_path_proven(p)) {
			(void)handshake_send(p);
			p->kx_retry_us *= 2;
			if (p->kx_retry_us > HANDSHAKE_RETRY_MAX_US &&
			    base < HANDSHAKE_RETRY_MAX_US)
				p->kx_retry_us = HANDSHAKE_RETRY_MAX_US;
		}
		return;
	}
	if (now_us - p->link.my_eph_us >= core->cc.rekey_interval_us ||
	    link_tx_frames(&p->link) >= core->cc.rekey_messages) {
		if (link_rotate(&p->link, now_us) == 0) {
			peer_log(p, FERRY_LOG_DEBUG, "rekeying");
			p->kx_retry_us = base;
			(void)handshake_send(p);
		}
	}
}
