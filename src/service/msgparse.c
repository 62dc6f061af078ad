/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Client request decoding (see msgparse.h), service layer. Every length
 * is checked against the frame before a field is read; layouts are the
 * ones documented in <ferry/proto.h> and ferry-client(7).
 */
#include "service/msgparse.h"

#include <errno.h>
#include <string.h>

#include "lib/wire.h"

int
msgparse_frame(const void *buf, size_t len, struct msg_frame *ret)
{
	const uint8_t *p = buf;
	uint16_t size;

	if (len < FERRY_HDR_SIZE)
		return 0;
	size = wire_get16(p);
	if (size < FERRY_HDR_SIZE)
		return -EBADMSG;
	if (len < size)
		return 0;
	ret->p = p;
	ret->size = size;
	ret->type = wire_get16(p + 2);
	return 1;
}

uint32_t
msgparse_req_id(const struct msg_frame *f)
{
	if (f->size < MSGPARSE_REQ_ID_SIZE)
		return 0;
	return wire_get32(f->p + 4);
}

/*
 * SEND: 4 req_id  8 peer[32]  40 app_type  42 flags  44 total_len
 *      48 offset  52 data[]
 */
int
msgparse_send(const struct msg_frame *f, struct msg_req *req)
{
	struct msg_send *s = &req->u.send;
	const uint8_t *p = f->p;

	if (f->size < FERRY_C_SEND_FIXED)
		return -EBADMSG;
	s->req_id = wire_get32(p + 4);
	memcpy(s->peer.bytes, p + 8, FERRY_PEER_ID_LEN);
	s->app_type = wire_get16(p + 40);
	s->flags = wire_get16(p + 42);
	s->total_len = wire_get32(p + 44);
	s->offset = wire_get32(p + 48);
	s->data = p + FERRY_C_SEND_FIXED;
	s->len = (size_t)f->size - FERRY_C_SEND_FIXED;
	if (s->total_len > FERRY_APP_MSG_MAX)
		return -EMSGSIZE;
	if (s->offset > s->total_len || s->len > s->total_len - s->offset)
		return -EBADMSG;
	return 0;
}

int
msgparse_register(const struct msg_frame *f, struct msg_req *req)
{
	struct msg_register *reg = &req->u.reg;
	size_t n = (size_t)f->size - MSGPARSE_REQ_ID_SIZE;

	if (f->size < MSGPARSE_REQ_ID_SIZE || n % 2 != 0)
		return -EBADMSG;
	reg->types = f->p + MSGPARSE_REQ_ID_SIZE;
	reg->n = n / 2;
	return 0;
}

int
msgparse_uri(const struct msg_frame *f, struct msg_req *req)
{
	struct msg_str *str = &req->u.uri;

	if (f->size <= MSGPARSE_REQ_ID_SIZE)
		return -EBADMSG;
	str->s = (const char *)f->p + MSGPARSE_REQ_ID_SIZE;
	str->len = (size_t)f->size - MSGPARSE_REQ_ID_SIZE;
	/* The daemon hands the string on as a C string. */
	if (memchr(str->s, '\0', str->len) != NULL)
		return -EBADMSG;
	return 0;
}

/* PING: 4 req_id  8 peer[32]  40 count  44 payload_len  46 reserved
 *       48 timeout_ms */
int
msgparse_ping(const struct msg_frame *f, struct msg_req *req)
{
	struct msg_ping *ping = &req->u.ping;
	const uint8_t *p = f->p;

	if (f->size != FERRY_C_PING_FIXED)
		return -EBADMSG;
	memcpy(ping->peer.bytes, p + 8, FERRY_PEER_ID_LEN);
	ping->count = wire_get32(p + 40);
	ping->payload_len = wire_get16(p + 44);
	ping->reserved = wire_get16(p + 46);
	ping->timeout_ms = wire_get32(p + 48);
	return 0;
}

int
msgparse_req_only(const struct msg_frame *f, struct msg_req *req)
{
	(void)req;
	return f->size == MSGPARSE_REQ_ID_SIZE ? 0 : -EBADMSG;
}

int
msgparse_decode(msgparse_decode_fn *decode, const struct msg_frame *f,
    struct msg_req *ret)
{
	struct msg_req req;
	int r;

	memset(&req, 0, sizeof(req));
	req.type = f->type;
	req.req_id = msgparse_req_id(f);
	r = decode(f, &req);
	if (r < 0)
		return r;
	*ret = req;
	return 0;
}

uint16_t
msgparse_register_type(const struct msg_register *reg, size_t i)
{
	return wire_get16(reg->types + 2 * i);
}

int
msgparse_chunk(struct msg_chunks *st, const struct msg_send *s)
{
	if (!st->active) {
		if (s->offset != 0)
			return -EBADMSG;
		if (s->len == s->total_len)
			return MSGPARSE_WHOLE;
		/* An empty first piece would let a client hold the
		 * connection's sequence open without ever progressing. */
		if (s->len == 0)
			return -EBADMSG;
		st->active = true;
		st->peer = s->peer;
		st->app_type = s->app_type;
		st->total_len = s->total_len;
		st->done = (uint32_t)s->len;
		return MSGPARSE_FIRST;
	}
	if (memcmp(&st->peer, &s->peer, sizeof(st->peer)) != 0 ||
	    st->app_type != s->app_type || st->total_len != s->total_len ||
	    st->done != s->offset || s->len == 0)
		return -EBADMSG;
	st->done += (uint32_t)s->len;
	if (st->done < st->total_len)
		return MSGPARSE_MIDDLE;
	memset(st, 0, sizeof(*st));
	return MSGPARSE_LAST;
}

bool
msgparse_chunk_allows(const struct msg_chunks *st, uint16_t type)
{
	return !st->active || type == FERRY_C_SEND;
}
