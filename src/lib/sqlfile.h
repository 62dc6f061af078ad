/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A durable SQLite file of ferryd's, layer 0 but its own library
 * (ferry_sqlite): only the daemon's layers link SQLite, never libferry,
 * the CLI, the thin client or the plugins (.ci/check-layers.sh). What
 * every such file of ferryd's does alike: creating it aside and renaming
 * it into place, the checks at open (application_id, schema version,
 * quick_check, read-only), one process holding it (locking_mode
 * EXCLUSIVE), WAL with synchronous=FULL, SQLite's result codes as
 * negative errnos, and the write transaction a worker thread runs its
 * batch in. Each store keeps its schema, statements and tuning; the block
 * store's reasons for these choices are at the top of src/dht/store.c.
 */
#ifndef FERRY_LIB_SQLFILE_H
#define FERRY_LIB_SQLFILE_H

#include <stdint.h>

struct sqlite3;
struct sqlite3_stmt;

/* What one kind of file is; the caller's, borrowed for the call. */
struct sqlfile_spec {
	const char *what;    /* "block store": names the file in log lines,
			     * and "not a ferry <what>" */
	const char *tag;     /* LOG_TAG of the caller's lines */
	int application_id;  /* PRAGMA application_id */
	int version;         /* PRAGMA user_version of schema */
	int min_version;     /* the oldest version upgrade takes to version;
			     * version when there is none */
	const char *schema;  /* SQL making a new file's tables */
	const char *upgrade; /* SQL taking min_version .. version - 1 to
			      * version, run in one transaction; may be
			      * NULL when min_version == version */
	int page_size;       /* of a new file, bytes; 0: SQLite's */
	const char *tuning;  /* PRAGMAs run at every open after the shared
			      * ones (locking, synchronous, busy_timeout);
			      * may be NULL */
};

/*
 * Opens the file at path, creating it if absent (built as path.new,
 * synced and renamed into place, the directory synced after), checks it
 * is a healthy file of spec (upgrading an older version it knows) and
 * returns the connection, held by this process alone, in WAL mode, for
 * one thread at a time. Logs its own errors once. -EACCES (directory not
 * writable), -EISDIR or -EUCLEAN (not a regular file, not a database, not
 * spec's application_id, corrupt), -ENOTSUP (a schema version it does
 * not know), -EROFS (read-only), -EBUSY (held by another process) or
 * another negative errno.
 */
int sqlfile_open(const struct sqlfile_spec *spec, const char *path,
    struct sqlite3 **ret_db);
/* The negative errno for an SQLite result code (extended or primary). */
int sqlfile_errno(int rc);

/* The write transaction of a worker's batch: BEGIN IMMEDIATE, COMMIT and
 * ROLLBACK, prepared once on db (the caller's, which it outlives). */
struct sqlfile_tx {
	struct sqlite3 *db;
	struct sqlite3_stmt *begin, *commit, *rollback;
	int64_t changes_begin; /* sqlite3_total_changes64() at begin */
};

/* Prepares tx's statements on db: 0 or a negative errno (SQLite's
 * message is then db's). */
int sqlfile_tx_init(struct sqlfile_tx *tx, struct sqlite3 *db);
/* Finalises them; a zeroed or half-made tx is fine. */
void sqlfile_tx_done(struct sqlfile_tx *tx);
/* BEGIN IMMEDIATE: 0 or a negative errno. */
int sqlfile_tx_begin(struct sqlfile_tx *tx);
/* COMMIT: 1 if the transaction changed rows (a sync of the WAL), 0 if
 * not, or a negative errno. */
int sqlfile_tx_commit(struct sqlfile_tx *tx);
/* ROLLBACK if a transaction is open: SQLite ends it by itself after some
 * errors (SQLITE_FULL may). */
void sqlfile_tx_rollback(struct sqlfile_tx *tx);

#endif /* FERRY_LIB_SQLFILE_H */
