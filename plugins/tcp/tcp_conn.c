/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Life of a TCP transport connection (see tcp_int.h): creation by accept
 * or non-blocking connect, references (seed 004, II-B connect/associate/
 * disconnect), death and its report, the idle timeout of inbound
 * connections the core never associates (II-B, last paragraph), and the
 * trimming of idle read buffers.
 */
#define LOG_TAG "tcp"
#include "tcp_int.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "lib/map.h"
#include "lib/time.h"

#define TCP_TRIM_US	USEC_PER_SEC /* idle read buffers go after this */
#define TCP_SWEEP_MIN_US (10 * USEC_PER_MSEC)
#define TCP_SWEEP_MAX_US USEC_PER_SEC

/* Removes c from the outbound table, so connect() never reuses it. */
static void
tcp_conn_forget(struct ferry_tsession *c)
{
	struct tcp *t = c->t;

	if (!c->inbound && map_get(t->outbound, c->key, c->key_len) == c)
		(void)map_remove(t->outbound, c->key, c->key_len);
}

static void
tcp_conn_free(struct ferry_tsession *c)
{
	struct tcp *t = c->t;

	tcp_conn_forget(c);
	TAILQ_REMOVE(&t->conns, c, link);
	if (c->inbound)
		t->n_inbound--;
	if (c->ev_read != NULL)
		event_free(c->ev_read);
	if (c->ev_write != NULL)
		event_free(c->ev_write);
	if (c->wq != NULL)
		evbuffer_free(c->wq);
	buf_done(&c->rbuf);
	(void)close(c->fd);
	free(c);
	if (TAILQ_EMPTY(&t->conns))
		(void)event_del(t->sweep);
}

static void
tcp_conn_sweep_interval(const struct tcp *t, struct timeval *tv)
{
	uint64_t us = t->ipt.cfg.idle_us / 4;

	if (us < TCP_SWEEP_MIN_US)
		us = TCP_SWEEP_MIN_US;
	if (us > TCP_SWEEP_MAX_US)
		us = TCP_SWEEP_MAX_US;
	time_us_to_tv(us, tv);
}

/* Closes inbound connections nobody references that have been quiet for
 * IDLE_TIMEOUT, and frees read buffers nobody has used for a while. */
static void
tcp_conn_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct tcp *t = arg;
	struct ferry_tsession *c, *next;
	uint64_t now = time_mono_us();

	(void)fd;
	(void)what;
	for (c = TAILQ_FIRST(&t->conns); c != NULL; c = next) {
		uint64_t quiet = now - c->last_us;

		next = TAILQ_NEXT(c, link);
		if (c->inbound && c->refs == 0 && !c->closing && !c->dead &&
		    quiet >= t->ipt.cfg.idle_us) {
			(*t->st.idle_closes)++;
			tcp_conn_free(c);
			continue;
		}
		if (buf_size(&c->rbuf) == 0 && c->rbuf.cap > 0 &&
		    quiet >= TCP_TRIM_US)
			buf_done(&c->rbuf);
	}
}

