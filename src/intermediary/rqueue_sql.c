/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The receipt queue's statements (see rqueue_int.h), intermediary layer:
 * prepared once, run by the worker thread inside its transactions. The
 * schema and what it keeps are described in rqueue_db.c.
 */
#define LOG_TAG "intermediary"
#include "intermediary/rqueue_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "lib/log.h"
#include "lib/sqlfile.h"

enum rqueue_stmt {
	S_CLIENT,      /* last, n of a client */
	S_FLOOR,       /* where a new client's cursors start */
	S_CLIENT_NEW,  /* a client's row, from the floor */
	S_CLIENT_SET,  /* a push: last cursor given, when */
	S_INSERT,      /* one entry */
	S_ACK,         /* a client's entries up to a cursor */
	S_READ,        /* a client's entries past a cursor */
	S_EXPIRE,      /* entries queued before a time, a batch */
	S_FOLD,        /* the floor over the idle clients about to go */
	S_IDLE_DROP,   /* clients without entries, idle since a time */
	S_COUNT,       /* entries held, at open */
	S_ORIGIN,      /* the last cursor an origin pushed for a client */
	S_ORIGIN_SET,  /* and its new value */
	S_ORIGIN_DROP, /* the origins of the idle clients about to go */
	S_N,
};

static const char *const rqueue_sql_text[S_N] = {
	[S_CLIENT] = "SELECT last, n FROM clients WHERE client = ?1",
	[S_FLOOR] = "SELECT value FROM meta WHERE name = 'floor'",
	[S_CLIENT_NEW] = "INSERT INTO clients(client, last, n, pushed)"
	                 " VALUES(?1, ?2, 0, ?3)",
	[S_CLIENT_SET] = "UPDATE clients SET last = ?2, pushed = ?3"
	                 " WHERE client = ?1",
	[S_INSERT] = "INSERT INTO entries(client, cursor, queued, type, key,"
	             " put_hash, storer, expiry, sig, status, receipts)"
	             " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[S_ACK] = "DELETE FROM entries WHERE client = ?1 AND cursor <= ?2",
	[S_READ] = "SELECT cursor, queued, type, key, put_hash, storer,"
	           " expiry, sig, status, receipts FROM entries"
	           " WHERE client = ?1 AND cursor > ?2 ORDER BY cursor",
	[S_EXPIRE] = "DELETE FROM entries WHERE (client, cursor) IN"
	             " (SELECT client, cursor FROM entries WHERE queued < ?1"
	             " ORDER BY queued LIMIT ?2)",
	[S_FOLD] = "UPDATE meta SET value = (SELECT max(last) FROM clients"
	           " WHERE n = 0 AND pushed < ?1) WHERE name = 'floor' AND"
	           " value < (SELECT max(last) FROM clients WHERE n = 0 AND"
	           " pushed < ?1)",
	[S_IDLE_DROP] = "DELETE FROM clients WHERE n = 0 AND pushed < ?1",
	[S_COUNT] = "SELECT count(*) FROM entries",
	[S_ORIGIN] = "SELECT last FROM origins WHERE client = ?1"
	             " AND origin = ?2",
	[S_ORIGIN_SET] = "INSERT INTO origins(client, origin, last)"
	                 " VALUES(?1, ?2, ?3) ON CONFLICT(client, origin)"
	                 " DO UPDATE SET last = excluded.last",
	[S_ORIGIN_DROP] = "DELETE FROM origins WHERE client IN (SELECT client"
	                  " FROM clients WHERE n = 0 AND pushed < ?1)",
};

struct rqueue_db {
	sqlite3 *db;
	struct sqlfile_tx tx;
	sqlite3_stmt *s[S_N];
	unsigned max_entries; /* per client */
};

/* Runs s to completion (no row wanted) and resets it. */
static int
rqueue_sql_exec(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	(void)sqlite3_reset(s);
	(void)sqlite3_clear_bindings(s);
	return rc == SQLITE_DONE ? 0 : sqlfile_errno(rc ? rc : SQLITE_ERROR);
}

/* The client's last cursor and entries; a new client starts from the
 * floor with none, and *ret_known says whether it has a row. */
static int
rqueue_sql_client(struct rqueue_db *d, const uint8_t *client, int64_t *ret_last,
    int64_t *ret_n, bool *ret_known)
{
	sqlite3_stmt *s = d->s[S_CLIENT];
	int rc;

	(void)sqlite3_bind_blob(s, 1, client, RQUEUE_CLIENT_LEN, SQLITE_STATIC);
	rc = sqlite3_step(s);
	*ret_known = rc == SQLITE_ROW;
	if (rc == SQLITE_ROW) {
		*ret_last = sqlite3_column_int64(s, 0);
		*ret_n = sqlite3_column_int64(s, 1);
	}
	(void)sqlite3_reset(s);
	(void)sqlite3_clear_bindings(s);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE)
		return sqlfile_errno(rc);
	s = d->s[S_FLOOR];
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*ret_last = sqlite3_column_int64(s, 0);
	(void)sqlite3_reset(s);
	*ret_n = 0;
	return rc == SQLITE_ROW ? 0 : sqlfile_errno(rc ? rc : SQLITE_ERROR);
}

