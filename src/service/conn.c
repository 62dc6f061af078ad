/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One accepted stream connection on the event loop (conn.h), service
 * layer: large non-blocking reads, output batched into few writes, input
 * left in the kernel's socket buffer while the protocol or the output
 * cannot take more (DESIGN.md, BPCC), the stalled reader, the lingering
 * close, and the listener's rate-limited notice log.
 */
#define LOG_TAG "service"
#include "service/conn.h"

#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/bufio.h"
#include "lib/log.h"
#include "lib/time.h"

/* conn_set_log(): a burst of lines, then this many a second. */
#define CONN_LOG_BURST 5
#define CONN_LOG_RATE  1.0

/* Descriptors one read takes (conn_ops.fds); more are closed. */
#define CONN_FDS_MAX 8

static void conn_on_read(evutil_socket_t fd, short what, void *cls);
static void conn_on_write(evutil_socket_t fd, short what, void *cls);
static void conn_update_reading(struct conn *conn);

void
conn_set_init(struct conn_set *set, struct event_base *base, const char *what,
    const struct conn_limits *lim, const struct conn_counters *c,
    conn_backlog_fn *on_backlog, void *cls)
{
	set->base = base;
	set->what = what;
	set->lim = *lim;
	set->c = *c;
	set->on_backlog = on_backlog;
	set->backlog_cls = cls;
	set->backlog = 0;
	ratelog_init(&set->log, CONN_LOG_RATE, CONN_LOG_BURST);
}

void
conn_set_log(struct conn_set *set, const char *fmt, ...)
{
	char line[384];
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = ratelog_vformat(&set->log, time_mono_us(), line, sizeof(line), fmt,
	    ap);
	va_end(ap);
	if (ok)
		log_notice("%s", line);
}

static void
conn_set_backlog_add(struct conn_set *set, int64_t delta)
{
	if (delta == 0)
		return;
	set->backlog += (uint64_t)delta;
	if (set->on_backlog != NULL)
		set->on_backlog(set->backlog_cls, set->backlog);
}

/* Adds delta to the connection's share of the backlog, which it has only
 * while it has not stalled. */
static void
conn_backlog_add(struct conn *conn, int64_t delta)
{
	if (!conn->stalled)
		conn_set_backlog_add(conn->set, delta);
}

/* The end: the owner frees the connection, which the caller must not
 * touch after. */
static void
conn_gone(struct conn *conn)
{
	conn->ops->gone(conn->cls);
}

static bool
conn_paused(struct conn *conn)
{
	return conn->ops->paused != NULL && conn->ops->paused(conn->cls);
}

int
conn_init(struct conn *conn, struct conn_set *set, int fd,
    const struct conn_ops *ops, void *cls)
{
	conn->set = set;
	conn->ops = ops;
	conn->cls = cls;
	conn->fd = fd;
	buf_init(&conn->in);
	buf_init(&conn->out);
	conn->reading = conn->writing = false;
	conn->stalled = conn->lingering = conn->ending = false;
	conn->ev_read =
	    event_new(set->base, fd, EV_READ | EV_PERSIST, conn_on_read, conn);
	conn->ev_write = event_new(set->base, fd, EV_WRITE | EV_PERSIST,
	    conn_on_write, conn);
	if (conn->ev_read == NULL || conn->ev_write == NULL)
		return -ENOMEM;
	conn_update_reading(conn);
	return 0;
}

void
conn_done(struct conn *conn)
{
	conn_backlog_add(conn, -(int64_t)buf_size(&conn->out));
	if (conn->ev_read != NULL)
		event_free(conn->ev_read);
	conn->ev_read = NULL;
	if (conn->ev_write != NULL)
		event_free(conn->ev_write);
	conn->ev_write = NULL;
	if (conn->fd >= 0)
		(void)close(conn->fd);
	conn->fd = -1;
	buf_done(&conn->in);
	buf_done(&conn->out);
	conn->reading = conn->writing = false;
}

bool
conn_out_full(const struct conn *conn)
{
	return buf_size(&conn->out) > conn->set->lim.out_max;
}

int
conn_out_room(struct conn *conn, size_t need)
{
	/*
	 * Less than out_max waiting, not out_max minus the message: a bound
	 * on the output after it could not be met by a message larger than
	 * out_max, nor by a reading peer that still holds the tail of the
	 * one before. So the output stays below out_max plus one message.
	 */
	if (buf_size(&conn->out) >= conn->set->lim.out_max)
		return -ENOBUFS;
	return buf_reserve(&conn->out, need) != NULL ? 0 : -ENOMEM;
}

