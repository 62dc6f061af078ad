/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary's HTTPS server (httpd.h), intermediary layer: the
 * listener, connections and their states, timers, and the request head.
 * The body is httpd_body.c's, answers httpd_reply.c's.
 */
#define LOG_TAG "intermediary"
#include "intermediary/httpd_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "lib/log.h"
#include "lib/netaddr.h"
#include "lib/time.h"

static void httpd_conn_run(evutil_socket_t fd, short what, void *arg);

static void httpd_log_refusal(struct httpd *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The server's refusals of an address, at a bounded rate. */
static void
httpd_log_refusal(struct httpd *s, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = ratelog_vformat(&s->log, time_mono_us(), line, sizeof(line), fmt,
	    ap);
	va_end(ap);
	if (ok)
		log_info("%s", line);
}

/* Arms the connection's timer for its state: REQUEST_TIMEOUT for a head
 * or a body being read, and for a last answer to go out (a client that
 * reads nothing, or never ends its TLS handshake, holds no connection
 * longer); none while the handler has the request. */
void
httpd_conn_arm(struct httpd_conn *c)
{
	struct timeval tv;

	if (c->lingering)
		return; /* its own, shorter timer */
	if (c->state == HTTPD_WAIT ||
	    (c->state == HTTPD_BODY && c->req.paused)) {
		(void)event_del(c->timer);
		return;
	}
	c->window_bytes = c->req.body_bytes;
	time_us_to_tv(c->srv->cfg.timeout_us, &tv);
	(void)event_add(c->timer, &tv);
}

/* Closing a socket with unread input makes the kernel send a reset,
 * which may overtake the answer still on its way: what the client sends
 * after its last answer is read and dropped for a moment first, as
 * nginx's lingering close does. */
void
httpd_conn_linger(struct httpd_conn *c)
{
	struct timeval tv;

	c->lingering = true;
	(void)evbuffer_drain(bufferevent_get_input(c->bev),
	    evbuffer_get_length(bufferevent_get_input(c->bev)));
	(void)bufferevent_enable(c->bev, EV_READ);
	time_us_to_tv(HTTPD_LINGER_US < c->srv->cfg.timeout_us
	        ? HTTPD_LINGER_US
	        : c->srv->cfg.timeout_us,
	    &tv);
	(void)event_add(c->timer, &tv);
}

void
httpd_conn_kick(struct httpd_conn *c)
{
	event_active(c->kick, EV_TIMEOUT, 0);
}

static void
httpd_req_reset(struct httpd_req *req)
{
	struct evbuffer *body = req->body, *rhead = req->rhead;
	struct httpd_conn *c = req->conn;

	free(req->fields);
	(void)evbuffer_drain(body, evbuffer_get_length(body));
	(void)evbuffer_drain(rhead, evbuffer_get_length(rhead));
	memset(req, 0, sizeof(*req));
	req->conn = c;
	req->body = body;
	req->rhead = rhead;
}

/* The handler is told the request is over, once. */
static void
httpd_req_finish(struct httpd_conn *c)
{
	struct httpd *s = c->srv;

	if (!c->req.live)
		return;
	c->req.live = false;
	s->h.on_done(s->h.cls, &c->req);
}

void
httpd_conn_free(struct httpd_conn *c)
{
	struct httpd *s = c->srv;

	httpd_req_finish(c);
	if (c->refusing)
		s->n_refusing--;
	else
		s->n_conns--;
	TAILQ_REMOVE(&s->conns, c, link);
	httpd_addr_disconnect(&s->addrs, c->addr);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->kick != NULL)
		event_free(c->kick);
	free(c->req.fields);
	if (c->req.body != NULL)
		evbuffer_free(c->req.body);
	if (c->req.rhead != NULL)
		evbuffer_free(c->req.rhead);
	free(c->line);
	free(c);
}

/* Keeps a header field of the request. */
static int
httpd_keep_field(struct httpd_req *req, const struct httpmsg_field *f)
{
	size_t add = f->name_len + 1 + f->value_len + 1;
	char *p = realloc(req->fields, req->fields_len + add);

	if (p == NULL)
		return -ENOMEM;
	req->fields = p;
	p += req->fields_len;
	memcpy(p, f->name, f->name_len);
	p[f->name_len] = '\0';
	memcpy(p + f->name_len + 1, f->value, f->value_len);
	p[add - 1] = '\0';
	req->fields_len += add;
	return 0;
}

