/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A DHT peer speaking the wire, for hostile tests (see dhtpeer.h). */
#include "dhtpeer.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "core/identity.h"
#include "wirelink.h"
#include "wirepeer.h"

#define DHTPEER_LINK_MS      10000
#define DHTPEER_POLL_MS      20
#define DHTPEER_KEEPALIVE_MS 5000 /* well inside LINK_TIMEOUT's 60 s */
#define DHTPEER_RWND         (4u << 20)
#define DHTPEER_MTU          1452 /* the UDP transport's default */
#define DHTPEER_INNER_MAX    (DHTPEER_MTU - FERRY_ENC_OVERHEAD)

struct dhtpeer_link {
	struct dhtpeer *p;
	unsigned i;         /* its number */
	struct wirepeer *w; /* a socket of its own, the peer's identity */
	struct wirelink *l;
	struct dhtkey id; /* the daemon's */
};

struct dhtpeer {
	uint64_t seed;
	struct wirepeer *w0; /* the first link's socket; the identity */
	bool w0_used;
	struct dhtpeer_link links[DHTPEER_LINKS_MAX];
	unsigned n;
	pthread_mutex_t lock; /* recursive: fn may send */
	pthread_t thread;
	bool running;
	atomic_bool stop;
	dhtpeer_req_fn *fn;
	void *cls;
	uint64_t puts, gets, finds; /* requests received, under lock */
};

int
dhtpeer_new(uint64_t seed, struct dhtpeer **ret)
{
	struct dhtpeer *p = calloc(1, sizeof(*p));
	pthread_mutexattr_t attr;
	int r;

	if (p == NULL)
		return -ENOMEM;
	p->seed = seed;
	r = wirepeer_new(seed, &p->w0);
	if (r < 0) {
		free(p);
		return r;
	}
	(void)pthread_mutexattr_init(&attr);
	(void)pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	(void)pthread_mutex_init(&p->lock, &attr);
	(void)pthread_mutexattr_destroy(&attr);
	*ret = p;
	return 0;
}

void
dhtpeer_free(struct dhtpeer *p)
{
	if (p == NULL)
		return;
	if (p->running) {
		atomic_store(&p->stop, true);
		(void)pthread_join(p->thread, NULL);
	}
	for (unsigned i = 0; i < p->n; i++) {
		wirelink_free(p->links[i].l);
		if (p->links[i].w != p->w0)
			wirepeer_free(p->links[i].w);
	}
	wirepeer_free(p->w0);
	(void)pthread_mutex_destroy(&p->lock);
	free(p);
}

const struct identity *
dhtpeer_ident(const struct dhtpeer *p)
{
	return p->w0->ident;
}

/* One inner message from a daemon: DHT requests go to the test. */
static void
dhtpeer_on_inner(void *cls, uint16_t type, const uint8_t *msg, size_t size)
{
	struct dhtpeer_link *k = cls;
	struct dhtpeer *p = k->p;
	struct dhtmsg_req req;

	if (!dhtmsg_is_request(type) ||
	    dhtmsg_req_decode(type, msg + FERRY_HDR_SIZE, size - FERRY_HDR_SIZE,
	        &req) < 0)
		return;
	if (type == FERRY_MSG_DHT_PUT)
		p->puts++;
	else if (type == FERRY_MSG_DHT_GET)
		p->gets++;
	else
		p->finds++;
	if (p->fn != NULL)
		p->fn(p->cls, p, k->i, &req);
}

int
dhtpeer_link(struct dhtpeer *p, struct harness_daemon *d)
{
	struct dhtpeer_link *k;
	int r;

	if (p->n == DHTPEER_LINKS_MAX || p->running)
		return -ENOSPC;
	k = &p->links[p->n];
	memset(k, 0, sizeof(*k));
	k->p = p;
	k->i = p->n;
	dhtkey_from_peer(&d->id, &k->id);
	if (!p->w0_used) {
		k->w = p->w0;
		p->w0_used = true;
	} else if ((r = wirepeer_new(p->seed, &k->w)) < 0) {
		return r;
	}
	r = wirelink_new(k->w, &d->id, &d->addr, &k->l);
	if (r == 0) {
		wirelink_set_acks(k->l, DHTPEER_RWND);
		wirelink_on_inner(k->l, dhtpeer_on_inner, k);
		r = wirelink_handshake(k->l, DHTPEER_LINK_MS);
	}
	/* Counted even on failure, so that dhtpeer_free frees it. */
	p->n++;
	return r;
}

