/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The block store out of space (issue 16, "Expiry and space"), with two
 * real ferryd: d0 takes the test's PUTs and GETs through libferry, d1
 * stores them (REPLICATION 1; the test puts only blocks whose closest
 * daemon is d1, so every PUT crosses the network).
 *
 * Full disk: d1's state directory is a tmpfs of its own, a good part of
 * it taken by a filler file. PUTs go on until they fail: d0's client
 * hears -ENOSPC, `ferry dht put` says "the storing peers are full"
 * (exit 1), d1 logs the failing disk once however many PUTs it refuses,
 * counts each (dht.store_failed, and dht.store_fails for the FAILs it
 * answered), and keeps serving the blocks it holds. The WAL takes most
 * of the tmpfs (it is folded back every 16 MiB): with 3 MiB free, d1
 * fills after some 6 blocks of 48 KiB. The filler is deleted: without a restart, d1 takes
 * PUTs again and says so once. After a clean stop its blocks.sqlite
 * passes integrity_check, opened with SQLite, and holds every block a
 * receipt promised, byte for byte. Mounting needs root (CAP_SYS_ADMIN);
 * without it that case says why and skips.
 *
 * Read-only: a store whose disk is read-only when ferryd starts stops
 * it with a clear error; once writable again, ferryd starts with every
 * block.
 *
 * Quota: the same on a normal disk with d1's [dht] QUOTA small: a PUT
 * whose block is farther from d1 than every block held is refused
 * (-ENOSPC at the client, dht.store_refused at d1); blocks put with a
 * short expiry make room once they expire, and PUTs are taken again.
 * QUOTA changes on restart only (ferryd.conf(5)), so a reload is not
 * tried.
 */
/* ctest: TIMEOUT=120 RUN_SERIAL=1 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>
#include <sqlite3.h>

#include <ferry/client.h>

#include "dhtcheck.h"
#include "harness.h"
#include "mesh.h"

#define N          2
#define BLOCK      (48 * 1024) /* bytes; one 64 KiB page each */
#define TMPFS_SIZE "6m"
#define FILLER     (3 * 1024 * 1024)
#define PUTS_MAX   400 /* more than d1's tmpfs or quota can hold */
#define LINK_MS    30000
#define DHT_CFG                                                                \
	"[dht]\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n"               \
	"PER_NETWORK = 0\nREPLICATION = 1\nORIGIN_QUOTA = 1 GiB\n"

#define WARN_FULL   "puts fail until the disk takes writes again"
#define NOTICE_BACK "block store: the disk takes writes again"

/* A block the test put, and whether a receipt promised it. */
struct block {
	uint64_t seq;
	struct ferry_dht_key key;
	bool receipted;
};

static struct harness *h;
static struct harness_daemon *d[N];
static struct ferry_client *c;
/* The tmpfs main() mounted for d1's state directory (a symlink to it),
 * or NULL; mounted and unmounted outside the forked tests, so that a
 * failing test leaves no mount behind. */
static char *mnt;
static int mount_errno;
static uint64_t seed;
static struct block blocks[PUTS_MAX];
static size_t n_blocks;

static void
block_fill(uint64_t seq, uint8_t *buf)
{
	uint8_t s[32];
	uint64_t in[2] = { seed, seq };

	crypto_generichash(s, sizeof(s), (const uint8_t *)in, sizeof(in), NULL,
	    0);
	randombytes_buf_deterministic(buf, BLOCK, s);
}

/* The next block of the sequence whose closest daemon is d1, in buf. */
static uint64_t
next_for_d1(uint64_t *seq, uint8_t *buf, struct ferry_dht_key *ret_key)
{
	struct ferry_peer_id ids[N];

	for (;;) {
		uint64_t s = (*seq)++;

		block_fill(s, buf);
		ck_assert_int_eq(ferry_dht_key_of(buf, BLOCK, ret_key), 0);
		ck_assert_uint_eq(dhtcheck_closest(d, N, ret_key, ids), N);
		if (memcmp(&ids[0], &d[1]->id, sizeof(ids[0])) == 0)
			return s;
	}
}

