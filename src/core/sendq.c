/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Per-peer send queue with classes (see sendq.h), core layer. */
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
sendq_init(struct sendq *q)
{
	memset(q, 0, sizeof(*q));
	for (int i = 0; i < SENDQ_NCLASS; i++) {
		TAILQ_INIT(&q->lane[i].retx);
		TAILQ_INIT(&q->lane[i].msgs);
		q->lane[i].limit = UINT64_MAX;
	}
}

void
sendq_set_limit(struct sendq *q, enum sendq_class cls, uint64_t limit)
{
	if (cls != SENDQ_CTRL)
		q->lane[cls].limit = limit;
}

/* Unlinks m from its list in lane cls and frees it; whatever of it was
 * not yet accounted as sent leaves the counts. Returns those bytes. */
static uint64_t
sendq_remove(struct sendq *q, enum sendq_class cls, struct qmsg_list *list,
    struct qmsg *m)
{
	struct sendq_lane *l = &q->lane[cls];
	uint64_t left = m->big != NULL ? m->len - m->off : m->len;

	if (left > l->bytes)
		left = l->bytes;
	TAILQ_REMOVE(list, m, link);
	l->n_msgs--;
	l->bytes -= left;
	q->n_msgs--;
	q->bytes -= left;
	outmsg_unref(m->big);
	free(m);
	return left;
}

void
sendq_done(struct sendq *q)
{
	for (int i = 0; i < SENDQ_NCLASS; i++) {
		struct sendq_lane *l = &q->lane[i];

		while (!TAILQ_EMPTY(&l->retx))
			(void)sendq_remove(q, (enum sendq_class)i, &l->retx,
			    TAILQ_FIRST(&l->retx));
		while (!TAILQ_EMPTY(&l->msgs))
			(void)sendq_remove(q, (enum sendq_class)i, &l->msgs,
			    TAILQ_FIRST(&l->msgs));
	}
}

/* A queue item holding a copy of data, or a big one with an outmsg. */
static struct qmsg *
sendq_item_new(enum sendq_class cls, uint16_t type, const void *data,
    size_t len, bool big, uint32_t msg_id)
{
	struct outmsg *om;
	struct qmsg *m;

	if (!big) {
		m = malloc(sizeof(*m) + len);
		if (m == NULL)
			return NULL;
		m->big = NULL;
		if (len > 0)
			memcpy(m->data, data, len);
	} else {
		om = malloc(sizeof(*om) + len);
		m = malloc(sizeof(*m));
		if (om == NULL || m == NULL) {
			free(om);
			free(m);
			return NULL;
		}
		om->refs = 1;
		om->abandoned = false;
		om->msg_id = msg_id;
		om->type = type;
		om->cls = (uint8_t)cls;
		om->len = (uint32_t)len;
		if (len > 0)
			memcpy(om->data, data, len);
		m->big = om;
	}
	m->off = 0;
	m->len = (uint32_t)len;
	m->type = type;
	m->resend = false;
	return m;
}

int
sendq_push(struct sendq *q, enum sendq_class cls, uint16_t type,
    const void *data, size_t len, bool big, uint32_t msg_id)
{
	struct sendq_lane *l = &q->lane[cls];
	struct qmsg *m;

	/* An empty class takes a message larger than its bound, or that
	 * message could never be sent. */
	if (l->n_msgs > 0 &&
	    sendq_cost(q, cls) + len + SENDQ_MSG_COST > l->limit) {
		l->over = true;
		return -EAGAIN;
	}
	m = sendq_item_new(cls, type, data, len, big, msg_id);
	if (m == NULL)
		return -ENOMEM;
	TAILQ_INSERT_TAIL(&l->msgs, m, link);
	l->n_msgs++;
	l->bytes += len;
	q->n_msgs++;
	q->bytes += len;
	return 0;
}

