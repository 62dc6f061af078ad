/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The recording relay for integration tests (see relay.h). */
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RELAY_MAX_FLOWS 64	       /* clients or connections */
#define RELAY_MAX_DGRAMS 65536	       /* datagrams kept towards the target */
#define RELAY_STREAM_MAX (64u << 20)   /* bytes kept per TCP direction */

struct relay_dgram {
	int flow;     /* index of the upstream socket that carried it */
	size_t len;
	uint8_t data[];
};

struct relay_flow {
	int down;		     /* UDP: -1 (shared listener); TCP: accepted */
	int up;			     /* socket towards the target */
	struct sockaddr_in client;   /* UDP: who sent to the listener */
};

struct relay {
	int type;
	int listener;
	struct sockaddr_in target;
	int stop_pipe[2];
	pthread_t thread;
	pthread_mutex_t lock; /* guards everything below */
	struct relay_flow flows[RELAY_MAX_FLOWS];
	int n_flows;
	struct relay_dgram *dgrams[2][RELAY_MAX_DGRAMS]; /* UDP, by dir */
	size_t n_dgrams[2];
	uint8_t *stream[2];   /* TCP, by direction */
	size_t stream_len[2];
	uint64_t bytes;
};

static void
relay_addr(struct sockaddr_in *sin, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

/* Records bytes; dir 0 is towards the target. Called with lock held. */
static void
relay_record(struct relay *r, int dir, int flow, const uint8_t *p, size_t n)
{
	uint8_t *s;

	r->bytes += n;
	if (r->type == SOCK_DGRAM) {
		struct relay_dgram *d;

		if (r->n_dgrams[dir] == RELAY_MAX_DGRAMS)
			return;
		d = malloc(sizeof(*d) + n);
		if (d == NULL)
			return;
		d->flow = flow;
		d->len = n;
		memcpy(d->data, p, n);
		r->dgrams[dir][r->n_dgrams[dir]++] = d;
		return;
	}
	if (r->stream_len[dir] + n > RELAY_STREAM_MAX)
		return;
	s = realloc(r->stream[dir], r->stream_len[dir] + n);
	if (s == NULL)
		return;
	r->stream[dir] = s;
	memcpy(s + r->stream_len[dir], p, n);
	r->stream_len[dir] += n;
}

static int
relay_udp_flow(struct relay *r, const struct sockaddr_in *from)
{
	for (int i = 0; i < r->n_flows; i++)
		if (r->flows[i].client.sin_port == from->sin_port &&
		    r->flows[i].client.sin_addr.s_addr ==
			from->sin_addr.s_addr)
			return i;
	if (r->n_flows == RELAY_MAX_FLOWS)
		return -1;
	r->flows[r->n_flows].down = -1;
	r->flows[r->n_flows].up = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	r->flows[r->n_flows].client = *from;
	if (r->flows[r->n_flows].up < 0 ||
	    connect(r->flows[r->n_flows].up, (struct sockaddr *)&r->target,
		sizeof(r->target)) < 0)
		return -1;
	return r->n_flows++;
}

static void
relay_udp_event(struct relay *r, int fd, int flow)
{
	uint8_t buf[65536];
	struct sockaddr_in from;
	socklen_t flen = sizeof(from);
	ssize_t n;

	if (flow < 0) {
		n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
		    (struct sockaddr *)&from, &flen);
		if (n < 0)
			return;
		pthread_mutex_lock(&r->lock);
		flow = relay_udp_flow(r, &from);
		if (flow >= 0) {
			relay_record(r, 0, flow, buf, (size_t)n);
			(void)send(r->flows[flow].up, buf, (size_t)n,
			    MSG_DONTWAIT);
		}
		pthread_mutex_unlock(&r->lock);
		return;
	}
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0)
		return;
	pthread_mutex_lock(&r->lock);
	relay_record(r, 1, flow, buf, (size_t)n);
	(void)sendto(r->listener, buf, (size_t)n, MSG_DONTWAIT,
	    (struct sockaddr *)&r->flows[flow].client,
	    sizeof(r->flows[flow].client));
	pthread_mutex_unlock(&r->lock);
}