static int
rqueue_sql_insert(struct rqueue_db *d, const uint8_t *client,
    const struct rqueue_entry *e)
{
	sqlite3_stmt *s = d->s[S_INSERT];

	(void)sqlite3_bind_blob(s, 1, client, RQUEUE_CLIENT_LEN, SQLITE_STATIC);
	(void)sqlite3_bind_int64(s, 2, (int64_t)e->cursor);
	(void)sqlite3_bind_int64(s, 3, (int64_t)e->queued);
	(void)sqlite3_bind_int(s, 4, (int)e->type);
	(void)sqlite3_bind_blob(s, 5, e->key.b, DHTKEY_LEN, SQLITE_STATIC);
	(void)sqlite3_bind_blob(s, 6, e->put_hash, DHTMSG_HASH_LEN,
	    SQLITE_STATIC);
	if (e->type == RQUEUE_RECEIPT) {
		(void)sqlite3_bind_blob(s, 7, e->receipt.storer_pk,
		    FERRY_PUBKEY_LEN, SQLITE_STATIC);
		(void)sqlite3_bind_int64(s, 8,
		    (int64_t)(e->receipt.expiry > INT64_MAX
		            ? INT64_MAX
		            : e->receipt.expiry));
		(void)sqlite3_bind_blob(s, 9, e->receipt.sig, FERRY_SIG_LEN,
		    SQLITE_STATIC);
	} else {
		(void)sqlite3_bind_int(s, 10, e->status);
		(void)sqlite3_bind_int64(s, 11, e->receipts);
	}
	return rqueue_sql_exec(s);
}

/* A push from an origin (rqueue_push_from): drops from op->e the
 * entries whose origin cursors the client's origins row has passed
 * (op->skipped). */
