/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's requests: a fresh req_id per request, everything buffered is
 * written first, then replies are collected until RESULT; messages that
 * arrive meanwhile are queued for ferry_receive().
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <string.h>

#include "lib/wire.h"

uint32_t
lf_req_id_new(struct ferry_client *c)
{
	uint32_t req_id = c->next_req_id++;

	if (c->next_req_id == 0)
		c->next_req_id = 1;
	return req_id;
}

uint8_t *
lf_request_frame(struct ferry_client *c, uint16_t type, size_t size,
    uint32_t *ret_req_id)
{
	uint8_t *p = buf_reserve(&c->out, size);

	if (p == NULL)
		return NULL;
	*ret_req_id = lf_req_id_new(c);
	wire_put_hdr(p, (uint16_t)size, type);
	wire_put32(p + 4, *ret_req_id);
	buf_commit(&c->out, size);
	return p;
}

/* RESULT: 4 req_id  8 i32 status  12 message[] */
int
lf_result_status(const struct lf_frame *f)
{
	int32_t status;

	if (f->size < 12)
		return -EPROTO;
	status = (int32_t)wire_get32(f->p + 8);
	/* A status is 0 or a negative errno; anything else is garbage. */
	if (status > 0 || status < -4095)
		return -EPROTO;
	return status;
}

int
lf_reply(struct ferry_client *c, const struct lf_frame *f, uint32_t req_id,
    lf_reply_fn *fn, void *ctx, int *status)
{
	int r;

	if (f->type == FERRY_C_RECEIVE)
		return lf_rx_frame(c, f);
	/* Replies to asynchronous requests are kept for them; those to
	 * requests that timed out earlier are dropped. */
	if (f->size < 8 || wire_get32(f->p + 4) != req_id) {
		lf_async_frame(c, f);
		return 0;
	}
	if (f->type == FERRY_C_RESULT) {
		*status = lf_result_status(f);
		c->why[0] = '\0';
		if (*status < 0 && f->size > 12) {
			size_t n = (size_t)f->size - 12;

			if (n >= sizeof(c->why))
				n = sizeof(c->why) - 1;
			memcpy(c->why, f->p + 12, n);
			c->why[n] = '\0';
		}
		return 1;
	}
	r = fn != NULL ? fn(ctx, f) : -EPROTO;
	if (r == 0)
		return 0;
	*status = r > 0 ? 0 : r;
	return 1;
}

int
lf_request_wait(struct ferry_client *c, uint32_t req_id, lf_reply_fn *fn,
    void *ctx, uint64_t extra_ms)
{
	int64_t deadline = lf_deadline(c, extra_ms);
	struct lf_frame f;
	int r, status = 0;

	r = lf_write_until(c, 0, deadline);
	while (r >= 0) {
		r = lf_next_frame(c, &f);
		if (r == 0) {
			r = lf_wait(c, false, deadline);
			continue;
		}
		if (r < 0)
			break;
		r = lf_reply(c, &f, req_id, fn, ctx, &status);
		lf_consume(c, &f);
		if (r > 0)
			return status;
	}
	/* A malformed reply leaves the stream unusable. */
	if (r == -EPROTO)
		return lf_fail(c, r);
	return r;
}

int
lf_request_simple(struct ferry_client *c, uint16_t type, lf_reply_fn *fn,
    void *ctx)
{
	uint32_t req_id;

	if (c->dead)
		return c->dead;
	if (lf_request_frame(c, type, 8, &req_id) == NULL)
		return -ENOMEM;
	return lf_request_wait(c, req_id, fn, ctx, 0);
}

const char *
ferry_last_error(const struct ferry_client *c)
{
	return c != NULL ? c->why : "";
}
