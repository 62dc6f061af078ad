/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A durable SQLite file of ferryd's (see sqlfile.h), layer 0, library
 * ferry_sqlite: creating, checking and opening it, and the transaction a
 * worker runs its batch in. Used by the block store (src/dht/store_db.c)
 * and the receipt queue (src/intermediary/rqueue_db.c); each logs under
 * its own name and tag, given in its struct sqlfile_spec.
 */
#include "lib/sqlfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "lib/fsutil.h"
#include "lib/log.h"

int
sqlfile_errno(int rc)
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
sqlfile_refuse(const struct sqlfile_spec *spec, const char *path, int r,
    const char *why, const char *detail)
{
	log_msg(FERRY_LOG_ERR, spec->tag, "%s %s: %s%s%s", spec->what, path,
	    why, detail ? ": " : "", detail ? detail : "");
	return r;
}

/* Logs SQLite's error rc on db (NULL: none open) and returns its errno. */
static int
sqlfile_refuse_rc(const struct sqlfile_spec *spec, sqlite3 *db,
    const char *path, int rc, const char *why)
{
	if ((rc & 0xff) == SQLITE_BUSY)
		why = "in use by another process";
	else if ((rc & 0xff) == SQLITE_CORRUPT)
		why = "corrupt";
	else if ((rc & 0xff) == SQLITE_NOTADB)
		why = "not an SQLite database";
	return sqlfile_refuse(spec, path, sqlfile_errno(rc), why,
	    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

/* The first column of the one row a PRAGMA returns: as an integer in
 * *ret_int, or its text in buf (either may be NULL). */
static int
sqlfile_pragma(sqlite3 *db, const char *sql, int64_t *ret_int, char *buf,
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

/* sqlite3_exec() of printf-style SQL: SQLITE_NOMEM if it cannot be
 * formatted. */
static int
sqlfile_execf(sqlite3 *db, const char *fmt, ...)
{
	va_list ap;
	char *sql;
	int rc;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (sql == NULL)
		return SQLITE_NOMEM;
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	return rc;
}

/* Removes what an interrupted sqlfile_create() may have left. */
static void
sqlfile_unlink_tmp(const char *tmp)
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
sqlfile_init_tmp(const struct sqlfile_spec *spec, const char *tmp)
{
	char mode[16] = "";
	sqlite3 *db = NULL;
	int rc;

	rc = sqlite3_open_v2(tmp, &db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
	        SQLITE_OPEN_EXRESCODE,
	    NULL);
	/* Fixed once the first page is written: before the switch to WAL. */
	if (rc == SQLITE_OK && spec->page_size > 0)
		rc = sqlfile_execf(db, "PRAGMA page_size=%d", spec->page_size);
	if (rc == SQLITE_OK)
		rc = sqlfile_pragma(db, "PRAGMA journal_mode=WAL", NULL, mode,
		    sizeof(mode));
	if (rc == SQLITE_OK && strcmp(mode, "wal") != 0)
		rc = SQLITE_CANTOPEN;
	if (rc == SQLITE_OK)
		rc = sqlfile_execf(db,
		    "PRAGMA synchronous=FULL; BEGIN; %s PRAGMA user_version=%d;"
		    " PRAGMA application_id=%d; COMMIT;",
		    spec->schema, spec->version, spec->application_id);
	if (rc != SQLITE_OK) {
		(void)sqlfile_refuse_rc(spec, db, tmp, rc, "cannot create");
		(void)sqlite3_close(db);
		return sqlfile_errno(rc);
	}
	rc = sqlite3_close(db);
	return rc == SQLITE_OK
	    ? 0
	    : sqlfile_refuse_rc(spec, NULL, tmp, rc, "cannot close");
}

/*
 * Creates the database at path. It is built under another name and
 * renamed into place, so that a file at path is always a database this
 * code finished: whatever else is found there later is damage, reported,
 * never a half-made file to start again.
 */
static int
sqlfile_create(const struct sqlfile_spec *spec, const char *path)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	int r;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		return sqlfile_refuse(spec, path, -ENAMETOOLONG,
		    "path too long", NULL);
	(void)snprintf(dir, sizeof(dir), "%s", path);
	sqlfile_unlink_tmp(tmp);
	r = sqlfile_init_tmp(spec, tmp);
	if (r < 0)
		goto out;
	r = fs_fsync_path(tmp, O_RDONLY);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r == 0)
		r = fs_fsync_path(dirname(dir), O_RDONLY | O_DIRECTORY);
	if (r < 0)
		(void)sqlfile_refuse(spec, path, r, "cannot create",
		    strerror(-r));
out:
	if (r < 0)
		sqlfile_unlink_tmp(tmp);
	else
		log_msg(FERRY_LOG_INFO, spec->tag, "%s %s: created", spec->what,
		    path);
	return r;
}

/* Takes an older version of the schema to spec's. */
static int
sqlfile_upgrade(const struct sqlfile_spec *spec, sqlite3 *db, const char *path)
{
	int rc = sqlfile_execf(db, "BEGIN; %s PRAGMA user_version=%d; COMMIT;",
	    spec->upgrade, spec->version);

	if (rc != SQLITE_OK) {
		(void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return sqlfile_refuse_rc(spec, db, path, rc, "cannot upgrade");
	}
	log_msg(FERRY_LOG_NOTICE, spec->tag,
	    "%s %s: upgraded to schema version %d", spec->what, path,
	    spec->version);
	return 0;
}

/* Checks that db at path is a healthy database of spec's schema, or of
 * an older version it upgrades. */
static int
sqlfile_check(const struct sqlfile_spec *spec, sqlite3 *db, const char *path)
{
	char msg[512], detail[600];
	int64_t app = 0, version = 0;
	int rc;

	/* The first read of the file: where a file that is not a database,
	 * or is damaged in its header, shows. */
	rc = sqlfile_pragma(db, "PRAGMA application_id", &app, NULL, 0);
	if (rc != SQLITE_OK)
		return sqlfile_refuse_rc(spec, db, path, rc, "unreadable");
	if (app != spec->application_id) {
		(void)snprintf(detail, sizeof(detail),
		    "application_id %lld, not %d", (long long)app,
		    spec->application_id);
		(void)snprintf(msg, sizeof(msg), "not a ferry %s", spec->what);
		return sqlfile_refuse(spec, path, -EUCLEAN, msg, detail);
	}
	rc = sqlfile_pragma(db, "PRAGMA user_version", &version, NULL, 0);
	if (rc != SQLITE_OK)
		return sqlfile_refuse_rc(spec, db, path, rc, "unreadable");
	if (version > spec->version || version < spec->min_version ||
	    (version < spec->version && spec->upgrade == NULL)) {
		(void)snprintf(detail, sizeof(detail),
		    "schema version %lld; this ferryd knows %d",
		    (long long)version, spec->version);
		return sqlfile_refuse(spec, path, -ENOTSUP, "unknown schema",
		    detail);
	}
	rc = sqlfile_pragma(db, "PRAGMA quick_check", NULL, msg, sizeof(msg));
	if (rc != SQLITE_OK)
		return sqlfile_refuse_rc(spec, db, path, rc, "corrupt");
	if (strcmp(msg, "ok") != 0)
		return sqlfile_refuse(spec, path, -EUCLEAN, "corrupt", msg);
	if (sqlite3_db_readonly(db, "main") == 1)
		return sqlfile_refuse(spec, path, -EROFS, "read-only", NULL);
	return version < spec->version ? sqlfile_upgrade(spec, db, path) : 0;
}

/* Opens the existing database at path for this process alone. */
static int
sqlfile_connect(const struct sqlfile_spec *spec, const char *path,
    sqlite3 **ret_db)
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
		r = sqlfile_refuse_rc(spec, db, path, rc, "cannot open");
		goto out;
	}
	/* Exclusive before the first read: no -shm file, and no other
	 * process (a second ferryd on this state directory) can use the
	 * database while we hold it. synchronous=FULL: a commit is on the
	 * disk when SQLite returns (src/dht/store.c). */
	rc = sqlfile_execf(db,
	    "PRAGMA locking_mode=EXCLUSIVE; PRAGMA synchronous=FULL;"
	    " PRAGMA busy_timeout=0; %s",
	    spec->tuning != NULL ? spec->tuning : "");
	if (rc != SQLITE_OK) {
		r = sqlfile_refuse_rc(spec, db, path, rc, "cannot configure");
		goto out;
	}
	r = sqlfile_check(spec, db, path);
	if (r < 0)
		goto out;
	rc = sqlfile_pragma(db, "PRAGMA journal_mode=WAL", NULL, mode,
	    sizeof(mode));
	if (rc != SQLITE_OK || strcmp(mode, "wal") != 0) {
		r = sqlfile_refuse_rc(spec, db, path,
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
sqlfile_no_fchown(int fd, uid_t uid, gid_t gid)
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
 * this one is replaced once, before the first file is opened, whichever
 * opens first.
 */
static void
sqlfile_vfs_setup(void)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);

	if (vfs != NULL && vfs->iVersion >= 3 && vfs->xSetSystemCall != NULL)
		(void)vfs->xSetSystemCall(vfs, "fchown",
		    (sqlite3_syscall_ptr)sqlfile_no_fchown);
}

int
sqlfile_open(const struct sqlfile_spec *spec, const char *path,
    sqlite3 **ret_db)
{
	static pthread_once_t vfs_once = PTHREAD_ONCE_INIT;
	char dir[PATH_MAX];
	struct stat sb;
	int r = 0;

	(void)pthread_once(&vfs_once, sqlfile_vfs_setup);
	if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir))
		return sqlfile_refuse(spec, path, -ENAMETOOLONG,
		    "path too long", NULL);
	/* SQLite writes a WAL beside the file: the directory must take
	 * new files even when the database exists. */
	if (access(dirname(dir), W_OK) < 0) {
		r = -errno;
		return sqlfile_refuse(spec, path, r, "directory not writable",
		    strerror(-r));
	}
	if (stat(path, &sb) < 0) {
		r = -errno;
		if (r != -ENOENT)
			return sqlfile_refuse(spec, path, r, "cannot stat",
			    strerror(-r));
		r = sqlfile_create(spec, path);
	} else if (!S_ISREG(sb.st_mode)) {
		r = sqlfile_refuse(spec, path,
		    S_ISDIR(sb.st_mode) ? -EISDIR : -EUCLEAN,
		    "not a regular file", NULL);
	}
	if (r < 0)
		return r;
	return sqlfile_connect(spec, path, ret_db);
}

