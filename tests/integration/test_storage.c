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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>
#include <sqlite3.h>

#include <ferry/client.h>

#include "harness.h"
#include "mesh.h"

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

static Suite *
storage_suite(void)
{
	Suite *s = suite_create("storage");
	TCase *tc = tcase_create("daemons");

	tcase_set_timeout(tc, 240);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_dedup);
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
