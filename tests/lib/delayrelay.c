/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The delaying TCP relay (see delayrelay.h). */
#include "delayrelay.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DR_MAX_FLOWS 64
#define DR_MSS       1448u
#define DR_INIT_WIN  (10u * DR_MSS)
#define DR_MAX_WIN   (4u << 20)
#define DR_READ_MAX  65536u

/* Bytes taken from one side at once. They are written to the other side
 * when due (taken + delay), and count as in flight until acked (one
 * delay after they were written: the emulated ACK's way back). */
struct dr_seg {
	struct dr_seg *next;
	uint64_t due_us;
	uint64_t acked_us; /* 0 until written */
	size_t len, off;
	uint8_t data[];
};

/* One direction of a connection. */
struct dr_dir {
	int in, out;
	struct dr_seg *head, *tail; /* taken, oldest first */
	struct dr_seg *unwritten;   /* first not wholly written, or NULL */
	size_t flight;              /* bytes in head..tail */
	size_t win;                 /* the emulated sender's window */
	uint64_t last_us;           /* last taken or acked */
	uint64_t hold_until_us;     /* nothing is due before (handshake) */
	bool eof, shut;
	bool blocked; /* out said EAGAIN: wait for POLLOUT, not the clock */
};

struct dr_flow {
	int fd[2];            /* 0: the client's (accepted), 1: the target's */
	struct dr_dir dir[2]; /* 0: client to target, 1: back */
};

struct delayrelay {
	int listener;
	uint16_t port;
	struct sockaddr_in target;
	uint64_t delay_us;
	int stop_pipe[2];
	pthread_t thread;
	struct dr_flow *flows[DR_MAX_FLOWS];
	unsigned n_flows;
	pthread_mutex_t lock; /* guards accepted */
	unsigned accepted;
};

static uint64_t
dr_now_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void
dr_dir_init(struct dr_dir *d, int in, int out, uint64_t hold_until_us)
{
	memset(d, 0, sizeof(*d));
	d->in = in;
	d->out = out;
	d->win = DR_INIT_WIN;
	d->hold_until_us = hold_until_us;
}

static void
dr_flow_free(struct dr_flow *f)
{
	for (int i = 0; i < 2; i++) {
		struct dr_seg *s = f->dir[i].head, *next;

		for (; s != NULL; s = next) {
			next = s->next;
			free(s);
		}
		(void)close(f->fd[i]);
	}
	free(f);
}

/* Acknowledges what the emulated far end has acknowledged by now: the
 * window grows by it (slow start). */
static void
dr_dir_ack(struct dr_dir *d, uint64_t now)
{
	while (d->head != NULL && d->head->acked_us != 0 &&
	    d->head->acked_us <= now) {
		struct dr_seg *s = d->head;

		d->head = s->next;
		if (d->head == NULL)
			d->tail = NULL;
		d->flight -= s->len;
		d->win += s->len;
		if (d->win > DR_MAX_WIN)
			d->win = DR_MAX_WIN;
		d->last_us = s->acked_us;
		free(s);
	}
}

/* Takes what the window allows from d->in. false when the flow is to be
 * closed (an error). */
static bool
dr_dir_take(struct delayrelay *r, struct dr_dir *d, uint64_t now)
{
	struct dr_seg *s;
	size_t room;
	ssize_t n;

	/* Idle for a round trip with nothing in flight: the window
	 * restarts, as a kernel's does. */
	if (d->flight == 0 && d->last_us != 0 &&
	    now - d->last_us > 2 * r->delay_us && d->win > DR_INIT_WIN)
		d->win = DR_INIT_WIN;
	room = d->win - d->flight;
	if (room > DR_READ_MAX)
		room = DR_READ_MAX;
	s = malloc(sizeof(*s) + room);
	if (s == NULL)
		return false;
	n = recv(d->in, s->data, room, MSG_DONTWAIT);
	if (n < 0) {
		free(s);
		return errno == EAGAIN || errno == EINTR;
	}
	if (n == 0) {
		free(s);
		d->eof = true;
		return true;
	}
	s->next = NULL;
	s->len = (size_t)n;
	s->off = 0;
	s->acked_us = 0;
	s->due_us =
	    (now > d->hold_until_us ? now : d->hold_until_us) + r->delay_us;
	if (d->tail != NULL)
		d->tail->next = s;
	else
		d->head = s;
	d->tail = s;
	if (d->unwritten == NULL)
		d->unwritten = s;
	d->flight += s->len;
	d->last_us = now;
	return true;
}