/* PUTs the next block for d1 with expiry (0: the default); the
 * client's status. */
static int
put_one(uint64_t *seq, uint64_t expiry)
{
	uint8_t *buf = malloc(BLOCK);
	struct ferry_dht_receipt *rc = NULL;
	struct ferry_dht_key key, got;
	size_t n = 0;
	int r;

	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_lt(n_blocks, PUTS_MAX);
	blocks[n_blocks].seq = next_for_d1(seq, buf, &key);
	r = ferry_dht_put(c, buf, BLOCK, 1, expiry, &got, &rc, &n);
	if (r == 0) {
		ck_assert_mem_eq(&got, &key, sizeof(key));
		ck_assert_uint_eq(n, 1);
		ck_assert_mem_eq(&rc[0].storer, &d[1]->id, sizeof(d[1]->id));
		ck_assert_int_eq(ferry_dht_receipt_verify(&key, &rc[0]), 0);
	}
	blocks[n_blocks].key = key;
	blocks[n_blocks].receipted = r == 0;
	n_blocks++;
	free(rc);
	free(buf);
	return r;
}

/* GETs block b through d0 and checks its bytes. */
static void
get_check(const struct block *b)
{
	uint8_t *want = malloc(BLOCK), *data = NULL;
	size_t len = 0;
	int r;

	ck_assert_ptr_nonnull(want);
	block_fill(b->seq, want);
	r = ferry_dht_get(c, &b->key, &data, &len);
	ck_assert_msg(r == 0, "get of block #%llu: %s",
	    (unsigned long long)b->seq, strerror(-r));
	ck_assert_uint_eq(len, BLOCK);
	ck_assert(memcmp(data, want, BLOCK) == 0);
	free(data);
	free(want);
}

/* `ferry dht put` of the next block for d1, through d0: its exit code,
 * and its standard error in err. */
static int
put_cli(uint64_t *seq, char *err, size_t size)
{
	uint8_t *buf = malloc(BLOCK);
	struct harness_output o;
	struct ferry_dht_key key;
	char *file;
	FILE *f;
	int status;

	ck_assert_ptr_nonnull(buf);
	(void)next_for_d1(seq, buf, &key);
	ck_assert_int_gt(asprintf(&file, "%s/cli-block", harness_dir(h)), 0);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, BLOCK, f), BLOCK);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(harness_run_cli(d[0], &o, "dht", "put", file, NULL),
	    0);
	status = o.status;
	(void)snprintf(err, size, "%s", o.err);
	harness_output_free(&o);
	free(file);
	free(buf);
	return status;
}

/* How many times needle is in d's log. */
static size_t
log_count(const struct harness_daemon *dd, const char *needle)
{
	char *log = harness_daemon_log(dd), *p;
	size_t n = 0;

	ck_assert_ptr_nonnull(log);
	for (p = log; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	free(log);
	return n;
}

static size_t
log_lines(const struct harness_daemon *dd)
{
	return log_count(dd, "\n");
}

static int
tmpfs_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	return ftw->level == 0 ? 0 : remove(path);
}

/* Empties the tmpfs of what a test before left there. */
static void
tmpfs_clear(void)
{
	ck_assert_int_eq(nftw(mnt, tmpfs_rm_one, 16,
	                     FTW_DEPTH | FTW_PHYS | FTW_MOUNT),
	    0);
}

/* Starts d0 and d1 (extra: d1's own configuration, may be NULL; on
 * with_tmpfs, its state directory a small tmpfs with a filler file
 * written first); false if the tmpfs cannot be had. */
