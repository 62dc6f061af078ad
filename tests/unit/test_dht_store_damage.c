/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's block store (src/dht/store*.c) against damage: databases that
 * are not SQLite, truncated, corrupt, of another schema or program,
 * refused at open and left as they were; SIGKILL during puts, after which
 * every acknowledged block is there and intact; a write error, a full
 * disk and a read-only one, after which the store goes on. Real files,
 * real processes; the full and read-only disks need root (a tmpfs and a
 * bind mount in a mount namespace of a child) and are skipped without.
 * What cannot be tested here: a power cut (see src/dht/store.c).
 */
/* ctest: TIMEOUT=900 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>
#include <sodium.h>
#include <sqlite3.h>

#include <ferry/transport.h>

#include "dht/store.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/time.h"
#include "store_test.h"
#include "unit.h"

#define T_DAY     86400ull
#define SKIP_EXIT 77 /* a child could not set up what it needs */

static char dir[256];
static char dbpath[512];
static struct event_base *base;
static const uint8_t own_id[STORE_KEY_LEN] = { 0x42 };
static struct unit_log logbuf;

static void
test_setup(void)
{
	unit_tmpdir(dir, sizeof(dir));
	ck_assert_int_eq(fs_path_join(dbpath, sizeof(dbpath), dir,
	                     STORE_DB_FILE),
	    0);
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	unit_log_capture(&logbuf, FERRY_LOG_INFO);
}

static void
test_teardown(void)
{
	unit_log_release();
	event_base_free(base);
	unit_rmtree(dir);
}

static uint64_t
t_expiry(void)
{
	return time_real_s() + T_DAY;
}

/* The size of block i in these tests: 512 bytes to 64 KiB. */
static size_t
t_size(uint64_t i)
{
	return 512 + (size_t)(i * 7919 % 65024);
}

/* Makes a healthy store of n blocks (seeds 0..n-1) and closes it. */
static void
t_make_store(int n)
{
	struct store *st = NULL;
	uint8_t key[STORE_KEY_LEN], *data = malloc(65536);

	ck_assert_ptr_nonnull(data);
	ck_assert_int_eq(store_open(base, dir, own_id, 1ull << 30, &st), 0);
	for (int i = 0; i < n; i++) {
		st_block((uint64_t)i, data, t_size((uint64_t)i), key);
		ck_assert_int_eq(st_put(base, st, key, data,
		                     t_size((uint64_t)i), t_expiry()),
		    0);
	}
	store_free(st);
	free(data);
}

/* Opens the store, checks blocks 0..n-1 and closes it. */
static void
t_check_store(int n)
{
	struct store *st = NULL;
	struct store_stats s;

	ck_assert_int_eq(store_open(base, dir, own_id, 1ull << 30, &st), 0);
	store_stats(st, &s);
	ck_assert_uint_eq(s.blocks, (uint64_t)n);
	for (int i = 0; i < n; i++)
		ck_assert(
		    st_check_block(base, st, (uint64_t)i, t_size((uint64_t)i)));
	store_free(st);
}

static uint8_t *
t_read(const char *path, size_t *ret_len)
{
	uint8_t *data = NULL;

	ck_assert_int_eq(fs_read_file(path, 64 << 20, &data, ret_len), 0);
	return data;
}

static void
t_write(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
}

static void
t_sql(const char *path, const char *sql)
{
	sqlite3 *db;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}

enum bad_kind {
	BAD_TEXT,      /* a text file */
	BAD_EMPTY,     /* zero bytes */
	BAD_HEADER,    /* the first 60 bytes of a store */
	BAD_TRUNCATED, /* the first half of a store */
	BAD_PAGE,      /* a b-tree page of a store overwritten */
	BAD_SCHEMA,    /* a store of schema version 99 */
	BAD_FOREIGN,   /* another program's SQLite database */
};

