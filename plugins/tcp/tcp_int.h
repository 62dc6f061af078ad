/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Internals of the TCP transport, shared by tcp.c (the ABI), tcp_listen.c
 * (accepting), tcp_conn.c (connection lifecycle and references) and
 * tcp_stream.c (reading, framing and the bounded write queue).
 *
 * A session is one connection. Its life: connect() or accept() creates it;
 * connect/associate add references and disconnect drops them (seed 004,
 * II-B); the last one closes it once its queue is flushed. A connection
 * that dies while referenced is reported with session_gone; one nobody
 * references is just freed.
 */
#ifndef FERRY_PLUGINS_TCP_INT_H
#define FERRY_PLUGINS_TCP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/util.h>

#include <ferry/transport.h>

#include "ipt.h"
#include "lib/buf.h"
#include "tcp_frame.h"

#define TCP_READ_CHUNK	(256 * 1024) /* first read buffer; reads fill it */
#define TCP_READ_MIN	(16 * 1024)  /* least room offered to read() */
#define TCP_READ_BUDGET	(1024 * 1024) /* bytes per wake-up, then yield */
#define TCP_ACCEPT_BUDGET 64	     /* accepts per wake-up */
#define TCP_IOV_MAX	64	     /* queue pieces per sendmsg() */

struct tcp;
struct map;
struct event;
struct evbuffer;

/* One connection (see the head comment for its life). */
struct ferry_tsession {
	struct tcp *t;			/* owner */
	int fd;				/* the socket */
	bool inbound;			/* accepted, not connected by us */
	bool connecting;		/* connect() still in progress */
	bool closing;			/* no references: flush, then close */
	bool dead;			/* over; freed when not busy */
	bool want_ready;		/* send() said -EAGAIN */
	bool have_id;			/* the welcome came */
	bool paused;			/* the core asked us not to read */
	unsigned busy;			/* inside a callback into the core */
	unsigned refs;			/* connect + associate - disconnect */
	int error;			/* why it died, negative errno */
	struct sockaddr_storage peer;	/* remote address */
	uint8_t key[NETADDR_HELO_MAX];	/* HELO form of peer */
	uint8_t key_len;		/* 7 or 19 */
	struct ferry_peer_id peer_id;	/* claimed by the welcome */
	struct tcp_frame parser;	/* inbound stream state */
	size_t need;			/* bytes the parser waits for */
	struct buf rbuf;		/* received, not yet parsed */
	struct evbuffer *wq;		/* write queue, WRITE_QUEUE bound */
	struct event *ev_read;		/* persistent while reading */
	struct event *ev_write;		/* connect, flush, death report */
	uint64_t last_us;		/* last bytes in (or creation) */
	TAILQ_ENTRY(ferry_tsession) link; /* tcp->conns */
};

TAILQ_HEAD(tcp_conn_list, ferry_tsession);

struct tcp_listener {
	struct tcp *t;			/* owner */
	int fd;				/* listening socket */
	struct sockaddr_storage name;	/* bound name, actual port */
	struct event *ev;		/* accept events */
};

/* Counters "tcp.<name>" (the core keeps units_in/bytes_in itself). */
struct tcp_stats {
	uint64_t *connections_in, *connections_out, *connect_failed;
	uint64_t *refused, *lost;
	uint64_t *rx_units, *rx_bytes, *tx_units, *tx_bytes, *tx_eagain;
	uint64_t *idle_closes, *framing_errors;
};

/* Settings of the TCP-only keys. */
struct tcp_settings {
	uint64_t write_queue;	/* per-connection queue bound, bytes */
	size_t max_conns;	/* inbound connections at once */
	uint64_t connect_us;	/* CONNECT_TIMEOUT */
};

struct tcp {
	struct ferry_transport_api api;	/* handed to the core */
	struct ipt ipt;			/* common settings, log, counters */
	struct tcp_settings set;	/* TCP-only settings */
	struct tcp_listener listeners[IPT_BIND_MAX]; /* while serving */
	size_t n_listeners;
	struct event *resume;		/* re-enables accept after EMFILE */
	struct map *outbound;		/* key -> connection we opened */
	struct tcp_conn_list conns;	/* every connection */
	size_t n_inbound;		/* accepted ones among them */
	struct event *sweep;		/* idle closes, buffer trimming */
	struct tcp_stats st;		/* counters */
};

/*
 * tcp_conn.c
 */

/* Creates the tables and timers. 0 or -ENOMEM. */
int tcp_conn_init(struct tcp *t);
/* Frees every connection (no session_gone: the core is going away). */
void tcp_conn_done(struct tcp *t);
/* Adopts an accepted socket (taking ownership of fd) as an inbound
 * connection nobody references yet. 0 or -ENOMEM (fd closed). */
int tcp_conn_accept(struct tcp *t, int fd,
    const struct sockaddr_storage *peer);
/* Opens (or reuses) an outbound connection to ss with one more reference.
 * The session exists at once; units queue until it is connected.
 * 0 and *ret, or a negative errno. */
int tcp_conn_connect(struct tcp *t, const struct sockaddr_storage *ss,
    struct ferry_tsession **ret);
/* Takes a reference. -ENOTCONN if the connection is over. */
int tcp_conn_ref(struct ferry_tsession *c);
/* Drops a reference; the last one closes the connection (after flushing
 * what is queued) without session_gone. */
void tcp_conn_unref(struct ferry_tsession *c);
/* Ends the connection for reason err (negative errno) and reports it with
 * session_gone if referenced, at once or, inside a callback or send(),
 * from the event loop. */
void tcp_conn_fail(struct ferry_tsession *c, int err);
/* Frees c if it is dead and no callback into the core is running on it,
 * reporting session_gone first if the core still holds references. */
void tcp_conn_reap(struct ferry_tsession *c);
/* Re-applies the settings after a reload. */
void tcp_conn_reconfigure(struct tcp *t);

/*
 * tcp_stream.c
 */

/* Read event: reads, parses and delivers units. */
void tcp_stream_readable(evutil_socket_t fd, short what, void *arg);
/* recv_pause: stops or resumes reading c; what was read and not yet
 * delivered waits in its buffer. */
void tcp_stream_pause(struct ferry_tsession *c, bool pause);
/* Write event: finishes connecting, flushes, reports death. */
void tcp_stream_writable(evutil_socket_t fd, short what, void *arg);
/* Queues or writes one unit. 0, -EAGAIN (send_ready follows), -ENOTCONN,
 * or the socket's error. */
int tcp_stream_send(struct ferry_tsession *c, const void *msg, size_t len);
/* Queues the welcome. 0 or -ENOMEM. */
int tcp_stream_welcome(struct ferry_tsession *c);

/*
 * tcp_listen.c
 */

/* Opens a listening socket per bind address. 0 or negative errno (logged,
 * nothing left open). */
int tcp_listen_start(struct tcp *t);
/* Closes the listening sockets. */
void tcp_listen_stop(struct tcp *t);

#endif /* FERRY_PLUGINS_TCP_INT_H */
