/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Sockets and datagram I/O of the UDP transport (see udp_int.h): one
 * socket per bind address, recvmmsg() in batches into buffers allocated
 * once, sendto() per unit, and -EAGAIN back-pressure answered by
 * send_ready when the socket drains (issue 3; DESIGN.md "Test ground":
 * system calls cost, so receive in batches).
 */
#define LOG_TAG "udp"
#include "udp_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/time.h"

/* Sizes the receive batch for the MTU in force. 0 or -ENOMEM (the old
 * batch is kept). */
static int
udp_io_rx_alloc(struct udp_rx *rx, uint32_t mtu)
{
	size_t slot = (size_t)mtu + 1;
	uint8_t *bufs;

	if (rx->slot == slot)
		return 0;
	bufs = malloc(UDP_RX_BATCH * slot);
	if (bufs == NULL)
		return -ENOMEM;
	free(rx->bufs);
	rx->bufs = bufs;
	rx->slot = slot;
	for (size_t i = 0; i < UDP_RX_BATCH; i++) {
		struct msghdr *h = &rx->msgs[i].msg_hdr;

		rx->iov[i].iov_base = bufs + i * slot;
		rx->iov[i].iov_len = slot;
		memset(h, 0, sizeof(*h));
		h->msg_name = &rx->from[i];
		h->msg_iov = &rx->iov[i];
		h->msg_iovlen = 1;
	}
	return 0;
}

/* Finds or makes the session of a datagram's source. NULL: dropped. */
static struct ferry_tsession *
udp_io_source(struct udp_sock *s, const struct sockaddr_storage *from,
    uint64_t now)
{
	struct udp *u = s->u;
	struct ferry_tsession *ts;
	uint8_t key[NETADDR_HELO_MAX];
	size_t key_len;
	int r;

	if (netaddr_encode(from, key, sizeof(key), &key_len) < 0)
		return NULL;
	ts = udp_session_lookup(u, key, key_len);
	if (ts != NULL) {
		udp_session_touch(ts, now);
		return ts;
	}
	if (!ipt_allowed(&u->ipt, from)) {
		(*u->st.drop_blacklisted)++;
		return NULL;
	}
	r = udp_session_new(u, s, from, key, key_len, 0, &ts);
	if (r == -ENOBUFS)
		(*u->st.drop_table_full)++;
	return r < 0 ? NULL : ts;
}

/* Hands one received datagram to the core. */
static void
udp_io_deliver(struct udp_sock *s, const struct mmsghdr *m, uint64_t now)
{
	struct udp *u = s->u;
	const struct msghdr *h = &m->msg_hdr;
	struct ferry_message_pack mp;
	struct ferry_tsession *ts;
	size_t len = m->msg_len;

	*u->st.rx_bytes += len;
	(*u->st.rx_datagrams)++;
	if ((h->msg_flags & MSG_TRUNC) != 0 || len >= u->rx.slot) {
		(*u->st.drop_oversize)++;
		return;
	}
	if (len == 0) {
		(*u->st.drop_empty)++;
		return;
	}
	ts = udp_io_source(s, h->msg_name, now);
	if (ts == NULL)
		return;
	memset(&mp, 0, sizeof(mp));
	mp.ts = ts;
	mp.msg = h->msg_iov->iov_base;
	mp.len = len;
	mp.src_len = netaddr_ip_bytes(h->msg_name,
	    (const uint8_t **)&mp.src);
	u->ipt.core->receive(u->ipt.core->cls, &mp);
}

/* Reads batches until the socket is empty or the budget is spent; the
 * persistent read event brings us back for the rest. */
static void
udp_io_readable(evutil_socket_t fd, short what, void *arg)
{
	struct udp_sock *s = arg;
	struct udp *u = s->u;
	struct udp_rx *rx = &u->rx;
	size_t total = 0;
	uint64_t now;
	int n;

	(void)what;
	if (udp_io_rx_alloc(rx, u->ipt.cfg.mtu) < 0 && rx->bufs == NULL)
		return;
	while (total < UDP_RX_BUDGET && s->reading) {
		for (size_t i = 0; i < UDP_RX_BATCH; i++)
			rx->msgs[i].msg_hdr.msg_namelen = sizeof(rx->from[i]);
		n = recvmmsg(fd, rx->msgs, UDP_RX_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				(void)plog_errno(&u->ipt.log, FERRY_LOG_DEBUG,
				    -errno, "recvmmsg");
			break;
		}
		now = time_mono_us();
		for (int i = 0; i < n; i++)
			udp_io_deliver(s, &rx->msgs[i], now);
		total += (size_t)n;
		if (n < UDP_RX_BATCH)
			break; /* the queue is empty: skip the EAGAIN call */
	}
}

/* The socket drained: tell the core, once per waiting session. Sessions
 * that get -EAGAIN again go to the back and wait for the next round. */
static void
udp_io_writable(evutil_socket_t fd, short what, void *arg)
{
	struct udp_sock *s = arg;
	const struct ferry_core_api *core = s->u->ipt.core;
	struct ferry_tsession *ts;
	size_t n = 0;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(ts, &s->waiting, wait_link)
		n++;
	while (n-- > 0 && (ts = TAILQ_FIRST(&s->waiting)) != NULL) {
		udp_io_unwait(ts);
		core->send_ready(core->cls, ts);
	}
}

void
udp_io_unwait(struct ferry_tsession *ts)
{
	if (!ts->waiting)
		return;
	TAILQ_REMOVE(&ts->sock->waiting, ts, wait_link);
	ts->waiting = false;
}

