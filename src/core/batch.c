/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Packing queued messages into frames (see batch.h), core layer. */
#include "core/batch.h"

#include <stdlib.h>
#include <string.h>

#include <ferry/proto.h>

#include "core/ack.h"
#include "core/frag.h"
#include "core/sendq.h"
#include "lib/wire.h"

/* Turns a queued whole message into a fragmented one, in place. */
static struct qmsg *
batch_make_big(struct sendq *q, enum sendq_class cls, struct qmsg *m,
    uint32_t msg_id)
{
	struct outmsg *om = malloc(sizeof(*om) + m->len);
	struct qmsg *nm = malloc(sizeof(*nm));

	if (om == NULL || nm == NULL) {
		free(om);
		free(nm);
		return NULL;
	}
	om->refs = 1;
	om->msg_id = msg_id;
	om->type = m->type;
	om->len = m->len;
	memcpy(om->data, m->data, m->len);
	nm->big = om;
	nm->off = 0;
	nm->len = m->len;
	nm->type = m->type;
	TAILQ_INSERT_BEFORE(m, nm, link);
	TAILQ_REMOVE(&q->q[cls], m, link);
	free(m);
	return nm;
}

/* Packs the next piece of a fragmented item; false if nothing fit. */
static bool
batch_piece(struct sendq *q, enum sendq_class cls, struct qmsg *m,
    uint8_t *out, size_t space, struct sent_frame *sf, size_t *used,
    struct batch_counts *cnt)
{
	struct outmsg *om = m->big;
	uint32_t piece = m->len - m->off;
	struct sent_item *it;

	if (sf->n_items == SENT_MAX_ITEMS ||
	    space < FRAG_HDR + BATCH_MIN_FRAG)
		return false;
	if (piece > space - FRAG_HDR)
		piece = (uint32_t)(space - FRAG_HDR);
	*used += frag_write(out, om->msg_id, om->len, m->off, om->type,
	    om->data + m->off, piece);
	it = &sf->items[sf->n_items++];
	it->big = om;
	it->off = m->off;
	it->len = piece;
	outmsg_ref(om);
	if (cls == SENDQ_RETX)
		cnt->retx++;
	else
		cnt->frags++;
	cnt->payload += piece;
	m->off += piece;
	if (cls != SENDQ_CTRL)
		sendq_consumed(q, piece);
	/* Fully handed out: its bytes left the queue's count piece by
	 * piece, and popping it counts nothing more. */
	if (m->off == m->len)
		sendq_pop(q, cls);
	return true;
}

size_t
batch_fill(struct sendq *q, uint8_t *buf, size_t max, size_t frame_cap,
    uint32_t *next_msg_id, struct sent_frame *sf, struct batch_counts *cnt)
{
	size_t used = 0;
	enum sendq_class cls;
	struct qmsg *m;

	while ((m = sendq_head(q, &cls)) != NULL) {
		size_t space = max - used;

		if (m->big == NULL && FERRY_HDR_SIZE + (size_t)m->len > frame_cap) {
			m = batch_make_big(q, cls, m, (*next_msg_id)++);
			if (m == NULL)
				break;
		}
		if (m->big != NULL) {
			if (!batch_piece(q, cls, m, buf + used, space, sf,
				&used, cnt))
				break;
			continue;
		}
		if (FERRY_HDR_SIZE + (size_t)m->len > space)
			break;
		wire_put_hdr(buf + used, (uint16_t)(FERRY_HDR_SIZE + m->len),
		    m->type);
		memcpy(buf + used + FERRY_HDR_SIZE, m->data, m->len);
		used += FERRY_HDR_SIZE + m->len;
		if (cls != SENDQ_CTRL) {
			cnt->msgs++;
			cnt->payload += m->len;
		}
		sendq_pop(q, cls);
	}
	if (used > 0)
		sf->eliciting = true;
	return used;
}
