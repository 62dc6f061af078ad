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

/*
 * DHT_PUT: 4 req_id  8 replication  9 reserved  10 reserved16  12 expiry
 *         20 total_len  24 offset  28 data[]
 */
int
msgparse_dht_put(const struct msg_frame *f, struct msg_req *req)
{
	struct msg_dht_put *put = &req->u.dht_put;
	const uint8_t *p = f->p;

	if (f->size < FERRY_C_DHT_PUT_FIXED)
		return -EBADMSG;
	put->replication = p[8];
	put->reserved8 = p[9];
	put->reserved16 = wire_get16(p + 10);
	put->expiry = wire_get64(p + 12);
	put->total_len = wire_get32(p + 20);
	put->offset = wire_get32(p + 24);
	put->data = p + FERRY_C_DHT_PUT_FIXED;
	put->len = (size_t)f->size - FERRY_C_DHT_PUT_FIXED;
	if (put->total_len > FERRY_DHT_BLOCK_MAX)
		return -EMSGSIZE;
	if (put->offset > put->total_len ||
	    put->len > put->total_len - put->offset)
		return -EBADMSG;
	return 0;
}

/* DHT_GET: 4 req_id  8 key[32] */
int
msgparse_dht_get(const struct msg_frame *f, struct msg_req *req)
{
	if (f->size != FERRY_C_DHT_GET_SIZE)
		return -EBADMSG;
	memcpy(req->u.dht_get.key, f->p + 8, FERRY_DHT_KEY_LEN);
	return 0;
}

/* DHT_FIND: 4 req_id  8 key[32]  40 want  42 reserved */
int
msgparse_dht_find(const struct msg_frame *f, struct msg_req *req)
{
	struct msg_dht_find *find = &req->u.dht_find;

	if (f->size != FERRY_C_DHT_FIND_SIZE)
		return -EBADMSG;
	memcpy(find->key, f->p + 8, FERRY_DHT_KEY_LEN);
	find->want = wire_get16(f->p + 40);
	find->reserved = wire_get16(f->p + 42);
	return 0;
}

int
msgparse_req_only(const struct msg_frame *f, struct msg_req *req)
{
	(void)req;
	return f->size == MSGPARSE_REQ_ID_SIZE ? 0 : -EBADMSG;
}

int
msgparse_file_put(const struct msg_frame *f, struct msg_req *req)
{
	struct msg_file_put *m = &req->u.file_put;
	size_t len;

	if (f->size < FERRY_C_FILE_PUT_FIXED)
		return -EBADMSG;
	len = (size_t)f->size - FERRY_C_FILE_PUT_FIXED;
	if (len > FERRY_C_FILE_LABEL_MAX ||
	    memchr(f->p + FERRY_C_FILE_PUT_FIXED, '\0', len) != NULL)
		return -EBADMSG;
	m->replication = f->p[8];
	m->reserved8 = f->p[9];
	m->reserved16 = wire_get16(f->p + 10);
	m->progress_ms = wire_get32(f->p + 12);
	m->label = (const char *)f->p + FERRY_C_FILE_PUT_FIXED;
	m->label_len = len;
	return 0;
}

int
msgparse_file_get(const struct msg_frame *f, struct msg_req *req)
{
	struct msg_file_get *m = &req->u.file_get;
	size_t len;

	if (f->size <= FERRY_C_FILE_GET_FIXED)
		return -EBADMSG;
	len = (size_t)f->size - FERRY_C_FILE_GET_FIXED;
	if (len > FERRY_C_FILE_URI_MAX ||
	    memchr(f->p + FERRY_C_FILE_GET_FIXED, '\0', len) != NULL)
		return -EBADMSG;
	m->progress_ms = wire_get32(f->p + 8);
	m->reserved = wire_get32(f->p + 12);
	m->uri = (const char *)f->p + FERRY_C_FILE_GET_FIXED;
	m->uri_len = len;
	return 0;
}

int
msgparse_cancel(const struct msg_frame *f, struct msg_req *req)
{
	if (f->size != FERRY_C_CANCEL_SIZE)
		return -EBADMSG;
	req->u.cancel.id = wire_get64(f->p + 8);
	return 0;
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

/* The fields a continuation must share with the piece before it. */
static bool
msgparse_chunk_same(const struct msg_chunks *a, const struct msg_chunks *b)
{
	return a->type == b->type && a->total_len == b->total_len &&
	    memcmp(&a->peer, &b->peer, sizeof(a->peer)) == 0 &&
	    a->app_type == b->app_type && a->replication == b->replication &&
	    a->expiry == b->expiry;
}

/* The rules every kind of piece follows; next holds this piece's message
 * fields, the rest of it zero. */
static int
msgparse_chunk_step(struct msg_chunks *st, struct msg_chunks *next,
    uint32_t offset, size_t len)
{
	if (!st->active) {
		if (offset != 0)
			return -EBADMSG;
		if (len == next->total_len)
			return MSGPARSE_WHOLE;
		/* An empty first piece would let a client hold the
		 * connection's sequence open without ever progressing. */
		if (len == 0)
			return -EBADMSG;
		next->active = true;
		next->done = (uint32_t)len;
		*st = *next;
		return MSGPARSE_FIRST;
	}
	if (!msgparse_chunk_same(st, next) || st->done != offset || len == 0)
		return -EBADMSG;
	st->done += (uint32_t)len;
	if (st->done < st->total_len)
		return MSGPARSE_MIDDLE;
	memset(st, 0, sizeof(*st));
	return MSGPARSE_LAST;
}

int
msgparse_chunk(struct msg_chunks *st, const struct msg_send *s)
{
	struct msg_chunks next;

	memset(&next, 0, sizeof(next));
	next.type = FERRY_C_SEND;
	next.peer = s->peer;
	next.app_type = s->app_type;
	next.total_len = s->total_len;
	return msgparse_chunk_step(st, &next, s->offset, s->len);
}

int
msgparse_put_chunk(struct msg_chunks *st, const struct msg_dht_put *p)
{
	struct msg_chunks next;

	memset(&next, 0, sizeof(next));
	next.type = FERRY_C_DHT_PUT;
	next.replication = p->replication;
	next.expiry = p->expiry;
	next.total_len = p->total_len;
	return msgparse_chunk_step(st, &next, p->offset, p->len);
}

bool
msgparse_chunk_allows(const struct msg_chunks *st, uint16_t type)
{
	return !st->active || type == st->type;
}
