/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The receipt queue's SQLite database (see rqueue.h), intermediary
 * layer: creating, checking and opening it before the worker runs;
 * rqueue_sql.c has the statements. It follows the block store's choices
 * (src/dht/store.c: WAL, synchronous=FULL, one process, a new file built
 * aside and renamed into place), for the same reasons: an entry is
 * acknowledged to the DHT side only once it would survive a power cut.
 */
#define LOG_TAG "intermediary"
#include "intermediary/rqueue_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "lib/fsutil.h"
#include "lib/log.h"

/*
 * What a new database is made of; RQUEUE_SCHEMA_VERSION names it.
 * clients.last is the last cursor given to the client: cursors grow from
 * it and are never given twice. A client's row goes once it has had no
 * entries for RECEIPT_KEEP; meta's floor keeps the largest last of the
 * rows gone, and a new row starts from it, so that a client that comes
 * back after its row went never gets a cursor it has acknowledged. A
 * new client's first cursor thus shows the largest count of a client
 * long gone, no more: cursors are not one sequence for all clients,
 * which would show every client how many entries the others get. n is
 * kept by the triggers: the bound per client without a count.
 * origins (version 2) keeps, for a client's entries pushed by another
 * intermediary forwarding them, the last of that intermediary's cursors
 * pushed here: a batch sent again after its acknowledgement was lost is
 * not queued twice (rqueue_push_from). Its rows go with the client's.
 */
#define RQUEUE_DB_ORIGINS                                                      \
	"CREATE TABLE origins("                                                \
	"  client BLOB NOT NULL,"                                              \
	"  origin BLOB NOT NULL,"                                              \
	"  last INTEGER NOT NULL,"                                             \
	"  PRIMARY KEY(client, origin)) WITHOUT ROWID;"
static const char rqueue_db_schema[] =
    "CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
    "  WITHOUT ROWID;"
    "INSERT INTO meta VALUES('floor', 0);"
    "CREATE TABLE clients("
    "  client BLOB PRIMARY KEY,"
    "  last INTEGER NOT NULL,"
    "  n INTEGER NOT NULL,"
    "  pushed INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE INDEX clients_idle ON clients(pushed) WHERE n = 0;"
    "CREATE TABLE entries("
    "  client BLOB NOT NULL,"
    "  cursor INTEGER NOT NULL,"
    "  queued INTEGER NOT NULL,"
    "  type INTEGER NOT NULL,"
    "  key BLOB NOT NULL,"
    "  put_hash BLOB NOT NULL,"
    "  storer BLOB,"
    "  expiry INTEGER,"
    "  sig BLOB,"
    "  status INTEGER,"
    "  receipts INTEGER,"
    "  PRIMARY KEY(client, cursor)) WITHOUT ROWID;"
    "CREATE INDEX entries_queued ON entries(queued);"
    "CREATE TRIGGER entries_in AFTER INSERT ON entries BEGIN"
    "  UPDATE clients SET n = n + 1 WHERE client = new.client; END;"
    "CREATE TRIGGER entries_out AFTER DELETE ON entries BEGIN"
    "  UPDATE clients SET n = n - 1 WHERE client = old.client; END;";

int
rqueue_db_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EUCLEAN;
	case SQLITE_PERM:
	case SQLITE_AUTH:
	case SQLITE_CANTOPEN:
		return -EACCES;
	default:
		return -EIO;
	}
}

/* Logs why path cannot be used, once, and returns r. */
static int
rqueue_db_refuse(const char *path, int r, const char *why, const char *detail)
{
	log_err("receipt queue %s: %s%s%s", path, why, detail ? ": " : "",
	    detail ? detail : "");
	return r;
}

/* Logs SQLite's error rc on db (NULL: none open) and returns its errno. */
static int
rqueue_db_refuse_rc(sqlite3 *db, const char *path, int rc, const char *why)
{
	if ((rc & 0xff) == SQLITE_BUSY)
		why = "in use by another process";
	else if ((rc & 0xff) == SQLITE_CORRUPT)
		why = "corrupt";
	else if ((rc & 0xff) == SQLITE_NOTADB)
		why = "not an SQLite database";
	return rqueue_db_refuse(path, rqueue_db_errno(rc), why,
	    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

/* The first column of the one row sql returns: as an integer in
 * *ret_int, or its text in buf (either may be NULL). */
static int
rqueue_db_pragma(sqlite3 *db, const char *sql, int64_t *ret_int, char *buf,
    size_t size)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);

	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(s, 0);

		if (ret_int != NULL)
			*ret_int = sqlite3_column_int64(s, 0);
		if (buf != NULL)
			(void)snprintf(buf, size, "%s",
			    t ? (const char *)t : "");
		rc = SQLITE_OK;
	}
	(void)sqlite3_finalize(s);
	return rc;
}

