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

/* Where a frame's pieces go: the scratch buffer and its fill, the room
 * left in the frame, and the pieces. */
struct batch_out {
	uint8_t *buf;	/* scratch for headers and whole messages */
	size_t bused;	/* scratch used */
	size_t room;	/* bytes the frame may still take */
	size_t added;	/* bytes added to the frame */
	struct batch_iov *iov;
};

/* Adds a piece, joining it to the last one when they touch. */
static void
batch_add(struct batch_out *o, const uint8_t *p, size_t n)
{
	struct batch_iov *iov = o->iov;
	struct iovec *last = iov->n > 0 ? &iov->v[iov->n - 1] : NULL;

	if (last != NULL && (const uint8_t *)last->iov_base + last->iov_len == p)
		last->iov_len += n;
	else
		iov->v[iov->n++] = (struct iovec){ (void *)(uintptr_t)p, n };
	iov->len += n;
	o->room -= n;
	o->added += n;
}

/* Room in the scratch buffer for n more bytes. */
static uint8_t *
batch_scratch(struct batch_out *o, size_t n)
{
	uint8_t *p = o->buf + o->bused;

	o->bused += n;
	return p;
}

/* Packs the next piece of a fragmented item; false if nothing fit. */
static bool
batch_piece(struct sendq *q, enum sendq_class cls, struct qmsg *m,
    struct batch_out *o, struct sent_frame *sf, struct batch_counts *cnt)
{
	struct outmsg *om = m->big;
	uint32_t piece = m->len - m->off;
	struct sent_item *it;
	uint8_t *hdr;

	/* Two more pieces at most: the header and the bytes. */
	if (sf->n_items == SENT_MAX_ITEMS ||
	    o->iov->n + 2 > BATCH_IOV_MAX ||
	    o->room < FRAG_HDR + BATCH_MIN_FRAG)
		return false;
	if (piece > o->room - FRAG_HDR)
		piece = (uint32_t)(o->room - FRAG_HDR);
	hdr = batch_scratch(o, FRAG_HDR);
	frag_write_header(hdr, om->msg_id, om->len, m->off, om->type, piece);
	batch_add(o, hdr, FRAG_HDR);
	batch_add(o, om->data + m->off, piece);
	it = &sf->items[sf->n_items++];
	it->big = om;
	it->off = m->off;
	it->len = piece;
	outmsg_ref(om);
	if (m->resend)
		cnt->retx++;
	else
		cnt->frags++;
	cnt->payload += piece;
	m->off += piece;
	sendq_consumed(q, cls, piece);
	/* Fully handed out: its bytes left the queue's count piece by
	 * piece, and popping it counts nothing more. */
	if (m->off == m->len)
		sendq_pop(q, cls);
	return true;
}

size_t
batch_fill(struct sendq *q, uint8_t *buf, size_t max, size_t frame_cap,
    uint32_t *next_msg_id, struct sent_frame *sf, struct batch_counts *cnt,
    struct batch_iov *iov, bool ctrl_only)
{
	struct batch_out o = { buf, 0, max, 0, iov };
	enum sendq_class cls;
	struct qmsg *m;

	while ((m = sendq_head(q, &cls)) != NULL) {
		size_t whole = FERRY_HDR_SIZE + (size_t)m->len;
		uint8_t *p;

		if (ctrl_only && cls != SENDQ_CTRL)
			break;

		if (m->big == NULL && whole > frame_cap) {
			m = sendq_make_big(q, cls, *next_msg_id);
			if (m == NULL)
				break;
			(*next_msg_id)++;
		}
		if (m->big != NULL) {
			if (!batch_piece(q, cls, m, &o, sf, cnt))
				break;
			continue;
		}
		if (whole > o.room || o.iov->n == BATCH_IOV_MAX)
			break;
		p = batch_scratch(&o, whole);
		wire_put_hdr(p, (uint16_t)whole, m->type);
		if (m->len > 0)
			memcpy(p + FERRY_HDR_SIZE, m->data, m->len);
		batch_add(&o, p, whole);
		if (cls != SENDQ_CTRL) {
			cnt->msgs++;
			cnt->payload += m->len;
		}
		sendq_pop(q, cls);
	}
	if (o.added > 0)
		sf->eliciting = true;
	return o.added;
}
