/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferryd's durable SQLite files (src/lib/sqlfile.c), apart from any
 * store: creation aside and rename, the refusals at open (not a
 * database, damaged pages, another application_id, a newer or older
 * schema, a directory at the path, a directory that takes no file, a
 * file held by another connection), the upgrade of a known older
 * version, the batch transaction, the errno of SQLite's codes, and the
 * fchown of SQLite's unix VFS replaced by the open itself. Real files in
 * a scratch directory.
 */
/* unit-link: ferry_sqlite */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <sqlite3.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/sqlfile.h"
#include "unit.h"

#define T_APP     0x54657374 /* "Test" */
#define SKIP_EXIT 77         /* a child could not set up its mount */

static char dir[256];
static char path[512];
static struct unit_log logbuf;

/* Version 1 of a file of two tables' worth of schema; version 2 adds
 * one, and knows how to take a version 1 file there. */
static const struct sqlfile_spec spec_v1 = {
	.what = "test file",
	.tag = "test",
	.application_id = T_APP,
	.version = 1,
	.min_version = 1,
	.schema = "CREATE TABLE t(id INTEGER PRIMARY KEY, x BLOB NOT NULL);"
	          "CREATE INDEX t_x ON t(x);",
	.page_size = 4096,
	.tuning = "PRAGMA journal_size_limit=1048576",
};

static const struct sqlfile_spec spec_v2 = {
	.what = "test file",
	.tag = "test",
	.application_id = T_APP,
	.version = 2,
	.min_version = 1,
	.schema = "CREATE TABLE t(id INTEGER PRIMARY KEY, x BLOB NOT NULL);"
	          "CREATE INDEX t_x ON t(x); CREATE TABLE u(y);",
	.upgrade = "CREATE TABLE u(y);",
};

static void
test_setup(void)
{
	unit_tmpdir(dir, sizeof(dir));
	ck_assert_int_eq(fs_path_join(path, sizeof(path), dir, "test.db"), 0);
	unit_log_capture(&logbuf, FERRY_LOG_INFO);
}

static void
test_teardown(void)
{
	unit_log_release();
	unit_rmtree(dir);
}

static sqlite3 *
t_open(const struct sqlfile_spec *spec)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(sqlfile_open(spec, path, &db), 0);
	ck_assert_ptr_nonnull(db);
	return db;
}

/* The integer the first row of sql has, on db. */
static int64_t
t_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int64_t v;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	(void)sqlite3_finalize(s);
	return v;
}

/* Runs sql on the file at path through a plain connection of SQLite's. */
static void
t_make_sqlite(const char *sql)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}

/* sqlfile_open() of spec at path fails with want and logs why, naming
 * the file. */
static void
t_refused(const struct sqlfile_spec *spec, int want, const char *why)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(sqlfile_open(spec, path, &db), want);
	ck_assert_ptr_null(db);
	ck_assert_msg(unit_log_has(&logbuf, why), "no \"%s\" in the log", why);
	ck_assert_msg(unit_log_has(&logbuf, path), "the path is not logged");
	ck_assert(unit_log_has(&logbuf, "test file"));
}

/* A file of spec_v1 with n rows of 200 bytes, closed. */
static void
t_fill(int n)
{
	sqlite3 *db = t_open(&spec_v1);
	char sql[128];

	(void)snprintf(sql, sizeof(sql),
	    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c"
	    " WHERE i < %d) INSERT INTO t(x) SELECT randomblob(200) FROM c",
	    n);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}

