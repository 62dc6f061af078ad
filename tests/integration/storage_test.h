/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shared by test_storage.c and test_storage_faults.c (issue 13): four real
 * daemons on their own 127.0.0.N with a small CHUNK_SIZE, linked and with
 * full tables before each test; files made, put and got through the ferry
 * command as a user runs it, compared byte for byte; background commands
 * and the counters that tell how far they are.
 */
#ifndef FERRY_TESTS_STORAGE_TEST_H
#define FERRY_TESTS_STORAGE_TEST_H

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

#define N                 4
#define CHUNK             1024 /* [storage] CHUNK_SIZE: deep manifests from small files */
#define LINK_MS           30000
/* A user besides root that the daemons let in (test_storage's
 * test_other_user). */
#define STORAGE_OTHER_UID "4321"
#define DHT_CFG                                                                \
	"[core]\nLINK_POLICY = manual\n"                                       \
	"[dht]\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n"               \
	"PER_NETWORK = 0\n"                                                    \
	"[storage]\nCHUNK_SIZE = 1 KiB\nITERATIONS = 10\n"                     \
	"[service]\nSOCKET_MODE = 0666\nALLOW_USERS = " STORAGE_OTHER_UID "\n"

static struct harness *h;
static struct harness_daemon *d[N];

static inline uint32_t
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

static inline int
running_count(void)
{
	int n = 0;

	for (int i = 0; i < N; i++)
		n += harness_daemon_running(d[i]);
	return n;
}

static inline void
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

static inline void
setup(void)
{
	ck_assert_int_eq(harness_new("storage", &h), 0);
	mesh_start(h, d, N, "udp", DHT_CFG);
	wait_tables();
}

static inline void
teardown(void)
{
	char small[4200];

	/* test_disk_full's tmpfs, should the test have failed before it
	 * unmounted it: the directory would not go otherwise. */
	(void)snprintf(small, sizeof(small), "%s/small", harness_dir(h));
	(void)umount2(small, MNT_DETACH);
	harness_free(h);
	h = NULL;
}

/* A storage test's process: its suite run, the exit status 0 if every
 * test passed. */
static inline int
storage_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	if (sodium_init() < 0)
		return 1;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

/* A file of len random bytes in the harness's directory; its path. */
static inline char *
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

static inline bool
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
static inline char *
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
static inline int
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

static inline uint64_t
sum_stat(const char *name)
{
	uint64_t v = 0;

	for (int i = 0; i < N; i++)
		if (harness_daemon_running(d[i]))
			v += mesh_stat(d[i], name);
	return v;
}

/* Runs ferry with the arguments of ap (NULL-terminated) on dd in the
 * background, its standard output into the file out (NULL: thrown
 * away, as everything else); its pid. */
static inline pid_t
spawn_cli_va(struct harness_daemon *dd, const char *out, va_list ap)
{
	const char *argv[16] = { harness_cli_path(), "--socket", dd->socket };
	size_t n = 3;
	pid_t pid;
	int fd;

	while (n < 15 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	argv[n] = NULL;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		(void)dup2(fd, 0);
		(void)dup2(fd, 2);
		if (out != NULL)
			fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		(void)dup2(fd, 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* Runs ferry with args (NULL-terminated) on dd in the background,
 * output thrown away; its pid. */
static inline pid_t
spawn_cli(struct harness_daemon *dd, ...)
{
	va_list ap;
	pid_t pid;

	va_start(ap, dd);
	pid = spawn_cli_va(dd, NULL, ap);
	va_end(ap);
	return pid;
}

/* The same, standard output into the file out. */
static inline pid_t
spawn_cli_out(struct harness_daemon *dd, const char *out, ...)
{
	va_list ap;
	pid_t pid;

	va_start(ap, out);
	pid = spawn_cli_va(dd, out, ap);
	va_end(ap);
	return pid;
}

static inline int
wait_pid(pid_t pid)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Waits until counter name of dd reaches value; false if pid ended
 * first. */
static inline bool
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

/* What ferry put --json said, parsed roughly: the number after key. */
static inline uint64_t
json_uint_of(const char *json, const char *key)
{
	char probe[64];
	const char *p;

	(void)snprintf(probe, sizeof(probe), "\"%s\":", key);
	p = strstr(json, probe);
	ck_assert_msg(p != NULL, "no %s in %s", key, json);
	return strtoull(p + strlen(probe), NULL, 10);
}

#endif /* FERRY_TESTS_STORAGE_TEST_H */
