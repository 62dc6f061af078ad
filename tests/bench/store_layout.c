/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Where the block store keeps block bytes (issue 12: "decide by
 * measurement"): the same blocks written durably in group commits of a
 * window of blocks, then read back in random order, cold and warm, with
 *   blob-4k   bytes as BLOBs in the SQLite table, 4 KiB pages (SQLite's
 *             default and the store's)
 *   blob-16k  the same with 16 KiB pages
 *   blob-64k  and with 64 KiB pages (fewer overflow pages per block)
 *   files     one file per block, SQLite as the index: each file written
 *             and fdatasync'd, the directory fsync'd, then its row
 *             committed (a row must never name a file a crash can lose)
 * all with the store's settings: WAL, synchronous=FULL, exclusive lock.
 * Write time runs until every byte is in its final place, the last
 * checkpoint included. Part of bench_store.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "lib/fsutil.h"
#include "store_bench.h"

enum sl_layout { SL_BLOB_4K, SL_BLOB_16K, SL_BLOB_64K, SL_FILES, SL_N };
static const char *const sl_name[SL_N] = { "blob-4k", "blob-16k", "blob-64k",
	"files" };
/* SQLite's page size for each layout. */
static const int sl_page[SL_N] = { 4096, 16384, 65536, 4096 };

struct sl_result {
	double write_mb_s; /* 10^6 bytes of blocks made durable per second */
	double cold_mb_s;  /* read back, page cache dropped first */
	double warm_mb_s;  /* read back again */
};

static int
sl_exec(sqlite3 *db, const char *sql)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		fprintf(stderr, "bench_store: %s: %s\n", sql,
		    sqlite3_errmsg(db));
	return rc == SQLITE_OK ? 0 : -EIO;
}

/* Opens (creating) the database of layout l in d. */
static int
sl_open(const char *d, enum sl_layout l, sqlite3 **ret)
{
	char path[PATH_MAX + 32], sql[512];
	sqlite3 *db = NULL;
	int r;

	(void)snprintf(path, sizeof(path), "%s/layout.sqlite", d);
	if (sqlite3_open(path, &db) != SQLITE_OK) {
		(void)sqlite3_close(db);
		return -EIO;
	}
	(void)snprintf(sql, sizeof(sql),
	    "PRAGMA page_size=%d; PRAGMA locking_mode=EXCLUSIVE;"
	    " PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
	    " CREATE TABLE IF NOT EXISTS b(id INTEGER PRIMARY KEY,"
	    " key BLOB NOT NULL UNIQUE, size INTEGER NOT NULL, data BLOB)",
	    sl_page[l]);
	r = sl_exec(db, sql);
	if (r < 0) {
		(void)sqlite3_close(db);
		return r;
	}
	*ret = db;
	return 0;
}

static void
sl_file_path(const char *d, uint64_t i, char *buf, size_t n)
{
	(void)snprintf(buf, n, "%s/%016llx", d, (unsigned long long)i);
}

/* Writes block i as its own file, durable before its row is. */
static int
sl_file_write(const char *d, uint64_t i, const uint8_t *buf, size_t len)
{
	char path[PATH_MAX + 32];
	int fd, r = 0;

	sl_file_path(d, i, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != (ssize_t)len || fdatasync(fd) < 0)
		r = errno ? -errno : -EIO;
	(void)close(fd);
	return r;
}

/* One group commit: blocks first..end-1. */
static int
sl_write_group(sqlite3 *db, sqlite3_stmt *ins, const char *d, enum sl_layout l,
    uint8_t *buf, unsigned size, uint64_t first, uint64_t end)
{
	uint8_t key[32];
	int r = 0;

	for (uint64_t i = first; l == SL_FILES && i < end && r == 0; i++) {
		sb_block(i, buf, size, key);
		r = sl_file_write(d, i, buf, size);
	}
	if (r == 0 && l == SL_FILES)
		r = fs_fsync_path(d, O_RDONLY | O_DIRECTORY);
	if (r == 0)
		r = sl_exec(db, "BEGIN");
	for (uint64_t i = first; i < end && r == 0; i++) {
		sb_block(i, buf, size, key);
		(void)sqlite3_bind_blob(ins, 1, key, 32, SQLITE_STATIC);
		(void)sqlite3_bind_int64(ins, 2, size);
		if (l == SL_FILES)
			(void)sqlite3_bind_null(ins, 3);
		else
			(void)sqlite3_bind_blob(ins, 3, buf, (int)size,
			    SQLITE_STATIC);
		r = sqlite3_step(ins) == SQLITE_DONE ? 0 : -EIO;
		(void)sqlite3_reset(ins);
	}
	return r == 0 ? sl_exec(db, "COMMIT") : r;
}

/* Writes n blocks in group commits of so->window; MB/s until the last
 * checkpoint is done. */
static int
sl_write(const struct sb_opts *so, const char *d, enum sl_layout l,
    unsigned size, uint64_t n, double *ret_mb_s)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	uint8_t *buf = calloc(1, size);
	uint64_t t0;
	int r = buf == NULL ? -ENOMEM : sl_open(d, l, &db);

	if (r == 0 &&
	    sqlite3_prepare_v2(db,
	        "INSERT INTO b(key, size, data)"
	        " VALUES (?1, ?2, ?3)",
	        -1, &ins, NULL) != SQLITE_OK)
		r = -EIO;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n && r == 0; i += so->window)
		r = sl_write_group(db, ins, d, l, buf, size, i,
		    i + so->window < n ? i + so->window : n);
	if (r == 0)
		r = sl_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
	if (r == 0)
		*ret_mb_s =
		    (double)n * size * 1e3 / (double)(bench_now_ns() - t0);
	(void)sqlite3_finalize(ins);
	(void)sqlite3_close(db);
	free(buf);
	return r;
}

