/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Bytes of a TCP transport connection (see tcp_int.h): large reads parsed
 * in place by tcp_frame.c, units handed to the core without a copy, and a
 * write queue bounded by WRITE_QUEUE that answers -EAGAIN and later
 * send_ready instead of dropping (issue 3; seed 004's TCP dropped).
 */
#define LOG_TAG "tcp"
#include "tcp_int.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "lib/time.h"

/* Acts on one parser event. Returns whether to parse on. */
static bool
tcp_stream_event(struct ferry_tsession *c, const struct tcp_frame_event *ev)
{
	struct tcp *t = c->t;
	const struct ferry_core_api *core = t->ipt.core;
	struct ferry_message_pack mp;
	char addr[NETADDR_STRLEN];

	switch (ev->kind) {
	case TCP_FRAME_NEED:
		c->need = ev->need;
		return false;
	case TCP_FRAME_WELCOME:
		memcpy(c->peer_id.bytes, ev->data, FERRY_PEER_ID_LEN);
		c->have_id = true;
		return true;
	case TCP_FRAME_UNIT:
		memset(&mp, 0, sizeof(mp));
		mp.ts = c;
		mp.sender = c->have_id ? &c->peer_id : NULL;
		mp.msg = ev->data;
		mp.len = ev->len;
		mp.src_len = netaddr_ip_bytes(&c->peer,
		    (const uint8_t **)&mp.src);
		(*t->st.rx_units)++;
		core->receive(core->cls, &mp);
		return !c->dead && !c->closing;
	case TCP_FRAME_ERROR:
	default:
		(*t->st.framing_errors)++;
		(void)netaddr_format(&c->peer, addr, sizeof(addr));
		plog_peer(&t->ipt.log, "%s: %s, closing", addr,
		    tcp_frame_strerror(ev->error));
		tcp_conn_fail(c, -EBADMSG);
		return false;
	}
}

/* Delivers every complete event in the read buffer. */
static void
tcp_stream_parse(struct ferry_tsession *c)
{
	struct tcp_frame_event ev;
	size_t used;
	bool more;

	do {
		used = tcp_frame_next(&c->parser, buf_head(&c->rbuf),
		    buf_size(&c->rbuf), &ev);
		more = tcp_stream_event(c, &ev);
		buf_consume(&c->rbuf, used);
		/* The core may pause us from within receive(). */
	} while (more && !c->paused);
}

/* Room to offer read(): a full chunk at first, afterwards at least what
 * the unit being received still lacks, so that it ends up contiguous. */
static size_t
tcp_stream_want(const struct ferry_tsession *c)
{
	size_t live = buf_size(&c->rbuf);
	size_t want = c->rbuf.cap == 0 ? TCP_READ_CHUNK : TCP_READ_MIN;

	if (c->need > live && c->need - live > want)
		want = c->need - live;
	return want;
}

void
tcp_stream_readable(evutil_socket_t fd, short what, void *arg)
{
	struct ferry_tsession *c = arg;
	struct tcp *t = c->t;
	size_t total = 0, room;
	uint64_t now = time_mono_us();
	uint8_t *p;
	ssize_t n;

	(void)what;
	c->busy++; /* receive() may drop the last reference */
	/* Units read before a pause come first. */
	if (buf_size(&c->rbuf) > 0 && !c->paused)
		tcp_stream_parse(c);
	while (total < TCP_READ_BUDGET && !c->dead && !c->closing &&
	    !c->paused) {
		p = buf_reserve(&c->rbuf, tcp_stream_want(c));
		if (p == NULL) {
			tcp_conn_fail(c, -ENOMEM);
			break;
		}
		room = c->rbuf.cap - c->rbuf.len;
		n = read(fd, p, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			tcp_conn_fail(c, n == 0 ? -EPIPE : -errno);
			break;
		}
		buf_commit(&c->rbuf, (size_t)n);
		total += (size_t)n;
		*t->st.rx_bytes += (uint64_t)n;
		c->last_us = now;
		tcp_stream_parse(c);
		if ((size_t)n < room)
			break; /* drained: skip the read that says EAGAIN */
	}
	c->busy--;
	tcp_conn_reap(c);
}

/* Writes queued bytes until the queue is empty or the socket full.
 * 0 or the socket's error. */
static int
tcp_stream_flush(struct ferry_tsession *c)
{
	struct evbuffer_iovec v[TCP_IOV_MAX];
	struct iovec iov[TCP_IOV_MAX];
	struct msghdr mh;
	size_t want;
	ssize_t w;
	int n;

	while (evbuffer_get_length(c->wq) > 0) {
		n = evbuffer_peek(c->wq, -1, NULL, v, TCP_IOV_MAX);
		if (n > TCP_IOV_MAX)
			n = TCP_IOV_MAX;
		want = 0;
		for (int i = 0; i < n; i++) {
			iov[i].iov_base = v[i].iov_base;
			iov[i].iov_len = v[i].iov_len;
			want += v[i].iov_len;
		}
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)n;
		w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 :
			    -errno;
		(void)evbuffer_drain(c->wq, (size_t)w);
		*c->t->st.tx_bytes += (uint64_t)w;
		if ((size_t)w < want)
			return 0; /* the socket is full */
	}
	return 0;
}

/* The end of a non-blocking connect(). 0 or why it failed. */
static int
tcp_stream_connected(struct ferry_tsession *c, short what)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (what & EV_TIMEOUT)
		return -ETIMEDOUT;
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return -errno;
	if (err != 0)
		return -err;
	c->connecting = false;
	if (!c->closing && !c->paused)
		(void)event_add(c->ev_read, NULL);
	return 0;
}

