/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The send queue and the batcher (src/core/sendq.c, batch.c): classes
 * served in order (the core's control messages, the layers' control
 * class, then bulk), each upper class bounded on its own with its own
 * drain signal, a control message queued behind megabytes of data going
 * out first, the guard that keeps a flood of control messages from
 * starving bulk, resends in their own class ahead of its new messages,
 * many small messages packed into one frame exactly up to its size,
 * large messages cut into FRAG pieces across frames that reassemble
 * (src/core/frag.c) to the original, the item limit of a frame, and
 * outmsg references that all reach zero (valgrind checks the rest).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/ack.h"
#include "core/batch.h"
#include "core/frag.h"
#include "core/rx.h"
#include "core/sendq.h"
#include "unit.h"

#define LIMIT 10000
#define FRAME 1400

static struct sendq q;
static uint8_t *data;

static void
test_setup(void)
{
	sendq_init(&q);
	sendq_set_limit(&q, SENDQ_CONTROL, LIMIT);
	sendq_set_limit(&q, SENDQ_BULK, LIMIT);
	data = malloc(200000);
	ck_assert_ptr_nonnull(data);
	for (size_t i = 0; i < 200000; i++)
		data[i] = (uint8_t)(i * 7 + (i >> 10));
}

static void
test_teardown(void)
{
	sendq_done(&q);
	free(data);
	data = NULL;
}

/* Drops the references a frame's record holds, as tx does. */
static void
release(struct sent_frame *sf)
{
	for (unsigned i = 0; i < sf->n_items; i++)
		outmsg_unref(sf->items[i].big);
	sf->n_items = 0;
}

static size_t
fill(uint8_t *buf, size_t max, size_t cap, uint32_t *next_id,
    struct sent_frame *sf, struct batch_counts *cnt)
{
	static uint8_t scratch[FERRY_MSG_SIZE_MAX];
	struct batch_iov iov = { .n = 0, .len = 0 };
	size_t n, off = 0;

	memset(sf, 0, sizeof(*sf));
	memset(cnt, 0, sizeof(*cnt));
	n = batch_fill(&q, scratch, max, cap, next_id, sf, cnt, &iov,
	    false);
	/* The frame is what its pieces say, in order. */
	ck_assert_uint_eq(n, iov.len);
	for (int i = 0; i < iov.n; i++) {
		memcpy(buf + off, iov.v[i].iov_base, iov.v[i].iov_len);
		off += iov.v[i].iov_len;
	}
	ck_assert_uint_eq(off, n);
	return n;
}

START_TEST(test_classes_in_order)
{
	enum sendq_class cls;
	struct qmsg *m;
	struct outmsg *om;

	ck_assert(sendq_empty(&q));
	ck_assert_ptr_null(sendq_head(&q, &cls));
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, "d1", 2, false, 0),
	    0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x401, "d2", 2, false, 0),
	    0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CTRL, 0x14, "c1", 2, false, 0),
	    0);
	/* A resend of part of a fragmented message. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x402, data, 3000, true,
	                     77),
	    0);
	m = TAILQ_LAST(&q.lane[SENDQ_BULK].msgs, qmsg_list);
	om = m->big;
	ck_assert(om->refs == 1 && om->msg_id == 77);
	ck_assert_uint_eq(om->cls, SENDQ_BULK);
	ck_assert_int_eq(sendq_push_retx(&q, om, 1000, 500), 0);
	ck_assert_uint_eq(om->refs, 2);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 0x100, "k1", 2, false,
	                     0),
	    0);
	ck_assert_uint_eq(q.n_msgs, 6);
	ck_assert(q.bytes == 2 + 2 + 2 + 3000 + 500 + 2);
	ck_assert(q.lane[SENDQ_BULK].bytes == 2 + 2 + 3000 + 500);
	/* CTRL, CONTROL, then BULK: its resend, then its messages. */
	m = sendq_head(&q, &cls);
	ck_assert_int_eq(cls, SENDQ_CTRL);
	ck_assert_mem_eq(m->data, "c1", 2);
	sendq_pop(&q, cls);
	m = sendq_head(&q, &cls);
	ck_assert_int_eq(cls, SENDQ_CONTROL);
	ck_assert_mem_eq(m->data, "k1", 2);
	sendq_pop(&q, cls);
	m = sendq_head(&q, &cls);
	ck_assert(cls == SENDQ_BULK && m->big == om && m->resend);
	ck_assert(m->off == 1000 && m->len == 1500);
	sendq_pop(&q, cls);
	ck_assert_uint_eq(om->refs, 1);
	m = sendq_head(&q, &cls);
	ck_assert_int_eq(cls, SENDQ_BULK);
	ck_assert_mem_eq(m->data, "d1", 2);
	sendq_pop(&q, cls);
	m = sendq_head(&q, &cls);
	ck_assert_mem_eq(m->data, "d2", 2);
	sendq_pop(&q, cls);
	m = sendq_head(&q, &cls);
	ck_assert_ptr_eq(m->big, om);
	ck_assert(!m->resend);
	sendq_pop(&q, cls);
	ck_assert(sendq_empty(&q));
	ck_assert(q.bytes == 0);
	/* Popping an empty class is harmless. */
	sendq_pop(&q, SENDQ_BULK);
	ck_assert_uint_eq(q.n_msgs, 0);
}
END_TEST