static void
relay_tcp_close(struct relay *r, int flow)
{
	(void)close(r->flows[flow].down);
	(void)close(r->flows[flow].up);
	r->flows[flow] = r->flows[--r->n_flows];
}

/* Copies what is readable on one side of a TCP flow to the other. */
static void
relay_tcp_event(struct relay *r, int flow, bool from_down)
{
	struct relay_flow *f = &r->flows[flow];
	int in = from_down ? f->down : f->up, out = from_down ? f->up : f->down;
	uint8_t buf[65536];
	ssize_t n = recv(in, buf, sizeof(buf), MSG_DONTWAIT);
	size_t off = 0;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		relay_tcp_close(r, flow);
		return;
	}
	if (n < 0)
		return;
	relay_record(r, from_down ? 0 : 1, flow, buf, (size_t)n);
	/* Blocking write: a test relay may stall, it must not lose bytes. */
	while (off < (size_t)n) {
		ssize_t w = send(out, buf + off, (size_t)n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			relay_tcp_close(r, flow);
			return;
		}
		off += (size_t)w;
	}
}

static void
relay_tcp_accept(struct relay *r)
{
	int down = accept4(r->listener, NULL, NULL, SOCK_CLOEXEC), up;

	if (down < 0)
		return;
	up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->n_flows == RELAY_MAX_FLOWS || up < 0 ||
	    connect(up, (struct sockaddr *)&r->target, sizeof(r->target)) <
		0) {
		(void)close(down);
		if (up >= 0)
			(void)close(up);
		return;
	}
	r->flows[r->n_flows].down = down;
	r->flows[r->n_flows].up = up;
	r->n_flows++;
}

static void *
relay_main(void *arg)
{
	struct relay *r = arg;

	for (;;) {
		struct pollfd pfd[2 + 2 * RELAY_MAX_FLOWS];
		int owner[2 + 2 * RELAY_MAX_FLOWS];
		bool is_down[2 + 2 * RELAY_MAX_FLOWS];
		int n = 0;

		pthread_mutex_lock(&r->lock);
		pfd[n] = (struct pollfd){ r->stop_pipe[0], POLLIN, 0 };
		owner[n++] = -2;
		pfd[n] = (struct pollfd){ r->listener, POLLIN, 0 };
		owner[n++] = -1;
		for (int i = 0; i < r->n_flows; i++) {
			pfd[n] = (struct pollfd){ r->flows[i].up, POLLIN, 0 };
			is_down[n] = false;
			owner[n++] = i;
			if (r->type == SOCK_STREAM) {
				pfd[n] = (struct pollfd){ r->flows[i].down,
					POLLIN, 0 };
				is_down[n] = true;
				owner[n++] = i;
			}
		}
		pthread_mutex_unlock(&r->lock);
		if (poll(pfd, (nfds_t)n, -1) < 0 && errno != EINTR)
			return NULL;
		if (pfd[0].revents != 0)
			return NULL;
		for (int i = 1; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (r->type == SOCK_DGRAM) {
				relay_udp_event(r, pfd[i].fd, owner[i]);
				continue;
			}
			pthread_mutex_lock(&r->lock);
			if (owner[i] == -1)
				relay_tcp_accept(r);
			else if (owner[i] < r->n_flows &&
			    (is_down[i] ? r->flows[owner[i]].down
					: r->flows[owner[i]].up) == pfd[i].fd)
				relay_tcp_event(r, owner[i], is_down[i]);
			pthread_mutex_unlock(&r->lock);
			/* Flows may have moved; poll again with a fresh set. */
			break;
		}
	}
}

int
relay_new(int socktype, uint16_t listen_port, const struct sockaddr_in *target,
    struct relay **ret)
{
	struct relay *r = calloc(1, sizeof(*r));
	struct sockaddr_in sin;
	int one = 1;