/* What the head says of the body and the connection. 0, or an answer
 * given and a negative errno. */
static int
httpd_head_done(struct httpd_conn *c)
{
	struct httpd_req *req = &c->req;
	const char *te = httpd_req_header(req, "Transfer-Encoding");
	const char *cl = httpd_req_header(req, "Content-Length");
	const char *conn = httpd_req_header(req, "Connection");
	const char *expect = httpd_req_header(req, "Expect");
	uint64_t len = 0;

	req->close = req->line.minor == 0;
	if (conn != NULL && httpmsg_value_is(conn, strlen(conn), "close"))
		req->close = true;
	if (conn != NULL && req->line.minor == 0 &&
	    httpmsg_value_is(conn, strlen(conn), "keep-alive"))
		req->close = false;
	if (te != NULL && cl != NULL)
		goto malformed;
	if (te != NULL) {
		if (!httpmsg_value_is(te, strlen(te), "chunked") ||
		    req->line.minor == 0)
			goto malformed;
		req->mode = HTTPD_CHUNKED;
	} else if (cl != NULL) {
		int r = httpmsg_content_length(cl, strlen(cl), &len);

		if (r == -EOVERFLOW || (r == 0 && len > c->srv->cfg.max_body)) {
			(*c->srv->c.too_large)++;
			httpd_conn_fail(c, 413, "too-large",
			    "the body is over MAX_REQUEST_BYTES");
			return -EMSGSIZE;
		}
		if (r < 0)
			goto malformed;
		req->mode = len > 0 ? HTTPD_LENGTH : HTTPD_NO_BODY;
		req->left = len;
	}
	if (expect != NULL) {
		if (!httpmsg_value_is(expect, strlen(expect), "100-continue"))
			goto malformed;
		req->expect_continue = req->line.minor == 1;
	}
	return 0;
malformed:
	(*c->srv->c.malformed)++;
	httpd_conn_fail(c, 400, "malformed",
	    "a request head this server does not read");
	return -EBADMSG;
}

/* Reads head lines; 1 once the head is whole, 0 for more, or a negative
 * errno (answered). */
static int
httpd_head_read(struct httpd_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct httpd_req *req = &c->req;
	size_t max = c->srv->cfg.max_head, eol;
	struct httpmsg_field f;
	struct evbuffer_ptr p;
	int r;

	for (;;) {
		p = evbuffer_search_eol(in, NULL, &eol,
		    EVBUFFER_EOL_CRLF_STRICT);
		if (p.pos < 0 ? req->head_bytes + evbuffer_get_length(in) > max
		              : req->head_bytes + (size_t)p.pos + eol > max) {
			(*c->srv->c.too_large)++;
			httpd_conn_fail(c, 413, "too-large",
			    "the request head is over its bound");
			return -EMSGSIZE;
		}
		if (p.pos < 0)
			return 0;
		(void)evbuffer_remove(in, c->line, (size_t)p.pos);
		(void)evbuffer_drain(in, eol);
		c->line[p.pos] = '\0';
		req->head_bytes += (size_t)p.pos + eol;
		if (!req->have_line) {
			r = httpmsg_request_line(c->line, (size_t)p.pos,
			    &req->line);
			if (r == -EMSGSIZE) {
				(*c->srv->c.too_large)++;
				httpd_conn_fail(c, 413, "too-large",
				    "the request target is too long");
				return r;
			}
			req->have_line = r == 0;
		} else if (p.pos == 0) {
			(*c->srv->c.requests)++;
			return httpd_head_done(c) < 0 ? -EBADMSG : 1;
		} else {
			r = httpmsg_field(c->line, (size_t)p.pos, &f);
			if (r == 0)
				r = httpd_keep_field(req, &f);
		}
		if (r < 0) {
			(*c->srv->c.malformed)++;
			httpd_conn_fail(c, 400, "malformed",
			    "a request head this server does not read");
			return r;
		}
	}
}