/* What fits beside n queued messages holding bytes payload: the bound
 * counts SENDQ_MSG_COST per message, the new one included. */
static size_t
room(size_t bytes, unsigned n)
{
	return LIMIT - bytes - (n + 1) * SENDQ_MSG_COST;
}

START_TEST(test_byte_bound)
{
	const size_t fits = room(6000, 1);
	struct sendq_lane *bulk = &q.lane[SENDQ_BULK];

	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, 6000, false,
	                     0),
	    0);
	ck_assert(!bulk->over);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, fits + 1,
	                     false, 0),
	    -EAGAIN);
	ck_assert(bulk->over);
	ck_assert(bulk->bytes == 6000 && bulk->n_msgs == 1);
	/* Exactly up to the limit is fine. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, fits, false,
	                     0),
	    0);
	ck_assert(sendq_cost(&q, SENDQ_BULK) == LIMIT);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, 0, false, 0),
	    -EAGAIN);
	/* The core's own messages are never refused, nor held against the
	 * bound of the layers' classes. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_CTRL, 0x14, data, 3 * LIMIT,
	                     false, 0),
	    0);
	ck_assert(sendq_cost(&q, SENDQ_BULK) == LIMIT);
	ck_assert(q.bytes == 6000 + fits + 3 * LIMIT);
	/* Not drained while above half the limit. */
	ck_assert(!sendq_drained(&q, SENDQ_BULK));
	sendq_pop(&q, SENDQ_CTRL);
	sendq_pop(&q, SENDQ_BULK); /* 6000 out: below half */
	ck_assert(q.bytes == fits);
	ck_assert(sendq_drained(&q, SENDQ_BULK));
	ck_assert(!bulk->over);
	ck_assert(!sendq_drained(&q, SENDQ_BULK)); /* said once */
	/* Never over: no drain owed, however empty. */
	sendq_pop(&q, SENDQ_BULK);
	ck_assert(!sendq_drained(&q, SENDQ_BULK));
}
END_TEST

/* A full bulk class leaves the control class room, and the other way
 * round; each drains on its own. */
START_TEST(test_bounds_independent)
{
	unsigned nb = 0, nc = 0;

	sendq_set_limit(&q, SENDQ_CONTROL, LIMIT / 4);
	while (sendq_push(&q, SENDQ_BULK, 0x400, data, 1000, false, 0) == 0)
		ck_assert_uint_le(++nb, LIMIT);
	ck_assert(q.lane[SENDQ_BULK].over);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 0x100, data, 100, false,
	                     0),
	    0);
	nc = 1;
	while (sendq_push(&q, SENDQ_CONTROL, 0x100, data, 100, false, 0) == 0)
		ck_assert_uint_le(++nc, LIMIT);
	ck_assert_uint_eq(nc, (LIMIT / 4) / (100 + SENDQ_MSG_COST));
	ck_assert(q.lane[SENDQ_CONTROL].over);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, 1000, false,
	                     0),
	    -EAGAIN);
	/* Control drains; bulk is still full. */
	while (q.lane[SENDQ_CONTROL].n_msgs > 0)
		sendq_pop(&q, SENDQ_CONTROL);
	ck_assert(sendq_drained(&q, SENDQ_CONTROL));
	ck_assert(!sendq_drained(&q, SENDQ_BULK));
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, 1000, false,
	                     0),
	    -EAGAIN);
	while (q.lane[SENDQ_BULK].n_msgs > nb / 2)
		sendq_pop(&q, SENDQ_BULK);
	ck_assert(sendq_drained(&q, SENDQ_BULK));
	ck_assert(!sendq_drained(&q, SENDQ_CONTROL));
	/* A limit of 0 leaves room for one message at a time. */
	sendq_set_limit(&q, SENDQ_CONTROL, 0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 0x100, data, 10, false,
	                     0),
	    0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 0x100, data, 10, false,
	                     0),
	    -EAGAIN);
}
END_TEST

