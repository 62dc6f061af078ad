/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The receipt queue's worker thread (see rqueue.h), intermediary layer:
 * takes every operation queued and runs them in order in one transaction
 * (group commit: one sync of the WAL for all the pushes, acknowledgements
 * and reads that came together), then hands them back to the loop
 * through the eventfd. Takes read inside the transaction, so that they
 * answer only what is committed with them. It never logs: what the loop
 * must say travels back as a note. The block store's worker
 * (src/dht/store_worker.c) has the same shape.
 */
#include "intermediary/rqueue_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Waits for work and moves all of it into batch. False when the queue
 * is closing and nothing is left: rqueue_free() runs what was accepted
 * before it, pushes above all. */
static bool
rqueue_worker_take(struct rqueue *q, struct rqueue_op_list *batch)
{
	struct rqueue_shared *sh = &q->sh;
	bool go;

	(void)pthread_mutex_lock(&sh->mu);
	while (TAILQ_EMPTY(&sh->submitted) && !sh->stop)
		(void)pthread_cond_wait(&sh->cond, &sh->mu);
	go = !TAILQ_EMPTY(&sh->submitted);
	TAILQ_CONCAT(batch, &sh->submitted, link);
	(void)pthread_mutex_unlock(&sh->mu);
	return go;
}

static void
rqueue_worker_hand_back(struct rqueue *q, struct rqueue_op_list *batch)
{
	struct rqueue_shared *sh = &q->sh;
	uint64_t one = 1;

	(void)pthread_mutex_lock(&sh->mu);
	TAILQ_CONCAT(&sh->done, batch, link);
	(void)pthread_mutex_unlock(&sh->mu);
	/* Cannot fail short of a counter overflow, and then the loop has
	 * a wake-up pending anyway. */
	(void)!write(q->efd, &one, sizeof(one));
}

/* A note for the loop to log about a failed transaction; NULL if memory
 * is short, and then the operations' statuses still tell. */
static struct rqueue_op *
rqueue_worker_note(int r, const char *msg)
{
	struct rqueue_op *note = calloc(1, sizeof(*note));
	char text[512];

	if (note == NULL)
		return NULL;
	(void)snprintf(text, sizeof(text), "%s", msg);
	note->kind = RQUEUE_OP_NOTE;
	note->status = r;
	note->note = strdup(text);
	if (note->note == NULL) {
		free(note);
		return NULL;
	}
	return note;
}

/* Runs the batch in one transaction; on any failure none of it
 * happened, and each operation reports the failure. */
static void
rqueue_worker_run(struct rqueue *q, struct rqueue_op_list *batch)
{
	struct rqueue_op *op, *last = NULL, *note;
	int r;

	r = rqueue_db_begin(q->db);
	TAILQ_FOREACH(op, batch, link) {
		if (r < 0)
			break;
		r = rqueue_db_run(q->db, op);
		last = op;
	}
	if (r == 0)
		r = rqueue_db_commit(q->db);
	if (r >= 0) {
		if (last != NULL)
			last->committed = r > 0;
		return;
	}
	note = rqueue_worker_note(r, rqueue_db_errmsg(q->db));
	rqueue_db_rollback(q->db);
	TAILQ_FOREACH(op, batch, link) {
		op->status = r;
		op->refused = false;
		op->more = false;
		op->deleted = 0;
		op->n = op->kind == RQUEUE_OP_PUSH ? op->n : 0;
	}
	if (note != NULL)
		TAILQ_INSERT_HEAD(batch, note, link);
}

void *
rqueue_worker_main(void *arg)
{
	struct rqueue *q = arg;
	struct rqueue_op_list batch = TAILQ_HEAD_INITIALIZER(batch);

	while (rqueue_worker_take(q, &batch)) {
		rqueue_worker_run(q, &batch);
		rqueue_worker_hand_back(q, &batch);
	}
	rqueue_db_close(q->db);
	q->db = NULL;
	return NULL;
}