/* Whatever the connection can do now, outside any handler call. */
static void
httpd_conn_process(struct httpd_conn *c)
{
	struct httpd *s = c->srv;
	int r;

	if (c->done_owed) {
		c->done_owed = false;
		httpd_req_finish(c);
		if (c->state == HTTPD_CLOSING) {
			if (evbuffer_get_length(
			        bufferevent_get_output(c->bev)) == 0)
				httpd_conn_linger(c);
			return;
		}
		/* Kept alive: the next request. */
		httpd_req_reset(&c->req);
		c->state = HTTPD_HEAD;
		c->got_bytes =
		    evbuffer_get_length(bufferevent_get_input(c->bev)) > 0;
		(void)bufferevent_enable(c->bev, EV_READ);
		httpd_conn_arm(c);
	}
	if (c->state == HTTPD_HEAD) {
		r = httpd_head_read(c);
		if (r <= 0)
			return;
		c->state = HTTPD_WAIT;
		(void)bufferevent_disable(c->bev, EV_READ);
		httpd_conn_arm(c);
		/* Before the handler, so before any signature is checked:
		 * what one address sends costs the daemon no more than
		 * ADDRESS_RATE of those. The handler never hears of it. */
		if (!httpd_addr_take(c->addr, s->cfg.addr_rate,
		        time_mono_us())) {
			(*s->c.address_rate)++;
			httpd_log_refusal(s, "%s %s from %s: over ADDRESS_RATE",
			    c->req.line.method, c->req.line.target, c->peer);
			(void)httpd_req_add_header(&c->req, "Retry-After", "1");
			httpd_reply_error(&c->req, 429, "rate",
			    "this address is over ADDRESS_RATE");
			return;
		}
		c->req.live = true;
		s->h.on_head(s->h.cls, &c->req);
		/* The handler may have answered, or asked for the body:
		 * either comes back through the kick. */
		return;
	}
	if (c->state == HTTPD_BODY && !c->req.paused)
		(void)httpd_body_read(c);
}

static void
httpd_conn_run(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	httpd_conn_process(arg);
}

static void
httpd_on_read(struct bufferevent *bev, void *arg)
{
	struct httpd_conn *c = arg;

	if (c->lingering) {
		(void)evbuffer_drain(bufferevent_get_input(bev),
		    evbuffer_get_length(bufferevent_get_input(bev)));
		return;
	}
	if (c->state == HTTPD_HEAD && !c->got_bytes) {
		/* REQUEST_TIMEOUT runs from a request's first byte. */
		c->got_bytes = true;
		httpd_conn_arm(c);
	}
	httpd_conn_process(c);
}

static void
httpd_on_write(struct bufferevent *bev, void *arg)
{
	struct httpd_conn *c = arg;
	struct httpd *s = c->srv;

	if (c->state == HTTPD_CLOSING && !c->done_owed && !c->lingering &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
		httpd_conn_linger(c);
		return;
	}
	if (c->req.live && c->req.chunked_reply && !c->req.ended &&
	    s->h.on_drain != NULL)
		s->h.on_drain(s->h.cls, &c->req);
}

static void
httpd_on_event(struct bufferevent *bev, short what, void *arg)
{
	struct httpd_conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		c->handshaken = true;
		return;
	}
	if ((what & BEV_EVENT_ERROR) && !c->handshaken)
		(*c->srv->c.tls_failed)++;
	/* EOF, an error, or an answer the client does not read within
	 * REQUEST_TIMEOUT (the write timeout). */
	httpd_conn_free(c);
}

/* REQUEST_TIMEOUT of a head, or of a body window that brought less than
 * HTTPD_BODY_RATE: 408, or a quiet close of a connection that sent
 * nothing (an idle keep-alive, or a TLS handshake that never ended). */
static void
httpd_on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct httpd_conn *c = arg;

	(void)fd;
	(void)what;
	if (c->lingering || c->state == HTTPD_CLOSING) {
		httpd_conn_free(c);
		return;
	}
	/* A body that came fast enough over the window: another. */
	if (c->state == HTTPD_BODY &&
	    c->req.body_bytes - c->window_bytes >=
	        (uint64_t)HTTPD_BODY_RATE * c->srv->cfg.timeout_us / 1000000) {
		httpd_conn_arm(c);
		return;
	}
	if (!c->handshaken || (c->state == HTTPD_HEAD && !c->got_bytes)) {
		if (!c->handshaken)
			(*c->srv->c.slow)++;
		httpd_conn_free(c);
		return;
	}
	(*c->srv->c.slow)++;
	httpd_conn_fail(c, 408, "slow",
	    "the request did not come within REQUEST_TIMEOUT");
}