/* Empty messages cost their entries: they fill the queue too. */
START_TEST(test_empty_messages_bounded)
{
	unsigned n = 0;

	while (sendq_push(&q, SENDQ_BULK, 0x400, data, 0, false, 0) == 0)
		ck_assert_uint_le(++n, LIMIT);
	ck_assert_uint_eq(n, LIMIT / SENDQ_MSG_COST);
	ck_assert(q.lane[SENDQ_BULK].over && q.bytes == 0);
}
END_TEST

START_TEST(test_drain_at_half)
{
	const size_t fits = room(LIMIT / 2 + 1, 1);

	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 1, data, LIMIT / 2 + 1,
	                     false, 0),
	    0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 1, data, fits, false, 0),
	    0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 1, data, 1, false, 0),
	    -EAGAIN);
	sendq_pop(&q, SENDQ_BULK);
	ck_assert(q.bytes == fits);
	ck_assert(sendq_drained(&q, SENDQ_BULK));
	/* A queue emptied by fragments being consumed drains too. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 1, data, LIMIT, false, 0),
	    -EAGAIN);
	sendq_consumed(&q, SENDQ_BULK, LIMIT); /* clamps at zero */
	ck_assert(q.bytes == 0);
	ck_assert(sendq_drained(&q, SENDQ_BULK));
}
END_TEST