static bool
net_start(const char *extra, bool with_tmpfs)
{
	char *uri, *filler;
	int fd;

	ck_assert_int_eq(harness_new("dht-space", &h), 0);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(harness_daemon_new(h, &d[i]), 0);
		ck_assert_int_eq(harness_daemon_transports(d[i], "udp"), 0);
		ck_assert_int_eq(harness_daemon_config(d[i], "%s", DHT_CFG), 0);
	}
	if (extra != NULL)
		ck_assert_int_eq(harness_daemon_config(d[1], "%s", extra), 0);
	if (with_tmpfs) {
		if (mnt == NULL) {
			fprintf(stderr,
			    "test_disk_full skipped: cannot mount: %s\n",
			    strerror(mount_errno));
			return false;
		}
		tmpfs_clear();
		ck_assert_int_eq(symlink(mnt, d[1]->state_dir), 0);
		ck_assert_int_gt(asprintf(&filler, "%s/filler", mnt), 0);
		fd = open(filler, O_WRONLY | O_CREAT | O_EXCL, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(posix_fallocate(fd, 0, FILLER), 0);
		ck_assert_int_eq(close(fd), 0);
		free(filler);
	}
	ck_assert_int_eq(harness_daemon_start_ready(d[0]), 0);
	uri = mesh_hello(d[0]);
	ck_assert_int_eq(harness_daemon_config(d[1], "[core]\nBOOTSTRAP = %s\n",
	                     uri),
	    0);
	free(uri);
	ck_assert_int_eq(harness_daemon_start_ready(d[1]), 0);
	dhtcheck_wait_tables(h, d, N, N - 1, LINK_MS);
	ck_assert_int_eq(harness_daemon_client(d[0], &c), 0);
	return true;
}

static void
setup(void)
{
	randombytes_buf(&seed, sizeof(seed));
	n_blocks = 0;
}

static void
teardown(void)
{
	if (c != NULL)
		ferry_client_close(c);
	c = NULL;
	for (int i = 0; i < N && h != NULL; i++)
		if (d[i] != NULL && d[i]->pid > 0 &&
		    harness_daemon_stop(d[i], HARNESS_STOP_TIMEOUT_MS, NULL) <
		        0)
			(void)harness_daemon_kill(d[i]);
	harness_free(h);
	h = NULL;
	memset(d, 0, sizeof(d));
}

/* Stops d1 cleanly, checks its blocks.sqlite with SQLite and that every
 * receipted block is in it, byte for byte; how many blocks it holds. */
static size_t
check_store(void)
{
	char path[PATH_MAX + 32], *msg;
	uint8_t *want = malloc(BLOCK);
	sqlite3_stmt *s;
	sqlite3 *db;
	int status = -1, held = 0;

	ck_assert_ptr_nonnull(want);
	ck_assert_int_eq(harness_daemon_stop(d[1], HARNESS_STOP_TIMEOUT_MS,
	                     &status),
	    0);
	ck_assert_int_eq(status, 0);
	(void)snprintf(path, sizeof(path), "%s/blocks.sqlite", d[1]->state_dir);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE,
	                     NULL),
	    SQLITE_OK);
	/* As ferryd does: no -shm file, which a full disk may not take. */
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA locking_mode=EXCLUSIVE", NULL,
	                     NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1,
	                     &s, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	msg = strdup((const char *)sqlite3_column_text(s, 0));
	ck_assert_msg(strcmp(msg, "ok") == 0, "%s: %s", path, msg);
	free(msg);
	ck_assert_int_eq(sqlite3_finalize(s), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db,
	                     "SELECT data FROM blocks WHERE key = ?1", -1, &s,
	                     NULL),
	    SQLITE_OK);
	for (size_t i = 0; i < n_blocks; i++) {
		int rc;

		ck_assert_int_eq(sqlite3_bind_blob(s, 1, blocks[i].key.bytes,
		                     sizeof(blocks[i].key.bytes),
		                     SQLITE_STATIC),
		    SQLITE_OK);
		rc = sqlite3_step(s);
		if (blocks[i].receipted)
			ck_assert_msg(rc == SQLITE_ROW,
			    "block #%llu, receipted, is not in %s",
			    (unsigned long long)blocks[i].seq, path);
		if (rc == SQLITE_ROW) {
			block_fill(blocks[i].seq, want);
			ck_assert_int_eq(sqlite3_column_bytes(s, 0), BLOCK);
			ck_assert(memcmp(sqlite3_column_blob(s, 0), want,
			              BLOCK) == 0);
			held++;
		}
		ck_assert_int_eq(sqlite3_reset(s), SQLITE_OK);
	}
	ck_assert_int_eq(sqlite3_finalize(s), SQLITE_OK);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
	free(want);
	return (size_t)held;
}

