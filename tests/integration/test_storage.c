/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Files through the DHT between real ferryd processes (issue 13), each on
 * its own 127.0.0.N, with `ferry put` and `ferry get` as a user runs
 * them: round trips of files of 0, 1, CHUNK_SIZE - 1, CHUNK_SIZE and
 * CHUNK_SIZE + 1 bytes and one whose manifest has three levels (a small
 * CHUNK_SIZE), each put on one daemon and got on another and compared
 * byte for byte; the same file twice with the same convergence secret
 * stores no new block, with another it shares none; a marker planted in
 * a file is in no daemon's block store; a storing daemon killed during a
 * get and a block damaged on replicas: the get completes, right; the
 * putting daemon killed during a put: ferry put run again finishes,
 * sending no block whose receipts it had recorded, and a get killed
 * resumes into its .part file; bad URIs and the file descriptor rules.
 */
/* ctest: TIMEOUT=300 RUN_SERIAL=1 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>
#include <sqlite3.h>

#include <ferry/client.h>

#include "dht/dhtkey.h"
#include "harness.h"
#include "mesh.h"
#include "storage/chunk.h"
#include "storage/manifest.h"
#include "storage/uri.h"

#define N       4
#define CHUNK   1024 /* [storage] CHUNK_SIZE: deep manifests from small files */
#define LINK_MS 30000
#define DHT_CFG                                                                \
	"[core]\nLINK_POLICY = manual\n"                                       \
	"[dht]\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n"               \
	"PER_NETWORK = 0\n"                                                    \
	"[storage]\nCHUNK_SIZE = 1 KiB\nITERATIONS = 10\n"

static struct harness *h;
static struct harness_daemon *d[N];

static uint32_t
table_size(struct harness_daemon *dd)
{
	struct ferry_client *c;
	struct ferry_dht_status *st;
	uint32_t n;

	ck_assert_int_eq(harness_daemon_client(dd, &c), 0);
	ck_assert_int_eq(ferry_dht_status(c, &st), 0);
	n = st->entries;
	ferry_dht_status_free(st);
	ferry_client_close(c);
	return n;
}

static int
running_count(void)
{
	int n = 0;

	for (int i = 0; i < N; i++)
		n += harness_daemon_running(d[i]);
	return n;
}

static void
wait_tables(void)
{
	uint64_t end = harness_now_ms() + LINK_MS;

	for (int i = 0; i < N; i++)
		while (
		    harness_daemon_running(d[i]) && table_size(d[i]) < N - 1) {
			if (harness_now_ms() > end) {
				harness_dump_logs(h);
				ck_abort_msg("d%d's table is not full", i);
			}
			harness_sleep_ms(100);
		}
	/* And linked: the DHT routes only over links, and a table entry
	 * of a daemon just restarted is there before its link. */
	for (int i = 0; i < N; i++)
		if (harness_daemon_running(d[i]))
			mesh_wait_peers(h, d[i], (size_t)running_count() - 1,
			    LINK_MS);
}

static void
setup(void)
{
	ck_assert_int_eq(harness_new("storage", &h), 0);
	mesh_start(h, d, N, "udp", DHT_CFG);
	wait_tables();
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

/* A file of len random bytes in the harness's directory; its path. */
static char *
make_file(const char *name, size_t len, const char *marker)
{
	char *path;
	uint8_t *data = malloc(len > 0 ? len : 1);
	size_t mlen = marker != NULL ? strlen(marker) : 0;
	FILE *f;

	ck_assert_ptr_nonnull(data);
	randombytes_buf(data, len);
	/* The marker every 4 KiB, across chunk boundaries too. */
	for (size_t off = 100; mlen > 0 && off + mlen <= len; off += 4000)
		memcpy(data + off, marker, mlen);
	ck_assert_int_gt(asprintf(&path, "%s/%s", harness_dir(h), name), 0);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(data);
	return path;
}

static bool
same_files(const char *a, const char *b)
{
	uint8_t *x, *y;
	size_t lx, ly;
	bool same;
	FILE *f;

	f = fopen(a, "rb");
	ck_assert_ptr_nonnull(f);
	x = malloc(64 << 20);
	lx = fread(x, 1, 64 << 20, f);
	fclose(f);
	f = fopen(b, "rb");
	if (f == NULL) {
		free(x);
		return false;
	}
	y = malloc(64 << 20);
	ly = fread(y, 1, 64 << 20, f);
	fclose(f);
	same = lx == ly && memcmp(x, y, lx) == 0;
	free(x);
	free(y);
	return same;
}

/* ferry put FILE on dd; the URI it printed (free it). */
static char *
put_cli(struct harness_daemon *dd, const char *file)
{
	struct harness_output o;
	char *uri;

	ck_assert_int_eq(harness_run_cli(dd, &o, "put", file, NULL), 0);
	if (o.status != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferry put %s: status %d: %s", file, o.status,
		    o.err);
	}
	ck_assert_msg(strncmp(o.out, "ferry:f1.", 9) == 0, "put printed %s",
	    o.out);
	/* Nothing but the URI when not on a terminal. */
	ck_assert_str_eq(o.err, "");
	o.out[strcspn(o.out, "\n")] = '\0';
	uri = strdup(o.out);
	harness_output_free(&o);
	return uri;
}