static const struct {
	enum bad_kind kind;
	int want;          /* store_open's error */
	const char *words; /* in the log line */
} bad_cases[] = {
	{ BAD_TEXT, -EUCLEAN, "not a database" },
	{ BAD_EMPTY, -EUCLEAN, "not a ferry block store" },
	{ BAD_HEADER, -EUCLEAN, "" },
	{ BAD_TRUNCATED, -EUCLEAN, "corrupt" },
	{ BAD_PAGE, -EUCLEAN, "" },
	{ BAD_SCHEMA, -ENOTSUP, "schema version 99" },
	{ BAD_FOREIGN, -EUCLEAN, "not a ferry block store" },
};

/* Puts the damaged database of kind at dbpath. */
static void
t_make_bad(enum bad_kind kind)
{
	static const char text[] = "this is not a database\n";
	uint8_t *data;
	size_t len, page;

	if (kind == BAD_TEXT) {
		t_write(dbpath, text, sizeof(text) - 1);
		return;
	}
	if (kind == BAD_EMPTY || kind == BAD_FOREIGN) {
		t_write(dbpath, "", 0);
		if (kind == BAD_FOREIGN)
			t_sql(dbpath,
			    "CREATE TABLE t(a, b);"
			    " INSERT INTO t VALUES (1, 2);");
		return;
	}
	t_make_store(40);
	if (kind == BAD_SCHEMA) {
		t_sql(dbpath, "PRAGMA user_version=99");
		return;
	}
	data = t_read(dbpath, &len);
	page = (size_t)data[16] << 8 | data[17];
	ck_assert_uint_gt(len, 8 * page);
	if (kind == BAD_HEADER)
		len = 60;
	else if (kind == BAD_TRUNCATED)
		len /= 2;
	else
		/* Page 4 is the root of the blocks table (created after
		 * sqlite_schema, meta and meta's key index). */
		memset(data + 3 * page, 0xa5, page);
	t_write(dbpath, data, len);
	free(data);
}

START_TEST(test_bad_database)
{
	struct store *st = NULL;
	uint8_t *before, *after;
	size_t blen, alen;

	t_make_bad(bad_cases[_i].kind);
	before = t_read(dbpath, &blen);
	ck_assert_int_eq(store_open(base, dir, own_id, 1 << 20, &st),
	    bad_cases[_i].want);
	ck_assert_ptr_null(st);
	ck_assert_msg(unit_log_has(&logbuf, dbpath), "no log line names %s",
	    dbpath);
	ck_assert_msg(unit_log_has(&logbuf, bad_cases[_i].words),
	    "no log line says \"%s\" (last: %s)", bad_cases[_i].words,
	    logbuf.n ? logbuf.line[logbuf.n - 1] : "none");
	/* Refused, and left as it was for whoever looks at it. */
	after = t_read(dbpath, &alen);
	ck_assert_uint_eq(alen, blen);
	ck_assert_mem_eq(after, before, blen);
	free(before);
	free(after);
}
END_TEST

START_TEST(test_database_is_a_directory)
{
	struct store *st = NULL;

	ck_assert_int_eq(mkdir(dbpath, 0700), 0);
	ck_assert_int_eq(store_open(base, dir, own_id, 1 << 20, &st), -EISDIR);
	ck_assert(unit_log_has(&logbuf, dbpath));
}
END_TEST

/* What a creation cut short leaves is not the store: made afresh. */
START_TEST(test_creation_cut_short)
{
	char tmp[600];

	(void)snprintf(tmp, sizeof(tmp), "%s.new", dbpath);
	t_write(tmp, "half", 4);
	t_make_store(3);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	t_check_store(3);
}
END_TEST

/*
 * kill -9 during puts. The child keeps CRASH_WINDOW puts in flight and
 * writes a record to the pipe for each put acknowledged; the parent kills
 * it after a random number of records, then reopens the database: every
 * block the child was told is durable must be there, intact.
 */
#define CRASH_WINDOW 16
#define CRASH_ROUNDS 3

struct crash_rec {
	uint64_t seed;              /* the block made from it */
	uint8_t key[STORE_KEY_LEN]; /* its key, as the child put it */
};

struct crash {
	struct store *st;
	int fd;        /* the pipe's write end */
	uint64_t next; /* seed of the next put */
	uint8_t *buf;  /* for making blocks */
};

struct crash_put {
	struct crash *c;
	struct crash_rec rec;
};

static void crash_put_next(struct crash *c);

