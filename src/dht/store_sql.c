/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The block store's statements (see store.h), dht layer: each prepared
 * once on the connection store_db.c opened, then run by the worker thread
 * alone: puts with eviction by distance, expiry passes, gets.
 */
#define LOG_TAG "dht"
#include "dht/store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "lib/log.h"
#include "lib/sqlfile.h"

enum store_stmt {
	STORE_STMT_FIND,
	STORE_STMT_INSERT,
	STORE_STMT_RENEW,
	STORE_STMT_FARTHEST,
	STORE_STMT_DELETE,
	STORE_STMT_EXPIRE,
	STORE_STMT_READ,
	STORE_STMT_N,
};

static const char *const store_sql_text[STORE_STMT_N] = {
	[STORE_STMT_FIND] = "SELECT expiry FROM blocks WHERE key = ?1",
	[STORE_STMT_INSERT] = "INSERT INTO blocks(key, dist, expiry, size,"
	                      " data) VALUES (?1, ?2, ?3, ?4, ?5)",
	[STORE_STMT_RENEW] = "UPDATE blocks SET expiry = ?2 WHERE key = ?1",
	/* Only the index blocks_dist is read: the key is dist XOR own id. */
	[STORE_STMT_FARTHEST] = "SELECT dist, size FROM blocks WHERE dist > ?1"
	                        " ORDER BY dist DESC",
	[STORE_STMT_DELETE] = "DELETE FROM blocks WHERE key = ?1",
	[STORE_STMT_EXPIRE] = "DELETE FROM blocks WHERE id IN (SELECT id FROM"
	                      " blocks WHERE expiry <= ?1 ORDER BY expiry"
	                      " LIMIT ?2) RETURNING key, size",
	[STORE_STMT_READ] = "SELECT data, expiry FROM blocks WHERE key = ?1"
	                    " AND expiry > ?2",
};

struct store_db {
	sqlite3 *db;
	struct sqlfile_tx tx;
	sqlite3_stmt *stmt[STORE_STMT_N];
	uint8_t own_id[STORE_KEY_LEN];
	uint64_t quota;      /* bytes */
	uint64_t used;       /* bytes of block data in the database */
	uint64_t used_begin; /* used when the transaction began */
};

static void
store_sql_xor(const uint8_t a[STORE_KEY_LEN], const uint8_t b[STORE_KEY_LEN],
    uint8_t out[STORE_KEY_LEN])
{
	for (size_t i = 0; i < STORE_KEY_LEN; i++)
		out[i] = a[i] ^ b[i];
}

/* Steps a statement that returns no rows and resets it. */
static int
store_sql_run(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	(void)sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : sqlfile_errno(rc);
}

/* SQL function ferry_xor(key, id): the distance, for recomputing every
 * row's at once when the node's id changed. */
static void
store_sql_fn_xor(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint8_t out[STORE_KEY_LEN];
	const uint8_t *a, *b;

	(void)argc;
	a = sqlite3_value_blob(argv[0]);
	b = sqlite3_value_blob(argv[1]);
	if (a == NULL || b == NULL ||
	    sqlite3_value_bytes(argv[0]) != STORE_KEY_LEN ||
	    sqlite3_value_bytes(argv[1]) != STORE_KEY_LEN) {
		sqlite3_result_error(ctx, "ferry_xor: not two keys", -1);
		return;
	}
	store_sql_xor(a, b, out);
	sqlite3_result_blob(ctx, out, STORE_KEY_LEN, SQLITE_TRANSIENT);
}

/* Records the node's id; a new id moves every block's distance. */
static int
store_sql_own_id(struct store_db *d, const char *path)
{
	static const char sel[] = "SELECT value FROM meta WHERE name='own_id'";
	static const char set[] = "INSERT OR REPLACE INTO meta(name, value)"
	                          " VALUES ('own_id', ?1)";
	sqlite3_stmt *s = NULL;
	bool same = false;
	int rc;

	rc = sqlite3_prepare_v2(d->db, sel, -1, &s, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		same = sqlite3_column_bytes(s, 0) == STORE_KEY_LEN &&
		    memcmp(sqlite3_column_blob(s, 0), d->own_id,
		        STORE_KEY_LEN) == 0;
		rc = SQLITE_DONE;
	}
	(void)sqlite3_finalize(s);
	s = NULL;
	if (rc == SQLITE_DONE && same)
		return 0;
	if (rc == SQLITE_DONE)
		rc = sqlite3_create_function_v2(d->db, "ferry_xor", 2,
		    SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, store_sql_fn_xor,
		    NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(d->db,
		    "UPDATE blocks SET dist ="
		    " ferry_xor(key, ?1)",
		    -1, &s, NULL);
	if (rc == SQLITE_OK) {
		(void)sqlite3_bind_blob(s, 1, d->own_id, STORE_KEY_LEN,
		    SQLITE_STATIC);
		rc = sqlite3_step(s);
		(void)sqlite3_finalize(s);
		s = NULL;
	}
	if (rc == SQLITE_DONE)
		rc = sqlite3_prepare_v2(d->db, set, -1, &s, NULL);
	if (rc == SQLITE_OK) {
		(void)sqlite3_bind_blob(s, 1, d->own_id, STORE_KEY_LEN,
		    SQLITE_STATIC);
		rc = sqlite3_step(s);
	}
	(void)sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		log_err("block store %s: cannot record the node id: %s", path,
		    sqlite3_errmsg(d->db));
		return sqlfile_errno(rc);
	}
	return 0;
}