/* Steps a statement that returns no rows and resets it. */
static int
sqlfile_tx_run(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	(void)sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : sqlfile_errno(rc ? rc : SQLITE_ERROR);
}

int
sqlfile_tx_init(struct sqlfile_tx *tx, sqlite3 *db)
{
	static const char *const sql[] = { "BEGIN IMMEDIATE", "COMMIT",
		"ROLLBACK" };
	sqlite3_stmt **s[] = { &tx->begin, &tx->commit, &tx->rollback };
	int rc = SQLITE_OK;

	tx->db = db;
	tx->changes_begin = 0;
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		*s[i] = NULL;
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]) && rc == SQLITE_OK; i++)
		rc = sqlite3_prepare_v3(db, sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, s[i], NULL);
	if (rc != SQLITE_OK) {
		sqlfile_tx_done(tx);
		return sqlfile_errno(rc);
	}
	return 0;
}

void
sqlfile_tx_done(struct sqlfile_tx *tx)
{
	(void)sqlite3_finalize(tx->begin);
	(void)sqlite3_finalize(tx->commit);
	(void)sqlite3_finalize(tx->rollback);
	tx->begin = tx->commit = tx->rollback = NULL;
}

int
sqlfile_tx_begin(struct sqlfile_tx *tx)
{
	tx->changes_begin = sqlite3_total_changes64(tx->db);
	return sqlfile_tx_run(tx->begin);
}

int
sqlfile_tx_commit(struct sqlfile_tx *tx)
{
	int r = sqlfile_tx_run(tx->commit);

	if (r < 0)
		return r;
	return sqlite3_total_changes64(tx->db) != tx->changes_begin;
}

void
sqlfile_tx_rollback(struct sqlfile_tx *tx)
{
	if (!sqlite3_get_autocommit(tx->db))
		(void)sqlfile_tx_run(tx->rollback);
}
