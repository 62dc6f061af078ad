/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's requests that make the daemon act: SHUTDOWN, REGISTER,
 * CONNECT and PING.
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <string.h>

#include "lib/wire.h"

int
ferry_shutdown(struct ferry_client *c)
{
	if (c == NULL)
		return -EINVAL;
	return lf_request_simple(c, FERRY_C_SHUTDOWN, NULL, NULL);
}

/* REGISTER: 4 req_id  8 u16 types[] */
int
ferry_register(struct ferry_client *c, const uint16_t *types, size_t n)
{
	uint32_t req_id;
	uint8_t *p;

	if (c == NULL || (types == NULL && n > 0))
		return -EINVAL;
	if (n > (FERRY_MSG_SIZE_MAX - 8) / 2)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if (types[i] < FERRY_APP_TYPE_MIN)
			return -EINVAL;
	if (c->dead)
		return c->dead;
	p = lf_request_frame(c, FERRY_C_REGISTER, 8 + 2 * n, &req_id);
	if (p == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		wire_put16(p + 8 + 2 * i, types[i]);
	return lf_request_wait(c, req_id, NULL, NULL, 0);
}

/* CONNECT: 4 req_id  8 uri[] */
int
ferry_connect_uri(struct ferry_client *c, const char *uri)
{
	uint32_t req_id;
	size_t len;
	uint8_t *p;

	if (c == NULL || uri == NULL || *uri == '\0')
		return -EINVAL;
	len = strlen(uri);
	if (len > FERRY_MSG_SIZE_MAX - 8)
		return -EMSGSIZE;
	if (c->dead)
		return c->dead;
	p = lf_request_frame(c, FERRY_C_CONNECT, 8 + len, &req_id);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p + 8, uri, len);
	return lf_request_wait(c, req_id, NULL, NULL, 0);
}

struct lf_pong {
	struct ferry_ping_result res; /* decoded PONG */
	bool got;                     /* a PONG came, not just RESULT 0 */
};

/* PONG: 4 req_id  8 count  12 total_ns  20 min_ns  28 max_ns */
static int
lf_pong_reply(void *ctx, const struct lf_frame *f)
{
	struct lf_pong *pong = ctx;
	struct ferry_ping_result *res = &pong->res;

	if (f->type != FERRY_C_PONG || f->size != FERRY_C_PONG_SIZE)
		return -EPROTO;
	pong->got = true;
	res->count = wire_get32(f->p + 8);
	res->total_ns = wire_get64(f->p + 12);
	res->min_ns = wire_get64(f->p + 20);
	res->max_ns = wire_get64(f->p + 28);
	return 1;
}

/* PING: 4 req_id  8 peer[32]  40 count  44 payload_len  46 reserved
 *      48 timeout_ms */
int
ferry_ping(struct ferry_client *c, const struct ferry_peer_id *peer,
    uint32_t count, uint16_t payload_len, uint32_t timeout_ms,
    struct ferry_ping_result *ret)
{
	struct lf_pong pong;
	uint32_t req_id;
	uint8_t *p;
	int r;

	if (c == NULL || peer == NULL || ret == NULL || count == 0)
		return -EINVAL;
	if (c->dead)
		return c->dead;
	p = lf_request_frame(c, FERRY_C_PING, FERRY_C_PING_FIXED, &req_id);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p + 8, peer->bytes, FERRY_PEER_ID_LEN);
	wire_put32(p + 40, count);
	wire_put16(p + 44, payload_len);
	wire_put16(p + 46, 0);
	wire_put32(p + 48, timeout_ms);
	memset(&pong, 0, sizeof(pong));
	/* The daemon may take up to count round-trip timeouts. */
	r = lf_request_wait(c, req_id, lf_pong_reply, &pong,
	    (uint64_t)count * timeout_ms);
	if (r == 0 && !pong.got)
		r = -EPROTO; /* RESULT 0 instead of PONG */
	if (r < 0)
		return r;
	*ret = pong.res;
	return 0;
}