static int
rqueue_sql_origin(struct rqueue_db *d, struct rqueue_op *op)
{
	sqlite3_stmt *s = d->s[S_ORIGIN];
	int64_t last = 0;
	size_t o = 0;
	int rc;

	(void)sqlite3_bind_blob(s, 1, op->client, RQUEUE_CLIENT_LEN,
	    SQLITE_STATIC);
	(void)sqlite3_bind_blob(s, 2, op->origin, RQUEUE_CLIENT_LEN,
	    SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		last = sqlite3_column_int64(s, 0);
	(void)sqlite3_reset(s);
	(void)sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sqlfile_errno(rc);
	for (size_t i = 0; i < op->n; i++)
		if ((int64_t)op->e[i].cursor > last)
			op->e[o++] = op->e[i];
	op->skipped = op->n - o;
	op->n = o;
	return 0;
}

/* Records top as the last of op's origin cursors queued. */
static int
rqueue_sql_origin_set(struct rqueue_db *d, struct rqueue_op *op, int64_t top)
{
	sqlite3_stmt *s = d->s[S_ORIGIN_SET];

	(void)sqlite3_bind_blob(s, 1, op->client, RQUEUE_CLIENT_LEN,
	    SQLITE_STATIC);
	(void)sqlite3_bind_blob(s, 2, op->origin, RQUEUE_CLIENT_LEN,
	    SQLITE_STATIC);
	(void)sqlite3_bind_int64(s, 3, top);
	return rqueue_sql_exec(s);
}

/* All of a push or none: the caller's transaction undoes a failure. */
static int
rqueue_sql_push(struct rqueue_db *d, struct rqueue_op *op)
{
	sqlite3_stmt *s;
	int64_t last, n, top = 0;
	bool known;
	int r;

	r = rqueue_sql_client(d, op->client, &last, &n, &known);
	if (r < 0)
		return r;
	if (op->has_origin) {
		top = (int64_t)op->e[op->n - 1].cursor;
		r = rqueue_sql_origin(d, op);
		if (r < 0 || op->n == 0) {
			op->status = r < 0 ? r : 0;
			return r;
		}
	}
	if ((uint64_t)n + op->n > d->max_entries) {
		op->status = -ENOSPC;
		op->refused = true;
		return 0;
	}
	if (!known) {
		s = d->s[S_CLIENT_NEW];
		(void)sqlite3_bind_blob(s, 1, op->client, RQUEUE_CLIENT_LEN,
		    SQLITE_STATIC);
		(void)sqlite3_bind_int64(s, 2, last);
		(void)sqlite3_bind_int64(s, 3, (int64_t)op->now);
		r = rqueue_sql_exec(s);
	}
	for (size_t i = 0; i < op->n && r == 0; i++) {
		op->e[i].cursor = (uint64_t)++last;
		op->e[i].queued = op->now;
		r = rqueue_sql_insert(d, op->client, &op->e[i]);
	}
	/* With the entries, so that both or neither are durable; a push
	 * refused above wrote nothing. */
	if (r == 0 && op->has_origin)
		r = rqueue_sql_origin_set(d, op, top);
	if (r < 0)
		return r;
	s = d->s[S_CLIENT_SET];
	(void)sqlite3_bind_blob(s, 1, op->client, RQUEUE_CLIENT_LEN,
	    SQLITE_STATIC);
	(void)sqlite3_bind_int64(s, 2, last);
	(void)sqlite3_bind_int64(s, 3, (int64_t)op->now);
	r = rqueue_sql_exec(s);
	if (r == 0)
		op->status = 0;
	return r;
}

/* Copies a blob column of exactly len bytes into out; false if the
 * column is anything else (a damaged row). */
static bool
rqueue_sql_blob(sqlite3_stmt *s, int col, void *out, size_t len)
{
	const void *p = sqlite3_column_blob(s, col);

	if (p == NULL || (size_t)sqlite3_column_bytes(s, col) != len)
		return false;
	memcpy(out, p, len);
	return true;
}

/* One row of S_READ into e; false if it is damaged. */
static bool
rqueue_sql_row(sqlite3_stmt *s, struct rqueue_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->cursor = (uint64_t)sqlite3_column_int64(s, 0);
	e->queued = (uint64_t)sqlite3_column_int64(s, 1);
	e->type = (enum rqueue_type)sqlite3_column_int(s, 2);
	if (!rqueue_sql_blob(s, 3, e->key.b, DHTKEY_LEN) ||
	    !rqueue_sql_blob(s, 4, e->put_hash, DHTMSG_HASH_LEN))
		return false;
	if (e->type == RQUEUE_DONE) {
		e->status = sqlite3_column_int(s, 8);
		e->receipts = (unsigned)sqlite3_column_int64(s, 9);
		return true;
	}
	memcpy(e->receipt.put_hash, e->put_hash, DHTMSG_HASH_LEN);
	e->receipt.expiry = (uint64_t)sqlite3_column_int64(s, 6);
	return e->type == RQUEUE_RECEIPT &&
	    rqueue_sql_blob(s, 5, e->receipt.storer_pk, FERRY_PUBKEY_LEN) &&
	    rqueue_sql_blob(s, 7, e->receipt.sig, FERRY_SIG_LEN);
}

/* Reads up to op->max entries past op->after, and one more readable
 * one to say whether more wait. */
static int
rqueue_sql_read(struct rqueue_db *d, struct rqueue_op *op)
{
	sqlite3_stmt *s = d->s[S_READ];
	struct rqueue_entry spare;
	int rc;

	op->e = calloc(op->max, sizeof(*op->e));
	if (op->e == NULL) {
		op->status = -ENOMEM;
		return 0;
	}
	(void)sqlite3_bind_blob(s, 1, op->client, RQUEUE_CLIENT_LEN,
	    SQLITE_STATIC);
	(void)sqlite3_bind_int64(s, 2, (int64_t)op->after);
	/* No LIMIT: rows come one step at a time, and damaged ones
	 * skipped must not leave more undecided. */
	op->status = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct rqueue_entry *e =
		    op->n < op->max ? &op->e[op->n] : &spare;

		/* Skipped, not answered: a taker could not use it (a
		 * receipt cut short fails its signature), and failing
		 * the take would stop the client's queue for good. It
		 * goes with the next acknowledgement past it. */
		if (!rqueue_sql_row(s, e)) {
			op->damaged++;
			continue;
		}
		if (op->n == op->max) {
			op->more = true;
			break;
		}
		op->n++;
	}
	(void)sqlite3_reset(s);
	(void)sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sqlfile_errno(rc);
	return 0;
}

