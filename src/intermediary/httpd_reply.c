/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Answers of the intermediary's HTTPS server (httpd.h): status line,
 * the server's headers, a sized or chunked body, and the JSON error body
 * of ferry-intermediary(7); intermediary layer. */
#define LOG_TAG "intermediary"
#include "intermediary/httpd_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

const char *
httpd_reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 413:
		return "Content Too Large";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "Unknown";
	}
}

/* The status line and header fields of an answer into out. */
static void
httpd_head_write(struct httpd_conn *c, struct evbuffer *out, int status,
    const char *ctype, const char *framing)
{
	struct httpd_req *req = &c->req;
	char date[64];
	struct tm tm;
	time_t now = time(NULL);

	(void)gmtime_r(&now, &tm);
	(void)strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	(void)evbuffer_add_printf(out,
	    "HTTP/1.1 %d %s\r\nDate: %s\r\n%sContent-Type: %s\r\n%s\r\n",
	    status, httpd_reason(status), date, c->srv->headers, ctype,
	    framing);
	(void)evbuffer_add_buffer(out, req->rhead);
	if (req->close)
		(void)evbuffer_add_printf(out, "Connection: close\r\n");
	(void)evbuffer_add(out, "\r\n", 2);
}

/* The answer is out whole: what comes next is decided at the kick. */
static void
httpd_reply_done(struct httpd_conn *c)
{
	c->req.ended = true;
	if (c->req.close) {
		c->state = HTTPD_CLOSING;
		(void)bufferevent_disable(c->bev, EV_READ);
		httpd_conn_arm(c);
	}
	c->done_owed = true;
	httpd_conn_kick(c);
}

/* A body not read whole cannot be skipped reliably: the connection ends
 * with this answer. */
static void
httpd_reply_begin(struct httpd_req *req)
{
	struct httpd_conn *c = req->conn;

	req->replied = true;
	if (!req->body_done && req->mode != HTTPD_NO_BODY)
		req->close = true;
	if (c->state == HTTPD_BODY) {
		c->state = HTTPD_WAIT;
		(void)bufferevent_disable(c->bev, EV_READ);
		httpd_conn_arm(c);
	}
}

int
httpd_req_add_header(struct httpd_req *req, const char *name, const char *value)
{
	if (req->replied || strpbrk(value, "\r\n") != NULL)
		return -EINVAL;
	return evbuffer_add_printf(req->rhead, "%s: %s\r\n", name, value) < 0
	    ? -ENOMEM
	    : 0;
}

void
httpd_reply(struct httpd_req *req, int status, const char *ctype,
    const void *body, size_t len)
{
	struct httpd_conn *c = req->conn;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	char framing[64];

	if (req->replied)
		return;
	httpd_reply_begin(req);
	(void)snprintf(framing, sizeof(framing), "Content-Length: %zu", len);
	httpd_head_write(c, out, status, ctype, framing);
	if (len > 0)
		(void)evbuffer_add(out, body, len);
	httpd_reply_done(c);
}

/* The JSON error body; message is ours, never a client's bytes. */
static size_t
httpd_error_body(char *buf, size_t size, const char *token, const char *message,
    const char *extra)
{
	int n = snprintf(buf, size,
	    "{\"error\": \"%s\", \"message\": \"%s\"%s%s}\n", token, message,
	    extra != NULL ? ", " : "", extra != NULL ? extra : "");

	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

static void httpd_reply_verror(struct httpd_req *req, int status,
    const char *token, const char *extra, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

static void
httpd_reply_verror(struct httpd_req *req, int status, const char *token,
    const char *extra, const char *fmt, va_list ap)
{
	char message[256], body[512];
	size_t n;

	(void)vsnprintf(message, sizeof(message), fmt, ap);
	/* The messages are ours, but a quote would break the JSON. */
	for (char *p = message; *p != '\0'; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
			*p = '\'';
	n = httpd_error_body(body, sizeof(body), token, message, extra);
	httpd_reply(req, status, "application/json", body, n);
}

void
httpd_reply_error(struct httpd_req *req, int status, const char *token,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	httpd_reply_verror(req, status, token, NULL, fmt, ap);
	va_end(ap);
}

void
httpd_reply_error_with(struct httpd_req *req, int status, const char *token,
    const char *extra, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	httpd_reply_verror(req, status, token, extra, fmt, ap);
	va_end(ap);
}

void
httpd_conn_fail(struct httpd_conn *c, int status, const char *token,
    const char *message)
{
	struct httpd_req *req = &c->req;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	char body[512], framing[64];
	size_t n;

	req->close = true;
	if (req->replied) {
		/* A chunked answer under way cannot turn into an error:
		 * the connection just ends. */
		c->state = HTTPD_CLOSING;
		(void)bufferevent_disable(c->bev, EV_READ);
		httpd_conn_arm(c);
		c->done_owed = true;
		httpd_conn_kick(c);
		return;
	}
	if (status == 503 || status == 408)
		(void)httpd_req_add_header(req, "Retry-After", "1");
	httpd_reply_begin(req);
	n = httpd_error_body(body, sizeof(body), token, message, NULL);
	(void)snprintf(framing, sizeof(framing), "Content-Length: %zu", n);
	httpd_head_write(c, out, status, "application/json", framing);
	(void)evbuffer_add(out, body, n);
	httpd_reply_done(c);
}

void
httpd_reply_start(struct httpd_req *req, int status, const char *ctype)
{
	struct httpd_conn *c = req->conn;

	if (req->replied)
		return;
	httpd_reply_begin(req);
	req->chunked_reply = true;
	httpd_head_write(c, bufferevent_get_output(c->bev), status, ctype,
	    "Transfer-Encoding: chunked");
}

void
httpd_reply_chunk(struct httpd_req *req, const void *data, size_t len)
{
	struct evbuffer *out = bufferevent_get_output(req->conn->bev);

	if (!req->chunked_reply || req->ended || len == 0)
		return;
	(void)evbuffer_add_printf(out, "%zx\r\n", len);
	(void)evbuffer_add(out, data, len);
	(void)evbuffer_add(out, "\r\n", 2);
}

void
httpd_reply_end(struct httpd_req *req)
{
	if (!req->chunked_reply || req->ended)
		return;
	(void)evbuffer_add(bufferevent_get_output(req->conn->bev), "0\r\n\r\n",
	    5);
	httpd_reply_done(req->conn);
}

size_t
httpd_req_queued(const struct httpd_req *req)
{
	return evbuffer_get_length(bufferevent_get_output(req->conn->bev));
}