	if (r == NULL)
		return -ENOMEM;
	r->type = socktype;
	r->stop_pipe[0] = r->stop_pipe[1] = -1;
	r->target = *target;
	relay_addr(&sin, listen_port);
	pthread_mutex_init(&r->lock, NULL);
	r->listener = socket(AF_INET, socktype | SOCK_CLOEXEC, 0);
	if (r->listener < 0 || pipe2(r->stop_pipe, O_CLOEXEC) < 0)
		goto fail;
	(void)setsockopt(r->listener, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one));
	if (bind(r->listener, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (socktype == SOCK_STREAM && listen(r->listener, 16) < 0))
		goto fail;
	if (pthread_create(&r->thread, NULL, relay_main, r) != 0)
		goto fail;
	*ret = r;
	return 0;
fail:
	if (r->listener >= 0)
		(void)close(r->listener);
	if (r->stop_pipe[0] >= 0) {
		(void)close(r->stop_pipe[0]);
		(void)close(r->stop_pipe[1]);
	}
	pthread_mutex_destroy(&r->lock);
	free(r);
	return -errno;
}

void
relay_free(struct relay *r)
{
	if (r == NULL)
		return;
	(void)write(r->stop_pipe[1], "x", 1);
	(void)pthread_join(r->thread, NULL);
	for (int i = 0; i < r->n_flows; i++) {
		if (r->flows[i].down >= 0)
			(void)close(r->flows[i].down);
		(void)close(r->flows[i].up);
	}
	for (int dir = 0; dir < 2; dir++)
		for (size_t i = 0; i < r->n_dgrams[dir]; i++)
			free(r->dgrams[dir][i]);
	free(r->stream[0]);
	free(r->stream[1]);
	(void)close(r->listener);
	(void)close(r->stop_pipe[0]);
	(void)close(r->stop_pipe[1]);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

uint64_t
relay_bytes(struct relay *r)
{
	uint64_t n;

	pthread_mutex_lock(&r->lock);
	n = r->bytes;
	pthread_mutex_unlock(&r->lock);
	return n;
}

bool
relay_saw(struct relay *r, const void *needle, size_t len)
{
	bool found = false;

	pthread_mutex_lock(&r->lock);
	for (int dir = 0; dir < 2; dir++)
		for (size_t i = 0; i < r->n_dgrams[dir] && !found; i++)
			found = memmem(r->dgrams[dir][i]->data,
				    r->dgrams[dir][i]->len, needle,
				    len) != NULL;
	for (int dir = 0; dir < 2 && !found; dir++)
		found = r->stream[dir] != NULL &&
		    memmem(r->stream[dir], r->stream_len[dir], needle, len) !=
			NULL;
	pthread_mutex_unlock(&r->lock);
	return found;
}

size_t
relay_datagrams(struct relay *r, int dir)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->n_dgrams[dir];
	pthread_mutex_unlock(&r->lock);
	return n;
}

int
relay_replay(struct relay *r, int dir, size_t i)
{
	const struct relay_dgram *d;
	int ret = -ENOENT;
	ssize_t n;

	pthread_mutex_lock(&r->lock);
	if (i >= r->n_dgrams[dir] || r->dgrams[dir][i]->flow >= r->n_flows)
		goto out;
	d = r->dgrams[dir][i];
	if (dir == RELAY_TO_TARGET)
		n = send(r->flows[d->flow].up, d->data, d->len, MSG_DONTWAIT);
	else
		n = sendto(r->listener, d->data, d->len, MSG_DONTWAIT,
		    (struct sockaddr *)&r->flows[d->flow].client,
		    sizeof(r->flows[d->flow].client));
	ret = n < 0 ? -errno : 0;
out:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

int
relay_datagram(struct relay *r, int dir, size_t i, void *buf, size_t size)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&r->lock);
	if (i < r->n_dgrams[dir]) {
		const struct relay_dgram *d = r->dgrams[dir][i];

		ret = d->len > size ? -ENOSPC : (int)d->len;
		if (ret > 0)
			memcpy(buf, d->data, d->len);
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}