START_TEST(test_create_and_reopen)
{
	char tmp[600];
	struct stat sb;
	sqlite3 *db;

	/* What an interrupted creation left goes. */
	(void)snprintf(tmp, sizeof(tmp), "%s.new", path);
	(void)unit_write(dir, "test.db.new", "half", 4);
	db = t_open(&spec_v1);
	ck_assert(unit_log_has(&logbuf, "created"));
	ck_assert_int_lt(stat(tmp, &sb), 0);
	ck_assert_int_eq(t_int(db, "PRAGMA application_id"), T_APP);
	ck_assert_int_eq(t_int(db, "PRAGMA user_version"), 1);
	ck_assert_int_eq(t_int(db, "PRAGMA page_size"), 4096);
	ck_assert_int_eq(t_int(db, "PRAGMA synchronous"), 2); /* FULL */
	ck_assert_int_eq(t_int(db, "PRAGMA busy_timeout"), 0);
	ck_assert_int_eq(t_int(db, "PRAGMA journal_size_limit"), 1048576);
	ck_assert_int_eq(t_int(db, "SELECT count(*) FROM t"), 0);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
	/* WAL is kept in the file's header, exclusive locking per
	 * connection. */
	unit_log_release();
	unit_log_capture(&logbuf, FERRY_LOG_INFO);
	db = t_open(&spec_v1);
	ck_assert(!unit_log_has(&logbuf, "created"));
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO t(x) VALUES (x'01')",
	                     NULL, NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(t_int(db, "SELECT count(*) FROM t"), 1);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
}
END_TEST

/* ferryd's unit forbids fchown; SQLite calls it run as root. The open
 * replaces it, so no file depends on another having opened first. */
START_TEST(test_fchown_replaced)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
	sqlite3 *db;

	ck_assert_ptr_nonnull(vfs);
	if (vfs->iVersion < 3 || vfs->xGetSystemCall == NULL)
		return;
	db = t_open(&spec_v1);
	ck_assert_ptr_nonnull(vfs->xGetSystemCall(vfs, "fchown"));
	ck_assert(
	    vfs->xGetSystemCall(vfs, "fchown") != (sqlite3_syscall_ptr)fchown);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}
END_TEST

START_TEST(test_errno)
{
	static const struct {
		int rc, want;
	} cases[] = {
		{ SQLITE_OK, 0 },
		{ SQLITE_ROW, 0 },
		{ SQLITE_DONE, 0 },
		{ SQLITE_FULL, -ENOSPC },
		{ SQLITE_READONLY, -EROFS },
		{ SQLITE_READONLY_DBMOVED, -EROFS },
		{ SQLITE_NOMEM, -ENOMEM },
		{ SQLITE_BUSY, -EBUSY },
		{ SQLITE_BUSY_SNAPSHOT, -EBUSY },
		{ SQLITE_LOCKED, -EBUSY },
		{ SQLITE_CORRUPT, -EUCLEAN },
		{ SQLITE_CORRUPT_INDEX, -EUCLEAN },
		{ SQLITE_NOTADB, -EUCLEAN },
		{ SQLITE_PERM, -EACCES },
		{ SQLITE_AUTH, -EACCES },
		{ SQLITE_CANTOPEN, -EACCES },
		{ SQLITE_CANTOPEN_ISDIR, -EACCES },
		{ SQLITE_IOERR, -EIO },
		{ SQLITE_IOERR_FSYNC, -EIO },
		{ SQLITE_ERROR, -EIO },
		{ SQLITE_CONSTRAINT_UNIQUE, -EIO },
		{ SQLITE_MISUSE, -EIO },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(sqlfile_errno(cases[i].rc) == cases[i].want,
		    "SQLite code %d: %d, not %d", cases[i].rc,
		    sqlfile_errno(cases[i].rc), cases[i].want);
}
END_TEST

/* A batch's transaction says whether it wrote, and undoes what it did
 * when rolled back. A second connection finds the file held. */
START_TEST(test_tx_and_busy)
{
	sqlite3 *db = t_open(&spec_v1), *other = NULL;
	struct sqlfile_tx tx;

	ck_assert_int_eq(sqlfile_tx_init(&tx, db), 0);
	ck_assert_int_eq(sqlfile_tx_begin(&tx), 0);
	ck_assert_int_eq(sqlfile_tx_commit(&tx), 0);
	ck_assert_int_eq(sqlfile_tx_begin(&tx), 0);
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO t(x) VALUES (x'01')",
	                     NULL, NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlfile_tx_commit(&tx), 1);
	ck_assert_int_eq(sqlfile_tx_begin(&tx), 0);
	ck_assert_int_eq(sqlfile_tx_begin(&tx), -EIO); /* nested: an error */
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO t(x) VALUES (x'02')",
	                     NULL, NULL, NULL),
	    SQLITE_OK);
	sqlfile_tx_rollback(&tx);
	ck_assert(sqlite3_get_autocommit(db));
	sqlfile_tx_rollback(&tx); /* none open: nothing to do */
	ck_assert_int_eq(t_int(db, "SELECT count(*) FROM t"), 1);

	ck_assert_int_eq(sqlfile_open(&spec_v1, path, &other), -EBUSY);
	ck_assert_ptr_null(other);
	ck_assert(unit_log_has(&logbuf, "in use by another process"));
	sqlfile_tx_done(&tx);
	sqlfile_tx_done(&tx); /* twice is fine */
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
	db = t_open(&spec_v1);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}
