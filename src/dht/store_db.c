/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The block store's SQLite database (see store.h), dht layer: creating,
 * checking and opening it before the worker runs; store_sql.c has the
 * statements run on it. Decisions on the layout, the journal
 * and durability are written down at the top of store.c.
 */
#define LOG_TAG "dht"
#include "dht/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "lib/fsutil.h"
#include "lib/log.h"

/* What a new database is made of; STORE_SCHEMA_VERSION names it. Rows
 * keep the block's bytes last, so that reading the other columns never
 * touches a block's overflow pages. dist is key XOR own id, indexed (with
 * size) so that the farthest blocks are found without reading them. */
static const char store_db_schema[] =
    "CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL);"
    "CREATE TABLE blocks("
    "  id INTEGER PRIMARY KEY,"
    "  key BLOB NOT NULL UNIQUE,"
    "  dist BLOB NOT NULL,"
    "  expiry INTEGER NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  data BLOB NOT NULL);"
    "CREATE INDEX blocks_dist ON blocks(dist, size);"
    "CREATE INDEX blocks_expiry ON blocks(expiry);";

int
store_db_errno(int rc)
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
store_db_refuse(const char *path, int r, const char *why, const char *detail)
{
	log_err("block store %s: %s%s%s", path, why, detail ? ": " : "",
	    detail ? detail : "");
	return r;
}

/* Logs SQLite's error on db and returns its errno. */
static int
store_db_refuse_rc(sqlite3 *db, const char *path, int rc, const char *why)
{
	if ((rc & 0xff) == SQLITE_BUSY)
		why = "in use by another process";
	else if ((rc & 0xff) == SQLITE_CORRUPT)
		why = "corrupt";
	else if ((rc & 0xff) == SQLITE_NOTADB)
		why = "not an SQLite database";
	return store_db_refuse(path, store_db_errno(rc), why,
	    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

/* One integer PRAGMA (application_id, user_version) of db. */
static int
store_db_pragma_int(sqlite3 *db, const char *sql, int64_t *ret)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);

	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*ret = sqlite3_column_int64(s, 0);
		rc = SQLITE_OK;
	}
	(void)sqlite3_finalize(s);
	return rc;
}

/* The text one row of a PRAGMA returns (quick_check, journal_mode),
 * copied into buf. */
static int
store_db_pragma_text(sqlite3 *db, const char *sql, char *buf, size_t size)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);

	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(s, 0);

		(void)snprintf(buf, size, "%s", t ? (const char *)t : "");
		rc = SQLITE_OK;
	}
	(void)sqlite3_finalize(s);
	return rc;
}

/* Removes what an interrupted store_db_create() may have left. */
static void
store_db_unlink_tmp(const char *tmp)
{
	char aux[PATH_MAX + 16];

	(void)unlink(tmp);
	(void)snprintf(aux, sizeof(aux), "%s-wal", tmp);
	(void)unlink(aux);
	(void)snprintf(aux, sizeof(aux), "%s-journal", tmp);
	(void)unlink(aux);
}

/* Fills a fresh database at tmp with the schema; closes it, which folds
 * its WAL into it. */
static int
store_db_init_tmp(const char *tmp)
{
	char sql[1024], mode[16];
	sqlite3 *db = NULL;
	int rc;

	rc = sqlite3_open_v2(tmp, &db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
	        SQLITE_OPEN_EXRESCODE,
	    NULL);
	/* Fixed once the first page is written: before the switch to WAL. */
	(void)snprintf(sql, sizeof(sql), "PRAGMA page_size=%d",
	    STORE_PAGE_SIZE);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = store_db_pragma_text(db, "PRAGMA journal_mode=WAL", mode,
		    sizeof(mode));
	if (rc == SQLITE_OK && strcmp(mode, "wal") != 0)
		rc = SQLITE_CANTOPEN;
	(void)snprintf(sql, sizeof(sql),
	    "PRAGMA synchronous=FULL; BEGIN; %s PRAGMA user_version=%d;"
	    " PRAGMA application_id=%d; COMMIT;",
	    store_db_schema, STORE_SCHEMA_VERSION, STORE_APPLICATION_ID);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		(void)store_db_refuse_rc(db, tmp, rc, "cannot create");
		(void)sqlite3_close(db);
		return store_db_errno(rc);
	}
	rc = sqlite3_close(db);
	return rc == SQLITE_OK
	    ? 0
	    : store_db_refuse_rc(NULL, tmp, rc, "cannot close");
}

/*
 * Creates the database at path. It is built under another name and
 * renamed into place, so that a file at path is always a database this
 * code finished: whatever else is found there later is damage, reported,
 * never a half-made store to start again.
 */
static int
store_db_create(const char *dir, const char *path)
{
	char tmp[PATH_MAX];
	int r;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	store_db_unlink_tmp(tmp);
	r = store_db_init_tmp(tmp);
	if (r == 0)
		r = fs_fsync_path(tmp, O_RDONLY);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r == 0)
		r = fs_fsync_path(dir, O_RDONLY | O_DIRECTORY);
	if (r < 0) {
		store_db_unlink_tmp(tmp);
		return store_db_refuse(path, r, "cannot create", strerror(-r));
	}
	log_info("block store %s: created", path);
	return 0;
}