/* Hands every block to fn and sums their sizes. */
static int
store_sql_load(struct store_db *d, const char *path, store_db_row_fn *fn,
    void *cls)
{
	sqlite3_stmt *s;
	int rc, r = 0;

	rc = sqlite3_prepare_v2(d->db, "SELECT key, size, expiry FROM blocks",
	    -1, &s, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t size = sqlite3_column_int64(s, 1);
		int64_t expiry = sqlite3_column_int64(s, 2);

		if (sqlite3_column_bytes(s, 0) != STORE_KEY_LEN || size <= 0 ||
		    size > STORE_BLOCK_MAX || expiry < 0) {
			log_err("block store %s: corrupt: a row of a key of %d"
			        " bytes, size %lld, expiry %lld",
			    path, sqlite3_column_bytes(s, 0), (long long)size,
			    (long long)expiry);
			r = -EUCLEAN;
			break;
		}
		r = fn(cls, sqlite3_column_blob(s, 0), (uint64_t)size,
		    (uint64_t)expiry);
		if (r < 0)
			break;
		d->used += (uint64_t)size;
		rc = SQLITE_OK;
	}
	if (r == 0 && rc != SQLITE_DONE) {
		log_err("block store %s: cannot read the blocks: %s", path,
		    sqlite3_errmsg(d->db));
		r = sqlfile_errno(rc);
	}
	(void)sqlite3_finalize(s);
	return r;
}