END_TEST

START_TEST(test_garbage_file)
{
	char junk[8192];
	uint64_t state = 11;
	uint8_t *after = NULL;
	size_t len;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(unit_rand(&state) >> 24);
	(void)unit_write(dir, "test.db", junk, sizeof(junk));
	t_refused(&spec_v1, -EUCLEAN, "not an SQLite database");
	/* Damage is reported, never replaced by a new file. */
	ck_assert_int_eq(fs_read_file(path, 1 << 20, &after, &len), 0);
	ck_assert_uint_eq(len, sizeof(junk));
	ck_assert_mem_eq(after, junk, sizeof(junk));
	free(after);
}
END_TEST

START_TEST(test_empty_file)
{
	(void)unit_write(dir, "test.db", "", 0);
	/* SQLite takes an empty file for an empty database: its
	 * application_id is 0. */
	t_refused(&spec_v1, -EUCLEAN, "not a ferry test file");
}
END_TEST

/* A file whose pages past its header were overwritten. */
START_TEST(test_damaged_pages)
{
	uint8_t *data = NULL;
	size_t len;

	t_fill(200);
	ck_assert_int_eq(fs_read_file(path, 1 << 24, &data, &len), 0);
	ck_assert_uint_gt(len, 4 * 4096);
	memset(data + 4096, 0xee, len - 4096);
	(void)unit_write(dir, "test.db", data, len);
	free(data);
	t_refused(&spec_v1, -EUCLEAN, "corrupt");
}
END_TEST

START_TEST(test_other_application)
{
	t_make_sqlite("CREATE TABLE t(x); PRAGMA application_id=1;");
	t_refused(&spec_v1, -EUCLEAN, "not a ferry test file");
	ck_assert(unit_log_has(&logbuf, "application_id 1, not 1415934836"));
}
END_TEST

START_TEST(test_newer_schema)
{
	sqlite3 *db = t_open(&spec_v2);

	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
	/* A file a later ferryd made is left alone. */
	t_refused(&spec_v1, -ENOTSUP, "schema version 2; this ferryd knows 1");
	ck_assert(unit_log_has(&logbuf, "unknown schema"));
	t_make_sqlite("PRAGMA user_version=99;");
	t_refused(&spec_v2, -ENOTSUP, "schema version 99; this ferryd knows 2");
}
END_TEST

START_TEST(test_older_schema)
{
	sqlite3 *db = t_open(&spec_v1);

	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
	/* Older than any version spec_v2 upgrades. */
	t_make_sqlite("PRAGMA user_version=0;");
	t_refused(&spec_v2, -ENOTSUP, "schema version 0; this ferryd knows 2");
}
END_TEST

START_TEST(test_upgrade)
{
	sqlite3 *db;

	t_fill(3);
	db = t_open(&spec_v2);
	ck_assert(unit_log_has(&logbuf, "upgraded to schema version 2"));
	ck_assert_int_eq(t_int(db, "PRAGMA user_version"), 2);
	ck_assert_int_eq(t_int(db, "SELECT count(*) FROM u"), 0);
	ck_assert_int_eq(t_int(db, "SELECT count(*) FROM t"), 3);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
	/* Once. */
	unit_log_release();
	unit_log_capture(&logbuf, FERRY_LOG_INFO);
	db = t_open(&spec_v2);
	ck_assert(!unit_log_has(&logbuf, "upgraded"));
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}
END_TEST