int
sendq_push_retx(struct sendq *q, struct outmsg *om, uint32_t off,
    uint32_t len)
{
	struct sendq_lane *l = &q->lane[om->cls];
	struct qmsg *m = malloc(sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	outmsg_ref(om);
	m->big = om;
	m->off = off;
	m->len = off + len;
	m->type = om->type;
	m->resend = true;
	TAILQ_INSERT_TAIL(&l->retx, m, link);
	l->n_msgs++;
	l->bytes += len;
	q->n_msgs++;
	q->bytes += len;
	return 0;
}

/* The class whose head goes next: CTRL first; then a class the guard
 * says has waited long enough; then the first class with anything. */
static int
sendq_next_class(const struct sendq *q)
{
	int cls;

	if (q->lane[SENDQ_CTRL].n_msgs > 0)
		return SENDQ_CTRL;
	for (cls = SENDQ_NCLASS - 1; cls > SENDQ_CONTROL; cls--)
		if (q->lane[cls].n_msgs > 0 &&
		    q->lane[cls].waited >= SENDQ_GUARD_BYTES)
			return cls;
	for (cls = SENDQ_CONTROL; cls < SENDQ_NCLASS; cls++)
		if (q->lane[cls].n_msgs > 0)
			return cls;
	return -1;
}

/* The list of lane cls whose head is next: resends first. */
static struct qmsg_list *
sendq_list(struct sendq *q, enum sendq_class cls)
{
	struct sendq_lane *l = &q->lane[cls];

	return TAILQ_EMPTY(&l->retx) ? &l->msgs : &l->retx;
}

struct qmsg *
sendq_head(struct sendq *q, enum sendq_class *ret_cls)
{
	int cls = sendq_next_class(q);

	if (cls < 0)
		return NULL;
	*ret_cls = (enum sendq_class)cls;
	return TAILQ_FIRST(sendq_list(q, *ret_cls));
}

/* n bytes of class cls were handed out: the classes below it that wait
 * have waited that much longer; cls itself waits no more. */
static void
sendq_served(struct sendq *q, enum sendq_class cls, uint64_t n)
{
	if (cls == SENDQ_CTRL)
		return;
	q->lane[cls].waited = 0;
	for (int i = cls + 1; i < SENDQ_NCLASS; i++)
		if (q->lane[i].n_msgs > 0)
			q->lane[i].waited += n;
}

struct qmsg *
sendq_make_big(struct sendq *q, enum sendq_class cls, uint32_t msg_id)
{
	struct qmsg_list *list = &q->lane[cls].msgs;
	struct qmsg *m = TAILQ_FIRST(list), *nm;

	nm = sendq_item_new(cls, m->type, m->data, m->len, true, msg_id);
	if (nm == NULL)
		return NULL;
	TAILQ_INSERT_BEFORE(m, nm, link);
	TAILQ_REMOVE(list, m, link);
	free(m);
	return nm;
}

void
sendq_pop(struct sendq *q, enum sendq_class cls)
{
	struct qmsg_list *list = sendq_list(q, cls);
	struct qmsg *m = TAILQ_FIRST(list);

	if (m != NULL)
		sendq_served(q, cls, sendq_remove(q, cls, list, m));
}

void
sendq_consumed(struct sendq *q, enum sendq_class cls, uint64_t n)
{
	struct sendq_lane *l = &q->lane[cls];

	if (n > l->bytes)
		n = l->bytes;
	l->bytes -= n;
	q->bytes -= n;
	sendq_served(q, cls, n);
}

bool
outmsg_abandon(struct outmsg *m)
{
	if (m->abandoned)
		return false;
	m->abandoned = true;
	return true;
}

/* sendq_drop_started for one list: resends all go, messages only once
 * begun. */
static unsigned
sendq_drop_list(struct sendq *q, enum sendq_class cls, struct qmsg_list *list,
    bool all)
{
	struct qmsg *m, *next;
	unsigned n = 0;

	for (m = TAILQ_FIRST(list); m != NULL; m = next) {
		next = TAILQ_NEXT(m, link);
		/* Data not yet begun goes to the new session. */
		if (m->big == NULL || (!all && m->off == 0))
			continue;
		if (outmsg_abandon(m->big))
			n++;
		(void)sendq_remove(q, cls, list, m);
	}
	return n;
}

unsigned
sendq_drop_started(struct sendq *q, uint64_t *ret_bytes)
{
	uint64_t before = q->bytes;
	unsigned n = 0;

	for (int i = 0; i < SENDQ_NCLASS; i++) {
		n += sendq_drop_list(q, (enum sendq_class)i, &q->lane[i].retx,
		    true);
		n += sendq_drop_list(q, (enum sendq_class)i, &q->lane[i].msgs,
		    false);
	}
	*ret_bytes = before - q->bytes;
	return n;
}

bool
sendq_drained(struct sendq *q, enum sendq_class cls)
{
	struct sendq_lane *l = &q->lane[cls];

	if (!l->over || sendq_cost(q, cls) > l->limit / 2)
		return false;
	l->over = false;
	return true;
}
