/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A 1 GiB file through the DHT (issue 13, "Done when"): put with `ferry
 * put` on one of 4 real daemons, got with `ferry get` on another, compared
 * byte for byte; the rates and every daemon's peak resident memory are
 * printed, and the memory is bounded whatever the file's size (a window
 * of chunks, not the file). Labelled long: tests/run-all.sh leaves it out
 * unless CTEST_ARGS chooses labels ("-L long").
 */
/* ctest: TIMEOUT=1200 RUN_SERIAL=1 LABELS=long */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include <ferry/client.h>

#include "harness.h"
#include "mesh.h"
#include "procstat.h"

#define N       4
#define SIZE    (1ull << 30)
#define BUF     (4u << 20)
#define RSS_CAP (64ul << 10) /* KiB: the goal for any process */
/* Every block of d0's 1 GiB would pass one signer's ORIGIN_QUOTA, and
 * three quarters of it is stored on each daemon. */
#define CFG                                                                    \
	"[core]\nLINK_POLICY = manual\n"                                       \
	"[dht]\nPER_NETWORK = 0\nQUOTA = 2 GiB\nORIGIN_QUOTA = 0\n"

static struct harness *h;
static struct harness_daemon *d[N];

/* A file of SIZE random bytes (a keyed stream: fast). */
static char *
make_big(void)
{
	static uint8_t key[crypto_stream_chacha20_KEYBYTES];
	uint8_t nonce[crypto_stream_chacha20_NONCEBYTES] = { 0 };
	uint8_t *buf = malloc(BUF);
	char *path;
	int fd;

	ck_assert_ptr_nonnull(buf);
	randombytes_buf(key, sizeof(key));
	ck_assert_int_gt(asprintf(&path, "%s/big", harness_dir(h)), 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	for (uint64_t off = 0; off < SIZE; off += BUF) {
		nonce[0] = (uint8_t)(off / BUF);
		nonce[1] = (uint8_t)(off / BUF >> 8);
		crypto_stream_chacha20(buf, BUF, nonce, key);
		ck_assert_int_eq(write(fd, buf, BUF), BUF);
	}
	ck_assert_int_eq(close(fd), 0);
	free(buf);
	return path;
}

static bool
same_big(const char *a, const char *b)
{
	uint8_t *x = malloc(BUF), *y = malloc(BUF);
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
	bool same = fa >= 0 && fb >= 0;
	ssize_t n, m;

	while (same) {
		n = read(fa, x, BUF);
		m = read(fb, y, BUF);
		same = n == m && n >= 0 && memcmp(x, y, (size_t)n) == 0;
		if (n <= 0)
			break;
	}
	(void)close(fa);
	(void)close(fb);
	free(x);
	free(y);
	return same;
}

START_TEST(test_one_gib)
{
	struct harness_output o;
	char *file, *out, *uri;
	uint64_t t0, t1, t2;
	unsigned long hwm;

	ck_assert_int_eq(harness_new("storage-large", &h), 0);
	mesh_start(h, d, N, "udp", CFG);
	for (int i = 0; i < N; i++)
		mesh_wait_peers(h, d[i], N - 1, 30000);
	file = make_big();
	t0 = harness_now_ms();
	ck_assert_int_eq(harness_run((char *const[]){ (char *)
	                                                  harness_cli_path(),
	                                 "--socket", d[0]->socket, "put", file,
	                                 NULL },
	                     NULL, 900000, &o),
	    0);
	t1 = harness_now_ms();
	ck_assert_msg(o.status == 0, "put: %s", o.err);
	o.out[strcspn(o.out, "\n")] = '\0';
	uri = strdup(o.out);
	harness_output_free(&o);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	ck_assert_int_eq(harness_run((char *const[]){ (char *)
	                                                  harness_cli_path(),
	                                 "--socket", d[3]->socket, "get", uri,
	                                 "-o", out, NULL },
	                     NULL, 900000, &o),
	    0);
	t2 = harness_now_ms();
	ck_assert_msg(o.status == 0, "get: %s", o.err);
	harness_output_free(&o);
	ck_assert(same_big(file, out));
	printf("1 GiB on %d daemons: put %.1f MB/s, get %.1f MB/s\n", N,
	    (double)SIZE / 1e3 / (double)(t1 - t0),
	    (double)SIZE / 1e3 / (double)(t2 - t1));
	for (int i = 0; i < N; i++) {
		hwm = procstat_kib(d[i]->pid, "VmHWM");
		printf("d%d peak RSS %lu KiB\n", i, hwm);
		ck_assert_uint_le(hwm, procstat_allow_kib(RSS_CAP, 0));
	}
	(void)unlink(out);
	(void)unlink(file);
	free(out);
	free(uri);
	free(file);
	harness_free(h);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("storage_large");
	TCase *tc = tcase_create("large");
	SRunner *sr;
	int failed;

	if (sodium_init() < 0)
		return 1;
	tcase_set_timeout(tc, 1100);
	tcase_add_test(tc, test_one_gib);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