static void
crash_on_done(void *cls, int status)
{
	struct crash_put *p = cls;
	struct crash *c = p->c;

	if (status != 0)
		_exit(3);
	/* One write(2) of less than PIPE_BUF: the record is whole or
	 * absent, whenever the kill comes. */
	if (write(c->fd, &p->rec, sizeof(p->rec)) != sizeof(p->rec))
		_exit(4);
	free(p);
	crash_put_next(c);
}

static void
crash_put_next(struct crash *c)
{
	struct crash_put *p = malloc(sizeof(*p));
	size_t len = t_size(c->next);

	if (p == NULL)
		_exit(5);
	p->c = c;
	p->rec.seed = c->next++;
	st_block(p->rec.seed, c->buf, len, p->rec.key);
	if (store_put(c->st, p->rec.key, c->buf, len, t_expiry(), crash_on_done,
	        p) < 0)
		_exit(6);
}

static _Noreturn void
crash_child(int fd, uint64_t first_seed)
{
	struct crash c = { .fd = fd, .next = first_seed };
	struct event_base *b = event_base_new();

	c.buf = malloc(65536);
	if (b == NULL || c.buf == NULL ||
	    store_open(b, dir, own_id, 1ull << 30, &c.st) < 0)
		_exit(2);
	for (int i = 0; i < CRASH_WINDOW; i++)
		crash_put_next(&c);
	(void)event_base_dispatch(b);
	_exit(7);
}

/* What the parent has read from the child so far. */
struct crash_log {
	struct crash_rec *recs;
	size_t n;   /* records read */
	size_t cap; /* records allocated */
};

/* Reads whole records until until of them, or end of file. */
static void
crash_read(int fd, struct crash_log *log, size_t until)
{
	while (log->n < until) {
		ssize_t got;

		if (log->n == log->cap) {
			log->cap = log->cap ? log->cap * 2 : 256;
			log->recs = reallocarray(log->recs, log->cap,
			    sizeof(*log->recs));
			ck_assert_ptr_nonnull(log->recs);
		}
		do
			got = read(fd, &log->recs[log->n], sizeof(*log->recs));
		while (got < 0 && errno == EINTR);
		if (got == 0)
			return;
		ck_assert_int_eq(got, sizeof(*log->recs));
		log->n++;
	}
}

/* Every acknowledged block is in the reopened store, intact. */
static void
crash_verify(const struct crash_rec *recs, size_t n)
{
	struct store *st = NULL;
	uint8_t key[STORE_KEY_LEN], *data = malloc(65536);

	ck_assert_ptr_nonnull(data);
	ck_assert_int_eq(store_open(base, dir, own_id, 1ull << 30, &st), 0);
	for (size_t i = 0; i < n; i++) {
		st_block(recs[i].seed, data, t_size(recs[i].seed), key);
		ck_assert_mem_eq(key, recs[i].key, STORE_KEY_LEN);
		ck_assert_msg(store_has(st, key),
		    "acknowledged block %llu"
		    " lost",
		    (unsigned long long)recs[i].seed);
		ck_assert(st_check_block(base, st, recs[i].seed,
		    t_size(recs[i].seed)));
	}
	store_free(st);
	free(data);
}

START_TEST(test_kill9_during_puts)
{
	struct crash_log log = { 0 };
	uint64_t rng = randombytes_random() | 1;

	for (int round = 0; round < CRASH_ROUNDS; round++) {
		size_t kill_at = log.n + 1 + unit_rand(&rng) % 300;
		int fds[2], status;
		pid_t pid;

		ck_assert_int_eq(pipe(fds), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			(void)close(fds[0]);
			crash_child(fds[1], (uint64_t)round << 32);
		}
		(void)close(fds[1]);
		crash_read(fds[0], &log, kill_at);
		ck_assert_msg(log.n == kill_at, "the child stopped after %zu",
		    log.n);
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
		/* Acknowledged before the kill landed: durable too. */
		crash_read(fds[0], &log, SIZE_MAX);
		(void)close(fds[0]);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		crash_verify(log.recs, log.n);
	}
	free(log.recs);
}
END_TEST