/* Reads block i: its row, and its file for the files layout. */
static int
sl_read_one(sqlite3_stmt *sel, const char *d, enum sl_layout l, uint64_t i,
    uint8_t *buf, unsigned size)
{
	char path[PATH_MAX + 32];
	uint8_t key[32];
	int fd, r = -EIO;

	sb_block(i, buf, 8, key);
	(void)sqlite3_bind_blob(sel, 1, key, 32, SQLITE_STATIC);
	if (sqlite3_step(sel) != SQLITE_ROW ||
	    sqlite3_column_int64(sel, 0) != size)
		goto out;
	if (l != SL_FILES) {
		if (sqlite3_column_bytes(sel, 1) == (int)size) {
			memcpy(buf, sqlite3_column_blob(sel, 1), size);
			r = 0;
		}
		goto out;
	}
	sl_file_path(d, i, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && pread(fd, buf, size, 0) == (ssize_t)size)
		r = 0;
	if (fd >= 0)
		(void)close(fd);
out:
	(void)sqlite3_reset(sel);
	return r;
}

/* Drops from the page cache everything layout l wrote in d. */
static void
sl_drop(const char *d, enum sl_layout l, uint64_t n)
{
	char path[PATH_MAX + 32];

	(void)snprintf(path, sizeof(path), "%s/layout.sqlite", d);
	sb_drop_cache(path);
	for (uint64_t i = 0; l == SL_FILES && i < n; i++) {
		sl_file_path(d, i, path, sizeof(path));
		sb_drop_cache(path);
	}
}

/* Reads all n blocks in the order given; MB/s. */
static int
sl_read(const char *d, enum sl_layout l, unsigned size, const uint64_t *order,
    uint64_t n, double *ret_mb_s)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *sel = NULL;
	uint8_t *buf = malloc(size);
	uint64_t t0;
	int r = buf == NULL ? -ENOMEM : sl_open(d, l, &db);

	if (r == 0 &&
	    sqlite3_prepare_v2(db,
	        "SELECT size, data FROM b"
	        " WHERE key = ?1",
	        -1, &sel, NULL) != SQLITE_OK)
		r = -EIO;
	t0 = bench_now_ns();
	for (uint64_t k = 0; k < n && r == 0; k++)
		r = sl_read_one(sel, d, l, order[k], buf, size);
	if (r == 0)
		*ret_mb_s =
		    (double)n * size * 1e3 / (double)(bench_now_ns() - t0);
	(void)sqlite3_finalize(sel);
	(void)sqlite3_close(db);
	free(buf);
	return r;
}

