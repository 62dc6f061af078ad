/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Subscriber lists of the core's events (core.h, core_peer_subscribe and
 * core_drain_subscribe), core layer: any layer above may join and leave,
 * also from inside a callback. The nodes are struct core_sub, embedded
 * in the subscribers; the reentrancy rules are written in core.h.
 */
#ifndef FERRY_CORE_SUBS_H
#define FERRY_CORE_SUBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <ferry/proto.h>

#include "core/core.h"

/* What a list's subscribers are called with. */
enum subs_kind {
	SUBS_PEER,  /* core_peer_fn: a link came up or went down */
	SUBS_DRAIN, /* core_drain_fn: a send queue drained */
};

/* An event raised while the list was already dispatching one. */
struct subs_event {
	struct ferry_peer_id peer;
	bool up;                /* SUBS_PEER only */
	enum core_class qclass; /* SUBS_DRAIN only */
};

/* One kind of event and whoever subscribed to it. */
struct subs {
	enum subs_kind kind;
	TAILQ_HEAD(, core_sub) head; /* in order of joining */
	uint64_t seq;                /* last core_sub.seq handed out */
	bool dispatching;            /* subs_emit is under way */
	struct core_sub *next;       /* the dispatch's next node, or NULL */
	struct subs_event *queue;    /* raised during a dispatch, FIFO */
	size_t q_head, q_len, q_cap; /* first unsent, end, allocated */
	bool q_full_logged;          /* said so since it last had room */
};

/* Makes l an empty list of subscribers to events of kind. */
void subs_init(struct subs *l, enum subs_kind kind);
/* Unlinks every node still subscribed (each then reads as not
 * subscribed) and frees the queue. Not from inside a dispatch. */
void subs_done(struct subs *l);
/* Appends sub, to be called as fn (the member of the list's kind) with
 * cls. 0, or -EALREADY if sub is subscribed somewhere already (it is
 * then left as it was). */
int subs_add(struct subs *l, struct core_sub *sub, union core_sub_fn fn,
    void *cls);
/* Unlinks sub from whatever list holds it; no-op if none. */
void subs_remove(struct core_sub *sub);
/* Calls every subscriber with (peer, up) or (peer, qclass) as its kind
 * wants, in order of joining. During a
 * dispatch of this list the event is queued instead and sent when the
 * current one has reached everybody (dropped and logged on OOM). */
void subs_emit(struct subs *l, const struct ferry_peer_id *peer, bool up,
    enum core_class qclass);
/* Subscribers now (for tests and statistics). */
size_t subs_count(const struct subs *l);

#endif /* FERRY_CORE_SUBS_H */