static int
store_sql_prepare(struct store_db *d, const char *path)
{
	int r = sqlfile_tx_init(&d->tx, d->db);

	if (r < 0) {
		log_err("block store %s: cannot prepare its transactions: %s",
		    path, sqlite3_errmsg(d->db));
		return r;
	}
	for (int i = 0; i < STORE_STMT_N; i++) {
		int rc = sqlite3_prepare_v3(d->db, store_sql_text[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &d->stmt[i], NULL);

		if (rc != SQLITE_OK) {
			log_err("block store %s: cannot prepare \"%s\": %s",
			    path, store_sql_text[i], sqlite3_errmsg(d->db));
			return sqlfile_errno(rc);
		}
	}
	return 0;
}

static void
store_sql_finalize(struct store_db *d)
{
	for (int i = 0; i < STORE_STMT_N; i++) {
		(void)sqlite3_finalize(d->stmt[i]);
		d->stmt[i] = NULL;
	}
	sqlfile_tx_done(&d->tx);
}

int
store_sql_new(sqlite3 *db, const char *path,
    const uint8_t own_id[STORE_KEY_LEN], uint64_t quota, store_db_row_fn *fn,
    void *cls, struct store_db **ret_db)
{
	struct store_db *d = calloc(1, sizeof(*d));
	int r;

	if (d == NULL)
		return -ENOMEM;
	d->db = db;
	memcpy(d->own_id, own_id, STORE_KEY_LEN);
	d->quota = quota;
	r = store_sql_prepare(d, path);
	if (r == 0) {
		r = store_db_begin(d);
		if (r < 0)
			log_err("block store %s: cannot lock: %s", path,
			    r == -EBUSY ? "in use by another process"
			                : sqlite3_errmsg(db));
	}
	if (r == 0)
		r = store_sql_own_id(d, path);
	if (r == 0)
		r = store_sql_load(d, path, fn, cls);
	if (r == 0)
		r = store_db_commit(d);
	if (r < 0) {
		store_db_rollback(d);
		store_sql_finalize(d);
		free(d);
		return r;
	}
	*ret_db = d;
	return 0;
}

void
store_db_close(struct store_db *d)
{
	if (d == NULL)
		return;
	store_sql_finalize(d);
	/* Folds the WAL into the database and removes it. */
	(void)sqlite3_close(d->db);
	free(d);
}

const char *
store_db_errmsg(const struct store_db *d)
{
	return sqlite3_errmsg(d->db);
}

int
store_db_begin(struct store_db *d)
{
	d->used_begin = d->used;
	return sqlfile_tx_begin(&d->tx);
}

int
store_db_commit(struct store_db *d)
{
	return sqlfile_tx_commit(&d->tx);
}

void
store_db_rollback(struct store_db *d)
{
	sqlfile_tx_rollback(&d->tx);
	d->used = d->used_begin;
}

/* Notes a block op deleted, for the caller's index. */
static int
store_sql_gone(struct store_op *op, const uint8_t key[STORE_KEY_LEN],
    bool expired)
{
	if (op->n_gone == op->gone_cap) {
		size_t cap = op->gone_cap ? op->gone_cap * 2 : 8;
		struct store_gone *g = reallocarray(op->gone, cap, sizeof(*g));

		if (g == NULL)
			return -ENOMEM;
		op->gone = g;
		op->gone_cap = cap;
	}
	memcpy(op->gone[op->n_gone].key, key, STORE_KEY_LEN);
	op->gone[op->n_gone].expired = expired;
	op->n_gone++;
	return 0;
}

static void
store_sql_release(struct store_db *d, uint64_t size)
{
	d->used -= size < d->used ? size : d->used;
}

/* Drops up to limit (-1: all) blocks expired at op->now. */
static int
store_sql_expire(struct store_db *d, struct store_op *op, int64_t limit)
{
	sqlite3_stmt *s = d->stmt[STORE_STMT_EXPIRE];
	int64_t n = 0;
	int rc, r = 0;

	(void)sqlite3_bind_int64(s, 1, (int64_t)op->now);
	(void)sqlite3_bind_int64(s, 2, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(s, 0) != STORE_KEY_LEN) {
			r = -EUCLEAN;
			break;
		}
		store_sql_release(d, (uint64_t)sqlite3_column_int64(s, 1));
		r = store_sql_gone(op, sqlite3_column_blob(s, 0), true);
		if (r < 0)
			break;
		n++;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sqlfile_errno(rc);
	(void)sqlite3_reset(s);
	op->more = limit >= 0 && n >= limit;
	return r;
}

/* Notes in op's gone list the farthest blocks beyond dist until they
 * free need bytes. 1 if they do, 0 if all of them would not. */
static int
store_sql_farthest(struct store_db *d, struct store_op *op,
    const uint8_t dist[STORE_KEY_LEN], uint64_t need, uint64_t *ret_freed)
{
	sqlite3_stmt *s = d->stmt[STORE_STMT_FARTHEST];
	uint8_t key[STORE_KEY_LEN];
	uint64_t freed = 0;
	int rc = SQLITE_DONE, r = 0;

	(void)sqlite3_bind_blob(s, 1, dist, STORE_KEY_LEN, SQLITE_STATIC);
	while (freed < need && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(s, 0) != STORE_KEY_LEN) {
			r = -EUCLEAN;
			break;
		}
		store_sql_xor(sqlite3_column_blob(s, 0), d->own_id, key);
		freed += (uint64_t)sqlite3_column_int64(s, 1);
		r = store_sql_gone(op, key, false);
		if (r < 0)
			break;
	}
	if (r == 0 && freed < need && rc != SQLITE_DONE)
		r = sqlfile_errno(rc);
	(void)sqlite3_reset(s);
	if (r < 0)
		return r;
	*ret_freed = freed;
	return freed >= need;
}

/*
 * Makes room under the quota for op's block: drops expired blocks first,
 * then evicts the farthest from the node's id, but only blocks farther
 * than op's, and only if that frees enough. -ENOSPC if it cannot.
 */
static int
store_sql_room(struct store_db *d, struct store_op *op)
{
	uint8_t dist[STORE_KEY_LEN];
	uint64_t freed;
	size_t first;
	int r;

	if (op->len > d->quota)
		return -ENOSPC;
	if (d->used + op->len <= d->quota)
		return 0;
	r = store_sql_expire(d, op, -1);
	if (r < 0 || d->used + op->len <= d->quota)
		return r;
	store_sql_xor(op->key, d->own_id, dist);
	first = op->n_gone;
	r = store_sql_farthest(d, op, dist, d->used + op->len - d->quota,
	    &freed);
	if (r <= 0) {
		op->n_gone = first;
		return r < 0 ? r : -ENOSPC;
	}
	for (size_t i = first; i < op->n_gone && r >= 0; i++) {
		sqlite3_stmt *s = d->stmt[STORE_STMT_DELETE];

		(void)sqlite3_bind_blob(s, 1, op->gone[i].key, STORE_KEY_LEN,
		    SQLITE_STATIC);
		r = store_sql_run(s);
	}
	if (r < 0)
		return r;
	store_sql_release(d, freed);
	return 0;
}

/* The expiry of the block under key: 1 and *ret_expiry if held, 0 if
 * not. */
