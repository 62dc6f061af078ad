/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Subscriber lists (see subs.h), core layer. A dispatch walks the list
 * with a cursor that subs_remove moves past a leaving node, so callbacks
 * may unsubscribe anybody; a node remembers when it joined, so one that
 * joins mid-dispatch waits for the next event; events raised during a
 * dispatch queue up behind it instead of nesting, so that everybody sees
 * them in the order they happened.
 */
#define LOG_TAG "core"
#include "core/subs.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"

void
subs_init(struct subs *l, enum subs_kind kind)
{
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	TAILQ_INIT(&l->head);
}

void
subs_done(struct subs *l)
{
	struct core_sub *s;

	assert(!l->dispatching);
	while ((s = TAILQ_FIRST(&l->head)) != NULL)
		subs_remove(s);
	free(l->queue);
	l->queue = NULL;
	l->q_head = l->q_len = l->q_cap = 0;
}

int
subs_add(struct subs *l, struct core_sub *sub, union core_sub_fn fn, void *cls)
{
	if (sub->list != NULL)
		return -EALREADY;
	sub->list = l;
	sub->fn = fn;
	sub->cls = cls;
	sub->seq = ++l->seq;
	TAILQ_INSERT_TAIL(&l->head, sub, link);
	return 0;
}

void
subs_remove(struct core_sub *sub)
{
	struct subs *l = sub->list;

	if (l == NULL)
		return;
	if (l->next == sub)
		l->next = TAILQ_NEXT(sub, link);
	TAILQ_REMOVE(&l->head, sub, link);
	sub->list = NULL;
}

size_t
subs_count(const struct subs *l)
{
	const struct core_sub *s;
	size_t n = 0;

	TAILQ_FOREACH(s, &l->head, link)
		n++;
	return n;
}

/* One event to every node that had joined when it began. */
static void
subs_deliver(struct subs *l, const struct subs_event *ev)
{
	uint64_t last = l->seq;
	struct core_sub *s;

	for (s = TAILQ_FIRST(&l->head); s != NULL; s = l->next) {
		/* Moved on before the call: the node may leave and be freed
		 * by it, and subs_remove keeps the cursor valid. */
		l->next = TAILQ_NEXT(s, link);
		if (s->seq > last)
			continue;
		if (l->kind == SUBS_PEER)
			s->fn.peer(s->cls, &ev->peer, ev->up);
		else
			s->fn.drain(s->cls, &ev->peer, ev->qclass);
	}
	l->next = NULL;
}

static int
subs_enqueue(struct subs *l, const struct subs_event *ev)
{
	struct subs_event *q;
	size_t cap;

	if (l->q_len == l->q_cap) {
		cap = l->q_cap != 0 ? l->q_cap * 2 : 8;
		q = realloc(l->queue, cap * sizeof(*q));
		if (q == NULL)
			return -ENOMEM;
		l->queue = q;
		l->q_cap = cap;
	}
	l->queue[l->q_len++] = *ev;
	return 0;
}

void
subs_emit(struct subs *l, const struct ferry_peer_id *peer, bool up,
    enum core_class qclass)
{
	struct subs_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.peer = *peer;
	ev.up = up;
	ev.qclass = qclass;
	if (l->dispatching) {
		if (subs_enqueue(l, &ev) == 0) {
			l->q_full_logged = false;
		} else if (!l->q_full_logged) {
			l->q_full_logged = true;
			log_err(
			    "out of memory: an event for subscribers is lost");
		}
		return;
	}
	l->dispatching = true;
	subs_deliver(l, &ev);
	/* Copied out first: delivering may queue more and move the array. */
	while (l->q_head < l->q_len) {
		ev = l->queue[l->q_head++];
		subs_deliver(l, &ev);
	}
	l->q_head = l->q_len = 0;
	l->dispatching = false;
}