uint8_t *
conn_out_append(struct conn *conn, size_t size)
{
	uint8_t *p = buf_reserve(&conn->out, size);

	if (p == NULL)
		return NULL;
	buf_commit(&conn->out, size);
	conn_backlog_add(conn, (int64_t)size);
	return p;
}

/* Adds the write event, or sets its timeout anew: while the connection
 * ends, what is left of its lingering; otherwise stall_us, after which a
 * socket that took nothing has stalled (conn_on_write). */
static void
conn_arm_write(struct conn *conn)
{
	uint64_t now, us = conn->set->lim.stall_us;
	struct timeval tv;

	if (conn->ending) {
		now = time_mono_us();
		us = 0;
		if (conn->linger_until_us > now)
			us = conn->linger_until_us - now;
	}
	time_us_to_tv(us, &tv);
	(void)event_add(conn->ev_write, &tv);
	conn->writing = true;
}

void
conn_flush_later(struct conn *conn)
{
	if (conn->writing || buf_size(&conn->out) == 0)
		return;
	conn_arm_write(conn);
}

/* The peer took output: its idle time starts again from now, not from
 * the last byte it sent, since it was busy reading. */
static void
conn_idle_restart(struct conn *conn)
{
	struct timeval tv;

	if (!conn->reading || conn->set->lim.idle_us == 0)
		return;
	time_us_to_tv(conn->set->lim.idle_us, &tv);
	(void)event_add(conn->ev_read, &tv);
}

/* The socket took n bytes of output. */
static void
conn_took(struct conn *conn, size_t n)
{
	struct conn_set *set = conn->set;

	(*set->c.bytes_out) += (uint64_t)n;
	if (!conn->stalled) {
		conn_set_backlog_add(set, -(int64_t)n);
		return;
	}
	/* Reading again: what is left of its output counts again. */
	conn->stalled = false;
	conn_set_backlog_add(set, (int64_t)buf_size(&conn->out));
}

int
conn_flush(struct conn *conn)
{
	size_t before = buf_size(&conn->out), took;
	int r = bufio_send(&conn->out, conn->fd);

	took = before - buf_size(&conn->out);
	if (took > 0)
		conn_took(conn, took);
	if (r < 0)
		return log_debug_errno(r, "%s fd %d: write", conn->set->what,
		    conn->fd);
	if (buf_size(&conn->out) > 0) {
		/* The socket took some: stall_us counts from now, also when
		 * this write came from the read side and not from the write
		 * event, whose timeout would otherwise run on. */
		if (took > 0 && conn->writing && !conn->ending)
			conn_arm_write(conn);
		else
			conn_flush_later(conn);
		return 0;
	}
	if (took > 0)
		conn_idle_restart(conn);
	if (conn->writing) {
		(void)event_del(conn->ev_write);
		conn->writing = false;
	}
	if (!conn->ending && conn->ops->drained != NULL)
		conn->ops->drained(conn->cls);
	return 0;
}

/* Starts or stops reading as the bounds and the protocol allow. Input
 * not yet wanted stays in the kernel's socket buffer, not ours. */
static void
conn_update_reading(struct conn *conn)
{
	const struct conn_limits *lim = &conn->set->lim;
	bool want = !conn->lingering && !conn_paused(conn) &&
	    !conn_out_full(conn) && buf_size(&conn->in) < lim->in_max;
	struct timeval tv;

	if (want == conn->reading)
		return;
	if (!want) {
		(void)event_del(conn->ev_read);
	} else if (lim->idle_us > 0) {
		time_us_to_tv(lim->idle_us, &tv);
		(void)event_add(conn->ev_read, &tv);
	} else {
		(void)event_add(conn->ev_read, NULL);
	}
	conn->reading = want;
}

/* The protocol took nothing of in_max bytes, waits for nothing else and
 * has room to answer: it needs more than the input may hold, and the
 * connection would wait forever. */
static bool
conn_in_overflow(struct conn *conn)
{
	return !conn->lingering &&
	    buf_size(&conn->in) >= conn->set->lim.in_max &&
	    !conn_paused(conn) && !conn_out_full(conn);
}

/*
 * Goes on for as long as the output drains completely: a pipelining
 * peer's requests may all be in the input already, and once the output
 * is empty neither a write nor a read event will come for them. Progress
 * is input handled or a full output written out; the second is the case
 * of a write event after a short write had left the output over out_max,
 * when nothing could be handled before the flush.
 */
