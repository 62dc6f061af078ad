/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's SEND: messages cut into frames of at most 64 KiB, buffered
 * and written in large batches; a full buffer blocks the caller, which is
 * how the daemon's back-pressure reaches the application.
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <string.h>

#include "lib/wire.h"

static int
lf_send_check(struct ferry_client *c, const struct ferry_peer_id *peer,
    uint16_t type, const void *data, size_t len)
{
	if (c == NULL || peer == NULL || (data == NULL && len > 0))
		return -EINVAL;
	if (c->dead)
		return c->dead;
	if (type < FERRY_APP_TYPE_MIN)
		return -EINVAL;
	if (len > FERRY_APP_MSG_MAX)
		return -EMSGSIZE;
	return 0;
}

/* SEND: 4 req_id  8 peer[32]  40 app_type  42 flags  44 total_len
 *      48 offset  52 data[]. All pieces are reserved at once, so a
 * failed allocation queues nothing rather than half a message. */
static int
lf_send_append(struct ferry_client *c, uint32_t req_id,
    const struct ferry_peer_id *peer, uint16_t type, const uint8_t *data,
    size_t len)
{
	size_t pieces =
	    len == 0 ? 1 : (len + LF_SEND_PIECE - 1) / LF_SEND_PIECE;
	size_t off = 0, n;
	uint8_t *p;

	if (buf_reserve(&c->out, len + pieces * FERRY_C_SEND_FIXED) == NULL)
		return -ENOMEM;
	do {
		n = len - off < LF_SEND_PIECE ? len - off : LF_SEND_PIECE;
		p = buf_reserve(&c->out, FERRY_C_SEND_FIXED + n);
		wire_put_hdr(p, (uint16_t)(FERRY_C_SEND_FIXED + n),
		    FERRY_C_SEND);
		wire_put32(p + 4, req_id);
		memcpy(p + 8, peer->bytes, FERRY_PEER_ID_LEN);
		wire_put16(p + 40, type);
		wire_put16(p + 42, 0);
		wire_put32(p + 44, (uint32_t)len);
		wire_put32(p + 48, (uint32_t)off);
		if (n > 0)
			memcpy(p + FERRY_C_SEND_FIXED, data + off, n);
		buf_commit(&c->out, FERRY_C_SEND_FIXED + n);
		off += n;
	} while (off < len);
	return 0;
}

int
ferry_send(struct ferry_client *c, const struct ferry_peer_id *peer,
    uint16_t type, const void *data, size_t len)
{
	int r = lf_send_check(c, peer, type, data, len);

	if (r < 0)
		return r;
	/* Make room first, so that a timeout means "not queued". */
	if (buf_size(&c->out) >= LF_SEND_HIGH) {
		r = lf_write_until(c, LF_SEND_HIGH / 2, lf_deadline(c, 0));
		if (r < 0)
			return r;
	}
	r = lf_send_append(c, 0, peer, type, data, len);
	if (r < 0)
		return r;
	/* One batch is full: write what the socket takes now, without
	 * waiting (keep = all of it). */
	if (buf_size(&c->out) >= LF_SEND_HIGH)
		return lf_write_until(c, buf_size(&c->out), -1);
	return 0;
}

int
ferry_send_confirmed(struct ferry_client *c, const struct ferry_peer_id *peer,
    uint16_t type, const void *data, size_t len)
{
	uint32_t req_id;
	int r = lf_send_check(c, peer, type, data, len);

	if (r < 0)
		return r;
	req_id = lf_req_id_new(c);
	r = lf_send_append(c, req_id, peer, type, data, len);
	if (r < 0)
		return r;
	return lf_request_wait(c, req_id, NULL, NULL, 0);
}

int
ferry_flush(struct ferry_client *c)
{
	if (c == NULL)
		return -EINVAL;
	return lf_write_until(c, 0, lf_deadline(c, 0));
}