/* A connection on fd from ss, taking over fd and a's connection taken
 * (both given back on failure). */
static struct httpd_conn *
httpd_conn_new(struct httpd *s, evutil_socket_t fd,
    const struct sockaddr_storage *ss, struct httpd_addr *a)
{
	struct httpd_conn *c = calloc(1, sizeof(*c));
	struct timeval tv;
	SSL *ssl;

	if (c == NULL) {
		httpd_addr_disconnect(&s->addrs, a);
		(void)close(fd);
		return NULL;
	}
	c->srv = s;
	c->addr = a;
	TAILQ_INSERT_TAIL(&s->conns, c, link);
	s->n_conns++;
	c->req.conn = c;
	if (netaddr_format(ss, c->peer, sizeof(c->peer)) < 0)
		(void)snprintf(c->peer, sizeof(c->peer), "?");
	c->line_size = s->cfg.max_head + 1;
	c->line = malloc(c->line_size);
	c->req.body = evbuffer_new();
	c->req.rhead = evbuffer_new();
	c->timer = evtimer_new(s->base, httpd_on_timer, c);
	c->kick = event_new(s->base, -1, 0, httpd_conn_run, c);
	/* A response's head, body and TLS records go out as written: with
	 * Nagle the last small one waited for the ACK of the one before,
	 * which the client may delay 40 ms (each receipts long-poll paid
	 * that). */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 },
	    sizeof(int));
	ssl = SSL_new(s->ctx);
	if (ssl != NULL)
		c->bev = bufferevent_openssl_socket_new(s->base, fd, ssl,
		    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	else
		(void)close(fd);
	if (c->bev == NULL || c->line == NULL || c->req.body == NULL ||
	    c->req.rhead == NULL || c->timer == NULL || c->kick == NULL) {
		if (c->bev == NULL && ssl != NULL) {
			SSL_free(ssl);
			(void)close(fd);
		}
		httpd_conn_free(c);
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
	bufferevent_setcb(c->bev, httpd_on_read, httpd_on_write, httpd_on_event,
	    c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, HTTPD_READ_MAX);
	bufferevent_setwatermark(c->bev, EV_WRITE, HTTPD_DRAIN_MARK, 0);
	time_us_to_tv(s->cfg.timeout_us, &tv);
	(void)bufferevent_set_timeouts(c->bev, NULL, &tv);
	(void)bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	c->state = HTTPD_HEAD;
	httpd_conn_arm(c);
	return c;
}

/* The address a connection came from: MAX_CONNECTIONS_PER_ADDRESS. It
 * is closed unanswered, as it is accepted: an answer would cost a TLS
 * handshake for each connection of the address that opens too many. */
static struct httpd_addr *
httpd_accept_addr(struct httpd *s, evutil_socket_t fd,
    const struct sockaddr_storage *ss)
{
	struct httpd_addr *a = httpd_addrs_get(&s->addrs, ss);
	char peer[64];

	if (a == NULL) {
		(void)close(fd);
		return NULL;
	}
	if (!httpd_addr_connect(&s->addrs, a, s->cfg.max_conns_per_addr)) {
		(*s->c.address_busy)++;
		if (netaddr_format(ss, peer, sizeof(peer)) < 0)
			(void)snprintf(peer, sizeof(peer), "?");
		httpd_log_refusal(s,
		    "connection from %s refused: its address has %u open (MAX_CONNECTIONS_PER_ADDRESS)",
		    peer, a->conns);
		(void)close(fd);
		return NULL;
	}
	return a;
}

static void
httpd_on_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct httpd *s = arg;
	struct sockaddr_storage ss;
	struct httpd_conn *c;
	struct httpd_addr *a;

	(void)l;
	memset(&ss, 0, sizeof(ss));
	if (salen > 0 && (size_t)salen <= sizeof(ss))
		memcpy(&ss, sa, (size_t)salen);
	a = httpd_accept_addr(s, fd, &ss);
	if (a == NULL)
		return;
	if (s->n_conns >= s->cfg.max_conns) {
		(*s->c.busy)++;
		/* A few are told why; past them the door just closes. */
		if (s->n_refusing >= HTTPD_REFUSING) {
			httpd_addr_disconnect(&s->addrs, a);
			(void)close(fd);
			return;
		}
		c = httpd_conn_new(s, fd, &ss, a);
		if (c == NULL)
			return;
		s->n_conns--;
		s->n_refusing++;
		c->refusing = true;
		httpd_conn_fail(c, 503, "busy",
		    "the intermediary is at MAX_CONNECTIONS");
		return;
	}
	c = httpd_conn_new(s, fd, &ss, a);
	if (c != NULL)
		(*s->c.connections)++;
}