/* An upgrade that fails leaves the file as it was. */
START_TEST(test_upgrade_fails)
{
	struct sqlfile_spec bad = spec_v2;
	sqlite3 *db;

	bad.upgrade = "CREATE TABLE u(y); CREATE TABLE t(x);";
	t_fill(1);
	t_refused(&bad, -EIO, "cannot upgrade");
	db = t_open(&spec_v1);
	ck_assert_int_eq(t_int(db, "PRAGMA user_version"), 1);
	ck_assert_int_eq(t_int(db,
	                     "SELECT count(*) FROM sqlite_schema"
	                     " WHERE name = 'u'"),
	    0);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}
END_TEST

START_TEST(test_path_is_a_directory)
{
	ck_assert_int_eq(mkdir(path, 0700), 0);
	t_refused(&spec_v1, -EISDIR, "not a regular file");
}
END_TEST

START_TEST(test_no_directory)
{
	char missing[600];
	sqlite3 *db = NULL;

	(void)snprintf(missing, sizeof(missing), "%s/gone/test.db", dir);
	ck_assert_int_eq(sqlfile_open(&spec_v1, missing, &db), -ENOENT);
	ck_assert_ptr_null(db);
	ck_assert(unit_log_has(&logbuf, "directory not writable"));
}
END_TEST

#define CHILD_CHECK(c)                                                         \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,     \
			    #c);                                               \
			_exit(1);                                              \
		}                                                              \
	} while (0)

/* In a mount namespace of its own, dir read-only: neither the existing
 * file nor a new one opens. */
static _Noreturn void
t_ro_child(void)
{
	char other[600];
	sqlite3 *db = NULL;

	if (unshare(CLONE_NEWNS) < 0 ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(dir, dir, "none", MS_BIND, NULL) < 0 ||
	    mount("none", dir, "none", MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) <
	        0)
		_exit(SKIP_EXIT);
	CHILD_CHECK(sqlfile_open(&spec_v1, path, &db) == -EROFS);
	CHILD_CHECK(db == NULL);
	(void)snprintf(other, sizeof(other), "%s/other.db", dir);
	CHILD_CHECK(sqlfile_open(&spec_v1, other, &db) == -EROFS);
	CHILD_CHECK(db == NULL);
	CHILD_CHECK(unit_log_has(&logbuf, "directory not writable"));
	_exit(0);
}

START_TEST(test_read_only_dir)
{
	sqlite3 *db = NULL;
	int status;
	pid_t pid;

	t_fill(2);
	if (geteuid() != 0) {
		ck_assert_int_eq(chmod(dir, 0500), 0);
		ck_assert_int_eq(sqlfile_open(&spec_v1, path, &db), -EACCES);
		ck_assert_ptr_null(db);
		ck_assert(unit_log_has(&logbuf, "directory not writable"));
		ck_assert_int_eq(chmod(dir, 0700), 0);
		return;
	}
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		t_ro_child();
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == SKIP_EXIT) {
		fprintf(stderr,
		    "test_read_only_dir: skipped (no mount namespace)\n");
		return;
	}
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	db = t_open(&spec_v1);
	ck_assert_int_eq(t_int(db, "SELECT count(*) FROM t"), 2);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}
END_TEST

static Suite *
sqlfile_suite(void)
{
	Suite *s = suite_create("sqlfile");
	TCase *tc = tcase_create("open");
	TCase *td = tcase_create("refusals");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_create_and_reopen);
	tcase_add_test(tc, test_fchown_replaced);
	tcase_add_test(tc, test_errno);
	tcase_add_test(tc, test_tx_and_busy);
	tcase_add_test(tc, test_upgrade);
	tcase_add_test(tc, test_upgrade_fails);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(td, test_setup, test_teardown);
	tcase_add_test(td, test_garbage_file);
	tcase_add_test(td, test_empty_file);
	tcase_add_test(td, test_damaged_pages);
	tcase_add_test(td, test_other_application);
	tcase_add_test(td, test_newer_schema);
	tcase_add_test(td, test_older_schema);
	tcase_add_test(td, test_path_is_a_directory);
	tcase_add_test(td, test_no_directory);
	tcase_add_test(td, test_read_only_dir);
	suite_add_tcase(s, td);
	return s;
}

int
main(void)
{
	return unit_run(sqlfile_suite());
}