/* A connection around fd (owned from here on; closed on failure). */
static struct ferry_tsession *
tcp_conn_new(struct tcp *t, int fd, const struct sockaddr_storage *peer,
    bool inbound)
{
	struct event_base *base = t->ipt.core->base;
	struct ferry_tsession *c;
	struct timeval tv;
	size_t key_len;
	int on = 1;

	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		(void)close(fd);
		return NULL;
	}
	c->t = t;
	c->fd = fd;
	c->inbound = inbound;
	c->peer = *peer;
	netaddr_unmap(&c->peer);
	if (netaddr_encode(&c->peer, c->key, sizeof(c->key), &key_len) == 0)
		c->key_len = (uint8_t)key_len;
	tcp_frame_init(&c->parser, t->ipt.cfg.mtu, inbound);
	buf_init(&c->rbuf);
	c->last_us = time_mono_us();
	TAILQ_INSERT_TAIL(&t->conns, c, link);
	if (inbound)
		t->n_inbound++;
	c->wq = evbuffer_new();
	c->ev_read = event_new(base, fd, EV_READ | EV_PERSIST,
	    tcp_stream_readable, c);
	c->ev_write = event_new(base, fd, EV_WRITE, tcp_stream_writable, c);
	if (c->wq == NULL || c->ev_read == NULL || c->ev_write == NULL) {
		tcp_conn_free(c);
		return NULL;
	}
	/* Units are whole messages the core batched already: waiting for
	 * more (Nagle) only adds latency. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (!event_pending(t->sweep, EV_TIMEOUT, NULL)) {
		tcp_conn_sweep_interval(t, &tv);
		(void)event_add(t->sweep, &tv);
	}
	return c;
}

int
tcp_conn_accept(struct tcp *t, int fd, const struct sockaddr_storage *peer)
{
	struct ferry_tsession *c = tcp_conn_new(t, fd, peer, true);

	if (c == NULL)
		return -ENOMEM;
	(*t->st.connections_in)++;
	(void)event_add(c->ev_read, NULL);
	return 0;
}

/* The address connections to family go out from: the listener's when
 * every listener of that family is bound to the same one specific
 * address (a host with several, or peers on one machine each on its own
 * 127.0.0.N), so that peers see traffic come from where we serve and
 * advertise. NULL leaves the choice to the kernel's routes. */
static const struct sockaddr_storage *
tcp_conn_source(const struct tcp *t, int family)
{
	const struct sockaddr_storage *src = NULL;

	for (size_t i = 0; i < t->n_listeners; i++) {
		const struct sockaddr_storage *b = &t->listeners[i].name;

		if (b->ss_family != family)
			continue;
		if (netaddr_is_unspecified(b) || src != NULL)
			return NULL;
		src = b;
	}
	return src;
}

/* Binds fd to src's address with a port of the kernel's choosing, which
 * it picks at connect() as for any socket (IP_BIND_ADDRESS_NO_PORT:
 * bind() alone would reserve the port for every destination). */
static int
tcp_conn_bind_source(int fd, const struct sockaddr_storage *src)
{
	struct sockaddr_storage ss = *src;
	int on = 1;

	netaddr_set_port(&ss, 0);
	(void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on,
	    sizeof(on));
	if (bind(fd, (const struct sockaddr *)&ss, netaddr_socklen(&ss)) < 0)
		return -errno;
	return 0;
}

/* Starts a non-blocking connect from src (NULL: any address). 0 and
 * *ret_fd with *ret_pending telling whether it is still in progress, or a
 * negative errno. */
static int
tcp_conn_dial(const struct sockaddr_storage *ss,
    const struct sockaddr_storage *src, int *ret_fd, bool *ret_pending)
{
	int fd, r;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd < 0)
		return -errno;
	if (src != NULL) {
		r = tcp_conn_bind_source(fd, src);
		if (r < 0) {
			(void)close(fd);
			return r;
		}
	}
	r = connect(fd, (const struct sockaddr *)ss, netaddr_socklen(ss));
	if (r < 0 && errno != EINPROGRESS) {
		r = -errno;
		(void)close(fd);
		return r;
	}
	*ret_fd = fd;
	*ret_pending = r < 0;
	return 0;
}

int
tcp_conn_connect(struct tcp *t, const struct sockaddr_storage *ss,
    struct ferry_tsession **ret)
{
	uint8_t key[NETADDR_HELO_MAX];
	struct ferry_tsession *c;
	struct timeval tv;
	size_t key_len;
	bool pending = false;
	int fd = -1, r;

