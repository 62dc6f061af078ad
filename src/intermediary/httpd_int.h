/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The server's connections and requests (httpd.h), shared by httpd*.c. */
#ifndef FERRY_INTERMEDIARY_HTTPD_INT_H
#define FERRY_INTERMEDIARY_HTTPD_INT_H

#include "intermediary/httpd.h"

#include <sys/queue.h>

#include "intermediary/httpd_addr.h"
#include "intermediary/httpmsg.h"
#include "lib/ratelimit.h"

#define HTTPD_READ_MAX   (256u * 1024) /* input read ahead of parsing */
#define HTTPD_DRAIN_MARK (256u * 1024) /* on_drain below this output */
#define HTTPD_LINE_MAX   1024          /* a chunk-size or trailer line */
#define HTTPD_REFUSING   16            /* connections at once told 503 */
#define HTTPD_LINGER_US  1000000u      /* input drained after a last answer */
/* A body read must come at least this fast, bytes a second, over each
 * REQUEST_TIMEOUT: a client trickling it holds no connection long. */
#define HTTPD_BODY_RATE  1024u

enum httpd_state { HTTPD_HEAD, HTTPD_BODY, HTTPD_WAIT, HTTPD_CLOSING };
enum httpd_body { HTTPD_NO_BODY, HTTPD_LENGTH, HTTPD_CHUNKED };
enum httpd_chunk {
	HTTPD_CH_SIZE,
	HTTPD_CH_DATA,
	HTTPD_CH_CRLF,
	HTTPD_CH_TRAILER
};

struct httpd_conn;

struct httpd_req {
	struct httpd_conn *conn;
	struct httpmsg_reqline line;
	char *fields; /* "name\0value\0" pairs, as they came */
	size_t fields_len;
	size_t head_bytes;    /* of the head read so far */
	bool have_line;       /* the request line is read */
	bool close;           /* the connection closes after this one */
	bool expect_continue; /* the client waits for 100 Continue */
	enum httpd_body mode;
	uint64_t left; /* LENGTH: bytes to come; CHUNKED: of the
				 * chunk */
	enum httpd_chunk chunk;
	uint64_t body_bytes; /* de-chunked, so far */
	bool body_wanted;    /* httpd_req_read_body() was called */
	bool body_done;      /* the body is read whole */
	bool paused;
	bool resumed;           /* on_body owed after a pause */
	bool live;              /* on_head was called, on_done not yet */
	bool replied;           /* the answer's head is out */
	bool chunked_reply;     /* ... and its body is chunked */
	bool ended;             /* the answer is out whole */
	struct evbuffer *body;  /* body bytes the handler has not taken */
	struct evbuffer *rhead; /* header lines the handler added */
	void *data;             /* the handler's */
};

struct httpd_conn {
	struct httpd *srv;
	struct httpd_addr *addr; /* its address, with a connection taken */
	struct bufferevent *bev;
	struct event *timer; /* REQUEST_TIMEOUT of the state */
	struct event *kick;  /* runs the connection outside callbacks */
	enum httpd_state state;
	bool got_bytes;        /* a byte of the coming request is in */
	bool handshaken;       /* TLS is up */
	bool refusing;         /* over max_conns: 503, then closed */
	bool done_owed;        /* on_done to call at the next kick */
	bool lingering;        /* answered for the last time; draining */
	uint64_t window_bytes; /* body bytes when the timer was last armed */
	char peer[64];
	char *line; /* cfg.max_head + 1 bytes, for one line */
	size_t line_size;
	struct httpd_req req;
	TAILQ_ENTRY(httpd_conn) link;
};

struct httpd {
	struct event_base *base;
	SSL_CTX *ctx;
	struct evconnlistener *listener;
	struct httpd_cfg cfg;
	struct httpd_counters c;
	struct httpd_handler h;
	char *headers; /* added to every response */
	TAILQ_HEAD(, httpd_conn) conns;
	size_t n_conns, n_refusing;
	struct httpd_addrs addrs; /* per address: connections, rate */
	struct ratelog log;       /* refusals of an address */
};

/* httpd.c */
void httpd_conn_kick(struct httpd_conn *c);
void httpd_conn_free(struct httpd_conn *c);
void httpd_conn_arm(struct httpd_conn *c);
/* The last answer is sent: closes once the client has had it. */
void httpd_conn_linger(struct httpd_conn *c);
/* httpd_body.c: moves body bytes to the handler; 0, or -EBADMSG or
 * -EMSGSIZE (answered already). */
int httpd_body_read(struct httpd_conn *c);
/* httpd_reply.c: an answer that ends the connection, whether or not a
 * request's head came (408, 413, 400 of the server itself). */
void httpd_conn_fail(struct httpd_conn *c, int status, const char *token,
    const char *message);
/* The reason phrase of status. */
const char *httpd_reason(int status);

#endif /* FERRY_INTERMEDIARY_HTTPD_INT_H */