/* Removes what an interrupted rqueue_db_create() may have left. */
static void
rqueue_db_unlink_tmp(const char *tmp)
{
	char aux[PATH_MAX + 16];

	(void)unlink(tmp);
	(void)snprintf(aux, sizeof(aux), "%s-wal", tmp);
	(void)unlink(aux);
	(void)snprintf(aux, sizeof(aux), "%s-journal", tmp);
	(void)unlink(aux);
}

/* Fills a fresh database at tmp with the schema, in WAL mode; closes it,
 * which folds the WAL into it. */
static int
rqueue_db_init_tmp(const char *tmp)
{
	char sql[4096], mode[16] = "";
	sqlite3 *db = NULL;
	int rc;

	rc = sqlite3_open_v2(tmp, &db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
	        SQLITE_OPEN_EXRESCODE,
	    NULL);
	if (rc == SQLITE_OK)
		rc = rqueue_db_pragma(db, "PRAGMA journal_mode=WAL", NULL, mode,
		    sizeof(mode));
	if (rc == SQLITE_OK && strcmp(mode, "wal") != 0)
		rc = SQLITE_CANTOPEN;
	(void)snprintf(sql, sizeof(sql),
	    "PRAGMA synchronous=FULL; BEGIN; %s %s PRAGMA user_version=%d;"
	    " PRAGMA application_id=%d; COMMIT;",
	    rqueue_db_schema, RQUEUE_DB_ORIGINS, RQUEUE_SCHEMA_VERSION,
	    RQUEUE_APPLICATION_ID);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		(void)rqueue_db_refuse_rc(db, tmp, rc, "cannot create");
		(void)sqlite3_close(db);
		return rqueue_db_errno(rc);
	}
	rc = sqlite3_close(db);
	return rc == SQLITE_OK
	    ? 0
	    : rqueue_db_refuse_rc(NULL, tmp, rc, "cannot close");
}

/* Creates the database at path, built under another name and renamed
 * into place: a file at path is always a database this code finished,
 * and whatever else is found there later is damage, never a half-made
 * queue to start again. */
static int
rqueue_db_create(const char *path)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	int r;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		return rqueue_db_refuse(path, -ENAMETOOLONG, "path too long",
		    NULL);
	(void)snprintf(dir, sizeof(dir), "%s", path);
	rqueue_db_unlink_tmp(tmp);
	r = rqueue_db_init_tmp(tmp);
	if (r < 0)
		goto out;
	r = fs_fsync_path(tmp, O_RDONLY);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r == 0)
		r = fs_fsync_path(dirname(dir), O_RDONLY | O_DIRECTORY);
	if (r < 0)
		(void)rqueue_db_refuse(path, r, "cannot create", strerror(-r));
out:
	if (r < 0)
		rqueue_db_unlink_tmp(tmp);
	else
		log_info("receipt queue %s: created", path);
	return r;
}

/* Version 1, from before forwarding, gains the origins table. */
static int
rqueue_db_upgrade(sqlite3 *db, const char *path)
{
	char sql[512];
	int rc;

	(void)snprintf(sql, sizeof(sql),
	    "BEGIN; %s PRAGMA user_version=%d; COMMIT;", RQUEUE_DB_ORIGINS,
	    RQUEUE_SCHEMA_VERSION);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		(void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return rqueue_db_refuse_rc(db, path, rc, "cannot upgrade");
	}
	log_notice("receipt queue %s: upgraded to schema version %d", path,
	    RQUEUE_SCHEMA_VERSION);
	return 0;
}

/* Checks that db at path is a healthy database of this code's schema
 * (or of version 1, which it upgrades). */
