/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT block store's benchmark (issue 12, "Block store"): durable puts
 * of 1 KiB and 256 KiB blocks through src/dht/store, one transaction per
 * put against group commit, with the disk's own rate in the same run:
 *   raw-each    append the block to a plain file, fdatasync after each
 *   raw-group   the same, one fdatasync per window of blocks
 *   store-seq   one put in flight at a time (each its own transaction)
 *   store-each  a window of puts in flight, one transaction per put
 *   store-group a window of puts in flight, group commit (the store's
 *               way: one transaction for everything queued)
 * then how long store_open takes on what was written (quick_check and
 * the index), and the layout comparison of store_layout.c. Programs, not
 * tests: nothing here asserts a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <event2/event.h>

#include "dht/store.h"
#include "dht/store_int.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/time.h"
#include "store_bench.h"

enum sb_mode {
	SB_RAW_EACH,
	SB_RAW_GROUP,
	SB_STORE_SEQ,
	SB_STORE_EACH,
	SB_STORE_GROUP,
	SB_MODES,
};
static const char *const sb_mode_name[SB_MODES] = { "raw-each", "raw-group",
	"store-seq", "store-each", "store-group" };

/* One run's figures. */
struct sb_result {
	double puts_s;     /* blocks made durable per second */
	double mb_s;       /* 10^6 bytes of them per second */
	double per_commit; /* blocks per fsync (raw) or per commit (store) */
	double p50_ms;     /* time from put to durable, median */
	double p99_ms;     /* and 99th percentile */
};

/* A run through the store: puts kept in flight until n are durable. */
struct sb_run {
	struct event_base *base;
	struct store *st;
	uint8_t *buf;        /* the block bytes, one buffer for all */
	unsigned size;       /* of a block */
	unsigned window;     /* puts in flight */
	uint64_t n;          /* puts to make */
	uint64_t sent;       /* submitted */
	uint64_t done;       /* durable */
	uint64_t *t_start;   /* ns, per put */
	double *lat;         /* ms, per put */
	struct sb_put *puts; /* the callbacks' contexts, per put */
	int error;           /* first failure */
};

static int
sb_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(path) < 0 ? -1 : 0;
}