/* ferry get URI -o OUT on dd; its exit status, stderr in err (may be
 * NULL). */
static int
get_cli(struct harness_daemon *dd, const char *uri, const char *out, char *err,
    size_t size)
{
	struct harness_output o;
	int status;

	ck_assert_int_eq(harness_run_cli(dd, &o, "get", uri, "-o", out, NULL),
	    0);
	status = o.status;
	if (err != NULL)
		(void)snprintf(err, size, "%s", o.err);
	harness_output_free(&o);
	return status;
}

static uint64_t
sum_stat(const char *name)
{
	uint64_t v = 0;

	for (int i = 0; i < N; i++)
		if (harness_daemon_running(d[i]))
			v += mesh_stat(d[i], name);
	return v;
}

static void
round_trip(size_t len, int from, int to)
{
	char name[64], *file, *out, *uri, err[512];
	int status;

	(void)snprintf(name, sizeof(name), "f%zu", len);
	file = make_file(name, len, NULL);
	uri = put_cli(d[from], file);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	status = get_cli(d[to], uri, out, err, sizeof(err));
	if (status != 0)
		harness_dump_logs(h);
	ck_assert_msg(status == 0, "get of %zu bytes: %d: %s", len, status,
	    err);
	ck_assert_msg(same_files(file, out), "%zu bytes differ", len);
	free(file);
	free(out);
	free(uri);
}

