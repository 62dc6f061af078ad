/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The transfers' records, storage layer (issue 13: "A transfer's
 * progress ... is kept in the block store's database"): two tables of
 * their own in the block store's SQLite file, written and read through
 * store_job(), so that they reach the disk in the block store's group
 * commits and the event loop never waits on them. One connection may
 * hold that file (the store locks it exclusively), so a second
 * connection was not an option, and a file of their own would split one
 * daemon's durable state in two, each to be checked and recovered.
 *
 *   xfer_transfers  one row per transfer not finished: what it works on
 *                   (ident: the file's device, inode, size and mtime for
 *                   a put; the URI's root block and the .part file's
 *                   device and inode for a get), its label, its size and
 *                   bytes done
 *   xfer_blocks     one row per block done: a chunk (idx >= 0) or a
 *                   manifest node (idx < 0) put with all its receipts,
 *                   or a chunk written and synced; key is its block key,
 *                   so that a changed file is never taken as done
 *
 * Statements are prepared inside each job: the connection is the
 * store's, and nothing of ours may outlive a job on it.
 */
#define LOG_TAG "storage"
#include "storage/xfer_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dht/store.h"
#include "lib/log.h"
#include "lib/sqlfile.h"
#include "lib/time.h"

static const char xfer_db_schema[] =
    "CREATE TABLE IF NOT EXISTS xfer_transfers("
    "  id INTEGER PRIMARY KEY,"
    "  kind INTEGER NOT NULL,"
    "  uid INTEGER NOT NULL,"
    "  ident BLOB NOT NULL,"
    "  label TEXT NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  done INTEGER NOT NULL,"
    "  updated INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS xfer_blocks("
    "  xfer INTEGER NOT NULL,"
    "  idx INTEGER NOT NULL,"
    "  key BLOB NOT NULL,"
    "  PRIMARY KEY(xfer, idx)) WITHOUT ROWID;";

struct xfer_db {
	struct xfer *x; /* NULL once orphaned */
	xfer_db_loaded_fn *loaded;
	unsigned jobs; /* queued at the store */
};

enum xfer_db_op { XDB_INIT, XDB_SAVE, XDB_LOAD, XDB_ADD, XDB_FORGET };

struct xfer_dbjob {
	LIST_ENTRY(xfer_dbjob) link; /* t->dbjobs while t is */
	struct xfer_db *db;
	struct xfer_task *t; /* NULL: none, or gone */
	enum xfer_db_op op;
	xfer_db_done_fn *done; /* may be NULL */
	/* the row (a copy: the worker sees nothing else) */
	int64_t id;
	int kind;
	int64_t uid;
	uint8_t ident[XFER_IDENT_MAX];
	size_t ident_len;
	char label[XFER_LABEL_MAX + 1];
	int64_t size, bytes_done, updated;
	struct xfer_rec *recs; /* add: to write; load: read */
	size_t n_recs;
	TAILQ_HEAD(, xfer_task) found; /* init: the rows, as tasks */
};

/* Steps s to its end; finalises it. */
static int
xfer_db_run(sqlite3_stmt *s)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		;
	(void)sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : sqlfile_errno(rc);
}

static int
xfer_db_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **ret)
{
	return sqlfile_errno(sqlite3_prepare_v2(db, sql, -1, ret, NULL));
}