START_TEST(test_disk_full)
{
	size_t first_fail, stored, lines, receipted = 0;
	uint64_t seq = 0;
	char *filler, err[512];
	int r = 0;

	if (!net_start(NULL, true))
		return;
	/* Until the disk is full. */
	while (n_blocks < PUTS_MAX && (r = put_one(&seq, 0)) == 0)
		;
	ck_assert_msg(r == -ENOSPC, "put #%zu: %s, not -ENOSPC", n_blocks,
	    strerror(-r));
	first_fail = n_blocks - 1;
	stored = first_fail;
	ck_assert_uint_gt(stored, 4);
	ck_assert(mesh_wait_stat(d[1], "dht.store_failed", 1, 2000));
	ck_assert_int_eq(harness_daemon_wait_log(d[1], WARN_FULL, 5000), 0);
	/* More PUTs refused the same way: one log line for them all. */
	lines = log_lines(d[1]);
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(put_one(&seq, 0), -ENOSPC);
	/* Each refused PUT counted: the store's counters follow within a
	 * tick (100 ms). */
	ck_assert(mesh_wait_stat(d[1], "dht.store_failed", 21, 2000));
	ck_assert(mesh_wait_stat(d[1], "dht.store_fails", 21, 2000));
	ck_assert_uint_eq(log_count(d[1], WARN_FULL), 1);
	ck_assert_msg(log_lines(d[1]) <= lines + 2,
	    "d1 logged %zu lines for 20 refused puts", log_lines(d[1]) - lines);
	/* What `ferry dht put` says of it. */
	ck_assert_int_eq(put_cli(&seq, err, sizeof(err)), 1);
	ck_assert_msg(strstr(err, "the storing peers are full") != NULL, "%s",
	    err);
	ck_assert(mesh_wait_stat(d[1], "dht.store_fails", 22, 2000));
	ck_assert_uint_eq(log_count(d[1], WARN_FULL), 1);
	/* What it holds, it serves. */
	for (size_t i = 0; i < first_fail; i++)
		get_check(&blocks[i]);
	/* Space returns: no restart, PUTs are taken again. */
	ck_assert_int_gt(asprintf(&filler, "%s/filler", mnt), 0);
	ck_assert_int_eq(unlink(filler), 0);
	free(filler);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(put_one(&seq, 0), 0);
	ck_assert_int_eq(harness_daemon_wait_log(d[1], NOTICE_BACK, 5000), 0);
	ck_assert_uint_eq(log_count(d[1], NOTICE_BACK), 1);
	ck_assert_uint_eq(log_count(d[1], WARN_FULL), 1);
	for (size_t i = 0; i < n_blocks; i++)
		if (blocks[i].receipted) {
			get_check(&blocks[i]);
			receipted++;
		}
	printf("dht_space: disk full after %zu blocks of %d bytes; %zu "
	       "receipted in all, dht.store_failed %llu\n",
	    stored, BLOCK, receipted,
	    (unsigned long long)mesh_stat(d[1], "dht.store_failed"));
	(void)fflush(stdout);
	ck_assert_uint_eq(check_store(), receipted);
}
END_TEST