START_TEST(test_round_trips)
{
	static const size_t sizes[] = { 0, 1, CHUNK - 1, CHUNK, CHUNK + 1,
		/* More than 14 x 14 chunks (a 1 KiB node lists 14): three
		 * levels at least. */
		300 * CHUNK + 7 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		round_trip(sizes[i], (int)i % N, (int)(i + 1 + i / N) % N);
}
END_TEST

/* Waits until the storing daemons' counts stop moving (receipts come
 * once blocks are durable, but replicas of a put may still be in flight
 * when ferry put returns); the total. */
static uint64_t
settled_blocks(void)
{
	uint64_t a = sum_stat("dht.store_blocks"), b;

	for (;;) {
		harness_sleep_ms(300);
		b = sum_stat("dht.store_blocks");
		if (a == b)
			return b;
		a = b;
	}
}

/* Convergent: the same file with the same secret (uid 0 on d0) makes the
 * same blocks, and no storing daemon stores a new one; d1 has a secret
 * of its own, and its blocks share none with d0's. */
START_TEST(test_dedup)
{
	char *file = make_file("dedup", 40 * CHUNK + 5, NULL);
	char *u1, *u2, *u3;
	uint64_t b0, b1, b2, b3;

	b0 = settled_blocks();
	u1 = put_cli(d[0], file);
	b1 = settled_blocks();
	ck_assert_uint_gt(b1, b0);
	u2 = put_cli(d[0], file);
	b2 = settled_blocks();
	ck_assert_str_eq(u1, u2);
	ck_assert_uint_eq(b2, b1);
	u3 = put_cli(d[1], file);
	b3 = settled_blocks();
	ck_assert_str_ne(u1, u3);
	/* As many new blocks as the first put made: none shared. */
	ck_assert_uint_eq(b3 - b2, b1 - b0);
	free(u1);
	free(u2);
	free(u3);
	free(file);
}
END_TEST

/* True if needle is in any file under dir (recursively). */
static bool
dir_has(const char *dir, const char *needle)
{
	char cmd[4200];
	int status;

	/* grep -r reads every byte of every file, SQLite's WAL included. */
	(void)snprintf(cmd, sizeof(cmd), "grep -rqa -- '%s' '%s'", needle, dir);
	status = system(cmd);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Nothing of the plaintext reaches a block store: the marker of a file
 * put and got is in no daemon's state directory (blocks.sqlite and its
 * WAL, the records of the transfers) nor its log. */
START_TEST(test_marker)
{
	static const char marker[] = "ferry-MARKER-9e1f03c2";
	char *file = make_file("marked", 64 * CHUNK + 100, marker), *out, *uri;

	uri = put_cli(d[0], file);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	ck_assert_int_eq(get_cli(d[2], uri, out, NULL, 0), 0);
	ck_assert(same_files(file, out));
	ck_assert(dir_has(harness_dir(h), marker)); /* the probe works */
	for (int i = 0; i < N; i++) {
		ck_assert_msg(!dir_has(d[i]->state_dir, marker),
		    "the marker is in d%d's state directory", i);
		ck_assert_msg(!harness_daemon_log_has(d[i], marker),
		    "the marker is in d%d's log", i);
	}
	free(out);
	free(uri);
	free(file);
}
END_TEST

/* Runs ferry with args (NULL-terminated) on dd in the background,
 * output thrown away; its pid. */
static pid_t
spawn_cli(struct harness_daemon *dd, ...)
{
	const char *argv[16] = { harness_cli_path(), "--socket", dd->socket };
	size_t n = 3;
	va_list ap;
	pid_t pid;
	int fd;

	va_start(ap, dd);
	while (n < 15 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		(void)dup2(fd, 0);
		(void)dup2(fd, 1);
		(void)dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int
wait_pid(pid_t pid)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Waits until counter name of dd reaches value; false if pid ended
 * first. */
static bool
wait_counter(struct harness_daemon *dd, const char *name, uint64_t value,
    pid_t pid)
{
	uint64_t end = harness_now_ms() + 60000;
	int status;

	while (mesh_stat(dd, name) < value) {
		if (waitpid(pid, &status, WNOHANG) == pid ||
		    harness_now_ms() > end)
			return false;
		harness_sleep_ms(5);
	}
	return true;
}

/* A storing daemon killed in the middle of a get: the others hold every
 * block, and the get completes, right. */
START_TEST(test_storer_killed)
{
	char *file = make_file("big", 3000 * CHUNK + 3, NULL), *out, *uri;
	pid_t pid;

	uri = put_cli(d[0], file);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	pid = spawn_cli(d[3], "get", uri, "-o", out, NULL);
	ck_assert_msg(wait_counter(d[3], "storage.blocks_got", 300, pid),
	    "the get ended before a storing daemon could be killed");
	ck_assert_int_eq(harness_daemon_kill(d[1]), 0);
	ck_assert_int_eq(wait_pid(pid), 0);
	ck_assert(same_files(file, out));
	free(out);
	free(uri);
	free(file);
}
END_TEST

/* Damages every block in d3's store (stopped), restarts it: its own
 * copies are wrong now, and each block comes right from another. */
static void
damage_store(struct harness_daemon *dd)
{
	char path[4200];
	sqlite3 *db;

	ck_assert_int_eq(harness_daemon_stop(dd, 10000, NULL), 0);
	(void)snprintf(path, sizeof(path), "%s/blocks.sqlite", dd->state_dir);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db,
	                     "UPDATE blocks SET data = randomblob(size)", NULL,
	                     NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_gt(sqlite3_changes(db), 0);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
	ck_assert_int_eq(harness_daemon_start_ready(dd), 0);
	wait_tables();
}

START_TEST(test_damaged_replica)
{
	char *file = make_file("dam", 50 * CHUNK + 9, NULL), *out, *uri;

	uri = put_cli(d[0], file);
	damage_store(d[3]);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	ck_assert_int_eq(get_cli(d[3], uri, out, NULL, 0), 0);
	ck_assert(same_files(file, out));
	/* Its own copies were asked first and failed their hash. */
	ck_assert_uint_gt(mesh_stat(d[3], "dht.blocks_bad"), 0);
	free(out);
	free(uri);
	free(file);
}
END_TEST

/* What ferry put --json said, parsed roughly: the number after key. */
static uint64_t
json_uint_of(const char *json, const char *key)
{
	char probe[64];
	const char *p;

	(void)snprintf(probe, sizeof(probe), "\"%s\":", key);
	p = strstr(json, probe);
	ck_assert_msg(p != NULL, "no %s in %s", key, json);
	return strtoull(p + strlen(probe), NULL, 10);
}

/* The putting daemon killed with SIGKILL in the middle of a put and
 * restarted: ferry put run again finishes, and sends none of the blocks
 * whose receipts the first run recorded. */
START_TEST(test_put_resumes)
{
	char *file = make_file("resume", 3000 * CHUNK + 11, NULL);
	struct harness_output o;
	uint64_t before, sent, skipped, total;
	char *hello;
	pid_t pid;

	/* d0 was the first: restarted, it needs a peer to start from. */
	hello = mesh_hello(d[1]);
	ck_assert_int_eq(harness_daemon_config(d[0], "[core]\nBOOTSTRAP = %s\n",
	                     hello),
	    0);
	free(hello);
	pid = spawn_cli(d[0], "put", file, NULL);
	ck_assert_msg(wait_counter(d[0], "storage.blocks_put", 600, pid),
	    "the put ended before its daemon could be killed");
	ck_assert_int_eq(harness_daemon_kill(d[0]), 0);
	before = 600;
	ck_assert_int_ne(wait_pid(pid), 0);
	ck_assert_int_eq(harness_daemon_start_ready(d[0]), 0);
	wait_tables();
	ck_assert_int_eq(harness_run_cli(d[0], &o, "--json", "put", file, NULL),
	    0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	sent = json_uint_of(o.out, "blocks_sent");
	skipped = json_uint_of(o.out, "blocks_skipped");
	harness_output_free(&o);
	/* Records are written in batches: those of the last moments before
	 * the kill may be lost, never more. */
	ck_assert_uint_ge(skipped + 2 * 64, before);
	ck_assert_uint_eq(mesh_stat(d[0], "storage.resumed"), 1);
	ck_assert_uint_eq(mesh_stat(d[0], "storage.blocks_skipped"), skipped);
	ck_assert_uint_eq(mesh_stat(d[0], "storage.blocks_put"), sent);
	/* Every block once: the same file's put on another daemon (another
	 * secret, the same shape) sends as many. */
	ck_assert_int_eq(harness_run_cli(d[1], &o, "--json", "put", file, NULL),
	    0);
	ck_assert_int_eq(o.status, 0);
	total = json_uint_of(o.out, "blocks_sent");
	harness_output_free(&o);
	ck_assert_uint_eq(sent + skipped, total);
	free(file);
}
END_TEST

/* ferry get killed in the middle: run again into the same .part file,
 * it skips what was written, and the file is right. */
START_TEST(test_get_resumes)
{
	char *file = make_file("gres", 3000 * CHUNK + 5, NULL), *out, *uri;
	char *part;
	pid_t pid;

	uri = put_cli(d[0], file);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	ck_assert_int_gt(asprintf(&part, "%s.part", out), 0);
	pid = spawn_cli(d[2], "get", uri, "-o", out, NULL);
	ck_assert(wait_counter(d[2], "storage.blocks_got", 600, pid));
	(void)kill(pid, SIGKILL);
	(void)wait_pid(pid);
	ck_assert(access(out, F_OK) < 0);   /* nothing that looks done */
	ck_assert(access(part, F_OK) == 0); /* kept to resume */
	/* The client's leaving stops the transfer, resumable. */
	harness_sleep_ms(500);
	ck_assert_int_eq(get_cli(d[2], uri, out, NULL, 0), 0);
	ck_assert(same_files(file, out));
	ck_assert(access(part, F_OK) < 0);
	ck_assert_uint_eq(mesh_stat(d[2], "storage.resumed"), 1);
	ck_assert_uint_gt(mesh_stat(d[2], "storage.chunks_resumed"), 0);
	free(part);
	free(out);
	free(uri);
	free(file);
}
END_TEST

/* A malformed URI: exit status 2, the reason, counted, no file left. */
START_TEST(test_bad_uri)
{
	char *out, err[512];

	ck_assert_int_gt(asprintf(&out, "%s/bad.got", harness_dir(h)), 0);
	ck_assert_int_eq(get_cli(d[1], "ferry:f1.12.NOTAURI", out, err,
	                     sizeof(err)),
	    2);
	ck_assert_msg(strstr(err, "ferry get: ") != NULL, "%s", err);
	ck_assert_int_eq(get_cli(d[1], "ferry://peer", out, err, sizeof(err)),
	    2);
	ck_assert(access(out, F_OK) < 0);
	ck_assert_uint_eq(mesh_stat(d[1], "storage.uri_bad"), 2);
	free(out);
}
END_TEST

/* A file that grows while it is put: the put fails, saying so, and is
 * counted; nothing is left to resume. */
START_TEST(test_file_changed)
{
	char *file = make_file("grows", 3000 * CHUNK, NULL);
	struct harness_output o;
	FILE *f;
	pid_t pid;

	pid = spawn_cli(d[0], "put", file, NULL);
	ck_assert(wait_counter(d[0], "storage.blocks_put", 100, pid));
	f = fopen(file, "ab");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs("more", f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(wait_pid(pid), 7);
	ck_assert_uint_eq(mesh_stat(d[0], "storage.file_changed"), 1);
	ck_assert_uint_eq(mesh_stat(d[0], "storage.puts_failed"), 1);
	ck_assert_int_eq(harness_run_cli(d[0], &o, "transfers", NULL), 0);
	ck_assert_str_eq(o.out, "");
	harness_output_free(&o);
	free(file);
}
END_TEST

/* A get into a full disk (a 64 KiB tmpfs): a clear error, exit 7,
 * counted; the file is not renamed into place. */
START_TEST(test_disk_full)
{
	char *file = make_file("wide", 200 * CHUNK, NULL), *dir, *out, *uri;
	char err[512];

	ck_assert_int_gt(asprintf(&dir, "%s/small", harness_dir(h)), 0);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=64k") < 0) {
		fprintf(stderr, "test_disk_full skipped: cannot mount: %s\n",
		    strerror(errno));
		goto out;
	}
	uri = put_cli(d[0], file);
	ck_assert_int_gt(asprintf(&out, "%s/wide", dir), 0);
	ck_assert_int_eq(get_cli(d[1], uri, out, err, sizeof(err)), 7);
	ck_assert_msg(strstr(err, "no space left") != NULL, "%s", err);
	ck_assert(access(out, F_OK) < 0);
	ck_assert_uint_eq(mesh_stat(d[1], "storage.disk_full"), 1);
	ck_assert_int_eq(umount(dir), 0);
	free(out);
	free(uri);
out:
	free(dir);
	free(file);
}
END_TEST

/* <0 if a is closer to key than b (XOR), >0 if farther. */
static int
xor_cmp(const uint8_t *key, const struct ferry_peer_id *a,
    const struct ferry_peer_id *b)
{
	for (size_t i = 0; i < FERRY_PEER_ID_LEN; i++) {
		uint8_t x = key[i] ^ a->bytes[i], y = key[i] ^ b->bytes[i];

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* The daemon the getter's first asks go to most: for the blocks getter
 * does not hold (it is the farthest of the four from their keys), the
 * closest holder. Found by trying keys, as the DHT will. */
static int
first_holder_of_misses(int getter)
{
	unsigned hits[N] = { 0 };
	uint8_t key[FERRY_PEER_ID_LEN];
	int best = getter == 0 ? 1 : 0, far, near;

	for (int k = 0; k < 4096; k++) {
		randombytes_buf(key, sizeof(key));
		far = near = -1;
		for (int i = 0; i < N; i++) {
			if (far < 0 || xor_cmp(key, &d[i]->id, &d[far]->id) > 0)
				far = i;
			if (near < 0 ||
			    xor_cmp(key, &d[i]->id, &d[near]->id) < 0)
				near = i;
		}
		if (far == getter)
			hits[near]++;
	}
	for (int i = 0; i < N; i++)
		if (hits[i] > hits[best])
			best = i;
	return best;
}

/* One storing daemon slow (1 s on every unit it sends): the blocks the
 * getter asked of it are asked again of the other holders after a delay
 * from the latencies seen, and those answers win. The slow one is the
 * daemon the getter's first asks go to most. */
START_TEST(test_hedged)
{
	char name[32], *file, *out, *uri;
	int slow = first_holder_of_misses(3), from = slow == 0 ? 1 : 0;

	/* Slow from its start, so that its links are made slow rather than
	 * changed under way. */
	ck_assert_int_eq(harness_daemon_stop(d[slow], 10000, NULL), 0);
	ck_assert_int_eq(harness_daemon_config(d[slow],
	                     "[testing]\nENABLE = yes\nDELAY = 1 s\n"),
	    0);
	ck_assert_int_eq(harness_daemon_start_ready(d[slow]), 0);
	wait_tables();
	/* Which blocks the getter asks of the slow one depends on their
	 * keys: a second file, should the first have none. */
	for (int i = 0; i < 2 && mesh_stat(d[3], "storage.hedges") == 0; i++) {
		(void)snprintf(name, sizeof(name), "slow%d", i);
		file = make_file(name, 200 * CHUNK + 1, NULL);
		uri = put_cli(d[from], file);
		ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
		ck_assert_int_eq(get_cli(d[3], uri, out, NULL, 0), 0);
		ck_assert(same_files(file, out));
		free(out);
		free(uri);
		free(file);
	}
	ck_assert_uint_gt(mesh_stat(d[3], "storage.hedges"), 0);
	ck_assert_uint_gt(mesh_stat(d[3], "storage.hedges_won"), 0);
}
END_TEST

/* ferry transfers lists a running put; ferry cancel stops it: its
 * client hears so (status 1), and nothing is left to resume. */
START_TEST(test_transfers_cancel)
{
	char *file = make_file("cancel", 3000 * CHUNK, NULL);
	struct harness_output o;
	char id[17] = "";
	pid_t pid;

	pid = spawn_cli(d[0], "put", file, NULL);
	ck_assert(wait_counter(d[0], "storage.blocks_put", 50, pid));
	ck_assert_int_eq(harness_run_cli(d[0], &o, "transfers", NULL), 0);
	ck_assert_msg(strstr(o.out, " put  running ") != NULL, "%s", o.out);
	ck_assert_msg(strstr(o.out, file) != NULL, "%s", o.out);
	ck_assert_int_eq(sscanf(strchr(o.out, '\n') + 1, "%16s", id), 1);
	harness_output_free(&o);
	ck_assert_int_eq(harness_run_cli(d[0], &o, "cancel", id, NULL), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	harness_output_free(&o);
	ck_assert_int_eq(wait_pid(pid), 1);
	ck_assert_int_eq(harness_run_cli(d[0], &o, "transfers", NULL), 0);
	ck_assert_str_eq(o.out, "");
	harness_output_free(&o);
	ck_assert_int_eq(harness_run_cli(d[0], &o, "cancel", id, NULL), 0);
	ck_assert_int_eq(o.status, 6);
	harness_output_free(&o);
	ck_assert_uint_eq(mesh_stat(d[0], "storage.cancelled"), 1);
	free(file);
}
END_TEST

/* Puts len bytes as one DHT block from dd; its key. */
static void
raw_put(struct harness_daemon *dd, const uint8_t *data, size_t len,
    struct dhtkey *ret)
{
	struct ferry_client *c;
	struct ferry_dht_key key;

	ck_assert_int_eq(harness_daemon_client(dd, &c), 0);
	ck_assert_int_eq(ferry_dht_put(c, data, len, 0, 0, &key, NULL, NULL),
	    0);
	ferry_client_close(c);
	memcpy(ret->b, key.bytes, sizeof(ret->b));
}

/* A hostile manifest, sealed and put as a user with its own code could:
 * root is its URI's ref. */
struct hostile {
	struct harness_daemon *dd;
	struct storage_ref root;
};

static int
hostile_emit(void *arg, const uint8_t *sealed, size_t len,
    const struct storage_ref *ref)
{
	struct hostile *hs = arg;
	struct dhtkey key;

	raw_put(hs->dd, sealed, len, &key);
	ck_assert(dhtkey_equal(&key, &ref->block));
	hs->root = *ref;
	return 0;
}

/* ferry get of root on dd: its status; the reason in err. */
static int
get_root(const struct storage_ref *root, char *err, size_t size)
{
	char uri[STORAGE_URI_MAX], *out;
	int status;

	ck_assert_int_gt(storage_uri_format(root, uri, sizeof(uri)), 0);
	ck_assert_int_gt(asprintf(&out, "%s/hostile.got", harness_dir(h)), 0);
	status = get_cli(d[2], uri, out, err, size);
	ck_assert(access(out, F_OK) < 0);
	free(out);
	return status;
}

/* A manifest node that is not one (random plaintext, sealed as a node):
 * the get fails as damaged (status 8), names the problem, counts it, and
 * leaves nothing. */
START_TEST(test_bad_manifest)
{
	struct storage_codec *codec;
	uint8_t secret[STORAGE_SECRET_LEN] = { 1 }, plain[600];
	uint8_t sealed[sizeof(plain) + STORAGE_SEAL_OVERHEAD];
	struct storage_ref root;
	struct dhtkey key;
	char err[512];

	ck_assert_int_eq(storage_codec_new(secret, 1, false, &codec), 0);
	randombytes_buf(plain, sizeof(plain));
	ck_assert_int_eq(storage_seal(codec, STORAGE_KIND_NODE, plain,
	                     sizeof(plain), sealed, &root),
	    0);
	root.len = 12345;
	raw_put(d[0], sealed, storage_sealed_len(sizeof(plain)), &key);
	ck_assert_int_eq(get_root(&root, err, sizeof(err)), 8);
	ck_assert_msg(strstr(err, "ferry get: ") != NULL, "%s", err);
	ck_assert_uint_eq(mesh_stat(d[2], "storage.manifest_bad"), 1);
	storage_codec_free(codec);
}
END_TEST

/* A manifest whose chunk ref names a real block with the wrong key: the
 * block fails its AEAD check on every ask; the get fails as damaged,
 * counted, and leaves nothing. */
START_TEST(test_bad_block)
{
	struct hostile hs = { .dd = d[0] };
	struct manifest_builder *mb;
	struct storage_codec *codec;
	uint8_t secret[STORAGE_SECRET_LEN] = { 2 }, plain[CHUNK];
	uint8_t sealed[CHUNK + STORAGE_SEAL_OVERHEAD], sum[16] = { 0 };
	struct storage_ref chunk, root;
	char err[512];

	ck_assert_int_eq(storage_codec_new(secret, 1, false, &codec), 0);
	randombytes_buf(plain, sizeof(plain));
	ck_assert_int_eq(storage_seal(codec, STORAGE_KIND_DATA, plain,
	                     sizeof(plain), sealed, &chunk),
	    0);
	raw_put(d[0], sealed, storage_sealed_len(sizeof(plain)), &chunk.block);
	chunk.key[0] ^= 1;
	ck_assert_int_eq(manifest_builder_new(codec, CHUNK, CHUNK, hostile_emit,
	                     &hs, &mb),
	    0);
	ck_assert_int_eq(manifest_builder_add(mb, &chunk), 0);
	ck_assert_int_eq(manifest_builder_finish(mb, sum, &root), 0);
	manifest_builder_free(mb);
	ck_assert_int_eq(get_root(&root, err, sizeof(err)), 8);
	ck_assert_msg(strstr(err, "fails its check") != NULL, "%s", err);
	ck_assert_uint_ge(mesh_stat(d[2], "storage.blocks_bad"), 1);
	storage_codec_free(codec);
}
END_TEST

static Suite *
storage_suite(void)
{
	Suite *s = suite_create("storage");
	TCase *tc = tcase_create("daemons");

	tcase_set_timeout(tc, 240);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_dedup);
	tcase_add_test(tc, test_marker);
	tcase_add_test(tc, test_storer_killed);
	tcase_add_test(tc, test_damaged_replica);
	tcase_add_test(tc, test_put_resumes);
	tcase_add_test(tc, test_get_resumes);
	tcase_add_test(tc, test_bad_uri);
	tcase_add_test(tc, test_file_changed);
	tcase_add_test(tc, test_disk_full);
	tcase_add_test(tc, test_hedged);
	tcase_add_test(tc, test_transfers_cancel);
	tcase_add_test(tc, test_bad_manifest);
	tcase_add_test(tc, test_bad_block);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(storage_suite());
	int failed;

	if (sodium_init() < 0)
		return 1;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