void
sb_rmtree(const char *path)
{
	(void)nftw(path, sb_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int
sb_mkdir(const struct sb_opts *so, char *buf, size_t size)
{
	if ((size_t)snprintf(buf, size, "%s/ferry-bench-store.XXXXXX",
	        so->dir) >= size)
		return -ENAMETOOLONG;
	return mkdtemp(buf) != NULL ? 0 : -errno;
}

void
sb_drop_cache(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	(void)close(fd);
}

void
sb_block(uint64_t i, uint8_t *buf, size_t len, uint8_t key[32])
{
	/* Distinct bytes without hashing each block: the store does not
	 * check keys, and a hash would add its cost to every figure. */
	memset(key, 0x5a, 32);
	memcpy(key, &i, sizeof(i));
	memcpy(buf, &i, len < sizeof(i) ? len : sizeof(i));
}

const char *
sb_size_name(unsigned size, char *buf, size_t n)
{
	if (size % 1024 == 0)
		(void)snprintf(buf, n, "%u KiB", size / 1024);
	else
		(void)snprintf(buf, n, "%u B", size);
	return buf;
}

unsigned
sb_count(const struct sb_opts *so, unsigned size)
{
	uint64_t n = so->budget / size;

	if (n > so->count)
		n = so->count;
	return n < 32 ? 32 : (unsigned)n;
}

static int
sb_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts v and returns its p-th percentile (0..100). */
static double
sb_pct(double *v, uint64_t n, double p)
{
	size_t i;

	qsort(v, n, sizeof(*v), sb_cmp);
	i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
	return v[i];
}

static int
sb_write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Latencies (ms) into the result's percentiles; frees lat. */
static void
sb_finish(struct sb_result *res, uint64_t n, unsigned size, uint64_t ns,
    double *lat)
{
	res->puts_s = (double)n * 1e9 / (double)ns;
	res->mb_s = res->puts_s * size / 1e6;
	res->p50_ms = sb_pct(lat, n, 50);
	res->p99_ms = sb_pct(lat, n, 99);
	free(lat);
}

/* The disk alone: blocks appended to a plain file, one fdatasync per
 * group of them; a block's latency runs from its write to that sync. */
static int
sb_raw(const struct sb_opts *so, unsigned size, unsigned group,
    struct sb_result *res)
{
	uint64_t n = sb_count(so, size), t0, *start = calloc(n, sizeof(*start));
	double *lat = calloc(n, sizeof(*lat));
	uint8_t key[32], *buf = calloc(1, size);
	char d[PATH_MAX], path[PATH_MAX + 8];
	int fd = -1, r = -ENOMEM;

	if (start == NULL || lat == NULL || buf == NULL ||
	    (r = sb_mkdir(so, d, sizeof(d))) < 0)
		goto out;
	(void)snprintf(path, sizeof(path), "%s/raw", d);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	r = fd < 0 || fsync(fd) < 0 ? -errno : 0;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n && r == 0; i++) {
		start[i] = bench_now_ns();
		sb_block(i, buf, size, key);
		r = sb_write_all(fd, buf, size);
		if (r < 0 || ((i + 1) % group != 0 && i + 1 != n))
			continue;
		r = fdatasync(fd) < 0 ? -errno : 0;
		for (uint64_t j = i - i % group; j <= i; j++)
			lat[j] = (double)(bench_now_ns() - start[j]) / 1e6;
	}
	if (r == 0) {
		res->per_commit = group;
		sb_finish(res, n, size, bench_now_ns() - t0, lat);
		lat = NULL;
	}
	sb_rmtree(d);
out:
	if (fd >= 0)
		(void)close(fd);
	free(start);
	free(lat);
	free(buf);
	return r;
}

/* One put of a run in flight. */
struct sb_put {
	struct sb_run *run;
	uint64_t i;
};

static void sb_put_next(struct sb_run *run);

static void
sb_on_done(void *cls, int status)
{
	struct sb_put *p = cls;
	struct sb_run *run = p->run;

	if (status < 0 && run->error == 0)
		run->error = status;
	run->lat[p->i] = (double)(bench_now_ns() - run->t_start[p->i]) / 1e6;
	run->done++;
	if (run->error == 0)
		sb_put_next(run);
}

static void
sb_put_next(struct sb_run *run)
{
	struct sb_put *p;
	uint8_t key[32];
	uint64_t i = run->sent;
	int r;

	if (i >= run->n)
		return;
	p = &run->puts[i];
	p->run = run;
	p->i = i;
	sb_block(i, run->buf, run->size, key);
	run->t_start[i] = bench_now_ns();
	r = store_put(run->st, key, run->buf, run->size, time_real_s() + 86400,
	    sb_on_done, p);
	if (r < 0) {
		run->error = r;
		return;
	}
	run->sent++;
}

/* Runs n puts through st, window of them in flight. */
static int
sb_store_puts(struct sb_run *run, struct sb_result *res)
{
	struct store_stats s;
	uint64_t t0;

	run->puts = calloc(run->n, sizeof(*run->puts));
	run->t_start = calloc(run->n, sizeof(*run->t_start));
	run->lat = calloc(run->n, sizeof(*run->lat));
	if (run->puts == NULL || run->t_start == NULL || run->lat == NULL)
		run->error = -ENOMEM;
	t0 = bench_now_ns();
	for (unsigned k = 0; k < run->window && run->error == 0; k++)
		sb_put_next(run);
	while (run->done < run->sent &&
	    event_base_loop(run->base, EVLOOP_ONCE) >= 0)
		;
	if (run->error == 0 && run->done == run->n) {
		store_stats(run->st, &s);
		res->per_commit = (double)run->n / (double)s.commits;
		sb_finish(res, run->n, run->size, bench_now_ns() - t0,
		    run->lat);
		run->lat = NULL;
	}
	free(run->puts);
	free(run->t_start);
	free(run->lat);
	return run->error != 0 ? run->error : run->done == run->n ? 0 : -EIO;
}

/* How long store_open() takes on a database: cold (its pages dropped
 * from the cache) and warm; quick_check reads all of it. */
struct sb_open {
	double db_mb;   /* size of the database file */
	double cold_ms; /* store_open after dropping its cache */
	double warm_ms; /* store_open again */
};

static int
sb_time_open(struct event_base *base, const char *d, double *ret_ms)
{
	static const uint8_t own[STORE_KEY_LEN];
	struct store *st = NULL;
	uint64_t t0 = bench_now_ns();
	int r = store_open(base, d, own, UINT64_MAX, &st);

	*ret_ms = (double)(bench_now_ns() - t0) / 1e6;
	store_free(st);
	return r;
}

static int
sb_measure_open(struct event_base *base, const char *d, struct sb_open *ret)
{
	char path[PATH_MAX + 32];
	struct stat sb;
	int r;

	(void)snprintf(path, sizeof(path), "%s/%s", d, STORE_DB_FILE);
	sb_drop_cache(path);
	r = sb_time_open(base, d, &ret->cold_ms);
	if (r == 0)
		r = sb_time_open(base, d, &ret->warm_ms);
	if (r == 0 && stat(path, &sb) < 0)
		r = -errno;
	if (r == 0)
		ret->db_mb = (double)sb.st_size / 1e6;
	return r;
}

/* One run of a store mode on a fresh database; open (may be NULL) gets
 * the open times of the database it leaves. */
static int
sb_store(const struct sb_opts *so, unsigned size, enum sb_mode mode,
    struct sb_result *res, struct sb_open *open_times)
{
	static const uint8_t own[STORE_KEY_LEN];
	struct sb_run run = { .size = size, .n = sb_count(so, size) };
	char d[PATH_MAX];
	int r;

	run.window = mode == SB_STORE_SEQ ? 1 : so->window;
	run.base = event_base_new();
	run.buf = calloc(1, size);
	if (run.base == NULL || run.buf == NULL) {
		r = -ENOMEM;
		goto out;
	}
	r = sb_mkdir(so, d, sizeof(d));
	if (r < 0)
		goto out;
	r = store_open(run.base, d, own, UINT64_MAX, &run.st);
	if (r == 0) {
		store_set_batch_max(run.st, mode == SB_STORE_GROUP ? 0 : 1);
		r = sb_store_puts(&run, res);
		store_free(run.st);
	}
	if (r == 0 && open_times != NULL)
		r = sb_measure_open(run.base, d, open_times);
	sb_rmtree(d);
out:
	free(run.buf);
	if (run.base != NULL)
		event_base_free(run.base);
	return r;
}

static int
sb_run_mode(const struct sb_opts *so, unsigned size, enum sb_mode mode,
    struct sb_result *res, struct sb_open *open_times)
{
	switch (mode) {
	case SB_RAW_EACH:
		return sb_raw(so, size, 1, res);
	case SB_RAW_GROUP:
		return sb_raw(so, size, so->window, res);
	default:
		return sb_store(so, size, mode, res,
		    mode == SB_STORE_GROUP ? open_times : NULL);
	}
}

/* Figures of every run: [size][mode][rep], and open times [size][rep]. */
struct sb_table {
	struct sb_result *res;
	struct sb_open *open;
	unsigned reps;
};

static struct sb_result *
sb_cell(const struct sb_table *t, unsigned size_i, enum sb_mode m)
{
	return &t->res[((size_t)size_i * SB_MODES + m) * t->reps];
}

/* The summary of one field (at off, a double) over a cell's runs. */
static void
sb_summary(const void *runs, size_t stride, unsigned reps, size_t off,
    struct bench_summary *ret)
{
	double v[1000];

	for (unsigned k = 0; k < reps && k < 1000; k++)
		memcpy(&v[k], (const char *)runs + k * stride + off,
		    sizeof(v[k]));
	bench_summarize(v, reps, ret);
}

#define SB_SUM(t, cell, field, ret)                                            \
	sb_summary((cell), sizeof(struct sb_result), (t)->reps,                \
	    offsetof(struct sb_result, field), (ret))

static void
sb_print_size(const struct sb_opts *so, const struct sb_table *t, unsigned si,
    FILE *csv)
{
	struct bench_summary ps, mb, pc, p50, p99;
	char name[32], range[64];

	(void)sb_size_name(so->sizes[si], name, sizeof(name));
	for (int m = 0; m < SB_MODES; m++) {
		struct sb_result *c = sb_cell(t, si, m);

		SB_SUM(t, c, puts_s, &ps);
		SB_SUM(t, c, mb_s, &mb);
		SB_SUM(t, c, per_commit, &pc);
		SB_SUM(t, c, p50_ms, &p50);
		SB_SUM(t, c, p99_ms, &p99);
		(void)snprintf(range, sizeof(range), "%.0f [%.0f-%.0f]",
		    ps.median, ps.min, ps.max);
		printf("  %-8s %-12s %-22s %8.1f %9.1f %8.2f %8.2f\n", name,
		    sb_mode_name[m], range, mb.median, pc.median, p50.median,
		    p99.median);
		if (csv != NULL)
			fprintf(csv,
			    "%u,%s,%u,%.1f,%.1f,%.1f,%.2f,%.1f,%.3f,"
			    "%.3f\n",
			    so->sizes[si], sb_mode_name[m], ps.n, ps.median,
			    ps.min, ps.max, mb.median, pc.median, p50.median,
			    p99.median);
	}
}

static void
sb_print_open(const struct sb_opts *so, const struct sb_table *t, unsigned si)
{
	const struct sb_open *o = &t->open[(size_t)si * t->reps];
	struct bench_summary cold, warm, mb;
	char name[32];

	sb_summary(o, sizeof(*o), t->reps, offsetof(struct sb_open, cold_ms),
	    &cold);
	sb_summary(o, sizeof(*o), t->reps, offsetof(struct sb_open, warm_ms),
	    &warm);
	sb_summary(o, sizeof(*o), t->reps, offsetof(struct sb_open, db_mb),
	    &mb);
	printf("  %-8s database %.1f MB: store_open %.1f ms cold [%.1f-%.1f],"
	       " %.1f ms warm (%.0f MB/s cold)\n",
	    sb_size_name(so->sizes[si], name, sizeof(name)), mb.median,
	    cold.median, cold.min, cold.max, warm.median,
	    mb.median / (cold.median / 1e3));
}

static const char sb_usage[] =
    " [-n COUNT] [-s SIZES] [-w WINDOW] [-d DIR]\n"
    "  -n COUNT  blocks per run, at most (default 4000; -q 300); runs are\n"
    "            also cut to 64 MiB of blocks (-q 8 MiB)\n"
    "  -s SIZES  block sizes in bytes (default 1024,262144)\n"
    "  -w WINDOW puts in flight, and blocks per raw-group sync (default 64)\n"
    "  -d DIR    where the databases go: the disk measured ($TMPDIR or\n"
    "            /tmp)";

static int
sb_opt(int opt, const char *arg, void *cls)
{
	struct sb_opts *so = cls;
	char *end;

	switch (opt) {
	case 'n':
		so->count = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && so->count > 0 ? 0 : -1;
	case 'w':
		so->window = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && so->window > 0 ? 0 : -1;
	case 'd':
		so->dir = arg;
		return 0;
	case 's':
		so->n_sizes = 0;
		for (const char *p = arg; *p != '\0';) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p || v == 0 || v > STORE_BLOCK_MAX ||
			    so->n_sizes == SB_MAX_SIZES)
				return -1;
			so->sizes[so->n_sizes++] = (unsigned)v;
			p = *end == ',' ? end + 1 : end;
		}
		return so->n_sizes > 0 ? 0 : -1;
	default:
		return -1;
	}
}