/* Writes what is due to d->out. false when the flow is to be closed. */
static bool
dr_dir_give(struct delayrelay *r, struct dr_dir *d, uint64_t now)
{
	while (d->unwritten != NULL && d->unwritten->due_us <= now) {
		struct dr_seg *s = d->unwritten;
		ssize_t w = send(d->out, s->data + s->off, s->len - s->off,
		    MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EAGAIN)
			d->blocked = true;
		if (w < 0)
			return errno == EAGAIN || errno == EINTR;
		s->off += (size_t)w;
		if (s->off < s->len) {
			d->blocked = true;
			return true;
		}
		s->acked_us = now + r->delay_us;
		d->unwritten = s->next;
	}
	if (d->eof && d->unwritten == NULL && !d->shut) {
		(void)shutdown(d->out, SHUT_WR);
		d->shut = true;
	}
	return true;
}

static void
dr_accept(struct delayrelay *r, uint64_t now)
{
	int down = accept4(r->listener, NULL, NULL, SOCK_CLOEXEC), up;
	struct dr_flow *f;

	if (down < 0)
		return;
	/* Counted before the target sees a connection, so that whoever
	 * accepted there reads the count right. */
	pthread_mutex_lock(&r->lock);
	r->accepted++;
	pthread_mutex_unlock(&r->lock);
	up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	f = calloc(1, sizeof(*f));
	if (f == NULL || up < 0 || r->n_flows == DR_MAX_FLOWS ||
	    connect(up, (struct sockaddr *)&r->target, sizeof(r->target)) < 0) {
		(void)close(down);
		if (up >= 0)
			(void)close(up);
		free(f);
		return;
	}
	/* Its own loopback legs add nothing to the path it plays: what it
	 * writes goes at once, not held by Nagle for an ACK that the far
	 * side may delay 40 ms. */
	(void)setsockopt(down, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 },
	    sizeof(int));
	(void)setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 },
	    sizeof(int));
	f->fd[0] = down;
	f->fd[1] = up;
	/* The client's connect() returned at once over loopback; on the
	 * emulated path its SYN and the SYN-ACK take a round trip first. */
	dr_dir_init(&f->dir[0], down, up, now + 2 * r->delay_us);
	dr_dir_init(&f->dir[1], up, down, 0);
	r->flows[r->n_flows++] = f;
}

/* When something of d is next due: a write or an ACK that opens the
 * window. UINT64_MAX for nothing. */
static uint64_t
dr_dir_next(const struct dr_dir *d)
{
	uint64_t t = UINT64_MAX;

	if (d->unwritten != NULL && !d->blocked)
		t = d->unwritten->due_us;
	if (d->head != NULL && d->head->acked_us != 0 && d->head->acked_us < t)
		t = d->head->acked_us;
	return t;
}