static void *
dhtpeer_run(void *arg)
{
	struct dhtpeer *p = arg;
	struct pollfd pfd[DHTPEER_LINKS_MAX];
	uint64_t alive = harness_now_ms();

	while (!atomic_load(&p->stop)) {
		for (unsigned i = 0; i < p->n; i++)
			pfd[i] = (struct pollfd){ .fd = p->links[i].w->fd,
				.events = POLLIN };
		(void)poll(pfd, p->n, DHTPEER_POLL_MS);
		(void)pthread_mutex_lock(&p->lock);
		for (unsigned i = 0; i < p->n; i++)
			if (pfd[i].revents & POLLIN)
				(void)wirelink_pump(p->links[i].l, 0);
		if (harness_now_ms() - alive >= DHTPEER_KEEPALIVE_MS) {
			alive = harness_now_ms();
			for (unsigned i = 0; i < p->n; i++)
				(void)wirelink_send_msg(p->links[i].l,
				    FERRY_MSG_KEEPALIVE, NULL, 0);
		}
		(void)pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

int
dhtpeer_start(struct dhtpeer *p, dhtpeer_req_fn *fn, void *cls)
{
	int r;

	p->fn = fn;
	p->cls = cls;
	r = pthread_create(&p->thread, NULL, dhtpeer_run, p);
	if (r != 0)
		return -r;
	p->running = true;
	return 0;
}

int
dhtpeer_link_of(const struct dhtpeer *p, const struct dhtkey *key)
{
	for (unsigned i = 0; i < p->n; i++)
		if (dhtkey_equal(&p->links[i].id, key))
			return (int)i;
	return -1;
}

int
dhtpeer_send_inner(struct dhtpeer *p, unsigned i, const void *inner, size_t len)
{
	uint8_t frame[DHTPEER_MTU];
	int r;

	if (i >= p->n || len > DHTPEER_INNER_MAX)
		return -EINVAL;
	(void)pthread_mutex_lock(&p->lock);
	r = wirelink_seal(p->links[i].l, inner, len, frame, sizeof(frame),
	    NULL);
	if (r > 0)
		r = wirelink_send_raw(p->links[i].l, frame, (size_t)r);
	(void)pthread_mutex_unlock(&p->lock);
	return r;
}

int
dhtpeer_send(struct dhtpeer *p, unsigned i, uint16_t type, const void *body,
    size_t len)
{
	uint8_t inner[DHTPEER_INNER_MAX];
	int n = wirelink_msg(inner, sizeof(inner), type, body, len);

	if (n < 0)
		return -EMSGSIZE;
	return dhtpeer_send_inner(p, i, inner, (size_t)n);
}

int
dhtpeer_answer(struct dhtpeer *p, unsigned i, const struct dhtmsg_req *req,
    struct dhtmsg_ans *a)
{
	struct dhtkey self;

	dhtkey_from_peer(&dhtpeer_ident(p)->id, &self);
	return dhtpeer_answer_as(p, i, req, a, &self);
}

int
dhtpeer_answer_as(struct dhtpeer *p, unsigned i, const struct dhtmsg_req *req,
    struct dhtmsg_ans *a, const struct dhtkey *responder)
{
	int to = dhtpeer_link_of(p, &req->requester);
	struct buf out;
	int r;

	a->req_id = req->req_id;
	a->key = req->key;
	a->requester = req->requester;
	a->responder = *responder;
	a->hops = req->hops;
	a->flags = to >= 0 ? 0 : DHTMSG_F_ROUTED;
	a->hops_left = to >= 0 ? 0 : DHTMSG_HOPS_MAX / 2;
	buf_init(&out);
	r = dhtmsg_ans_encode(a, &out);
	if (r == 0)
		r = dhtpeer_send(p, to >= 0 ? (unsigned)to : i, a->type,
		    buf_head(&out), buf_size(&out));
	buf_done(&out);
	return r;
}

uint64_t
dhtpeer_requests(struct dhtpeer *p, uint16_t type)
{
	uint64_t n;

	(void)pthread_mutex_lock(&p->lock);
	n = type == FERRY_MSG_DHT_PUT   ? p->puts
	    : type == FERRY_MSG_DHT_GET ? p->gets
	                                : p->finds;
	(void)pthread_mutex_unlock(&p->lock);
	return n;
}