int
httpd_new(struct event_base *base, SSL_CTX *ctx, int fd,
    const struct httpd_cfg *cfg, const struct httpd_counters *c,
    const struct httpd_handler *h, const char *headers, struct httpd **ret)
{
	struct httpd *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	s->base = base;
	s->cfg = *cfg;
	s->c = *c;
	s->h = *h;
	TAILQ_INIT(&s->conns);
	ratelog_init(&s->log, 5, 20);
	s->headers = strdup(headers);
	if (s->headers == NULL ||
	    httpd_addrs_init(&s->addrs, HTTPD_ADDRS_MAX) < 0)
		goto fail;
	s->listener = evconnlistener_new(base, httpd_on_accept, s,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (s->listener == NULL)
		goto fail;
	s->ctx = ctx;
	*ret = s;
	return 0;
fail:
	httpd_addrs_done(&s->addrs);
	free(s->headers);
	free(s);
	return -ENOMEM;
}

void
httpd_stop_accepting(struct httpd *s)
{
	(void)evconnlistener_disable(s->listener);
}

void
httpd_free(struct httpd *s)
{
	struct httpd_conn *c;

	if (s == NULL)
		return;
	while ((c = TAILQ_FIRST(&s->conns)) != NULL)
		httpd_conn_free(c);
	httpd_addrs_done(&s->addrs);
	evconnlistener_free(s->listener);
	SSL_CTX_free(s->ctx);
	free(s->headers);
	free(s);
}

void
httpd_set_cfg(struct httpd *s, const struct httpd_cfg *cfg)
{
	/* Each connection's line buffer was sized by the head bound it was
	 * opened with: a larger bound applies to new connections. */
	s->cfg = *cfg;
}

size_t
httpd_connections(const struct httpd *s)
{
	return s->n_conns;
}

const char *
httpd_req_method(const struct httpd_req *req)
{
	return req->line.method;
}

const char *
httpd_req_target(const struct httpd_req *req)
{
	return req->line.target;
}

const char *
httpd_req_header(const struct httpd_req *req, const char *name)
{
	const char *found = NULL;
	size_t off = 0;

	while (off < req->fields_len) {
		const char *n = req->fields + off;
		const char *v = n + strlen(n) + 1;

		if (httpmsg_value_is(n, strlen(n), name))
			found = v;
		off = (size_t)(v + strlen(v) + 1 - req->fields);
	}
	return found;
}

const char *
httpd_req_peer(const struct httpd_req *req)
{
	return req->conn->peer;
}

void *
httpd_req_data(const struct httpd_req *req)
{
	return req->data;
}

void
httpd_req_set_data(struct httpd_req *req, void *data)
{
	req->data = data;
}

void
httpd_req_read_body(struct httpd_req *req)
{
	struct httpd_conn *c = req->conn;

	if (req->body_wanted || req->replied)
		return;
	req->body_wanted = true;
	if (req->expect_continue && req->mode != HTTPD_NO_BODY)
		(void)evbuffer_add_printf(bufferevent_get_output(c->bev),
		    "HTTP/1.1 100 Continue\r\n\r\n");
	c->state = HTTPD_BODY;
	(void)bufferevent_enable(c->bev, EV_READ);
	httpd_conn_arm(c);
	httpd_conn_kick(c);
}

void
httpd_req_pause(struct httpd_req *req, bool pause)
{
	struct httpd_conn *c = req->conn;

	if (req->paused == pause || c->state != HTTPD_BODY)
		return;
	req->paused = pause;
	if (pause) {
		(void)bufferevent_disable(c->bev, EV_READ);
	} else {
		req->resumed = true;
		(void)bufferevent_enable(c->bev, EV_READ);
		httpd_conn_kick(c);
	}
	httpd_conn_arm(c);
}