static int
rqueue_sql_take(struct rqueue_db *d, struct rqueue_op *op)
{
	sqlite3_stmt *s = d->s[S_ACK];
	int64_t last, n;
	bool known;
	int r;

	r = rqueue_sql_client(d, op->client, &last, &n, &known);
	if (r < 0)
		return r;
	/* A cursor never given: acknowledging up to it would delete
	 * entries the taker has not seen once they are pushed. */
	if (op->after > (uint64_t)last) {
		op->status = -ERANGE;
		return 0;
	}
	op->status = 0;
	if (n > 0 && op->after > 0) {
		(void)sqlite3_bind_blob(s, 1, op->client, RQUEUE_CLIENT_LEN,
		    SQLITE_STATIC);
		(void)sqlite3_bind_int64(s, 2, (int64_t)op->after);
		r = rqueue_sql_exec(s);
		if (r < 0)
			return r;
		/* Direct deletions only, not the triggers' updates. */
		op->deleted = (uint64_t)sqlite3_changes64(d->db);
		n -= (int64_t)op->deleted;
	}
	return n > 0 ? rqueue_sql_read(d, op) : 0;
}

static int
rqueue_sql_expire(struct rqueue_db *d, struct rqueue_op *op)
{
	sqlite3_stmt *s = d->s[S_EXPIRE];
	int r;

	(void)sqlite3_bind_int64(s, 1, (int64_t)op->after);
	(void)sqlite3_bind_int(s, 2, RQUEUE_EXPIRE_BATCH);
	r = rqueue_sql_exec(s);
	if (r < 0)
		return r;
	op->deleted = (uint64_t)sqlite3_changes64(d->db);
	op->more = op->deleted == RQUEUE_EXPIRE_BATCH;
	/* Clients idle as long as their entries are kept: the floor
	 * remembers their cursors, then the rows go. */
	s = d->s[S_FOLD];
	(void)sqlite3_bind_int64(s, 1, (int64_t)op->after);
	r = rqueue_sql_exec(s);
	if (r < 0)
		return r;
	s = d->s[S_ORIGIN_DROP];
	(void)sqlite3_bind_int64(s, 1, (int64_t)op->after);
	r = rqueue_sql_exec(s);
	if (r < 0)
		return r;
	s = d->s[S_IDLE_DROP];
	(void)sqlite3_bind_int64(s, 1, (int64_t)op->after);
	r = rqueue_sql_exec(s);
	if (r == 0)
		op->status = 0;
	return r;
}

int
rqueue_db_run(struct rqueue_db *d, struct rqueue_op *op)
{
	switch (op->kind) {
	case RQUEUE_OP_PUSH:
		return rqueue_sql_push(d, op);
	case RQUEUE_OP_TAKE:
		return rqueue_sql_take(d, op);
	case RQUEUE_OP_EXPIRE:
		return rqueue_sql_expire(d, op);
	case RQUEUE_OP_NOTE:
		break;
	}
	return 0;
}

int
rqueue_db_begin(struct rqueue_db *d)
{
	return sqlfile_tx_begin(&d->tx);
}

int
rqueue_db_commit(struct rqueue_db *d)
{
	return sqlfile_tx_commit(&d->tx);
}

void
rqueue_db_rollback(struct rqueue_db *d)
{
	sqlfile_tx_rollback(&d->tx);
}

const char *
rqueue_db_errmsg(const struct rqueue_db *d)
{
	return sqlite3_errmsg(d->db);
}

void
rqueue_db_close(struct rqueue_db *d)
{
	if (d == NULL)
		return;
	for (int i = 0; i < S_N; i++)
		(void)sqlite3_finalize(d->s[i]);
	sqlfile_tx_done(&d->tx);
	(void)sqlite3_close(d->db);
	free(d);
}

int
rqueue_sql_new(sqlite3 *db, const char *path, unsigned max_entries,
    uint64_t *ret_entries, struct rqueue_db **ret_db)
{
	struct rqueue_db *d = calloc(1, sizeof(*d));
	int rc = SQLITE_OK, r;

	if (d == NULL)
		return -ENOMEM;
	r = sqlfile_tx_init(&d->tx, db);
	for (int i = 0; i < S_N && r == 0 && rc == SQLITE_OK; i++)
		rc = sqlite3_prepare_v3(db, rqueue_sql_text[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &d->s[i], NULL);
	if (r == 0 && rc == SQLITE_OK) {
		rc = sqlite3_step(d->s[S_COUNT]);
		if (rc == SQLITE_ROW)
			*ret_entries =
			    (uint64_t)sqlite3_column_int64(d->s[S_COUNT], 0);
		(void)sqlite3_reset(d->s[S_COUNT]);
		rc = rc == SQLITE_ROW ? SQLITE_OK : rc;
	}
	if (r == 0)
		r = sqlfile_errno(rc);
	if (r < 0) {
		log_err("receipt queue %s: cannot prepare its statements: %s",
		    path, sqlite3_errmsg(db));
		for (int i = 0; i < S_N; i++)
			(void)sqlite3_finalize(d->s[i]);
		sqlfile_tx_done(&d->tx);
		free(d);
		return r;
	}
	d->db = db;
	d->max_entries = max_entries;
	*ret_db = d;
	return 0;
}