void
tcp_stream_pause(struct ferry_tsession *c, bool pause)
{
	if (pause == c->paused)
		return;
	c->paused = pause;
	if (c->connecting || c->closing || c->dead)
		return;
	if (pause) {
		(void)event_del(c->ev_read);
		return;
	}
	(void)event_add(c->ev_read, NULL);
	/* Deliver what waits in the buffer even if nothing more comes. */
	if (buf_size(&c->rbuf) > 0)
		event_active(c->ev_read, EV_READ, 0);
}

/* Tells the core about room once the queue is below half its bound. */
static void
tcp_stream_maybe_ready(struct ferry_tsession *c)
{
	const struct ferry_core_api *core = c->t->ipt.core;

	if (!c->want_ready || c->closing ||
	    evbuffer_get_length(c->wq) >= c->t->set.write_queue / 2)
		return;
	c->want_ready = false;
	c->busy++;
	core->send_ready(core->cls, c);
	c->busy--;
	tcp_conn_reap(c);
}

void
tcp_stream_writable(evutil_socket_t fd, short what, void *arg)
{
	struct ferry_tsession *c = arg;
	struct timeval tv;
	int r = 0;

	(void)fd;
	if (c->dead) {
		tcp_conn_reap(c);
		return;
	}
	if (c->connecting) {
		r = tcp_stream_connected(c, what);
		if (r < 0)
			(*c->t->st.connect_failed)++;
	} else if (c->closing && (what & EV_TIMEOUT)) {
		r = -ETIMEDOUT; /* the peer stopped reading while we linger */
	}
	if (r == 0)
		r = tcp_stream_flush(c);
	if (r < 0) {
		tcp_conn_fail(c, r);
		tcp_conn_reap(c);
		return;
	}
	if (evbuffer_get_length(c->wq) > 0) {
		time_us_to_tv(c->t->set.connect_us, &tv);
		(void)event_add(c->ev_write, c->closing ? &tv : NULL);
	} else if (c->closing) {
		c->dead = true;
		tcp_conn_reap(c);
		return;
	}
	tcp_stream_maybe_ready(c);
}

/* Queues the rest of a unit of which `done` bytes went out already. The
 * room is reserved first so that a unit is queued whole or not at all. */
static int
tcp_stream_enqueue(struct ferry_tsession *c, const uint8_t *hdr,
    const void *msg, size_t len, size_t done)
{
	const uint8_t *m = msg;

	if (evbuffer_expand(c->wq, TCP_FRAME_HDR_LEN + len - done) < 0)
		return -ENOMEM;
	if (done < TCP_FRAME_HDR_LEN) {
		(void)evbuffer_add(c->wq, hdr + done, TCP_FRAME_HDR_LEN - done);
		done = TCP_FRAME_HDR_LEN;
	}
	(void)evbuffer_add(c->wq, m + (done - TCP_FRAME_HDR_LEN),
	    len - (done - TCP_FRAME_HDR_LEN));
	if (!c->connecting)
		(void)event_add(c->ev_write, NULL);
	return 0;
}

/* Nothing is queued: writes straight from the core's buffer, so that
 * only what the kernel does not take is copied. Returns the bytes
 * written, or the socket's error (the connection then fails). */
static ssize_t
tcp_stream_write(struct ferry_tsession *c, const uint8_t *hdr,
    const void *msg, size_t len)
{
	struct iovec iov[2];
	struct msghdr mh;
	ssize_t w;

	iov[0].iov_base = (void *)(uintptr_t)hdr;
	iov[0].iov_len = TCP_FRAME_HDR_LEN;
	iov[1].iov_base = (void *)(uintptr_t)msg;
	iov[1].iov_len = len;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	do {
		w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (w < 0 && errno == EINTR);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (w < 0) {
		w = -errno;
		tcp_conn_fail(c, (int)w);
		return w;
	}
	*c->t->st.tx_bytes += (uint64_t)w;
	return w;
}

int
tcp_stream_send(struct ferry_tsession *c, const void *msg, size_t len)
{
	struct tcp *t = c->t;
	size_t queued = evbuffer_get_length(c->wq);
	uint8_t hdr[TCP_FRAME_HDR_LEN];
	ssize_t w = 0;

	if (c->dead || c->closing)
		return -ENOTCONN;
	if (queued > 0 && queued + TCP_FRAME_HDR_LEN + len >
	    t->set.write_queue) {
		c->want_ready = true;
		(*t->st.tx_eagain)++;
		return -EAGAIN;
	}
	tcp_frame_put_header(hdr, (uint32_t)len);
	if (queued == 0 && !c->connecting) {
		w = tcp_stream_write(c, hdr, msg, len);
		if (w < 0)
			return (int)w;
	}
	if ((size_t)w < sizeof(hdr) + len &&
	    tcp_stream_enqueue(c, hdr, msg, len, (size_t)w) < 0) {
		/* Part of the unit is on the wire: the stream is lost. */
		if (w > 0)
			tcp_conn_fail(c, -ENOMEM);
		return -ENOMEM;
	}
	(*t->st.tx_units)++;
	return 0;
}

int
tcp_stream_welcome(struct ferry_tsession *c)
{
	uint8_t w[TCP_FRAME_WELCOME_LEN];

	tcp_frame_put_welcome(w, c->t->ipt.core->my_identity);
	return evbuffer_add(c->wq, w, sizeof(w)) < 0 ? -ENOMEM : 0;
}