	r = netaddr_encode(ss, key, sizeof(key), &key_len);
	if (r < 0)
		return r;
	c = map_get(t->outbound, key, key_len);
	if (c != NULL) {
		c->refs++;
		*ret = c;
		return 0;
	}
	r = tcp_conn_dial(ss, tcp_conn_source(t, ss->ss_family), &fd,
	    &pending);
	if (r < 0) {
		(*t->st.connect_failed)++;
		return r;
	}
	c = tcp_conn_new(t, fd, ss, false);
	if (c == NULL)
		return -ENOMEM;
	c->refs = 1;
	c->connecting = pending;
	if (map_put(t->outbound, c->key, c->key_len, c) < 0 ||
	    tcp_stream_welcome(c) < 0) {
		tcp_conn_free(c);
		return -ENOMEM;
	}
	(*t->st.connections_out)++;
	/* The write event reports the end of connect(), or its timeout, then
	 * flushes the welcome. */
	time_us_to_tv(t->set.connect_us, &tv);
	(void)event_add(c->ev_write, pending ? &tv : NULL);
	if (!pending)
		(void)event_add(c->ev_read, NULL);
	*ret = c;
	return 0;
}

int
tcp_conn_ref(struct ferry_tsession *c)
{
	if (c->dead || c->closing)
		return -ENOTCONN;
	c->refs++;
	return 0;
}

void
tcp_conn_unref(struct ferry_tsession *c)
{
	struct timeval tv;

	assert(c->refs > 0);
	if (--c->refs > 0)
		return;
	if (c->dead) {
		tcp_conn_reap(c); /* died before the core heard of it */
		return;
	}
	tcp_conn_forget(c);
	(void)event_del(c->ev_read);
	if (evbuffer_get_length(c->wq) == 0 && !c->connecting) {
		c->dead = true;
		tcp_conn_reap(c);
		return;
	}
	/* Let what the core queued before letting go reach the peer, within
	 * CONNECT_TIMEOUT of no progress. */
	c->closing = true;
	time_us_to_tv(c->t->set.connect_us, &tv);
	(void)event_add(c->ev_write, &tv);
}

void
tcp_conn_fail(struct ferry_tsession *c, int err)
{
	if (c->dead)
		return;
	c->dead = true;
	c->error = err;
	tcp_conn_forget(c);
	(void)event_del(c->ev_read);
	if (!c->closing && !c->connecting)
		(*c->t->st.lost)++;
	/* The report comes from the loop: fail() may run inside send() or
	 * receive(), where the core is not ready for session_gone. */
	event_active(c->ev_write, EV_WRITE, 1);
}

void
tcp_conn_reap(struct ferry_tsession *c)
{
	const struct ferry_core_api *core = c->t->ipt.core;

	if (!c->dead || c->busy > 0)
		return;
	if (c->refs > 0) {
		c->refs = 0; /* session_gone drops them all */
		c->busy++;
		core->session_gone(core->cls, c);
		c->busy--;
	}
	tcp_conn_free(c);
}

int
tcp_conn_init(struct tcp *t)
{
	TAILQ_INIT(&t->conns);
	t->outbound = map_new();
	t->sweep = event_new(t->ipt.core->base, -1, EV_PERSIST,
	    tcp_conn_sweep, t);
	if (t->outbound == NULL || t->sweep == NULL)
		return -ENOMEM;
	return 0;
}

void
tcp_conn_done(struct tcp *t)
{
	struct ferry_tsession *c;

	/* The list is empty unless tcp_conn_init succeeded. */
	while ((c = TAILQ_FIRST(&t->conns)) != NULL)
		tcp_conn_free(c);
	if (t->sweep != NULL)
		event_free(t->sweep);
	t->sweep = NULL;
	map_free(t->outbound);
	t->outbound = NULL;
}

void
tcp_conn_reconfigure(struct tcp *t)
{
	struct ferry_tsession *c;
	struct timeval tv;

	TAILQ_FOREACH(c, &t->conns, link)
		c->parser.mtu = t->ipt.cfg.mtu;
	if (event_pending(t->sweep, EV_TIMEOUT, NULL)) {
		tcp_conn_sweep_interval(t, &tv);
		(void)event_add(t->sweep, &tv);
	}
}