START_TEST(test_lone_oversize_message)
{
	/* An empty class takes a message larger than its bound, or that
	 * message could never be sent. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 1, data, 3 * LIMIT, true,
	                     1),
	    0);
	ck_assert(q.bytes == 3 * LIMIT);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 1, data, 1, false, 0),
	    -EAGAIN);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 1, data, 3 * LIMIT,
	                     true, 2),
	    0);
}
END_TEST

START_TEST(test_pack_small_exactly)
{
	uint8_t frame[FRAME];
	struct sent_frame sf;
	struct batch_counts cnt;
	uint32_t next_id = 0;
	const uint8_t *msg;
	size_t n, off = 0, size;
	uint16_t type;
	unsigned k = 0;

	/* 100 messages of 10 bytes: 14 bytes each with the header, so 50
	 * fill a 700-byte frame exactly and the 51st waits. */
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(sendq_push(&q, SENDQ_BULK,
		                     (uint16_t)(0x400 + i), data + i, 10, false,
		                     0),
		    0);
	n = fill(frame, 713, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(n, 700);
	ck_assert_uint_eq(cnt.msgs, 50);
	ck_assert(cnt.payload == 500);
	ck_assert(sf.eliciting);
	ck_assert_uint_eq(sf.n_items, 0);
	ck_assert_uint_eq(q.n_msgs, 50);
	ck_assert(q.bytes == 500);
	/* The frame holds them in order, as rx_next reads them. */
	while (rx_next(frame, n, &off, &type, &msg, &size) == 1) {
		ck_assert_uint_eq(type, 0x400 + k);
		ck_assert_uint_eq(size, 14);
		ck_assert_mem_eq(msg + FERRY_HDR_SIZE, data + k, 10);
		k++;
	}
	ck_assert_uint_eq(k, 50);
	ck_assert_uint_eq(off, n);
	/* The other 50 fill exactly 700 bytes again. */
	n = fill(frame, 700, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(n, 700);
	ck_assert_uint_eq(cnt.msgs, 50);
	ck_assert_uint_eq(q.n_msgs, 0);
	ck_assert(q.bytes == 0);
	ck_assert_uint_eq(next_id, 0);
	/* Nothing queued: nothing packed, nothing elicited. */
	n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(n, 0);
	ck_assert(!sf.eliciting);
}
END_TEST

START_TEST(test_empty_and_control_messages)
{
	uint8_t frame[FRAME];
	struct sent_frame sf;
	struct batch_counts cnt;
	uint32_t next_id = 0;

	ck_assert_int_eq(sendq_push(&q, SENDQ_CTRL, FERRY_MSG_KEEPALIVE, NULL,
	                     0, false, 0),
	    0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, "", 0, false, 0), 0);
	ck_assert_uint_eq(fill(frame, FRAME, FRAME, &next_id, &sf, &cnt), 8);
	ck_assert_uint_eq(wire_get16(frame), 4);
	ck_assert_uint_eq(wire_get16(frame + 2), FERRY_MSG_KEEPALIVE);
	ck_assert_uint_eq(wire_get16(frame + 6), 0x400);
	ck_assert_uint_eq(cnt.msgs, 1); /* control is not counted */
	ck_assert(sf.eliciting);
}
END_TEST

/* Reassembles what batch put into frames; returns 1 when complete. */
static int
reasm_frame(struct reasm_set *rs, struct reasm_budget *b, const uint8_t *fr,
    size_t n, uint8_t **ret_msg, size_t *ret_len, uint16_t *ret_type,
    unsigned *ret_frags)
{
	const uint8_t *msg;
	size_t off = 0, size;
	uint16_t type;
	int r, done = 0;

	while ((r = rx_next(fr, n, &off, &type, &msg, &size)) == 1) {
		struct frag f;

		ck_assert_uint_eq(type, FERRY_MSG_FRAG);
		ck_assert_int_eq(frag_decode(msg, size, &f), 0);
		(*ret_frags)++;
		r = reasm_add(rs, b, 1u << 30, &f, 1, ret_msg, ret_len,
		    ret_type);
		ck_assert_int_ge(r, 0);
		if (r == 1)
			done = 1;
	}
	ck_assert_int_eq(r, 0);
	return done;
}

START_TEST(test_big_message_fragments)
{
	const uint32_t len = 5000;
	uint8_t frame[FRAME], *out = NULL;
	struct sent_frame sf[8];
	struct batch_counts cnt;
	struct reasm_set rs;
	struct reasm_budget b = { 0, 1u << 30 };
	struct outmsg *om;
	uint32_t next_id = 41, expect_off = 0;
	unsigned frames = 0, nfrag = 0;
	size_t olen = 0;
	uint16_t type = 0;
	int done = 0;

	reasm_init(&rs);
	/* Small by the queue's measure, larger than a frame: the batcher
	 * converts it and gives it the next message id. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x0777, data, len, false,
	                     0),
	    0);
	while (!sendq_empty(&q)) {
		size_t n;
		struct frag f;

		ck_assert_uint_lt(frames, 8);
		n = fill(frame, FRAME, FRAME, &next_id, &sf[frames], &cnt);
		ck_assert_uint_gt(n, 0);
		ck_assert_uint_le(n, FRAME);
		ck_assert_uint_eq(sf[frames].n_items, 1);
		ck_assert(sf[frames].eliciting);
		/* One FRAG per frame, filling it unless it is the last. */
		ck_assert_int_eq(frag_decode(frame, n, &f), 0);
		ck_assert_uint_eq(f.msg_id, 41);
		ck_assert_uint_eq(f.total, len);
		ck_assert_uint_eq(f.type, 0x0777);
		ck_assert_uint_eq(f.off, expect_off);
		ck_assert(f.off + f.len == len || n == FRAME);
		ck_assert_uint_eq(sf[frames].items[0].off, f.off);
		ck_assert_uint_eq(sf[frames].items[0].len, f.len);
		ck_assert_uint_eq(cnt.frags, 1);
		ck_assert_uint_eq(cnt.msgs, 0);
		expect_off += f.len;
		ck_assert(q.bytes == len - expect_off);
		done |=
		    reasm_frame(&rs, &b, frame, n, &out, &olen, &type, &nfrag);
		frames++;
	}
	ck_assert_uint_eq(next_id, 42);
	ck_assert_uint_eq(frames,
	    (len + (FRAME - FRAG_HDR) - 1) / (FRAME - FRAG_HDR));
	ck_assert(done);
	ck_assert_uint_eq(olen, len);
	ck_assert_uint_eq(type, 0x0777);
	ck_assert_mem_eq(out, data, len);
	free(out);
	/* The queue let go; the frames in flight hold the message. */
	om = sf[0].items[0].big;
	ck_assert_uint_eq(om->refs, frames);
	for (unsigned i = 0; i < frames; i++) {
		ck_assert_ptr_eq(sf[i].items[0].big, om);
		release(&sf[i]); /* the last one frees it */
	}
	reasm_clear(&rs, &b);
}
END_TEST

