/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One accepted stream connection on the daemon's event loop, service
 * layer: large non-blocking reads into a bounded input, output queued up
 * to a bound and counted in its listener's back-pressure account (DESIGN.md,
 * BPCC), the reader that takes nothing and stops counting, the connection
 * cut off whose output is written before it closes, and a rate-limited
 * log for its listener. The protocol above (client.c for the ferry client
 * socket) parses the input and queues output; it never touches the socket.
 */
#ifndef FERRY_SERVICE_CONN_H
#define FERRY_SERVICE_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/ratelimit.h"

struct event;
struct event_base;

/* A listener's bounds, the same for each of its connections. */
struct conn_limits {
	size_t in_max;      /* read while less than this waits unparsed;
			     * one read takes at most this much */
	uint64_t out_max;   /* output queued while less than this waits
			     * (CLIENT_BUFFER); input paused above it */
	uint64_t stall_us;  /* a socket that took no output this long has
			     * stalled: its output stops counting */
	uint64_t linger_us; /* a connection cut off writes its output for
			     * at most this long before it closes */
	uint64_t idle_us;   /* closed when, wanting input and with no
			     * output waiting, it got none for this long
			     * (since it sent or took the last byte);
			     * 0: never */
};

/* A listener's counters; each points at a live uint64_t (lib/stats.h). */
struct conn_counters {
	uint64_t *bytes_in;  /* read */
	uint64_t *bytes_out; /* written */
	uint64_t *stalled;   /* times output waited stall_us untaken */
	uint64_t *overflow;  /* ended with in_max bytes the protocol could
			      * not parse */
	uint64_t *idle;      /* closed by idle_us; may be NULL when
			      * idle_us is 0 */
};

/* The output of the listener's connections that have not stalled, in
 * bytes, each time it changes. */
typedef void conn_backlog_fn(void *cls, uint64_t bytes);

/* What one listener's connections share. The owner embeds it. */
struct conn_set {
	struct event_base *base; /* borrowed */
	const char *what;        /* "client": names connections in logs */
	struct conn_limits lim;  /* may change between calls (reload) */
	struct conn_counters c;
	conn_backlog_fn *on_backlog; /* may be NULL */
	void *backlog_cls;
	uint64_t backlog;   /* output of connections not stalled */
	struct ratelog log; /* conn_set_log()'s budget */
};

/* The protocol's side of a connection. Every callback gets the cls given
 * to conn_init(). */
struct conn_ops {
	/* Parses and handles input (conn->in), consuming what it handled,
	 * and queues answers. 0, or negative: the connection ends (after
	 * its output if conn_linger() was called). */
	int (*process)(void *cls);
	/* True while the protocol wants no input (it waits for something
	 * else); may be NULL. Asked after each process; a protocol that
	 * pauses or resumes elsewhere calls conn_work() after. */
	bool (*paused)(void *cls);
	/* The output was written out by a flush; may be NULL. */
	void (*drained)(void *cls);
	/* The connection was cut off (conn_linger) and ends: nothing more
	 * may be queued; its output alone goes on. May be NULL. */
	void (*stop)(void *cls);
	/* Descriptors that came with the input just read (SCM_RIGHTS), in
	 * order; the protocol owns them. truncated: more came than
	 * conn.c takes at once (the rest were closed). 0, or negative: the
	 * connection ends (the protocol called conn_linger() to say why).
	 * May be NULL: the socket is then read without taking any (the
	 * kernel closes those that come). */
	int (*fds)(void *cls, const int *fds, size_t n, bool truncated);
	/* The connection is over (closed by the other side, failed, timed
	 * out, or done lingering): the owner must call conn_done() before
	 * it returns, and the connection must not be used after. */
	void (*gone)(void *cls);
};

/* One connection; the owner embeds it. */
struct conn {
	struct conn_set *set;       /* borrowed; outlives the connection */
	const struct conn_ops *ops; /* borrowed */
	void *cls;                  /* passed to ops */
	int fd;                     /* owned; -1 after conn_done() */
	struct event *ev_read;      /* idle_us as its timeout */
	struct event *ev_write;     /* stall_us or the linger as timeout */
	struct buf in;              /* read, not yet consumed by process */
	struct buf out;             /* queued, not yet written */
	bool reading;               /* ev_read is added */
	bool writing;               /* ev_write is added */
	bool stalled;               /* out not counted in set->backlog */
	bool lingering;             /* conn_linger() was called */
	bool ending;                /* lingering and conn_end() came */
	uint64_t linger_until_us;   /* monotonic end of the lingering */
};

/* Starts a set with no connections; base and what are borrowed, lim and c
 * copied. on_backlog (may be NULL) hears every change of the backlog. */
void conn_set_init(struct conn_set *set, struct event_base *base,
    const char *what, const struct conn_limits *lim,
    const struct conn_counters *c, conn_backlog_fn *on_backlog, void *cls);
/* Logs a line at notice level about a refused or cut off connection,
 * rate-limited across the set (5, then 1 a second), saying how many
 * lines were held back since the last one. */
void conn_set_log(struct conn_set *set, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Takes ownership of fd, a connected non-blocking stream socket, and
 * starts reading it; ops->process is first called when input comes. ops
 * and cls are kept until conn_done(). 0 or -ENOMEM; after a failure too,
 * conn_done() frees what was made and closes fd.
 */
int conn_init(struct conn *conn, struct conn_set *set, int fd,
    const struct conn_ops *ops, void *cls);
/* Closes the socket and frees everything; takes the output off the
 * backlog. Writes nothing. Safe on a connection whose conn_init()
 * failed, and twice. */
void conn_done(struct conn *conn);

/* True while more than out_max bytes wait to be written: the protocol
 * then handles no more input until some is. */
bool conn_out_full(const struct conn *conn);
/* Makes room for need more bytes of output if less than out_max waits
 * (CLIENT_BUFFER's rule: a message is queued whole while less than that
 * waits, however large), so that appending need bytes cannot fail. 0,
 * -ENOBUFS (out_max or more waits) or -ENOMEM. */
int conn_out_room(struct conn *conn, size_t need);
/* Appends size bytes to the output, counted in the backlog, and returns
 * where they go; the caller fills them before anything else is appended.
 * NULL on OOM. It is written later (conn_flush_later, conn_work). */
uint8_t *conn_out_append(struct conn *conn, size_t size);

/* Writes what it can now and waits for the socket for the rest. 0, or
 * negative: the socket failed and the connection must end. */
int conn_flush(struct conn *conn);
/* Arms the write event without writing now (many answers, one write). */
void conn_flush_later(struct conn *conn);
/*
 * Hands the input to ops->process and writes the output, again while
 * writing made room for more answers; then reads or stops reading as the
 * bounds and ops->paused allow. 0, or negative: the caller must call
 * conn_end(); -EMSGSIZE (counted in overflow, logged) when in_max bytes
 * wait that the protocol neither takes nor waits on.
 */
int conn_work(struct conn *conn);
/* Marks the connection cut off: when it ends, its output is written
 * first, for at most linger_us from now. */
void conn_linger(struct conn *conn);
/* Ends the connection: ops->gone at once, or after ops->stop, once the
 * output is written or linger_us has passed if conn_linger() was
 * called. */
void conn_end(struct conn *conn);

#endif /* FERRY_SERVICE_CONN_H */