START_TEST(test_quota)
{
	uint64_t seq = 0, expiry;
	size_t receipted = 0, short_lived = 0;
	int r = 0;

	ck_assert(net_start("[dht]\nQUOTA = 512 KiB\n", false));
	expiry = (uint64_t)time(NULL) + 4;
	/* Short-lived blocks first, until the quota refuses one; some may
	 * be evicted for closer ones on the way, as QUOTA says. */
	while (n_blocks < PUTS_MAX && (r = put_one(&seq, expiry)) == 0)
		short_lived++;
	ck_assert_msg(r == -ENOSPC, "put #%zu: %s, not -ENOSPC", n_blocks,
	    strerror(-r));
	ck_assert(mesh_wait_stat(d[1], "dht.store_refused", 1, 2000));
	ck_assert(mesh_wait_stat(d[1], "dht.store_fails", 1, 2000));
	/* A refusal at QUOTA is no disk failure. */
	ck_assert_uint_eq(mesh_stat(d[1], "dht.store_failed"), 0);
	ck_assert_uint_eq(log_count(d[1], WARN_FULL), 0);
	/* Once they expired, there is room again. */
	while ((uint64_t)time(NULL) <= expiry)
		harness_sleep_ms(200);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(put_one(&seq, 0), 0);
	for (size_t i = 0; i < n_blocks; i++)
		if (blocks[i].receipted && i >= short_lived + 1) {
			get_check(&blocks[i]);
			receipted++;
		}
	/* The expired ones are no promise any more. */
	for (size_t i = 0; i <= short_lived; i++)
		blocks[i].receipted = false;
	printf("dht_space: quota of 512 KiB refused block %zu; after expiry "
	       "%zu taken\n",
	    short_lived + 1, receipted);
	(void)fflush(stdout);
	ck_assert_uint_ge(check_store(), receipted);
}
END_TEST

/* A store whose disk is read-only when ferryd starts: it refuses to
 * start, saying why; once the disk is writable again it starts, with
 * every block. (A disk cannot turn read-only under a running ferryd
 * here: the kernel refuses to remount one with files open for writing.) */
START_TEST(test_read_only)
{
	uint64_t seq = 0;
	int status = -1;

	if (!net_start(NULL, true))
		return;
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(put_one(&seq, 0), 0);
	ck_assert_int_eq(harness_daemon_stop(d[1], HARNESS_STOP_TIMEOUT_MS,
	                     &status),
	    0);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY,
	                     "size=" TMPFS_SIZE ",mode=0700"),
	    0);
	ck_assert_int_ne(harness_daemon_start_ready(d[1]), 0);
	ck_assert_int_ne(d[1]->exit_status, 0);
	ck_assert(harness_daemon_log_has(d[1],
	    "blocks.sqlite: directory not writable: Read-only file system"));
	ck_assert_int_eq(mount(NULL, mnt, NULL, MS_REMOUNT,
	                     "size=" TMPFS_SIZE ",mode=0700"),
	    0);
	ck_assert_int_eq(harness_daemon_start_ready(d[1]), 0);
	dhtcheck_wait_tables(h, d, 2, 1, LINK_MS);
	for (size_t i = 0; i < n_blocks; i++)
		get_check(&blocks[i]);
	ck_assert_uint_eq(check_store(), 3);
}
END_TEST

static Suite *
dht_space_suite(void)
{
	Suite *s = suite_create("dht_space");
	TCase *tc = tcase_create("space");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_disk_full);
	tcase_add_test(tc, test_quota);
	tcase_add_test(tc, test_read_only);
	suite_add_tcase(s, tc);
	return s;
}

/* A small tmpfs of the test's own, or mnt NULL and mount_errno why. */
static void
tmpfs_mount(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (asprintf(&dir, "%s/ferry-dht-space-fs-XXXXXX",
	        tmp != NULL && *tmp != '\0' ? tmp : "/tmp") < 0)
		return;
	if (mkdtemp(dir) == NULL) {
		mount_errno = errno;
		free(dir);
		return;
	}
	if (mount("tmpfs", dir, "tmpfs", 0, "size=" TMPFS_SIZE ",mode=0700") <
	    0) {
		mount_errno = errno;
		(void)rmdir(dir);
		free(dir);
		return;
	}
	mnt = dir;
}

static void
tmpfs_unmount(void)
{
	if (mnt == NULL)
		return;
	/* Lazily if a daemon of a failed test still holds a file there. */
	if (umount(mnt) < 0 && umount2(mnt, MNT_DETACH) < 0)
		fprintf(stderr, "cannot unmount %s: %s\n", mnt,
		    strerror(errno));
	else
		(void)rmdir(mnt);
	free(mnt);
	mnt = NULL;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	if (sodium_init() < 0)
		return 1;
	tmpfs_mount();
	sr = srunner_create(dht_space_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tmpfs_unmount();
	return failed == 0 ? 0 : 1;
}