/* A random order of 0..n-1 (Fisher-Yates, fixed seed). */
static uint64_t *
sl_order(uint64_t n)
{
	uint64_t *order = malloc(n * sizeof(*order)), x = 0x9e3779b97f4a7c15ull;

	for (uint64_t i = 0; order != NULL && i < n; i++)
		order[i] = i;
	for (uint64_t i = n - 1; order != NULL && i > 0; i--) {
		uint64_t j, t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	return order;
}

static int
sl_run(const struct sb_opts *so, enum sl_layout l, unsigned size,
    struct sl_result *res)
{
	uint64_t n = sb_count(so, size), *order = sl_order(n);
	char d[PATH_MAX];
	int r = order == NULL ? -ENOMEM : sb_mkdir(so, d, sizeof(d));

	if (r < 0) {
		free(order);
		return r;
	}
	r = sl_write(so, d, l, size, n, &res->write_mb_s);
	if (r == 0) {
		sl_drop(d, l, n);
		r = sl_read(d, l, size, order, n, &res->cold_mb_s);
	}
	if (r == 0)
		r = sl_read(d, l, size, order, n, &res->warm_mb_s);
	sb_rmtree(d);
	free(order);
	return r;
}

static void
sl_print(const struct sb_opts *so, unsigned size, enum sl_layout l,
    const struct sl_result *runs, FILE *csv)
{
	double v[3][1000];
	struct bench_summary w, c, h;
	char name[32], wr[64];
	unsigned reps = so->o.reps < 1000 ? so->o.reps : 1000;

	for (unsigned k = 0; k < reps; k++) {
		v[0][k] = runs[k].write_mb_s;
		v[1][k] = runs[k].cold_mb_s;
		v[2][k] = runs[k].warm_mb_s;
	}
	bench_summarize(v[0], reps, &w);
	bench_summarize(v[1], reps, &c);
	bench_summarize(v[2], reps, &h);
	(void)snprintf(wr, sizeof(wr), "%.1f [%.1f-%.1f]", w.median, w.min,
	    w.max);
	printf("  %-8s %-9s %-24s %10.1f %10.1f\n",
	    sb_size_name(size, name, sizeof(name)), sl_name[l], wr, c.median,
	    h.median);
	if (csv != NULL)
		fprintf(csv, "%u,%s,%u,%.2f,%.2f,%.2f,%.2f,%.2f\n", size,
		    sl_name[l], w.n, w.median, w.min, w.max, c.median,
		    h.median);
}

/* Every layout once per repetition, interleaved. */
static int
sl_size(const struct sb_opts *so, unsigned size, struct sl_result *res,
    FILE *runs)
{
	for (unsigned k = 0; k < so->o.reps; k++) {
		for (int l = 0; l < SL_N; l++) {
			struct sl_result *x = &res[(size_t)l * so->o.reps + k];
			int r = sl_run(so, l, size, x);

			if (r < 0) {
				fprintf(stderr,
				    "bench_store: %s, %u bytes: %s\n",
				    sl_name[l], size, strerror(-r));
				return r;
			}
			if (runs != NULL)
				fprintf(runs, "%u,%s,%u,%u,%.2f,%.2f,%.2f\n",
				    size, sl_name[l], k, sb_count(so, size),
				    x->write_mb_s, x->cold_mb_s, x->warm_mb_s);
		}
	}
	return 0;
}

int
sb_layout(const struct sb_opts *so)
{
	struct sl_result *res = calloc((size_t)SL_N * so->o.reps, sizeof(*res));
	FILE *runs, *sum;
	int r = res == NULL ? -ENOMEM : 0;

	runs = bench_csv_open(&so->o, "store_layout_runs.csv",
	    "size,layout,rep,blocks,write_mb_s,cold_mb_s,warm_mb_s");
	sum = bench_csv_open(&so->o, "store_layout_summary.csv",
	    "size,layout,runs,write_mb_s,write_min,write_max,cold_mb_s,"
	    "warm_mb_s");
	printf("\nWhere block bytes live (group commits of %u blocks;"
	       " reads in random order)\n"
	       "  size     layout    write MB/s               cold MB/s"
	       "  warm MB/s\n",
	    so->window);
	for (unsigned si = 0; si < so->n_sizes && r == 0; si++) {
		r = sl_size(so, so->sizes[si], res, runs);
		for (int l = 0; l < SL_N && r == 0; l++)
			sl_print(so, so->sizes[si], l,
			    &res[(size_t)l * so->o.reps], sum);
	}
	if (runs != NULL)
		(void)fclose(runs);
	if (sum != NULL)
		(void)fclose(sum);
	free(res);
	return r;
}
