/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Per-peer send queue (see sendq.h), core layer. */
#include "core/sendq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
outmsg_ref(struct outmsg *m)
{
	m->refs++;
}

void
outmsg_unref(struct outmsg *m)
{
	if (m != NULL && --m->refs == 0)
		free(m);
}

void
sendq_init(struct sendq *q, uint64_t limit)
{
	memset(q, 0, sizeof(*q));
	for (int i = 0; i < SENDQ_NCLASS; i++)
		TAILQ_INIT(&q->q[i]);
	q->limit = limit;
}

void
sendq_done(struct sendq *q)
{
	for (int i = 0; i < SENDQ_NCLASS; i++)
		while (!TAILQ_EMPTY(&q->q[i]))
			sendq_pop(q, (enum sendq_class)i);
	q->bytes = 0;
}

int
sendq_push(struct sendq *q, enum sendq_class cls, uint16_t type,
    const void *data, size_t len, bool big, uint32_t msg_id)
{
	struct qmsg *m;

	if (cls == SENDQ_DATA && q->n_msgs > 0 &&
	    sendq_cost(q) + len + SENDQ_MSG_COST > q->limit) {
		q->over = true;
		return -EAGAIN;
	}
	if (big) {
		struct outmsg *om = malloc(sizeof(*om) + len);

		m = malloc(sizeof(*m));
		if (om == NULL || m == NULL) {
			free(om);
			free(m);
			return -ENOMEM;
		}
		om->refs = 1;
		om->abandoned = false;
		om->msg_id = msg_id;
		om->type = type;
		om->len = (uint32_t)len;
		if (len > 0)
			memcpy(om->data, data, len);
		m->big = om;
		m->off = 0;
		m->len = (uint32_t)len;
		m->type = type;
	} else {
		m = malloc(sizeof(*m) + len);
		if (m == NULL)
			return -ENOMEM;
		m->big = NULL;
		m->off = 0;
		m->len = (uint32_t)len;
		m->type = type;
		if (len > 0)
			memcpy(m->data, data, len);
	}
	TAILQ_INSERT_TAIL(&q->q[cls], m, link);
	q->n_msgs++;
	if (cls != SENDQ_CTRL)
		q->bytes += len;
	return 0;
}

int
sendq_push_retx(struct sendq *q, struct outmsg *om, uint32_t off,
    uint32_t len)
{
	struct qmsg *m = malloc(sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	outmsg_ref(om);
	m->big = om;
	m->off = off;
	m->len = off + len;
	m->type = om->type;
	TAILQ_INSERT_TAIL(&q->q[SENDQ_RETX], m, link);
	q->n_msgs++;
	q->bytes += len;
	return 0;
}

struct qmsg *
sendq_head(struct sendq *q, enum sendq_class *ret_cls)
{
	for (int i = 0; i < SENDQ_NCLASS; i++) {
		struct qmsg *m = TAILQ_FIRST(&q->q[i]);

		if (m != NULL) {
			*ret_cls = (enum sendq_class)i;
			return m;
		}
	}
	return NULL;
}

static void
sendq_remove(struct sendq *q, enum sendq_class cls, struct qmsg *m)
{
	TAILQ_REMOVE(&q->q[cls], m, link);
	q->n_msgs--;
	if (cls != SENDQ_CTRL) {
		/* Whatever of it was not yet accounted as sent leaves now. */
		uint64_t left = m->big != NULL ? m->len - m->off : m->len;

		q->bytes -= left <= q->bytes ? left : q->bytes;
	}
	outmsg_unref(m->big);
	free(m);
}

void
sendq_pop(struct sendq *q, enum sendq_class cls)
{
	struct qmsg *m = TAILQ_FIRST(&q->q[cls]);

	if (m != NULL)
		sendq_remove(q, cls, m);
}

bool
outmsg_abandon(struct outmsg *m)
{
	if (m->abandoned)
		return false;
	m->abandoned = true;
	return true;
}

unsigned
sendq_drop_started(struct sendq *q, uint64_t *ret_bytes)
{
	uint64_t before = q->bytes;
	struct qmsg *m, *next;
	unsigned n = 0;

	for (int cls = SENDQ_RETX; cls <= SENDQ_DATA; cls++)
		for (m = TAILQ_FIRST(&q->q[cls]); m != NULL; m = next) {
			next = TAILQ_NEXT(m, link);
			/* Data not yet begun goes to the new session. */
			if (m->big == NULL || (cls == SENDQ_DATA && m->off == 0))
				continue;
			if (outmsg_abandon(m->big))
				n++;
			sendq_remove(q, (enum sendq_class)cls, m);
		}
	*ret_bytes = before - q->bytes;
	return n;
}

void
sendq_consumed(struct sendq *q, uint64_t n)
{
	q->bytes -= n <= q->bytes ? n : q->bytes;
}

bool
sendq_drained(struct sendq *q)
{
	if (!q->over || sendq_cost(q) > q->limit / 2)
		return false;
	q->over = false;
	return true;
}