START_TEST(test_large_random_messages)
{
	uint64_t seed = 99;
	uint32_t next_id = 0;
	struct reasm_set rs;
	struct reasm_budget b = { 0, 1u << 30 };

	reasm_init(&rs);
	/* Messages of random sizes, small and large, through frames of
	 * random sizes: the small ones arrive whole, in order; the large
	 * ones reassemble. */
	for (int round = 0; round < 50; round++) {
		uint32_t len = (uint32_t)(unit_rand(&seed) % 20000);
		uint32_t dstart = (uint32_t)(unit_rand(&seed) % 100000);
		unsigned got = 0, nfrag = 0;
		uint8_t *out = NULL;
		size_t olen = 0;
		uint16_t type = 0;

		ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x0500,
		                     data + dstart, len, false, 0),
		    0);
		while (!sendq_empty(&q)) {
			uint8_t frame[FRAME];
			struct sent_frame sf;
			struct batch_counts cnt;
			size_t max = 100 + unit_rand(&seed) % (FRAME - 100);
			size_t n = fill(frame, max, FRAME, &next_id, &sf, &cnt);
			const uint8_t *msg;
			size_t off = 0, size;
			uint16_t t;

			ck_assert_uint_le(n, max);
			ck_assert_uint_le(sf.n_items, SENT_MAX_ITEMS);
			if (4 + len <= FRAME) {
				/* Whole, or not at all. */
				if (n == 0)
					continue;
				ck_assert_int_eq(rx_next(frame, n, &off, &t,
				                     &msg, &size),
				    1);
				ck_assert_uint_eq(size, 4 + len);
				ck_assert_mem_eq(msg + 4, data + dstart, len);
				got = 1;
			} else if (n > 0) {
				got |= (unsigned)reasm_frame(&rs, &b, frame, n,
				    &out, &olen, &type, &nfrag);
			}
			release(&sf);
		}
		ck_assert_msg(got, "message %d of %u bytes lost", round, len);
		if (out != NULL) {
			ck_assert_uint_eq(olen, len);
			ck_assert_mem_eq(out, data + dstart, len);
			free(out);
		}
		ck_assert(q.bytes == 0);
	}
	ck_assert(b.used == 0);
	reasm_clear(&rs, &b);
}
END_TEST