static void *
dr_main(void *arg)
{
	struct delayrelay *r = arg;

	for (;;) {
		struct pollfd pfd[2 + 2 * DR_MAX_FLOWS];
		uint64_t now = dr_now_us(), next = UINT64_MAX;
		unsigned polled;
		int timeout = -1;
		nfds_t n = 0;

		pfd[n++] = (struct pollfd){ r->stop_pipe[0], POLLIN, 0 };
		pfd[n++] = (struct pollfd){ r->listener, POLLIN, 0 };
		/* One entry per socket: fd[k] is what dir[k] reads from and
		 * what dir[1 - k] writes to. Nothing asked: the entry is
		 * ignored, so that a hang-up not yet wanted does not spin. */
		for (unsigned i = 0; i < r->n_flows; i++)
			for (int k = 0; k < 2; k++) {
				struct dr_flow *f = r->flows[i];
				struct dr_dir *d = &f->dir[k];
				short ev = 0;
				uint64_t t = dr_dir_next(d);

				if (!d->eof && d->flight < d->win)
					ev |= POLLIN;
				if (f->dir[1 - k].blocked)
					ev |= POLLOUT;
				pfd[n++] =
				    (struct pollfd){ ev != 0 ? f->fd[k] : -1,
					    ev, 0 };
				if (t < next)
					next = t;
			}
		if (next != UINT64_MAX)
			timeout =
			    next <= now ? 0 : (int)((next - now + 999) / 1000);
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
			return NULL;
		if (pfd[0].revents != 0)
			return NULL;
		now = dr_now_us();
		/* A flow accepted now has no entries in pfd: it waits for the
		 * next round. */
		polled = r->n_flows;
		if (pfd[1].revents & POLLIN)
			dr_accept(r, now);
		for (unsigned i = 0; i < polled;) {
			struct dr_flow *f = r->flows[i];
			bool ok = true, done;

			for (int k = 0; k < 2 && ok; k++) {
				struct dr_dir *d = &f->dir[k];
				short rev =
				    pfd[2 + 2 * i + (unsigned)k].revents;
				short wrev =
				    pfd[2 + 2 * i + (unsigned)(1 - k)].revents;

				dr_dir_ack(d, now);
				if (wrev & (POLLOUT | POLLERR | POLLHUP))
					d->blocked = false;
				if ((rev & (POLLIN | POLLHUP | POLLERR)) &&
				    !d->eof && d->flight < d->win)
					ok = dr_dir_take(r, d, now);
				if (ok && !d->blocked)
					ok = dr_dir_give(r, d, now);
			}
			done = f->dir[0].shut && f->dir[1].shut &&
			    f->dir[0].head == NULL && f->dir[1].head == NULL;
			if (!ok || done) {
				dr_flow_free(f);
				r->flows[i] = r->flows[--r->n_flows];
				/* pfd no longer matches the flows past i. */
				break;
			}
			i++;
		}
	}
}

int
delayrelay_new(const struct sockaddr_in *target, uint64_t one_way_us,
    struct delayrelay **ret)
{
	struct delayrelay *r = calloc(1, sizeof(*r));
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int err;

	if (r == NULL)
		return -ENOMEM;
	r->target = *target;
	r->delay_us = one_way_us;
	r->stop_pipe[0] = r->stop_pipe[1] = -1;
	pthread_mutex_init(&r->lock, NULL);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->listener < 0 ||
	    bind(r->listener, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(r->listener, 64) < 0 ||
	    getsockname(r->listener, (struct sockaddr *)&sin, &len) < 0 ||
	    pipe2(r->stop_pipe, O_CLOEXEC) < 0) {
		err = -errno;
		delayrelay_free(r);
		return err;
	}
	r->port = ntohs(sin.sin_port);
	err = pthread_create(&r->thread, NULL, dr_main, r);
	if (err != 0) {
		(void)close(r->stop_pipe[1]);
		r->stop_pipe[1] = -1;
		delayrelay_free(r);
		return -err;
	}
	*ret = r;
	return 0;
}

uint16_t
delayrelay_port(const struct delayrelay *r)
{
	return r->port;
}

unsigned
delayrelay_accepted(struct delayrelay *r)
{
	unsigned n;

	pthread_mutex_lock(&r->lock);
	n = r->accepted;
	pthread_mutex_unlock(&r->lock);
	return n;
}

void
delayrelay_free(struct delayrelay *r)
{
	if (r == NULL)
		return;
	if (r->stop_pipe[1] >= 0) {
		/* The thread runs once the pipe exists. */
		(void)write(r->stop_pipe[1], "x", 1);
		pthread_join(r->thread, NULL);
		(void)close(r->stop_pipe[1]);
	}
	if (r->stop_pipe[0] >= 0)
		(void)close(r->stop_pipe[0]);
	for (unsigned i = 0; i < r->n_flows; i++)
		dr_flow_free(r->flows[i]);
	if (r->listener >= 0)
		(void)close(r->listener);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