static void
udp_io_wait(struct ferry_tsession *ts)
{
	struct udp_sock *s = ts->sock;

	if (!ts->waiting) {
		TAILQ_INSERT_TAIL(&s->waiting, ts, wait_link);
		ts->waiting = true;
	}
	if (!event_pending(s->ev_write, EV_WRITE, NULL))
		(void)event_add(s->ev_write, NULL);
}

int
udp_io_send(struct ferry_tsession *ts, const void *msg, size_t len)
{
	struct udp *u = ts->u;
	ssize_t n;

	do {
		n = sendto(ts->sock->fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL,
		    (const struct sockaddr *)&ts->peer, ts->peer_len);
	} while (n < 0 && errno == EINTR);
	if (n >= 0) {
		(*u->st.tx_datagrams)++;
		*u->st.tx_bytes += len;
		return 0;
	}
	switch (errno) {
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
	case ENOBUFS: /* the device queue is full: also wait */
		(*u->st.tx_eagain)++;
		udp_io_wait(ts);
		return -EAGAIN;
	case EMSGSIZE:
		return -EMSGSIZE;
	default:
		(*u->st.tx_errors)++;
		return -errno;
	}
}

/* Asks for a socket buffer size, forcing it past the sysctl limit when
 * the process may (CAP_NET_ADMIN), else taking what the kernel grants. */
static void
udp_io_buffer(struct udp *u, int fd, int force_opt, int opt, uint64_t want,
    const char *key)
{
	int v = want > INT_MAX / 2 ? INT_MAX / 2 : (int)want, got = 0;
	socklen_t len = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof(v)) == 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
	if (getsockopt(fd, SOL_SOCKET, opt, &got, &len) < 0)
		return;
	/* Linux reports double the size it grants, the other half being its
	 * bookkeeping allowance. */
	plog(&u->ipt.log, FERRY_LOG_INFO,
	    "%s: asked for %d bytes, the kernel granted %d (net.core.%s_max limits it)",
	    key, v, got / 2, opt == SO_RCVBUF ? "rmem" : "wmem");
}

void
udp_io_set_buffers(struct udp *u)
{
	for (size_t i = 0; i < u->n_socks; i++) {
		udp_io_buffer(u, u->socks[i].fd, SO_RCVBUFFORCE, SO_RCVBUF,
		    u->set.rcvbuf, "RCVBUF");
		udp_io_buffer(u, u->socks[i].fd, SO_SNDBUFFORCE, SO_SNDBUF,
		    u->set.sndbuf, "SNDBUF");
	}
}

/* Opens one socket. 0, or -EAFNOSUPPORT for a family the kernel lacks,
 * or another negative errno (logged). */
static int
udp_io_open_one(struct udp *u, const struct sockaddr_storage *bind_to)
{
	struct udp_sock *s = &u->socks[u->n_socks];
	struct event_base *base = u->ipt.core->base;
	char name[NETADDR_STRLEN];
	int r;

	(void)netaddr_format(bind_to, name, sizeof(name));
	memset(s, 0, sizeof(*s));
	s->u = u;
	TAILQ_INIT(&s->waiting);
	r = ipt_socket_bind(bind_to, SOCK_DGRAM, false, &s->fd, &s->name);
	if (r == -EAFNOSUPPORT) {
		plog(&u->ipt.log, FERRY_LOG_NOTICE,
		    "%s: address family not supported here, skipped", name);
		return r;
	}
	if (r < 0)
		return plog_errno(&u->ipt.log, FERRY_LOG_ERR, r,
		    "cannot bind UDP socket to %s", name);
	s->ev_read = event_new(base, s->fd, EV_READ | EV_PERSIST,
	    udp_io_readable, s);
	s->ev_write = event_new(base, s->fd, EV_WRITE, udp_io_writable, s);
	if (s->ev_read == NULL || s->ev_write == NULL) {
		u->n_socks++; /* so that udp_io_close frees it */
		return plog_errno(&u->ipt.log, FERRY_LOG_ERR, -ENOMEM,
		    "UDP socket events");
	}
	u->n_socks++;
	return 0;
}

int
udp_io_open(struct udp *u)
{
	int r;

	if (u->n_socks > 0)
		return 0;
	for (size_t i = 0; i < u->ipt.cfg.n_bind; i++) {
		r = udp_io_open_one(u, &u->ipt.cfg.bind[i]);
		if (r < 0 && r != -EAFNOSUPPORT) {
			udp_io_close(u);
			return r;
		}
	}
	if (u->n_socks == 0)
		return plog_errno(&u->ipt.log, FERRY_LOG_ERR, -EAFNOSUPPORT,
		    "no UDP socket could be opened");
	udp_io_set_buffers(u);
	return 0;
}

void
udp_io_serve(struct udp *u, bool on)
{
	for (size_t i = 0; i < u->n_socks; i++) {
		struct udp_sock *s = &u->socks[i];

		if (on && !s->reading)
			(void)event_add(s->ev_read, NULL);
		else if (!on && s->reading)
			(void)event_del(s->ev_read);
		s->reading = on;
	}
}

void
udp_io_close(struct udp *u)
{
	for (size_t i = 0; i < u->n_socks; i++) {
		struct udp_sock *s = &u->socks[i];

		if (s->ev_read != NULL)
			event_free(s->ev_read);
		if (s->ev_write != NULL)
			event_free(s->ev_write);
		if (s->fd >= 0)
			(void)close(s->fd);
	}
	u->n_socks = 0;
	free(u->rx.bufs);
	u->rx.bufs = NULL;
	u->rx.slot = 0;
}

struct udp_sock *
udp_io_sock_for(struct udp *u, int family)
{
	for (size_t i = 0; i < u->n_socks; i++)
		if (u->socks[i].name.ss_family == family)
			return &u->socks[i];
	return NULL;
}