static int
store_sql_find(struct store_db *d, const uint8_t key[STORE_KEY_LEN],
    uint64_t *ret_expiry)
{
	sqlite3_stmt *s = d->stmt[STORE_STMT_FIND];
	int rc, r = 0;

	(void)sqlite3_bind_blob(s, 1, key, STORE_KEY_LEN, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*ret_expiry = (uint64_t)sqlite3_column_int64(s, 0);
		r = 1;
	} else if (rc != SQLITE_DONE) {
		r = sqlfile_errno(rc);
	}
	(void)sqlite3_reset(s);
	return r;
}

static int
store_sql_insert(struct store_db *d, struct store_op *op)
{
	sqlite3_stmt *s = d->stmt[STORE_STMT_INSERT];
	uint8_t dist[STORE_KEY_LEN];

	store_sql_xor(op->key, d->own_id, dist);
	(void)sqlite3_bind_blob(s, 1, op->key, STORE_KEY_LEN, SQLITE_STATIC);
	(void)sqlite3_bind_blob(s, 2, dist, STORE_KEY_LEN, SQLITE_STATIC);
	(void)sqlite3_bind_int64(s, 3, (int64_t)op->expiry);
	(void)sqlite3_bind_int64(s, 4, (int64_t)op->len);
	(void)sqlite3_bind_blob64(s, 5, op->data, op->len, SQLITE_STATIC);
	return store_sql_run(s);
}

static int
store_sql_put(struct store_db *d, struct store_op *op)
{
	sqlite3_stmt *s = d->stmt[STORE_STMT_RENEW];
	uint64_t held = 0;
	int r;

	r = store_sql_find(d, op->key, &held);
	if (r > 0 && held >= op->expiry) {
		/* Immutable: the bytes held are the bytes of this key. */
		op->expiry = held;
	} else if (r > 0) {
		(void)sqlite3_bind_blob(s, 1, op->key, STORE_KEY_LEN,
		    SQLITE_STATIC);
		(void)sqlite3_bind_int64(s, 2, (int64_t)op->expiry);
		r = store_sql_run(s);
	} else if (r == 0) {
		r = store_sql_room(d, op);
		if (r == -ENOSPC) {
			op->status = -ENOSPC;
			op->refused = true;
			return 0;
		}
		if (r == 0)
			r = store_sql_insert(d, op);
		if (r == 0)
			d->used += op->len;
	}
	if (r < 0)
		return r;
	op->status = 0;
	return 0;
}

int
store_db_write(struct store_db *d, struct store_op *op)
{
	switch (op->kind) {
	case STORE_OP_PUT:
		return store_sql_put(d, op);
	case STORE_OP_EXPIRE:
		op->status = 0;
		return store_sql_expire(d, op, STORE_EXPIRE_BATCH);
	default:
		return FERRY_BUG(1) ? -EINVAL : 0;
	}
}

void
store_db_read(struct store_db *d, struct store_op *op)
{
	sqlite3_stmt *s = d->stmt[STORE_STMT_READ];
	const void *blob;
	int rc, len;

	(void)sqlite3_bind_blob(s, 1, op->key, STORE_KEY_LEN, SQLITE_STATIC);
	(void)sqlite3_bind_int64(s, 2, (int64_t)op->now);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		blob = sqlite3_column_blob(s, 0);
		len = sqlite3_column_bytes(s, 0);
		op->data = len > 0 && blob != NULL ? malloc((size_t)len) : NULL;
		if (op->data != NULL) {
			memcpy(op->data, blob, (size_t)len);
			op->len = (size_t)len;
			op->expiry = (uint64_t)sqlite3_column_int64(s, 1);
		}
		op->status = op->data != NULL ? 0
		    : len > 0                 ? -ENOMEM
		                              : -EUCLEAN;
	} else {
		op->status = rc == SQLITE_DONE ? -ENOENT : sqlfile_errno(rc);
	}
	(void)sqlite3_reset(s);
}

int
store_db_job(struct store_db *d, struct store_op *op)
{
	int rc = sqlite3_exec(d->db, "SAVEPOINT store_job", NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return sqlfile_errno(rc);
	op->status = op->job(d->db, op->cls);
	/* Some errors (SQLITE_FULL) end the whole transaction at once:
	 * then it cannot go on, and the worker rolls everything back. */
	if (sqlite3_get_autocommit(d->db))
		return op->status < 0 ? op->status : -EIO;
	if (op->status < 0)
		rc = sqlite3_exec(d->db,
		    "ROLLBACK TO store_job; RELEASE store_job", NULL, NULL,
		    NULL);
	else
		rc = sqlite3_exec(d->db, "RELEASE store_job", NULL, NULL, NULL);
	return sqlfile_errno(rc);
}
