/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Gossip of validated HELOs to connected peers (see gossip.h). */
#define LOG_TAG "core"
#include "core/gossip.h"

#include <string.h>

#include <sodium.h>

#include "core/core_int.h"
#include "core/helo.h"
#include "core/peer.h"
#include "core/tx.h"
#include "core/validate.h"
#include "lib/map.h"
#include "lib/time.h"
#include "lib/wire.h"

struct gossip_ctx {
	struct peer *to;   /* recipient */
	unsigned sent;	   /* HELOs queued so far */
	unsigned seen;	   /* candidates seen, for reservoir choice */
	struct addr *pick[GOSSIP_MAX_HELOS];
};

/* Chooses up to GOSSIP_MAX_HELOS validated addresses of other peers,
 * uniformly at random (reservoir sampling), so large tables rotate. */
static bool
gossip_collect(void *cls, const void *key, size_t len, void *value)
{
	struct gossip_ctx *ctx = cls;
	struct peer *p = value;
	struct addr *a;

	(void)key;
	(void)len;
	if (p == ctx->to)
		return true;
	TAILQ_FOREACH(a, &p->addrs, link) {
		if (a->state != ADDR_VALID)
			continue;
		if (ctx->seen < GOSSIP_MAX_HELOS) {
			ctx->pick[ctx->seen] = a;
		} else {
			uint32_t j = randombytes_uniform(ctx->seen + 1);

			if (j < GOSSIP_MAX_HELOS)
				ctx->pick[j] = a;
		}
		ctx->seen++;
	}
	return true;
}

/* Queues a HELO as an inner message (same bytes, inner type). */
static void
gossip_queue(struct peer *to, const uint8_t *helo, size_t len)
{
	/* tx_queue_ctrl adds the {size, type} header itself. */
	(void)tx_queue_ctrl(to, FERRY_MSG_HELO, helo + FERRY_HDR_SIZE,
	    len - FERRY_HDR_SIZE);
}

static void
gossip_send(struct peer *p)
{
	struct core *core = p->core;
	struct gossip_ctx ctx;
	size_t off = 0;

	memset(&ctx, 0, sizeof(ctx));
	ctx.to = p;
	while (off < core->own_helos_len) {
		size_t size = wire_get16(core->own_helos + off);

		gossip_queue(p, core->own_helos + off, size);
		off += size;
	}
	/* When a layer above chooses links, whom to tell about whom is its
	 * business too (a DHT hands HELOs on in its own answers). */
	if (core_links_manual(core)) {
		p->last_gossip_us = time_mono_us();
		return;
	}
	map_foreach(core->peers, gossip_collect, &ctx);
	for (unsigned i = 0; i < ctx.seen && i < GOSSIP_MAX_HELOS; i++)
		gossip_queue(p, ctx.pick[i]->helo, ctx.pick[i]->helo_len);
	p->last_gossip_us = time_mono_us();
}

void
gossip_link_up(struct peer *p)
{
	gossip_send(p);
}

void
gossip_peer_tick(struct peer *p, uint64_t now_us)
{
	if (p->connected &&
	    now_us - p->last_gossip_us >= p->core->cc.gossip_interval_us)
		gossip_send(p);
}

void
gossip_on_helo(struct peer *p, const uint8_t *msg, size_t len)
{
	uint8_t helo[FERRY_HELO_FIXED + FERRY_ADDR_MAX];
	struct helo h;

	if (len > sizeof(helo)) {
		(*p->core->ctr.helo_bad)++;
		return;
	}
	/* The inner message is the HELO with the inner type; validate_learn
	 * takes the outer form. */
	memcpy(helo, msg, len);
	wire_put16(helo + 2, FERRY_P2P_HELO);
	/* When a layer above chooses links, a peer may tell us its own
	 * addresses, but whom else we learn of is that layer's choice. */
	if (core_links_manual(p->core) && helo_decode(helo, len, &h) == 0 &&
	    memcmp(&h.id, &p->id, sizeof(h.id)) != 0) {
		(*p->core->ctr.gossip_ignored)++;
		return;
	}
	(void)validate_learn(p->core, helo, len, p, false, NULL, 0);
}
