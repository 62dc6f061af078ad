/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A request body as it arrives (httpd.h): Content-Length or chunked
 * (RFC 9112, 7.1), bounded by MAX_REQUEST_BYTES, handed to the handler
 * de-chunked; intermediary layer. */
#define LOG_TAG "intermediary"
#include "intermediary/httpd_int.h"

#include <errno.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

/* One CRLF-ended line of at most HTTPD_LINE_MAX bytes into c->line: its
 * length, -EAGAIN for more, -EMSGSIZE. */
static ssize_t
httpd_body_line(struct httpd_conn *c, struct evbuffer *in)
{
	size_t eol,
	    max = HTTPD_LINE_MAX < c->line_size - 1 ? HTTPD_LINE_MAX
	                                            : c->line_size - 1;
	struct evbuffer_ptr p =
	    evbuffer_search_eol(in, NULL, &eol, EVBUFFER_EOL_CRLF_STRICT);

	if (p.pos < 0)
		return evbuffer_get_length(in) > max ? -EMSGSIZE : -EAGAIN;
	if ((size_t)p.pos > max)
		return -EMSGSIZE;
	(void)evbuffer_remove(in, c->line, (size_t)p.pos);
	(void)evbuffer_drain(in, eol);
	c->line[p.pos] = '\0';
	return p.pos;
}

/* Moves up to req->left bytes of in to the body: how many. */
static size_t
httpd_body_move(struct httpd_req *req, struct evbuffer *in)
{
	size_t n = evbuffer_get_length(in);

	if (n > req->left)
		n = (size_t)req->left;
	if (n > 0)
		(void)evbuffer_remove_buffer(in, req->body, n);
	req->left -= n;
	req->body_bytes += n;
	return n;
}

/* One step of the chunked decoding: 1 if it went on, 0 for more bytes,
 * -EBADMSG, -EMSGSIZE. */
static int
httpd_body_chunk(struct httpd_conn *c, struct evbuffer *in)
{
	struct httpd_req *req = &c->req;
	uint8_t crlf[2];
	ssize_t n;

	switch (req->chunk) {
	case HTTPD_CH_SIZE:
		n = httpd_body_line(c, in);
		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return (int)n;
		if (httpmsg_chunk_size(c->line, (size_t)n, &req->left) < 0)
			return -EBADMSG;
		req->chunk = req->left > 0 ? HTTPD_CH_DATA : HTTPD_CH_TRAILER;
		return 1;
	case HTTPD_CH_DATA:
		if (httpd_body_move(req, in) == 0)
			return 0;
		if (req->left == 0)
			req->chunk = HTTPD_CH_CRLF;
		return 1;
	case HTTPD_CH_CRLF:
		if (evbuffer_get_length(in) < 2)
			return 0;
		(void)evbuffer_remove(in, crlf, 2);
		if (crlf[0] != '\r' || crlf[1] != '\n')
			return -EBADMSG;
		req->chunk = HTTPD_CH_SIZE;
		return 1;
	case HTTPD_CH_TRAILER:
		n = httpd_body_line(c, in);
		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return (int)n;
		/* Trailer fields count against the head's bound and are
		 * not kept. */
		req->head_bytes += (size_t)n + 2;
		if (req->head_bytes > c->srv->cfg.max_head)
			return -EMSGSIZE;
		if (n == 0)
			req->body_done = true;
		return 1;
	}
	return -EBADMSG;
}

int
httpd_body_read(struct httpd_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct httpd_req *req = &c->req;
	struct httpd *s = c->srv;
	uint64_t before = req->body_bytes;
	int r = 0;

	if (req->mode == HTTPD_NO_BODY)
		req->body_done = true;
	else if (req->mode == HTTPD_LENGTH) {
		(void)httpd_body_move(req, in);
		req->body_done = req->left == 0;
	} else {
		while (!req->body_done && (r = httpd_body_chunk(c, in)) > 0)
			;
	}
	if (r == 0 && req->body_bytes > s->cfg.max_body)
		r = -EMSGSIZE;
	if (r < 0) {
		if (r == -EMSGSIZE)
			(*s->c.too_large)++;
		else
			(*s->c.malformed)++;
		httpd_conn_fail(c, r == -EMSGSIZE ? 413 : 400,
		    r == -EMSGSIZE ? "too-large" : "malformed",
		    r == -EMSGSIZE ? "the body is over its bound"
		                   : "the chunked body is malformed");
		return r;
	}
	if (req->body_done) {
		c->state = HTTPD_WAIT;
		(void)bufferevent_disable(c->bev, EV_READ);
		httpd_conn_arm(c);
	}
	if (req->body_bytes == before && !req->body_done && !req->resumed)
		return 0;
	req->resumed = false;
	s->h.on_body(s->h.cls, req, req->body, req->body_done);
	return 0;
}
