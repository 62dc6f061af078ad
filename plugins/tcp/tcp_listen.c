/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Listening sockets of the TCP transport (see tcp_int.h): the paper's
 * startTransportServer/stopTransportServer (seed 004, II-B). Accepted
 * connections are bounded by MAX_CONNECTIONS and filtered by BLACKLIST;
 * when the process runs out of descriptors, accepting pauses for a moment
 * instead of spinning on a listener that stays readable.
 */
#define LOG_TAG "tcp"
#include "tcp_int.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/time.h"

#define TCP_BACKLOG		128
#define TCP_PAUSE_US		(100 * USEC_PER_MSEC)

static void
tcp_listen_enable(struct tcp *t, bool on)
{
	for (size_t i = 0; i < t->n_listeners; i++) {
		if (on)
			(void)event_add(t->listeners[i].ev, NULL);
		else
			(void)event_del(t->listeners[i].ev);
	}
}

static void
tcp_listen_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	tcp_listen_enable(arg, true);
}

/* Out of descriptors or memory: the pending connection stays in the
 * backlog and the listener stays readable, so stop looking for a while. */
static void
tcp_listen_pause(struct tcp *t, int err)
{
	struct timeval tv;

	plog_peer(&t->ipt.log, "accept: %s; pausing for %llu ms",
	    strerror(-err), (unsigned long long)(TCP_PAUSE_US / 1000));
	tcp_listen_enable(t, false);
	time_us_to_tv(TCP_PAUSE_US, &tv);
	(void)event_add(t->resume, &tv);
}

/* Decides about one accepted socket; takes ownership of fd. */
static void
tcp_listen_adopt(struct tcp *t, int fd, struct sockaddr_storage *peer)
{
	char addr[NETADDR_STRLEN];

	netaddr_unmap(peer);
	if (!ipt_allowed(&t->ipt, peer) ||
	    t->n_inbound >= t->set.max_conns) {
		(*t->st.refused)++;
		(void)netaddr_format(peer, addr, sizeof(addr));
		plog_peer(&t->ipt.log, "%s: connection refused (%s)", addr,
		    t->n_inbound >= t->set.max_conns ?
		    "MAX_CONNECTIONS reached" : "BLACKLIST");
		(void)close(fd);
		return;
	}
	if (tcp_conn_accept(t, fd, peer) < 0)
		plog(&t->ipt.log, FERRY_LOG_WARNING,
		    "out of memory for an inbound connection");
}

static void
tcp_listen_accept(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_listener *l = arg;
	struct sockaddr_storage peer;
	socklen_t len;
	int cfd;

	(void)what;
	for (int i = 0; i < TCP_ACCEPT_BUDGET; i++) {
		len = sizeof(peer);
		cfd = accept4(fd, (struct sockaddr *)&peer, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd >= 0) {
			tcp_listen_adopt(l->t, cfd, &peer);
			continue;
		}
		switch (errno) {
		case EINTR:
		case ECONNABORTED: /* gone before we got to it */
		case EPROTO:
			continue;
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
			tcp_listen_pause(l->t, -errno);
			return;
		default: /* EAGAIN: the backlog is empty */
			return;
		}
	}
}

int
tcp_listen_start(struct tcp *t)
{
	struct event_base *base = t->ipt.core->base;
	char name[NETADDR_STRLEN];
	int r;

	if (t->n_listeners > 0)
		return 0;
	t->resume = evtimer_new(base, tcp_listen_resume, t);
	if (t->resume == NULL)
		return plog_errno(&t->ipt.log, FERRY_LOG_ERR, -ENOMEM,
		    "listener timer");
	for (size_t i = 0; i < t->ipt.cfg.n_bind; i++) {
		const struct sockaddr_storage *ss = &t->ipt.cfg.bind[i];
		struct tcp_listener *l = &t->listeners[t->n_listeners];

		(void)netaddr_format(ss, name, sizeof(name));
		r = ipt_socket_bind(ss, SOCK_STREAM, true, &l->fd, &l->name);
		if (r == -EAFNOSUPPORT) {
			plog(&t->ipt.log, FERRY_LOG_NOTICE,
			    "%s: address family not supported here, skipped",
			    name);
			continue;
		}
		if (r < 0) {
			(void)plog_errno(&t->ipt.log, FERRY_LOG_ERR, r,
			    "cannot bind TCP socket to %s", name);
			goto fail;
		}
		l->t = t;
		t->n_listeners++;
		if (listen(l->fd, TCP_BACKLOG) < 0) {
			r = plog_errno(&t->ipt.log, FERRY_LOG_ERR, -errno,
			    "cannot listen on %s", name);
			goto fail;
		}
		l->ev = event_new(base, l->fd, EV_READ | EV_PERSIST,
		    tcp_listen_accept, l);
		if (l->ev == NULL) {
			r = plog_errno(&t->ipt.log, FERRY_LOG_ERR, -ENOMEM,
			    "listener event");
			goto fail;
		}
	}
	if (t->n_listeners == 0) {
		r = plog_errno(&t->ipt.log, FERRY_LOG_ERR, -EAFNOSUPPORT,
		    "no TCP socket could be opened");
		goto fail;
	}
	tcp_listen_enable(t, true);
	return 0;
fail:
	tcp_listen_stop(t);
	return r;
}

void
tcp_listen_stop(struct tcp *t)
{
	if (t->resume != NULL)
		event_free(t->resume);
	t->resume = NULL;
	for (size_t i = 0; i < t->n_listeners; i++) {
		if (t->listeners[i].ev != NULL)
			event_free(t->listeners[i].ev);
		(void)close(t->listeners[i].fd);
	}
	memset(t->listeners, 0, sizeof(t->listeners));
	t->n_listeners = 0;
}