START_TEST(test_item_limit)
{
	uint8_t frame[FRAME];
	struct sent_frame sf;
	struct batch_counts cnt;
	uint32_t next_id = 0;
	size_t n, off = 0, size;
	const uint8_t *msg;
	uint16_t type;
	unsigned frags = 0;

	/* Six fragmented messages of 100 bytes: room for all six pieces in
	 * one frame, but a frame records at most SENT_MAX_ITEMS. */
	for (uint32_t id = 0; id < 6; id++)
		ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, 100,
		                     true, id),
		    0);
	n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(sf.n_items, SENT_MAX_ITEMS);
	ck_assert_uint_eq(cnt.frags, SENT_MAX_ITEMS);
	ck_assert_uint_eq(n, SENT_MAX_ITEMS * (FRAG_HDR + 100));
	while (rx_next(frame, n, &off, &type, &msg, &size) == 1) {
		struct frag f;

		ck_assert_int_eq(frag_decode(msg, size, &f), 0);
		ck_assert_uint_eq(f.msg_id, frags);
		ck_assert_uint_eq(sf.items[frags].big->msg_id, frags);
		frags++;
	}
	ck_assert_uint_eq(frags, SENT_MAX_ITEMS);
	ck_assert_uint_eq(q.n_msgs, 6 - SENT_MAX_ITEMS);
	/* Handed out entirely: only the frame holds them now. */
	for (unsigned i = 0; i < sf.n_items; i++)
		ck_assert_uint_eq(sf.items[i].big->refs, 1);
	release(&sf);
	n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(sf.n_items, 6 - SENT_MAX_ITEMS);
	release(&sf);
	ck_assert(sendq_empty(&q));
	/* A piece does not start in less than BATCH_MIN_FRAG of room. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, 1000, true, 9),
	    0);
	n = fill(frame, FRAG_HDR + BATCH_MIN_FRAG - 1, FRAME, &next_id, &sf,
	    &cnt);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(sf.n_items, 0);
	n = fill(frame, FRAG_HDR + BATCH_MIN_FRAG, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(n, FRAG_HDR + BATCH_MIN_FRAG);
	release(&sf);
}
END_TEST

START_TEST(test_retx_before_data)
{
	uint8_t frame[FRAME];
	struct sent_frame sf, first;
	struct batch_counts cnt;
	uint32_t next_id = 5;
	size_t n, off = 0, size;
	const uint8_t *msg;
	uint16_t type;
	struct frag f;
	struct outmsg *om;

	/* A 3000-byte message goes out in three frames. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x0600, data, 3000, false,
	                     0),
	    0);
	(void)fill(frame, FRAME, FRAME, &next_id, &first, &cnt);
	om = first.items[0].big;
	ck_assert_uint_eq(om->refs, 2); /* queue + frame */
	/* Data queued behind it, then the first frame is lost. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x0601, "later", 5, false,
	                     0),
	    0);
	ck_assert_int_eq(sendq_push_retx(&q, om, first.items[0].off,
	                     first.items[0].len),
	    0);
	release(&first);
	ck_assert_uint_eq(om->refs, 2); /* queue's remainder + retx item */
	/* Control first, then the retransmission, then the data. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_CTRL, FERRY_MSG_KEEPALIVE, NULL,
	                     0, false, 0),
	    0);
	n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_int_eq(rx_next(frame, n, &off, &type, &msg, &size), 1);
	ck_assert_uint_eq(type, FERRY_MSG_KEEPALIVE);
	ck_assert_int_eq(rx_next(frame, n, &off, &type, &msg, &size), 1);
	ck_assert_uint_eq(type, FERRY_MSG_FRAG);
	ck_assert_int_eq(frag_decode(msg, size, &f), 0);
	ck_assert_uint_eq(f.msg_id, 5);
	ck_assert_uint_eq(f.off, 0);
	ck_assert_uint_eq(cnt.retx, 1);
	release(&sf);
	/* Everything goes out eventually; the last reference drops. */
	while (!sendq_empty(&q)) {
		n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
		ck_assert_uint_gt(n, 0);
		release(&sf);
	}
	ck_assert(q.bytes == 0);
	ck_assert_uint_eq(next_id, 6);
}
END_TEST

/* The type of the first message of a frame. */
static uint16_t
first_type(const uint8_t *frame, size_t n)
{
	const uint8_t *msg;
	size_t off = 0, size;
	uint16_t type;

	ck_assert_int_eq(rx_next(frame, n, &off, &type, &msg, &size), 1);
	return type;
}

/* A control message queued behind megabytes of data goes out first; the
 * core's own message goes before it. */