static int
rqueue_db_check(sqlite3 *db, const char *path)
{
	char msg[512], detail[600];
	int64_t app = 0, version = 0;
	int rc;

	/* The first read of the file: where a file that is not a database,
	 * or is damaged in its header, shows. */
	rc = rqueue_db_pragma(db, "PRAGMA application_id", &app, NULL, 0);
	if (rc != SQLITE_OK)
		return rqueue_db_refuse_rc(db, path, rc, "unreadable");
	if (app != RQUEUE_APPLICATION_ID) {
		(void)snprintf(detail, sizeof(detail),
		    "application_id %lld, not %d", (long long)app,
		    RQUEUE_APPLICATION_ID);
		return rqueue_db_refuse(path, -EUCLEAN,
		    "not a ferry receipt queue", detail);
	}
	rc = rqueue_db_pragma(db, "PRAGMA user_version", &version, NULL, 0);
	if (rc != SQLITE_OK)
		return rqueue_db_refuse_rc(db, path, rc, "unreadable");
	if (version != RQUEUE_SCHEMA_VERSION && version != 1) {
		(void)snprintf(detail, sizeof(detail),
		    "schema version %lld; this ferryd knows %d",
		    (long long)version, RQUEUE_SCHEMA_VERSION);
		return rqueue_db_refuse(path, -ENOTSUP, "unknown schema",
		    detail);
	}
	rc = rqueue_db_pragma(db, "PRAGMA quick_check", NULL, msg, sizeof(msg));
	if (rc != SQLITE_OK)
		return rqueue_db_refuse_rc(db, path, rc, "corrupt");
	if (strcmp(msg, "ok") != 0)
		return rqueue_db_refuse(path, -EUCLEAN, "corrupt", msg);
	if (sqlite3_db_readonly(db, "main") == 1)
		return rqueue_db_refuse(path, -EROFS, "read-only", NULL);
	return version == 1 ? rqueue_db_upgrade(db, path) : 0;
}

/* Opens the existing database at path for this process alone. */
static int
rqueue_db_connect(const char *path, sqlite3 **ret_db)
{
	char mode[16] = "";
	sqlite3 *db = NULL;
	int rc, r;

	/* No SQLITE_OPEN_CREATE: a database that vanished is not made
	 * anew behind the caller's back. */
	rc = sqlite3_open_v2(path, &db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
	    NULL);
	if (rc != SQLITE_OK) {
		r = rqueue_db_refuse_rc(db, path, rc, "cannot open");
		goto out;
	}
	/* Exclusive before the first read: no -shm file, and no second
	 * ferryd on the same file. Entries are small: the WAL is folded
	 * back every 1000 pages of 4 KiB, SQLite's default. */
	rc = sqlite3_exec(db,
	    "PRAGMA locking_mode=EXCLUSIVE; PRAGMA synchronous=FULL;"
	    " PRAGMA busy_timeout=0; PRAGMA journal_size_limit=4194304;"
	    " PRAGMA recursive_triggers=OFF",
	    NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		r = rqueue_db_refuse_rc(db, path, rc, "cannot configure");
		goto out;
	}
	r = rqueue_db_check(db, path);
	if (r < 0)
		goto out;
	rc = rqueue_db_pragma(db, "PRAGMA journal_mode=WAL", NULL, mode,
	    sizeof(mode));
	if (rc != SQLITE_OK || strcmp(mode, "wal") != 0) {
		r = rqueue_db_refuse_rc(db, path,
		    rc != SQLITE_OK ? rc : SQLITE_CANTOPEN,
		    "cannot use WAL mode");
		goto out;
	}
	*ret_db = db;
	db = NULL;
out:
	(void)sqlite3_close(db);
	return r;
}

int
rqueue_db_open(const char *path, unsigned max_entries, uint64_t *ret_entries,
    struct rqueue_db **ret_db)
{
	char dir[PATH_MAX];
	struct stat sb;
	sqlite3 *db = NULL;
	int r = 0;

	if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir))
		return rqueue_db_refuse(path, -ENAMETOOLONG, "path too long",
		    NULL);
	/* SQLite writes a WAL beside the file: the directory must take
	 * new files even when the database exists. */
	if (access(dirname(dir), W_OK) < 0) {
		r = -errno;
		return rqueue_db_refuse(path, r, "directory not writable",
		    strerror(-r));
	}
	if (stat(path, &sb) < 0) {
		r = -errno;
		if (r != -ENOENT)
			return rqueue_db_refuse(path, r, "cannot stat",
			    strerror(-r));
		r = rqueue_db_create(path);
	} else if (!S_ISREG(sb.st_mode)) {
		r = rqueue_db_refuse(path,
		    S_ISDIR(sb.st_mode) ? -EISDIR : -EUCLEAN,
		    "not a regular file", NULL);
	}
	if (r < 0)
		return r;
	r = rqueue_db_connect(path, &db);
	if (r < 0)
		return r;
	r = rqueue_sql_new(db, path, max_entries, ret_entries, ret_db);
	if (r < 0)
		(void)sqlite3_close(db);
	return r;
}