/* The file system the databases go to, for the reader of the figures. */
static void
sb_print_disk(const struct sb_opts *so)
{
	struct statfs fs;
	const char *type = "?";

	if (statfs(so->dir, &fs) == 0)
		type = fs.f_type == 0xef53    ? "ext2/3/4"
		    : fs.f_type == 0x01021994 ? "tmpfs"
		    : fs.f_type == 0x58465342 ? "xfs"
		    : fs.f_type == 0x9123683e ? "btrfs"
		                              : "other";
	printf("databases in %s (%s); window %u; %u runs of each, "
	       "medians [min-max]\n",
	    so->dir, type, so->window, so->o.reps);
}

/* Runs every mode once per repetition, interleaved, so that drift in
 * the machine's load touches all modes alike. */
static int
sb_run_size(const struct sb_opts *so, struct sb_table *t, unsigned si,
    FILE *runs)
{
	for (unsigned k = 0; k < t->reps; k++) {
		for (int m = 0; m < SB_MODES; m++) {
			struct sb_result *res = &sb_cell(t, si, m)[k];
			int r = sb_run_mode(so, so->sizes[si], m, res,
			    &t->open[(size_t)si * t->reps + k]);

			if (r < 0) {
				fprintf(stderr,
				    "bench_store: %s, %u bytes: %s\n",
				    sb_mode_name[m], so->sizes[si],
				    strerror(-r));
				return r;
			}
			bench_log(&so->o, "%u B %s: %.0f puts/s", so->sizes[si],
			    sb_mode_name[m], res->puts_s);
			if (runs != NULL)
				fprintf(runs,
				    "%u,%s,%u,%u,%.1f,%.2f,%.2f,%.3f,"
				    "%.3f\n",
				    so->sizes[si], sb_mode_name[m], k,
				    sb_count(so, so->sizes[si]), res->puts_s,
				    res->mb_s, res->per_commit, res->p50_ms,
				    res->p99_ms);
		}
	}
	return 0;
}