START_TEST(test_control_overtakes_megabytes)
{
	enum { BYTES = 4 * 1024 * 1024, MSG = 1000 };
	uint8_t frame[FRAME];
	struct sent_frame sf;
	struct batch_counts cnt;
	uint32_t next_id = 0;
	size_t n;

	sendq_set_limit(&q, SENDQ_BULK, 2 * BYTES);
	for (unsigned i = 0; i < BYTES / MSG; i++)
		ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, MSG,
		                     false, 0),
		    0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x401, data, 100000, true,
	                     7),
	    0);
	/* Data is under way when the request comes. */
	n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(first_type(frame, n), 0x400);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 0x100, "find", 4, false,
	                     0),
	    0);
	n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(first_type(frame, n), 0x100);
	ck_assert_uint_eq(wire_get16(frame), FERRY_HDR_SIZE + 4);
	ck_assert_mem_eq(frame + FERRY_HDR_SIZE, "find", 4);
	ck_assert(q.lane[SENDQ_CONTROL].bytes == 0);
	ck_assert(q.lane[SENDQ_BULK].bytes > BYTES - 2 * FRAME);
	/* The core's own traffic still goes before the layers'. */
	ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 0x100, "next", 4, false,
	                     0),
	    0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CTRL, FERRY_MSG_KEEPALIVE, NULL,
	                     0, false, 0),
	    0);
	n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(first_type(frame, n), FERRY_MSG_KEEPALIVE);
	ck_assert_uint_eq(wire_get16(frame + FERRY_HDR_SIZE + 2), 0x100);
}
END_TEST

/* A flood of control messages slows bulk down but never stops it: bulk
 * goes once control has sent SENDQ_GUARD_BYTES while it waited. */
START_TEST(test_guard_keeps_bulk_moving)
{
	enum { MSG = 1000, NC = 200, NB = 50 };
	const unsigned run_max = SENDQ_GUARD_BYTES / MSG + 1;
	uint8_t frame[FRAME];
	struct sent_frame sf;
	struct batch_counts cnt;
	uint32_t next_id = 0;
	unsigned run = 0, bulk_early = 0, sent_c = 0, sent_b = 0;

	sendq_set_limit(&q, SENDQ_CONTROL, 1 << 20);
	sendq_set_limit(&q, SENDQ_BULK, 1 << 20);
	/* Control alone first: with no bulk waiting, nothing is owed. */
	for (unsigned i = 0; i < 40; i++)
		ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 0x100, data,
		                     MSG, false, 0),
		    0);
	while (!sendq_empty(&q))
		(void)fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert(q.lane[SENDQ_BULK].waited == 0);
	for (unsigned i = 0; i < NC; i++)
		ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 0x100, data,
		                     MSG, false, 0),
		    0);
	for (unsigned i = 0; i < NB; i++)
		ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, data, MSG,
		                     false, 0),
		    0);
	/* One message per frame: the frame's type says whose turn it was. */
	while (!sendq_empty(&q)) {
		size_t n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);

		ck_assert_uint_eq(n, FERRY_HDR_SIZE + MSG);
		if (first_type(frame, n) == 0x100) {
			sent_c++;
			ck_assert_uint_le(++run, run_max);
			continue;
		}
		sent_b++;
		if (sent_c < NC) {
			ck_assert_uint_eq(run, run_max);
			bulk_early++;
		}
		run = 0;
	}
	ck_assert_uint_eq(sent_c, NC);
	ck_assert_uint_eq(sent_b, NB);
	ck_assert_uint_eq(bulk_early, NC / run_max);
}
END_TEST

/* A lost piece of a control-class message is sent again in its class,
 * ahead of bulk data queued in the meantime. */
START_TEST(test_resend_in_own_class)
{
	uint8_t frame[FRAME];
	struct sent_frame first, sf;
	struct batch_counts cnt;
	uint32_t next_id = 3;
	struct frag f;
	size_t n;

	ck_assert_int_eq(sendq_push(&q, SENDQ_CONTROL, 0x101, data, 3000, false,
	                     0),
	    0);
	n = fill(frame, FRAME, FRAME, &next_id, &first, &cnt);
	ck_assert_uint_eq(first.n_items, 1);
	ck_assert_uint_eq(first.items[0].big->cls, SENDQ_CONTROL);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 0x400, "later", 5, false,
	                     0),
	    0);
	ck_assert_int_eq(sendq_push_retx(&q, first.items[0].big,
	                     first.items[0].off, first.items[0].len),
	    0);
	release(&first);
	ck_assert(!TAILQ_EMPTY(&q.lane[SENDQ_CONTROL].retx));
	n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_int_eq(frag_decode(frame, n, &f), 0);
	ck_assert_uint_eq(f.msg_id, 3);
	ck_assert_uint_eq(f.off, 0);
	ck_assert_uint_eq(cnt.retx, 1);
	release(&sf);
	while (!sendq_empty(&q)) {
		n = fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
		ck_assert_uint_gt(n, 0);
		release(&sf);
	}
	ck_assert(q.bytes == 0);
}
END_TEST