static struct xfer_task *
xfer_db_row_task(sqlite3_stmt *s)
{
	struct xfer_task *t = calloc(1, sizeof(*t));
	const void *ident = sqlite3_column_blob(s, 3);
	const unsigned char *label = sqlite3_column_text(s, 4);
	size_t len = (size_t)sqlite3_column_bytes(s, 3);

	if (t == NULL)
		return NULL;
	t->id = (uint64_t)sqlite3_column_int64(s, 0);
	t->kind = sqlite3_column_int(s, 1) == XFER_GET ? XFER_GET : XFER_PUT;
	t->state = XFER_RESUMABLE;
	t->uid = (uid_t)sqlite3_column_int64(s, 2);
	t->ident_len = len < XFER_IDENT_MAX ? len : XFER_IDENT_MAX;
	if (ident != NULL)
		memcpy(t->ident, ident, t->ident_len);
	if (label != NULL)
		(void)snprintf(t->label, sizeof(t->label), "%s",
		    (const char *)label);
	t->size = (uint64_t)sqlite3_column_int64(s, 5);
	t->bytes_done = (uint64_t)sqlite3_column_int64(s, 6);
	t->updated_s = (uint64_t)sqlite3_column_int64(s, 7);
	t->fd = -1;
	LIST_INIT(&t->attempts);
	LIST_INIT(&t->dbjobs);
	return t;
}

static int
xfer_db_init_run(sqlite3 *db, struct xfer_dbjob *j)
{
	sqlite3_stmt *s;
	struct xfer_task *t;
	int rc,
	    r = sqlfile_errno(
	        sqlite3_exec(db, xfer_db_schema, NULL, NULL, NULL));

	if (r == 0)
		r = xfer_db_prepare(db,
		    "SELECT id, kind, uid, ident, label, size, done, updated"
		    " FROM xfer_transfers ORDER BY updated",
		    &s);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		t = xfer_db_row_task(s);
		if (t == NULL) {
			rc = SQLITE_NOMEM;
			break;
		}
		TAILQ_INSERT_TAIL(&j->found, t, link);
	}
	(void)sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : sqlfile_errno(rc);
}