/* The largest file of the store: where a write past a size limit fails. */
static off_t
t_largest_file(void)
{
	char wal[600];
	struct stat a, b;

	(void)snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	ck_assert_int_eq(stat(dbpath, &a), 0);
	if (stat(wal, &b) < 0)
		return a.st_size;
	return a.st_size > b.st_size ? a.st_size : b.st_size;
}

/* A write the system refuses (a file size limit: EFBIG, for any user)
 * fails the put with -EIO, logs once, damages nothing, and the store
 * takes puts again when the limit goes. */
START_TEST(test_write_error_recovers)
{
	struct store *st = NULL;
	uint8_t key[STORE_KEY_LEN], *data = malloc(1 << 18);
	struct rlimit saved, low;
	struct store_stats s;
	void (*old_handler)(int);

	ck_assert_ptr_nonnull(data);
	ck_assert_int_eq(store_open(base, dir, own_id, 1ull << 30, &st), 0);
	for (int i = 0; i < 5; i++) {
		st_block((uint64_t)i, data, t_size((uint64_t)i), key);
		ck_assert_int_eq(st_put(base, st, key, data,
		                     t_size((uint64_t)i), t_expiry()),
		    0);
	}
	st_block(5, data, t_size(5), key);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
	low = saved;
	low.rlim_cur = (rlim_t)t_largest_file() + 8192;
	old_handler = signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &low), 0);
	ck_assert_int_eq(st_put(base, st, key, data, t_size(5), t_expiry()),
	    -EIO);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
	(void)signal(SIGXFSZ, old_handler);
	store_stats(st, &s);
	ck_assert_uint_eq(s.failed, 1);
	ck_assert_uint_eq(s.blocks, 5);
	ck_assert(!store_has(st, key));
	ck_assert(unit_log_has(&logbuf, "puts fail until"));
	ck_assert_int_eq(st_put(base, st, key, data, t_size(5), t_expiry()), 0);
	ck_assert(unit_log_has(&logbuf, "takes writes again"));
	store_free(st);
	free(data);
	t_check_store(6);
}
END_TEST

/* In a child: no ck_assert (under CK_FORK=no it would unwind into the
 * parent's copy of the runner); failures print and exit non-zero. */
#define CHILD_CHECK(cond)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,     \
			    #cond);                                            \
			_exit(1);                                              \
		}                                                              \
	} while (0)

struct child_res {
	int calls;
	int status;
	bool same; /* get: the bytes were those expected */
	const uint8_t *want;
	size_t len;
};

static void
child_on_done(void *cls, int status)
{
	struct child_res *res = cls;

	res->calls++;
	res->status = status;
}

static void
child_on_got(void *cls, int status, const uint8_t *data, size_t len,
    uint64_t expiry)
{
	struct child_res *res = cls;

	(void)expiry;
	res->calls++;
	res->status = status;
	res->same =
	    status == 0 && len == res->len && memcmp(data, res->want, len) == 0;
}

static void
child_wait(struct event_base *b, const struct child_res *res)
{
	while (res->calls == 0)
		CHILD_CHECK(event_base_loop(b, EVLOOP_ONCE) >= 0);
}

/* Puts block seed and returns the put's status. */
static int
child_put(struct event_base *b, struct store *st, uint64_t seed, uint8_t *buf)
{
	struct child_res res = { 0 };
	uint8_t key[STORE_KEY_LEN];

	st_block(seed, buf, t_size(seed), key);
	CHILD_CHECK(store_put(st, key, buf, t_size(seed), t_expiry(),
	                child_on_done, &res) == 0);
	child_wait(b, &res);
	return res.status;
}

static bool
child_intact(struct event_base *b, struct store *st, uint64_t seed,
    uint8_t *buf)
{
	struct child_res res = { .want = buf, .len = t_size(seed) };
	uint8_t key[STORE_KEY_LEN];

	st_block(seed, buf, t_size(seed), key);
	CHILD_CHECK(store_get(st, key, child_on_got, &res) == 0);
	child_wait(b, &res);
	return res.same;
}

/* A private mount namespace, or SKIP_EXIT: needs root. The kernel
 * ignores the "none"s; valgrind wants strings there. */