START_TEST(test_done_drops_references)
{
	struct sent_frame sf;
	struct batch_counts cnt;
	uint8_t frame[FRAME];
	uint32_t next_id = 0;

	/* Half-sent large messages, retransmissions and small messages left
	 * in the queue: sendq_done frees them all (valgrind sees leaks). */
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 1, data, 5000, true, 1), 0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 1, data, 50, false, 0), 0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CTRL, 1, data, 50, false, 0), 0);
	(void)fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(sf.n_items, 1);
	ck_assert_int_eq(sendq_push_retx(&q, sf.items[0].big, 0, 100), 0);
	ck_assert_uint_eq(sf.items[0].big->refs, 3);
	sendq_done(&q);
	ck_assert(sendq_empty(&q) && q.bytes == 0);
	ck_assert_uint_eq(sf.items[0].big->refs, 1);
	release(&sf);
	outmsg_unref(NULL);
}
END_TEST

/* A peer restarted: large messages under way (in flight, to resend or
 * half sent) go, each counted once; what has not begun stays. */
START_TEST(test_drop_started)
{
	struct sent_frame sf;
	struct batch_counts cnt;
	uint8_t frame[FRAME];
	uint32_t next_id = 0;
	struct qmsg *m;
	enum sendq_class cls;
	uint64_t bytes;

	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 1, data, 5000, true, 1), 0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 2, data, 3000, true, 2), 0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_BULK, 3, data, 50, false, 0), 0);
	ck_assert_int_eq(sendq_push(&q, SENDQ_CTRL, 4, data, 50, false, 0), 0);
	/* The control message and the first piece of message 1 go out;
	 * that piece is lost and queued again. */
	(void)fill(frame, FRAME, FRAME, &next_id, &sf, &cnt);
	ck_assert_uint_eq(sf.n_items, 1);
	ck_assert_int_eq(sendq_push_retx(&q, sf.items[0].big, sf.items[0].off,
	                     sf.items[0].len),
	    0);
	ck_assert_uint_eq(sendq_drop_started(&q, &bytes), 1);
	ck_assert(sf.items[0].big->abandoned);
	ck_assert_uint_eq(sf.items[0].big->refs, 1); /* the frame's alone */
	/* What remained of message 1 and its resend left the queue. */
	ck_assert_uint_eq(bytes, 5000);
	ck_assert_uint_eq(q.bytes, 3000 + 50);
	m = sendq_head(&q, &cls);
	ck_assert(cls == SENDQ_BULK && m->big != NULL && m->big->msg_id == 2);
	ck_assert(!m->big->abandoned);
	/* Nothing more to give up. */
	ck_assert_uint_eq(sendq_drop_started(&q, &bytes), 0);
	ck_assert_uint_eq(bytes, 0);
	release(&sf);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_sendq");
	TCase *tc = tcase_create("sendq");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_classes_in_order);
	tcase_add_test(tc, test_byte_bound);
	tcase_add_test(tc, test_bounds_independent);
	tcase_add_test(tc, test_empty_messages_bounded);
	tcase_add_test(tc, test_drain_at_half);
	tcase_add_test(tc, test_lone_oversize_message);
	suite_add_tcase(s, tc);
	tc = tcase_create("batch");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_pack_small_exactly);
	tcase_add_test(tc, test_empty_and_control_messages);
	tcase_add_test(tc, test_big_message_fragments);
	tcase_add_test(tc, test_large_random_messages);
	tcase_add_test(tc, test_item_limit);
	tcase_add_test(tc, test_retx_before_data);
	tcase_add_test(tc, test_control_overtakes_megabytes);
	tcase_add_test(tc, test_guard_keeps_bulk_moving);
	tcase_add_test(tc, test_resend_in_own_class);
	tcase_add_test(tc, test_done_drops_references);
	tcase_add_test(tc, test_drop_started);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
