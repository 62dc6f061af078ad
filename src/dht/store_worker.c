/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The block store's worker thread (see store.h), dht layer: takes every
 * operation queued, runs the writes among them in one transaction (group
 * commit: one fsync of the WAL for all), then the reads, and hands them
 * back to the caller's loop through the eventfd. It never logs: what the
 * loop must say travels back as a note.
 */
#include "dht/store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Waits for work and moves up to batch_max operations into batch. False
 * when the store is closing: what is still queued is left for
 * store_free() to cancel. */
static bool
store_worker_take(struct store *st, struct store_op_list *batch)
{
	struct store_queue *q = &st->q;
	size_t n = 0;

	(void)pthread_mutex_lock(&q->mu);
	while (TAILQ_EMPTY(&q->submitted) && !q->stop)
		(void)pthread_cond_wait(&q->cond, &q->mu);
	if (q->stop) {
		(void)pthread_mutex_unlock(&q->mu);
		return false;
	}
	while (
	    !TAILQ_EMPTY(&q->submitted) && (q->batch_max == 0 || n < q->batch_max)) {
		struct store_op *op = TAILQ_FIRST(&q->submitted);

		TAILQ_REMOVE(&q->submitted, op, link);
		TAILQ_INSERT_TAIL(batch, op, link);
		n++;
	}
	(void)pthread_mutex_unlock(&q->mu);
	return true;
}

static void
store_worker_hand_back(struct store *st, struct store_op_list *batch)
{
	struct store_queue *q = &st->q;
	uint64_t one = 1;

	(void)pthread_mutex_lock(&q->mu);
	TAILQ_CONCAT(&q->done, batch, link);
	(void)pthread_mutex_unlock(&q->mu);
	/* Cannot fail short of a counter overflow, and then the loop has
	 * a wake-up pending anyway. */
	(void)!write(st->efd, &one, sizeof(one));
}

static bool
store_worker_is_write(const struct store_op *op)
{
	return op->kind == STORE_OP_PUT || op->kind == STORE_OP_EXPIRE ||
	    op->kind == STORE_OP_JOB;
}

/* A note for the loop to log about a failed transaction; NULL if memory
 * is short, and then the operations' statuses still tell. */
static struct store_op *
store_worker_note(int r, const char *what, const char *msg)
{
	struct store_op *note = calloc(1, sizeof(*note));
	char text[512];

	if (note == NULL)
		return NULL;
	(void)snprintf(text, sizeof(text), "%s: %s", what, msg);
	note->kind = STORE_OP_NOTE;
	note->status = r;
	note->note = strdup(text);
	if (note->note == NULL) {
		free(note);
		return NULL;
	}
	return note;
}

/* Runs the batch's writes in one transaction; on any failure none of
 * them happened, and each reports the failure. */
static void
store_worker_write(struct store *st, struct store_op_list *batch)
{
	struct store_op *op, *last = NULL, *note;
	const char *what = "cannot begin a transaction";
	int r;

	r = store_db_begin(st->db);
	TAILQ_FOREACH(op, batch, link) {
		if (r < 0)
			break;
		if (!store_worker_is_write(op))
			continue;
		if (op->kind == STORE_OP_JOB) {
			what = "cannot run a job of the layer above";
			r = store_db_job(st->db, op);
			last = op;
			continue;
		}
		what = op->kind == STORE_OP_PUT ? "cannot store a block"
		                                : "cannot drop expired blocks";
		r = store_db_write(st->db, op);
		last = op;
	}
	if (r == 0) {
		what = "cannot commit";
		r = store_db_commit(st->db);
	}
	if (r >= 0) {
		if (last != NULL)
			last->committed = r > 0;
		return;
	}
	note = store_worker_note(r, what, store_db_errmsg(st->db));
	store_db_rollback(st->db);
	TAILQ_FOREACH(op, batch, link) {
		if (!store_worker_is_write(op))
			continue;
		op->status = r;
		op->refused = false;
		op->more = false;
		op->n_gone = 0;
	}
	if (note != NULL)
		TAILQ_INSERT_HEAD(batch, note, link);
}

static void
store_worker_run(struct store *st, struct store_op_list *batch)
{
	struct store_op *op;
	bool writes = false;

	TAILQ_FOREACH(op, batch, link)
		writes = writes || store_worker_is_write(op);
	if (writes)
		store_worker_write(st, batch);
	TAILQ_FOREACH(op, batch, link)
		if (op->kind == STORE_OP_GET)
			store_db_read(st->db, op);
}

void *
store_worker_main(void *arg)
{
	struct store *st = arg;
	struct store_op_list batch = TAILQ_HEAD_INITIALIZER(batch);

	while (store_worker_take(st, &batch)) {
		store_worker_run(st, &batch);
		store_worker_hand_back(st, &batch);
	}
	store_db_close(st->db);
	st->db = NULL;
	return NULL;
}