static int
xfer_db_save_run(sqlite3 *db, struct xfer_dbjob *j)
{
	sqlite3_stmt *s;
	int r = xfer_db_prepare(db,
	    "INSERT OR REPLACE INTO xfer_transfers"
	    " (id, kind, uid, ident, label, size, done, updated)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	    &s);

	if (r < 0)
		return r;
	(void)sqlite3_bind_int64(s, 1, j->id);
	(void)sqlite3_bind_int(s, 2, j->kind);
	(void)sqlite3_bind_int64(s, 3, j->uid);
	(void)sqlite3_bind_blob(s, 4, j->ident, (int)j->ident_len,
	    SQLITE_STATIC);
	(void)sqlite3_bind_text(s, 5, j->label, -1, SQLITE_STATIC);
	(void)sqlite3_bind_int64(s, 6, j->size);
	(void)sqlite3_bind_int64(s, 7, j->bytes_done);
	(void)sqlite3_bind_int64(s, 8, j->updated);
	return xfer_db_run(s);
}

static int
xfer_db_load_run(sqlite3 *db, struct xfer_dbjob *j)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc,
	    r = xfer_db_prepare(db,
	        "SELECT idx, key FROM xfer_blocks WHERE xfer = ? ORDER BY idx",
	        &s);

	if (r < 0)
		return r;
	(void)sqlite3_bind_int64(s, 1, j->id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (j->n_recs == cap) {
			struct xfer_rec *n;

			cap = cap ? 2 * cap : 64;
			n = realloc(j->recs, cap * sizeof(*n));
			if (n == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			j->recs = n;
		}
		if (sqlite3_column_bytes(s, 1) != DHTKEY_LEN)
			continue; /* not ours to trust: done again */
		j->recs[j->n_recs].idx = sqlite3_column_int64(s, 0);
		memcpy(j->recs[j->n_recs].key.b, sqlite3_column_blob(s, 1),
		    DHTKEY_LEN);
		j->n_recs++;
	}
	(void)sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : sqlfile_errno(rc);
}

static int
xfer_db_add_run(sqlite3 *db, struct xfer_dbjob *j)
{
	sqlite3_stmt *s;
	int rc,
	    r = xfer_db_prepare(db,
	        "INSERT OR REPLACE INTO xfer_blocks (xfer, idx, key)"
	        " VALUES (?, ?, ?)",
	        &s);

	if (r < 0)
		return r;
	for (size_t i = 0; i < j->n_recs; i++) {
		(void)sqlite3_bind_int64(s, 1, j->id);
		(void)sqlite3_bind_int64(s, 2, j->recs[i].idx);
		(void)sqlite3_bind_blob(s, 3, j->recs[i].key.b, DHTKEY_LEN,
		    SQLITE_STATIC);
		rc = sqlite3_step(s);
		(void)sqlite3_reset(s);
		if (rc != SQLITE_DONE) {
			(void)sqlite3_finalize(s);
			return sqlfile_errno(rc);
		}
	}
	(void)sqlite3_finalize(s);
	r = xfer_db_prepare(db,
	    "UPDATE xfer_transfers SET done = ?, updated = ? WHERE id = ?", &s);
	if (r < 0)
		return r;
	(void)sqlite3_bind_int64(s, 1, j->bytes_done);
	(void)sqlite3_bind_int64(s, 2, j->updated);
	(void)sqlite3_bind_int64(s, 3, j->id);
	return xfer_db_run(s);
}

static int
xfer_db_forget_run(sqlite3 *db, struct xfer_dbjob *j)
{
	sqlite3_stmt *s;
	int r =
	    xfer_db_prepare(db, "DELETE FROM xfer_blocks WHERE xfer = ?", &s);

	if (r < 0)
		return r;
	(void)sqlite3_bind_int64(s, 1, j->id);
	r = xfer_db_run(s);
	if (r == 0)
		r = xfer_db_prepare(db,
		    "DELETE FROM xfer_transfers WHERE id = ?", &s);
	if (r < 0)
		return r;
	(void)sqlite3_bind_int64(s, 1, j->id);
	return xfer_db_run(s);
}

/* On the store's worker thread. */
static int
xfer_db_job_run(sqlite3 *db, void *cls)
{
	struct xfer_dbjob *j = cls;

	switch (j->op) {
	case XDB_INIT:
		return xfer_db_init_run(db, j);
	case XDB_SAVE:
		return xfer_db_save_run(db, j);
	case XDB_LOAD:
		return xfer_db_load_run(db, j);
	case XDB_ADD:
		return xfer_db_add_run(db, j);
	case XDB_FORGET:
		return xfer_db_forget_run(db, j);
	}
	return -EINVAL;
}

static void
xfer_db_job_free(struct xfer_dbjob *j)
{
	struct xfer_task *t;

	while ((t = TAILQ_FIRST(&j->found)) != NULL) {
		TAILQ_REMOVE(&j->found, t, link);
		free(t);
	}
	free(j->recs);
	free(j);
}

static void
xfer_db_release(struct xfer_db *db)
{
	db->jobs--;
	if (db->x == NULL && db->jobs == 0)
		free(db);
}

/* Back on the loop. */
static void
xfer_db_job_done(void *cls, int status)
{
	struct xfer_dbjob *j = cls;
	struct xfer_db *db = j->db;
	struct xfer_task *t = j->t, *f;

	if (t != NULL)
		LIST_REMOVE(j, link);
	if (db->x != NULL && status < 0 && j->op != XDB_LOAD)
		(*db->x->c.db_failed)++;
	/* Committed with the store's batch before this callback. */
	if (db->x != NULL && status == 0 && j->op == XDB_ADD)
		(*db->x->c.records) += j->n_recs;
	if (db->x != NULL && j->op == XDB_INIT) {
		while ((f = TAILQ_FIRST(&j->found)) != NULL) {
			TAILQ_REMOVE(&j->found, f, link);
			f->x = db->x;
			TAILQ_INSERT_TAIL(&db->x->tasks, f, link);
		}
		db->loaded(db->x, status);
	}
	if (t != NULL && j->op == XDB_LOAD && status == 0) {
		free(t->prior);
		t->prior = j->recs;
		t->n_prior = j->n_recs;
		j->recs = NULL;
		xfer_task_prior_sort(t);
	}
	if (t != NULL && j->done != NULL)
		j->done(t, status);
	xfer_db_job_free(j);
	xfer_db_release(db);
}

static struct xfer_dbjob *
xfer_db_job_new(struct xfer_db *db, struct xfer_task *t, enum xfer_db_op op,
    xfer_db_done_fn *done)
{
	struct xfer_dbjob *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->db = db;
	j->op = op;
	j->done = done;
	TAILQ_INIT(&j->found);
	if (t != NULL) {
		j->id = (int64_t)t->id;
		j->kind = t->kind;
		j->uid = t->uid;
		memcpy(j->ident, t->ident, sizeof(j->ident));
		j->ident_len = t->ident_len;
		memcpy(j->label, t->label, sizeof(j->label));
		j->size = (int64_t)t->size;
		j->bytes_done = (int64_t)t->bytes_done;
		j->updated = (int64_t)time_real_s();
	}
	return j;
}

/* Queues j; links it to t (may be NULL) once queued. */
static int
xfer_db_submit(struct xfer_db *db, struct xfer_task *t, struct xfer_dbjob *j)
{
	int r = store_job(db->x->store, xfer_db_job_run, xfer_db_job_done, j);

	if (r < 0) {
		(*db->x->c.db_failed)++;
		xfer_db_job_free(j);
		return r;
	}
	db->jobs++;
	if (t != NULL && j->done != NULL) {
		j->t = t;
		LIST_INSERT_HEAD(&t->dbjobs, j, link);
	}
	return 0;
}

int
xfer_db_new(struct xfer *x, xfer_db_loaded_fn *loaded, struct xfer_db **ret)
{
	struct xfer_db *db = calloc(1, sizeof(*db));
	struct xfer_dbjob *j;
	int r;

	if (db == NULL)
		return -ENOMEM;
	db->x = x;
	db->loaded = loaded;
	j = xfer_db_job_new(db, NULL, XDB_INIT, NULL);
	if (j == NULL) {
		free(db);
		return -ENOMEM;
	}
	r = xfer_db_submit(db, NULL, j);
	if (r < 0) {
		free(db);
		return r;
	}
	*ret = db;
	return 0;
}

void
xfer_db_free(struct xfer_db *db)
{
	if (db == NULL)
		return;
	db->x = NULL;
	if (db->jobs == 0)
		free(db);
}

void
xfer_db_detach(struct xfer_task *t)
{
	struct xfer_dbjob *j;

	while ((j = LIST_FIRST(&t->dbjobs)) != NULL) {
		LIST_REMOVE(j, link);
		j->t = NULL;
	}
}

int
xfer_db_save(struct xfer_db *db, struct xfer_task *t, xfer_db_done_fn *done)
{
	struct xfer_dbjob *j = xfer_db_job_new(db, t, XDB_SAVE, done);

	return j != NULL ? xfer_db_submit(db, t, j) : -ENOMEM;
}

int
xfer_db_load_blocks(struct xfer_db *db, struct xfer_task *t, uint64_t id,
    xfer_db_done_fn *done)
{
	struct xfer_dbjob *j = xfer_db_job_new(db, t, XDB_LOAD, done);

	if (j == NULL)
		return -ENOMEM;
	j->id = (int64_t)id;
	return xfer_db_submit(db, t, j);
}

int
xfer_db_add_blocks(struct xfer_db *db, struct xfer_task *t,
    xfer_db_done_fn *done)
{
	struct xfer_dbjob *j = xfer_db_job_new(db, t, XDB_ADD, done);
	int r;

	if (j == NULL)
		return -ENOMEM;
	/* The records go with the job. */
	j->recs = t->recs;
	j->n_recs = t->n_recs;
	t->recs = NULL;
	t->n_recs = t->cap_recs = 0;
	r = xfer_db_submit(db, t, j);
	return r;
}

int
xfer_db_forget(struct xfer_db *db, uint64_t id)
{
	struct xfer_dbjob *j = xfer_db_job_new(db, NULL, XDB_FORGET, NULL);

	if (j == NULL)
		return -ENOMEM;
	j->id = (int64_t)id;
	return xfer_db_submit(db, NULL, j);
}
