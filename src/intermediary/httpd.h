/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary's HTTPS server, intermediary layer: HTTP/1.1 over TLS
 * 1.3 (bufferevent_openssl) on the daemon's own event loop, one request
 * at a time per connection, with the request body handed to the handler
 * as it arrives rather than buffered whole, and the bounds that keep a
 * slow or hostile client from holding the daemon: MAX_CONNECTIONS and
 * MAX_CONNECTIONS_PER_ADDRESS, ADDRESS_RATE (httpd_addr.h), the size of
 * a request's head and body, and REQUEST_TIMEOUT.
 *
 * libevent 2.1's evhttp cannot do this: its server reads a whole body
 * into memory before it calls the application (evhttp_set_newreqcb and
 * chunked request callbacks on the server side came in 2.2), and it has
 * no bound on connections and only idle timeouts, which a client that
 * trickles a byte at a time never trips. So the request head and chunked
 * encoding are parsed here (httpmsg.c) on libevent's bufferevents.
 *
 * A connection's states:
 *   HEAD    reading the request line and header fields; REQUEST_TIMEOUT
 *           from the first byte of the connection or the end of the
 *           previous response: 408 (or a silent close if nothing came)
 *   BODY    the handler took the body: bytes go to on_body as they
 *           come, unless it paused; a REQUEST_TIMEOUT while not paused
 *           that brought less than 1 KiB a second of it: 408
 *   WAIT    the request is read whole (or never will be); the handler
 *           answers when it can; the connection reads nothing more
 *   CLOSING the answer is sent, then the connection closes
 * After an answer is sent whole a kept-alive connection goes to HEAD.
 */
#ifndef FERRY_INTERMEDIARY_HTTPD_H
#define FERRY_INTERMEDIARY_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

struct event_base;
struct evbuffer;
struct sockaddr;
struct httpd;
struct httpd_req;

struct httpd_cfg {
	size_t max_head;     /* request line and header fields, bytes */
	uint64_t max_body;   /* a request body, bytes (MAX_REQUEST_BYTES) */
	unsigned max_conns;  /* connections served at once */
	unsigned max_conns_per_addr; /* MAX_CONNECTIONS_PER_ADDRESS; 0: none */
	unsigned addr_rate;  /* ADDRESS_RATE, requests a second; 0: none */
	uint64_t timeout_us; /* REQUEST_TIMEOUT */
};

/* Counters the server bumps, "intermediary.<name>"; never NULL. */
struct httpd_counters {
	uint64_t *connections; /* accepted and served */
	uint64_t *busy;        /* refused at max_conns (503) */
	uint64_t *tls_failed;  /* handshakes that failed (older TLS...) */
	uint64_t *requests;    /* request heads read */
	uint64_t *malformed;   /* 400: not HTTP/1.1 as we read it */
	uint64_t *too_large;   /* 413: head or body over its bound */
	uint64_t *slow;        /* 408: REQUEST_TIMEOUT */
	uint64_t *address_busy; /* closed at MAX_CONNECTIONS_PER_ADDRESS */
	uint64_t *address_rate; /* 429: over ADDRESS_RATE */
};

/* What the owner does with requests; cls is each call's first argument. */
struct httpd_handler {
	void *cls;
	/* A request's head came. The handler answers at once, or later, or
	 * calls httpd_req_read_body() to have its body. */
	void (*on_head)(void *cls, struct httpd_req *req);
	/* More of the body (de-chunked) is in body; the handler drains what
	 * it takes, and may leave a part it cannot use yet. fin: the body
	 * has ended, nothing more will come. */
	void (*on_body)(void *cls, struct httpd_req *req, struct evbuffer *body,
	    bool fin);
	/* A chunked answer's output went below its mark (httpd_req_queued
	 * says how much waits): the handler may send more. May be NULL. */
	void (*on_drain)(void *cls, struct httpd_req *req);
	/* The request is over: its answer is sent whole, or its connection
	 * is gone first. req is invalid after the call. */
	void (*on_done)(void *cls, struct httpd_req *req);
};

/* Takes ownership of ctx (one reference); listens on fd (bound and
 * listening, taken over). headers: lines "Name: value\r\n" added to every
 * response (copied). 0, -ENOMEM. */
int httpd_new(struct event_base *base, SSL_CTX *ctx, int fd,
    const struct httpd_cfg *cfg, const struct httpd_counters *c,
    const struct httpd_handler *h, const char *headers, struct httpd **ret);
/* Closes every connection (on_done for their requests) and the listener.
 * NULL is allowed. */
void httpd_free(struct httpd *s);
/* Takes no new connection from now on; those open are served. */
void httpd_stop_accepting(struct httpd *s);
/* New bounds for connections from now on and requests to come (the
 * addresses' buckets keep their fill). */
void httpd_set_cfg(struct httpd *s, const struct httpd_cfg *cfg);
/* Connections open now. */
size_t httpd_connections(const struct httpd *s);

/* TLS 1.3 only, with the certificate chain and key of the PEM files
 * given. 0, or -EINVAL (logged with OpenSSL's reason), -ENOMEM. */
int httpd_tls_new(const char *cert_path, const char *key_path, SSL_CTX **ret);

/* The request's parts, valid until on_done. */
const char *httpd_req_method(const struct httpd_req *req);
const char *httpd_req_target(const struct httpd_req *req);
/* The value of the last header field called name (case-insensitive),
 * NUL-terminated; NULL if none. */
const char *httpd_req_header(const struct httpd_req *req, const char *name);
/* The client's address, printable. */
const char *httpd_req_peer(const struct httpd_req *req);
/* The handler's own pointer, NULL at first. */
void *httpd_req_data(const struct httpd_req *req);
void httpd_req_set_data(struct httpd_req *req, void *data);

/* Has the body read and given to on_body (sending 100 Continue first if
 * the client waits for it); a request without a body gets one on_body
 * with fin at once. Never calls the handler from inside the call. */
void httpd_req_read_body(struct httpd_req *req);
/* Stops (true) or resumes (false) reading the body: on_body is not
 * called while paused, and the connection is not read. */
void httpd_req_pause(struct httpd_req *req, bool pause);

/* Adds a header field line to the answer (before it starts). */
int httpd_req_add_header(struct httpd_req *req, const char *name,
    const char *value);
/* Answers with status, a body of len bytes of content type ctype. A body
 * not read whole yet is not read: the connection closes after the
 * answer. on_done follows, never from inside the call. */
void httpd_reply(struct httpd_req *req, int status, const char *ctype,
    const void *body, size_t len);
/* Answers with status and the JSON error body {"error": token,
 * "message": the formatted text} (ferry-intermediary(7), STATUS
 * CODES). */
void httpd_reply_error(struct httpd_req *req, int status, const char *token,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same with more members in the body: extra is JSON members without
 * their braces, e.g. "\"relayed\": 3", written as they are. */
void httpd_reply_error_with(struct httpd_req *req, int status,
    const char *token, const char *extra, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A chunked answer: start, then chunks, then the end. */
void httpd_reply_start(struct httpd_req *req, int status, const char *ctype);
void httpd_reply_chunk(struct httpd_req *req, const void *data, size_t len);
void httpd_reply_end(struct httpd_req *req);
/* Bytes of the answer not sent yet. */
size_t httpd_req_queued(const struct httpd_req *req);

#endif /* FERRY_INTERMEDIARY_HTTPD_H */
