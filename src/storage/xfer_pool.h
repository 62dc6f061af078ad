/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The transfer engine's worker threads, storage layer (issue 13): file
 * reads and writes, sealing and opening run here, never on the event
 * loop. Jobs are taken in the order they were queued (a put relies on
 * it: see xfer_put.c) and come back to the loop through an eventfd, in
 * the order they finished.
 */
#ifndef FERRY_STORAGE_XFER_POOL_H
#define FERRY_STORAGE_XFER_POOL_H

#include <stddef.h>
#include <sys/queue.h>

struct event_base;
struct xfer_pool;
struct xfer_job;

/* run: on a worker thread, with only the job's own data. done: on the
 * loop afterwards, always called exactly once (also at xfer_pool_free,
 * with the job never run if it had not started: job->ran says). */
typedef void xfer_job_fn(struct xfer_job *job);

/* Embedded by the caller in the object the job works on. */
struct xfer_job {
	TAILQ_ENTRY(xfer_job) link; /* the pool's queues */
	xfer_job_fn *run;           /* worker thread */
	xfer_job_fn *done;          /* event loop */
	int status;                 /* set by run, read by done */
	int ran;                    /* 1 once run returned */
};

/* Starts n (1..64) threads whose results come back on base. 0, -EINVAL,
 * -ENOMEM or pthread_create's error. */
int xfer_pool_new(struct event_base *base, unsigned n, struct xfer_pool **ret);
/* Queues job (run and done set). Never fails: the job is the caller's. */
void xfer_pool_submit(struct xfer_pool *p, struct xfer_job *job);
/* Jobs queued or running. */
size_t xfer_pool_busy(const struct xfer_pool *p);
/* Lets running jobs finish, joins the threads, then calls done for every
 * job (run or not). NULL is allowed. */
void xfer_pool_free(struct xfer_pool *p);

#endif /* FERRY_STORAGE_XFER_POOL_H */
