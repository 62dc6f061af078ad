/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The transfer engine's worker threads (see xfer_pool.h), storage layer:
 * one queue under a mutex, a condition for the workers, and an eventfd
 * that wakes the loop when jobs are done, as the block store's worker
 * does (src/dht/store_worker.c).
 */
#include "storage/xfer_pool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <event2/event.h>

#define XFER_POOL_MAX 64

TAILQ_HEAD(xfer_job_list, xfer_job);

struct xfer_pool {
	struct event *ev_done; /* efd readable */
	int efd;
	pthread_mutex_t mu;
	pthread_cond_t cond;         /* queued grew, or stop */
	struct xfer_job_list queued; /* not yet taken */
	struct xfer_job_list done;   /* finished, for the loop */
	bool stop;
	size_t busy; /* queued or running; the loop's */
	pthread_t threads[XFER_POOL_MAX];
	unsigned n_threads;
};

static void *
xfer_pool_main(void *arg)
{
	struct xfer_pool *p = arg;
	struct xfer_job *job;
	uint64_t one = 1;

	for (;;) {
		(void)pthread_mutex_lock(&p->mu);
		while (TAILQ_EMPTY(&p->queued) && !p->stop)
			(void)pthread_cond_wait(&p->cond, &p->mu);
		if (p->stop) {
			(void)pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		job = TAILQ_FIRST(&p->queued);
		TAILQ_REMOVE(&p->queued, job, link);
		(void)pthread_mutex_unlock(&p->mu);
		job->run(job);
		(void)pthread_mutex_lock(&p->mu);
		job->ran = 1;
		TAILQ_INSERT_TAIL(&p->done, job, link);
		(void)pthread_mutex_unlock(&p->mu);
		(void)!write(p->efd, &one, sizeof(one));
	}
}

/* Calls done for every finished job, outside the lock: a done may
 * submit more. */
static void
xfer_pool_drain(struct xfer_pool *p)
{
	struct xfer_job_list list = TAILQ_HEAD_INITIALIZER(list);
	struct xfer_job *job;

	(void)pthread_mutex_lock(&p->mu);
	TAILQ_CONCAT(&list, &p->done, link);
	(void)pthread_mutex_unlock(&p->mu);
	while ((job = TAILQ_FIRST(&list)) != NULL) {
		TAILQ_REMOVE(&list, job, link);
		p->busy--;
		job->done(job);
	}
}

static void
xfer_pool_on_done(evutil_socket_t fd, short what, void *arg)
{
	uint64_t n;

	(void)what;
	(void)!read(fd, &n, sizeof(n));
	xfer_pool_drain(arg);
}

int
xfer_pool_new(struct event_base *base, unsigned n, struct xfer_pool **ret)
{
	struct xfer_pool *p;
	sigset_t all, old;
	int r = 0;

	if (n == 0 || n > XFER_POOL_MAX)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	TAILQ_INIT(&p->queued);
	TAILQ_INIT(&p->done);
	(void)pthread_mutex_init(&p->mu, NULL);
	(void)pthread_cond_init(&p->cond, NULL);
	p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->efd < 0) {
		r = -errno;
		goto fail;
	}
	p->ev_done =
	    event_new(base, p->efd, EV_READ | EV_PERSIST, xfer_pool_on_done, p);
	if (p->ev_done == NULL || event_add(p->ev_done, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	/* Signals stay with the loop's thread. */
	(void)sigfillset(&all);
	(void)pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; p->n_threads < n && r == 0; p->n_threads++)
		r = -pthread_create(&p->threads[p->n_threads], NULL,
		    xfer_pool_main, p);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		p->n_threads--;
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	xfer_pool_free(p);
	return r;
}

void
xfer_pool_submit(struct xfer_pool *p, struct xfer_job *job)
{
	job->ran = 0;
	job->status = 0;
	p->busy++;
	(void)pthread_mutex_lock(&p->mu);
	TAILQ_INSERT_TAIL(&p->queued, job, link);
	(void)pthread_cond_signal(&p->cond);
	(void)pthread_mutex_unlock(&p->mu);
}

size_t
xfer_pool_busy(const struct xfer_pool *p)
{
	return p->busy;
}

void
xfer_pool_free(struct xfer_pool *p)
{
	struct xfer_job *job;

	if (p == NULL)
		return;
	(void)pthread_mutex_lock(&p->mu);
	p->stop = true;
	(void)pthread_cond_broadcast(&p->cond);
	(void)pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->n_threads; i++)
		(void)pthread_join(p->threads[i], NULL);
	/* The threads are gone: both queues are this thread's. */
	xfer_pool_drain(p);
	while ((job = TAILQ_FIRST(&p->queued)) != NULL) {
		TAILQ_REMOVE(&p->queued, job, link);
		p->busy--;
		job->status = -ECANCELED;
		job->done(job);
	}
	if (p->ev_done != NULL)
		event_free(p->ev_done);
	if (p->efd >= 0)
		(void)close(p->efd);
	(void)pthread_cond_destroy(&p->cond);
	(void)pthread_mutex_destroy(&p->mu);
	free(p);
}
