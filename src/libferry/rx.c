/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's received messages: reassembly of chunked RECEIVEs, a bounded
 * queue of whole messages kept while the application waits for something
 * else, and ferry_receive().
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <string.h>

#include "lib/time.h"
#include "lib/wire.h"

/* Queue record: peer[32], u16 type, u32 len, data[len]. */
#define LF_REC_HDR (FERRY_PEER_ID_LEN + 6)

static int
lf_rx_queue(struct ferry_client *c, const uint8_t *peer, uint16_t type,
    const uint8_t *data, size_t len)
{
	uint8_t *p;

	if (buf_size(&c->queue) + LF_REC_HDR + len > LF_QUEUE_MAX) {
		c->rx_dropped++;
		return 0;
	}
	p = buf_reserve(&c->queue, LF_REC_HDR + len);
	if (p == NULL) {
		c->rx_dropped++;
		return 0;
	}
	memcpy(p, peer, FERRY_PEER_ID_LEN);
	wire_put16(p + FERRY_PEER_ID_LEN, type);
	wire_put32(p + FERRY_PEER_ID_LEN + 2, (uint32_t)len);
	if (len > 0)
		memcpy(p + LF_REC_HDR, data, len);
	buf_commit(&c->queue, LF_REC_HDR + len);
	return 0;
}

/* A piece that continues the chunked message in progress. */
static int
lf_rx_more(struct ferry_client *c, const uint8_t *peer, uint16_t type,
    uint32_t total, uint32_t offset, const uint8_t *data, size_t len)
{
	if (memcmp(peer, c->rx_peer.bytes, FERRY_PEER_ID_LEN) != 0 ||
	    type != c->rx_type || total != c->rx_total ||
	    offset != buf_size(&c->rx_reasm) || len == 0)
		return -EPROTO;
	/* Out of memory loses this message only; the stream stays in step
	 * because the sequence state is kept. */
	if (buf_append(&c->rx_reasm, data, len) < 0)
		c->rx_dropped++;
	if (offset + len < total)
		return 0;
	c->rx_active = false;
	if (buf_size(&c->rx_reasm) == total)
		(void)lf_rx_queue(c, peer, type, buf_head(&c->rx_reasm), total);
	buf_done(&c->rx_reasm);
	return 0;
}

/* RECEIVE: 4 peer[32]  36 app_type  38 flags  40 total_len  44 offset
 *         48 data[] */
int
lf_rx_frame(struct ferry_client *c, const struct lf_frame *f)
{
	const uint8_t *p = f->p, *data = p + FERRY_C_RECEIVE_FIXED;
	uint32_t total, offset;
	uint16_t type;
	size_t len;

	if (f->size < FERRY_C_RECEIVE_FIXED)
		return -EPROTO;
	type = wire_get16(p + 36);
	total = wire_get32(p + 40);
	offset = wire_get32(p + 44);
	len = (size_t)f->size - FERRY_C_RECEIVE_FIXED;
	if (total > FERRY_APP_MSG_MAX || offset > total || len > total - offset)
		return -EPROTO;
	if (c->rx_active)
		return lf_rx_more(c, p + 4, type, total, offset, data, len);
	if (offset != 0)
		return -EPROTO;
	if (len == total)
		return lf_rx_queue(c, p + 4, type, data, len);
	if (len == 0)
		return -EPROTO;
	c->rx_active = true;
	memcpy(c->rx_peer.bytes, p + 4, FERRY_PEER_ID_LEN);
	c->rx_type = type;
	c->rx_total = total;
	buf_reset(&c->rx_reasm);
	if (buf_append(&c->rx_reasm, data, len) < 0)
		c->rx_dropped++;
	return 0;
}

/* Moves the queue's first message into c->msg and *ret. */
static int
lf_rx_pop(struct ferry_client *c, struct ferry_message *ret)
{
	const uint8_t *p = buf_head(&c->queue);
	uint32_t len = wire_get32(p + FERRY_PEER_ID_LEN + 2);

	buf_reset(&c->msg);
	if (buf_append(&c->msg, p + LF_REC_HDR, len) < 0)
		return -ENOMEM;
	memcpy(ret->peer.bytes, p, FERRY_PEER_ID_LEN);
	ret->type = wire_get16(p + FERRY_PEER_ID_LEN);
	ret->len = len;
	ret->data = len > 0 ? buf_head(&c->msg) : (const uint8_t *)"";
	buf_consume(&c->queue, LF_REC_HDR + len);
	return 0;
}

int
ferry_receive(struct ferry_client *c, struct ferry_message *ret, int timeout_ms)
{
	int64_t deadline;
	int r;

	if (ret == NULL)
		return -EINVAL;
	/* Whatever the application sent so far goes out before it waits:
	 * it may be what the answer depends on. */
	r = lf_write_until(c, 0, lf_deadline(c, 0));
	if (r < 0)
		return r;
	deadline =
	    timeout_ms < 0 ? -1 : (int64_t)(time_mono_us() / 1000) + timeout_ms;
	for (;;) {
		r = lf_drain_input(c);
		if (r < 0)
			return r;
		if (buf_size(&c->queue) > 0)
			return lf_rx_pop(c, ret);
		r = lf_wait(c, false, deadline);
		if (r < 0)
			return r;
	}
}