/* Checks that db at path is a healthy database of this code's schema. */
static int
store_db_check(sqlite3 *db, const char *path)
{
	char msg[512], detail[600];
	int64_t app = 0, version = 0;
	int rc;

	/* The first read of the file: where a file that is not a database,
	 * or is damaged in its header, shows. */
	rc = store_db_pragma_int(db, "PRAGMA application_id", &app);
	if (rc != SQLITE_OK)
		return store_db_refuse_rc(db, path, rc, "unreadable");
	if (app != STORE_APPLICATION_ID) {
		(void)snprintf(detail, sizeof(detail),
		    "application_id %lld, not %d", (long long)app,
		    STORE_APPLICATION_ID);
		return store_db_refuse(path, -EUCLEAN,
		    "not a ferry block store", detail);
	}
	rc = store_db_pragma_int(db, "PRAGMA user_version", &version);
	if (rc != SQLITE_OK)
		return store_db_refuse_rc(db, path, rc, "unreadable");
	if (version != STORE_SCHEMA_VERSION) {
		(void)snprintf(detail, sizeof(detail),
		    "schema version %lld; this ferryd knows %d",
		    (long long)version, STORE_SCHEMA_VERSION);
		return store_db_refuse(path, -ENOTSUP, "unknown schema",
		    detail);
	}
	rc = store_db_pragma_text(db, "PRAGMA quick_check", msg, sizeof(msg));
	if (rc != SQLITE_OK)
		return store_db_refuse_rc(db, path, rc, "corrupt");
	if (strcmp(msg, "ok") != 0)
		return store_db_refuse(path, -EUCLEAN, "corrupt", msg);
	if (sqlite3_db_readonly(db, "main") == 1)
		return store_db_refuse(path, -EROFS, "read-only", NULL);
	return 0;
}

/* Opens the existing database at path for this process alone. */
static int
store_db_connect(const char *path, sqlite3 **ret_db)
{
	char mode[16];
	sqlite3 *db = NULL;
	int rc, r;

	/* No SQLITE_OPEN_CREATE: a database that vanished is not made
	 * anew behind the caller's back. */
	rc = sqlite3_open_v2(path, &db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
	    NULL);
	if (rc != SQLITE_OK) {
		r = store_db_refuse_rc(db, path, rc, "cannot open");
		goto out;
	}
	/* Exclusive before the first read: no -shm file, and no other
	 * process (a second ferryd on this state directory) can use the
	 * database while we hold it. synchronous=FULL: see store.c. The
	 * WAL is folded back every 256 pages (16 MiB of 64 KiB pages) and
	 * cut back to 16 MiB after a larger transaction. */
	rc = sqlite3_exec(db,
	    "PRAGMA locking_mode=EXCLUSIVE;"
	    " PRAGMA synchronous=FULL; PRAGMA busy_timeout=0;"
	    " PRAGMA wal_autocheckpoint=256;"
	    " PRAGMA journal_size_limit=16777216",
	    NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		r = store_db_refuse_rc(db, path, rc, "cannot configure");
		goto out;
	}
	r = store_db_check(db, path);
	if (r < 0)
		goto out;
	rc = store_db_pragma_text(db, "PRAGMA journal_mode=WAL", mode,
	    sizeof(mode));
	if (rc != SQLITE_OK || strcmp(mode, "wal") != 0) {
		r = store_db_refuse_rc(db, path,
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

/* SQLite's fchown in place of the system's: it does nothing. */
static int
store_db_no_fchown(int fd, uid_t uid, gid_t gid)
{
	(void)fd;
	(void)uid;
	(void)gid;
	return 0;
}

/*
 * Run as root, SQLite hands each new WAL and journal file to the owner of
 * its database with fchown(), which ferryd's unit forbids (@privileged)
 * and ferryd never needs: its state directory and everything in it are
 * its own. The unix VFS lets a program replace the system calls it uses;
 * this one is replaced once, before any database is opened.
 */
static void
store_db_vfs_setup(void)
{
	static bool done;
	sqlite3_vfs *vfs;

	if (done)
		return;
	done = true;
	vfs = sqlite3_vfs_find(NULL);
	if (vfs != NULL && vfs->iVersion >= 3 && vfs->xSetSystemCall != NULL)
		(void)vfs->xSetSystemCall(vfs, "fchown",
		    (sqlite3_syscall_ptr)store_db_no_fchown);
}

int
store_db_open(const char *dir, const uint8_t own_id[STORE_KEY_LEN],
    uint64_t quota, store_db_row_fn *fn, void *cls, struct store_db **ret_db)
{
	char path[PATH_MAX];
	struct stat sb;
	sqlite3 *db = NULL;
	struct store_db *d = NULL;
	int r;

	store_db_vfs_setup();
	r = fs_path_join(path, sizeof(path), dir, STORE_DB_FILE);
	if (r < 0)
		return store_db_refuse(dir, r, "path too long", NULL);
	if (access(dir, W_OK) < 0) {
		r = -errno;
		return store_db_refuse(dir, r, "directory not writable",
		    strerror(-r));
	}
	if (stat(path, &sb) < 0) {
		r = -errno;
		if (r != -ENOENT)
			return store_db_refuse(path, r, "cannot stat",
			    strerror(-r));
		r = store_db_create(dir, path);
	} else if (!S_ISREG(sb.st_mode))
		r = store_db_refuse(path,
		    S_ISDIR(sb.st_mode) ? -EISDIR : -EUCLEAN,
		    "not a regular file", NULL);
	if (r < 0)
		return r;
	r = store_db_connect(path, &db);
	if (r < 0)
		return r;
	r = store_sql_new(db, path, own_id, quota, fn, cls, &d);
	if (r < 0) {
		(void)sqlite3_close(db);
		return r;
	}
	*ret_db = d;
	return 0;
}