static int
sb_commits(const struct sb_opts *so)
{
	struct sb_table t = { .reps = so->o.reps };
	FILE *runs, *sum;
	int r = 0;

	t.res = calloc((size_t)so->n_sizes * SB_MODES * t.reps, sizeof(*t.res));
	t.open = calloc((size_t)so->n_sizes * t.reps, sizeof(*t.open));
	runs = bench_csv_open(&so->o, "store_commit_runs.csv",
	    "size,mode,rep,blocks,puts_s,mb_s,per_sync,p50_ms,p99_ms");
	sum = bench_csv_open(&so->o, "store_commit_summary.csv",
	    "size,mode,runs,puts_s,puts_s_min,puts_s_max,mb_s,per_sync,"
	    "p50_ms,p99_ms");
	if (t.res == NULL || t.open == NULL)
		r = -ENOMEM;
	sb_print_disk(so);
	printf("\nDurable puts (per sync: blocks per fdatasync or per commit;"
	       " p50/p99: put to durable)\n"
	       "  size     mode         puts/s                     MB/s"
	       "  per sync   p50 ms   p99 ms\n");
	for (unsigned si = 0; si < so->n_sizes && r == 0; si++) {
		r = sb_run_size(so, &t, si, runs);
		if (r == 0)
			sb_print_size(so, &t, si, sum);
	}
	printf("\nstore_open (quick_check + index) on the store-group"
	       " database\n");
	for (unsigned si = 0; si < so->n_sizes && r == 0; si++)
		sb_print_open(so, &t, si);
	if (runs != NULL)
		(void)fclose(runs);
	if (sum != NULL)
		(void)fclose(sum);
	free(t.res);
	free(t.open);
	return r;
}

int
main(int argc, char **argv)
{
	struct sb_opts so = { .count = 4000,
		.window = 64,
		.sizes = { 1024, 262144 },
		.n_sizes = 2 };
	const char *tmp = getenv("TMPDIR");
	int r;

	so.dir = tmp != NULL && *tmp == '/' ? tmp : "/tmp";
	bench_opts_parse(&so.o, argc, argv, "n:s:w:d:", sb_opt, &so, sb_usage);
	so.budget = so.o.quick ? 8u << 20 : 64u << 20;
	if (so.o.quick && so.count == 4000)
		so.count = 300;
	log_init("bench_store", FERRY_LOG_WARNING);
	r = sb_commits(&so);
	if (r == 0)
		r = sb_layout(&so);
	return r == 0 ? 0 : 1;
}