int
conn_work(struct conn *conn)
{
	bool progress;
	size_t before;
	int r;

	do {
		before = buf_size(&conn->in);
		progress = conn_out_full(conn);
		r = conn->ops->process(conn->cls);
		if (r == 0)
			r = conn_flush(conn);
		if (r < 0)
			return r;
		progress = progress || buf_size(&conn->in) < before;
	} while (progress && buf_size(&conn->out) == 0 && !conn_paused(conn));
	if (conn_in_overflow(conn)) {
		(*conn->set->c.overflow)++;
		conn_set_log(conn->set,
		    "%s fd %d sent %zu bytes without a whole request; disconnecting",
		    conn->set->what, conn->fd, buf_size(&conn->in));
		return -EMSGSIZE;
	}
	conn_update_reading(conn);
	return 0;
}

void
conn_linger(struct conn *conn)
{
	conn->lingering = true;
	conn->linger_until_us = time_mono_us() + conn->set->lim.linger_us;
}

void
conn_end(struct conn *conn)
{
	if (!conn->lingering) {
		conn_gone(conn);
		return;
	}
	/* Nothing more comes in or is queued: only the output goes on. */
	if (conn->ops->stop != NULL)
		conn->ops->stop(conn->cls);
	conn->ending = true;
	if (conn->reading)
		(void)event_del(conn->ev_read);
	conn->reading = false;
	buf_done(&conn->in);
	if (conn_flush(conn) < 0 || buf_size(&conn->out) == 0 ||
	    time_mono_us() >= conn->linger_until_us) {
		conn_gone(conn);
		return;
	}
	/* The write event's timeout becomes the lingering's end. */
	conn_arm_write(conn);
}

/* A read event, or idle_us without one while reading. */
static void
conn_on_read(evutil_socket_t fd, short what, void *cls)
{
	struct conn *conn = cls;
	struct conn_set *set = conn->set;
	int fds[CONN_FDS_MAX];
	size_t n_fds = 0;
	bool truncated = false;
	ssize_t n;

	(void)fd;
	if (!(what & EV_READ)) {
		/* A peer that waits for its answers is not idle: the stall
		 * rule is for it. */
		if (buf_size(&conn->out) > 0)
			return;
		(*set->c.idle)++;
		log_debug("%s fd %d sent nothing for %llu ms; disconnecting",
		    set->what, conn->fd,
		    (unsigned long long)(set->lim.idle_us / 1000));
		conn_gone(conn);
		return;
	}
	if (conn->ops->fds != NULL)
		n = bufio_read_fds(&conn->in, conn->fd, set->lim.in_max, fds,
		    CONN_FDS_MAX, &n_fds, &truncated);
	else
		n = bufio_read(&conn->in, conn->fd, set->lim.in_max);
	if (n == -EAGAIN)
		return;
	/* Handed over before the bytes they came with are handled. */
	if ((n_fds > 0 || truncated) &&
	    conn->ops->fds(conn->cls, fds, n_fds, truncated) < 0) {
		conn_end(conn);
		return;
	}
	if (n == -ENOMEM)
		log_warn("%s fd %d: out of memory; disconnecting", set->what,
		    conn->fd);
	else if (n < 0)
		log_debug_errno((int)n, "%s fd %d: read", set->what, conn->fd);
	if (n <= 0) {
		conn_gone(conn);
		return;
	}
	(*set->c.bytes_in) += (uint64_t)n;
	if (conn_work(conn) < 0)
		conn_end(conn);
}

/*
 * The listener's back-pressure holds its peers back while the output of
 * its connections is large, so that slow readers catch up instead of
 * losing messages. A socket that takes nothing at all for stall_us is
 * not slow but stuck: it must not hold every peer back for as long as
 * it stays open, so its output leaves the backlog (and what comes for it
 * is refused at out_max) until it takes some.
 */
static void
conn_stall(struct conn *conn)
{
	struct conn_set *set = conn->set;

	if (conn->stalled || buf_size(&conn->out) == 0)
		return;
	log_debug(
	    "%s fd %d takes no output; its %zu bytes no longer hold peers back",
	    set->what, conn->fd, buf_size(&conn->out));
	conn_set_backlog_add(set, -(int64_t)buf_size(&conn->out));
	conn->stalled = true;
	(*set->c.stalled)++;
}

static void
conn_on_write(evutil_socket_t fd, short what, void *cls)
{
	struct conn *conn = cls;

	(void)fd;
	if (conn->ending) {
		/* Lingering: gone once written, failed or out of time. */
		if (!(what & EV_WRITE) ||
		    time_mono_us() >= conn->linger_until_us ||
		    conn_flush(conn) < 0 || buf_size(&conn->out) == 0) {
			conn_gone(conn);
			return;
		}
		/* A persistent event's timeout restarts when it fires: set
		 * it to what is left of the lingering. */
		conn_arm_write(conn);
		return;
	}
	if (!(what & EV_WRITE)) {
		conn_stall(conn);
		return;
	}
	/* Input held back while answers piled up can go on now. */
	if (conn_work(conn) < 0)
		conn_end(conn);
}