static void
child_own_mounts(void)
{
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(SKIP_EXIT);
}

/* Fills a 2 MiB tmpfs until a put fails, then grows it to 8 MiB. */
static _Noreturn void
full_child(void)
{
	struct event_base *b = event_base_new();
	uint8_t *buf = malloc(65536);
	struct store *st = NULL;
	struct store_stats s;
	uint64_t n = 0;
	int r = 0;

	child_own_mounts();
	if (mount("ferry-test", dir, "tmpfs", 0, "size=2m,mode=0700") < 0)
		_exit(SKIP_EXIT);
	CHILD_CHECK(b != NULL && buf != NULL);
	CHILD_CHECK(store_open(b, dir, own_id, 1ull << 30, &st) == 0);
	while (n < 1000 && (r = child_put(b, st, n, buf)) == 0)
		n++;
	CHILD_CHECK(r == -ENOSPC);
	store_stats(st, &s);
	CHILD_CHECK(s.failed == 1 && s.refused == 0 && s.blocks == n);
	CHILD_CHECK(mount("ferry-test", dir, "tmpfs", MS_REMOUNT,
	                "size=8m,mode=0700") == 0);
	CHILD_CHECK(child_put(b, st, n, buf) == 0);
	for (uint64_t i = 0; i <= n; i++)
		CHILD_CHECK(child_intact(b, st, i, buf));
	store_free(st);
	st = NULL;
	CHILD_CHECK(store_open(b, dir, own_id, 1ull << 30, &st) == 0);
	store_stats(st, &s);
	CHILD_CHECK(s.blocks == n + 1);
	store_free(st);
	_exit(0);
}

/* Runs fn in a child and returns its exit status; SKIP_EXIT is reported
 * as skipped. */
static int
t_in_child(void (*fn)(void), const char *what)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fn();
		_exit(1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == SKIP_EXIT)
		fprintf(stderr,
		    "%s: skipped (needs root for a mount"
		    " namespace)\n",
		    what);
	return WEXITSTATUS(status);
}

START_TEST(test_disk_full_recovers)
{
	int r = t_in_child(full_child, "test_disk_full_recovers");

	ck_assert(r == 0 || r == SKIP_EXIT);
}
END_TEST

/* Opens the store of test_read_only on a read-only bind mount. */
static _Noreturn void
ro_child(void)
{
	struct event_base *b = event_base_new();
	struct store *st = NULL;

	child_own_mounts();
	if (mount(dir, dir, "none", MS_BIND, NULL) < 0 ||
	    mount("none", dir, "none", MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) <
	        0)
		_exit(SKIP_EXIT);
	CHILD_CHECK(b != NULL);
	CHILD_CHECK(store_open(b, dir, own_id, 1ull << 30, &st) == -EROFS);
	CHILD_CHECK(st == NULL);
	_exit(0);
}

/* A store on a read-only file system (root: a read-only bind mount;
 * otherwise a directory without write permission) is refused at open
 * and comes back intact when writable again. */
START_TEST(test_read_only)
{
	struct store *st = NULL;
	int r;

	t_make_store(4);
	if (geteuid() == 0) {
		r = t_in_child(ro_child, "test_read_only");
		ck_assert(r == 0 || r == SKIP_EXIT);
	} else {
		ck_assert_int_eq(chmod(dir, 0500), 0);
		ck_assert_int_eq(store_open(base, dir, own_id, 1 << 20, &st),
		    -EACCES);
		ck_assert(unit_log_has(&logbuf, "not writable"));
		ck_assert_int_eq(chmod(dir, 0700), 0);
	}
	t_check_store(4);
}
END_TEST

static Suite *
dht_store_damage_suite(void)
{
	Suite *s = suite_create("dht_store_damage");
	TCase *tc = tcase_create("damage");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_loop_test(tc, test_bad_database, 0,
	    (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, test_database_is_a_directory);
	tcase_add_test(tc, test_creation_cut_short);
	tcase_add_test(tc, test_kill9_during_puts);
	tcase_add_test(tc, test_write_error_recovers);
	tcase_add_test(tc, test_disk_full_recovers);
	tcase_add_test(tc, test_read_only);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(dht_store_damage_suite());
}
