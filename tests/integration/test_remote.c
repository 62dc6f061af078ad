/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The thin client end to end (issue 15): real ferryd processes, d0 an
 * intermediary with a certificate the test makes, d0 to d3 the DHT, and
 * `ferry remote` with no daemon of its own, as a user runs it. Checked:
 * a file put by the thin client (its URI printed only once every block
 * has its receipts) is got back byte for byte by a full peer with `ferry
 * get` and by the thin client with `ferry remote get`, whose requests
 * share one connection; a full peer sharing the client's convergence
 * secret puts the same file under the same URI (one encoding); an
 * unreachable intermediary named first is passed over, not remembered as
 * bad; the receipt queue is left empty; the client's key and secret are
 * 0600 in a 0700 directory; a cursor the intermediary never gave is
 * dropped and the queue taken from 0; with only one intermediary the put
 * says it could not be checked through another, and under --verify all
 * fails with status 9 and no URI.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include "dhtcheck.h"
#include "harness.h"
#include "mesh.h"

#define N 4
#define DHT_CFG                                                                \
	"[dht]\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n"               \
	"PER_NETWORK = 0\n"

static struct harness *h;
static struct harness_daemon *d[N];
static char dir[512], cert[600], url[64], client[600];

static struct harness_output sh(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Runs a shell command; its output. */
static struct harness_output
sh(const char *fmt, ...)
{
	struct harness_output o;
	char cmd[4096];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	va_list ap;

	va_start(ap, fmt);
	ck_assert_int_lt(vsnprintf(cmd, sizeof(cmd), fmt, ap), sizeof(cmd));
	va_end(ap);
	ck_assert_int_eq(harness_run(argv, NULL, 120000, &o), 0);
	return o;
}

/* ferry remote OP ARGS with the client's directory and the test's CA;
 * out and err kept in the returned output. */
static struct harness_output
remote(const char *args)
{
	return sh("%s remote %s --config-dir %s --cacert %s",
	    harness_cli_path(), args, client, cert);
}

/* A random file of len bytes at dir/name; its path in path. */
static void
random_file(const char *name, size_t len, char *path, size_t size)
{
	uint8_t *data = malloc(len);
	FILE *f;

	(void)snprintf(path, size, "%s/%s", dir, name);
	ck_assert_ptr_nonnull(data);
	randombytes_buf(data, len);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(data);
}

static void
same_files(const char *a, const char *b)
{
	struct harness_output o = sh("cmp %s %s", a, b);

	ck_assert_msg(o.status == 0, "%s and %s differ: %s", a, b, o.out);
	harness_output_free(&o);
}

/* The client's convergence secret, made here (0600 in a 0700 directory)
 * so that d3 can be configured to share it. */
static void
client_secret(void)
{
	uint8_t secret[32];
	char path[700];
	int fd;

	(void)snprintf(client, sizeof(client), "%s/client", dir);
	ck_assert_int_eq(mkdir(client, 0700), 0);
	(void)snprintf(path, sizeof(path), "%s/convergence.key", client);
	randombytes_buf(secret, sizeof(secret));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, secret, sizeof(secret)), sizeof(secret));
	ck_assert_int_eq(close(fd), 0);
}

static void
setup(void)
{
	struct harness_output o;
	uint16_t port;
	uint64_t end;
	char *uri;

	ck_assert_int_eq(harness_new("remote", &h), 0);
	(void)snprintf(dir, sizeof(dir), "%s", harness_dir(h));
	(void)snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	client_secret();
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(harness_daemon_new(h, &d[i]), 0);
		ck_assert_int_eq(harness_daemon_transports(d[i], "udp"), 0);
		ck_assert_int_eq(harness_daemon_config(d[i], "%s", DHT_CFG), 0);
	}
	ck_assert_int_eq(harness_free_port_at(d[0]->ip, &port), 0);
	(void)snprintf(url, sizeof(url), "https://%s:%u", d[0]->ip, port);
	o = sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
	       "-nodes -days 2 -subj /CN=%s -addext subjectAltName=IP:%s "
	       "-keyout %s/key.pem -out %s 2>&1",
	    d[0]->ip, d[0]->ip, dir, cert);
	ck_assert_msg(o.status == 0, "openssl: %s", o.out);
	harness_output_free(&o);
	ck_assert_int_eq(harness_daemon_config(d[0],
	                     "[intermediary]\nLISTEN = %s:%u\n"
	                     "CERTIFICATE = %s\nPRIVATE_KEY = %s/key.pem\n",
	                     d[0]->ip, port, cert, dir),
	    0);
	/* d3 shares the thin client's convergence secret. */
	ck_assert_int_eq(
	    harness_daemon_config(d[3],
	        "[storage]\nSHARED_SECRET_FILE = %s/convergence.key\n", client),
	    0);
	ck_assert_int_eq(harness_daemon_start_ready(d[0]), 0);
	uri = mesh_hello(d[0]);
	for (int i = 1; i < N; i++) {
		ck_assert_int_eq(harness_daemon_config(d[i],
		                     "[core]\nBOOTSTRAP = %s\n", uri),
		    0);
		ck_assert_int_eq(harness_daemon_start_ready(d[i]), 0);
	}
	free(uri);
	end = harness_now_ms() + 30000;
	for (int i = 0; i < N; i++)
		while (dhtcheck_figures(d[i]).entries < N - 1) {
			if (harness_now_ms() > end) {
				harness_dump_logs(h);
				ck_abort_msg("d%d's table is not full", i);
			}
			harness_sleep_ms(100);
		}
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

/* The first line of out, into buf. */
static void
first_line(const char *out, char *buf, size_t size)
{
	(void)snprintf(buf, size, "%.*s", (int)strcspn(out, "\n"), out);
}

START_TEST(test_put_get)
{
	char file[600], got[600], uri[256], uri2[256], args[2048], path[700];
	struct harness_output o;
	uint64_t conns;
	struct stat st;

	random_file("one.bin", 1500000, file, sizeof(file));
	(void)snprintf(args, sizeof(args),
	    "put --intermediary https://127.0.0.1:1 --intermediary %s %s", url,
	    file);
	o = remote(args);
	ck_assert_msg(o.status == 0, "ferry remote put: %d %s", o.status,
	    o.err);
	first_line(o.out, uri, sizeof(uri));
	ck_assert_msg(strncmp(uri, "ferry:f1.1500000.", 17) == 0, "%s", uri);
	/* The unreachable one was said, passed over, not found bad. */
	ck_assert_msg(strstr(o.err, "127.0.0.1:1") != NULL, "%s", o.err);
	/* No other to fetch the blocks back through: said, not fatal. */
	ck_assert_msg(strstr(o.err, "could not be checked independently") !=
	        NULL,
	    "%s", o.err);
	harness_output_free(&o);
	(void)snprintf(path, sizeof(path), "%s/bad-intermediaries", client);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* A full peer gets it from the DHT. */
	(void)snprintf(got, sizeof(got), "%s/got-peer.bin", dir);
	ck_assert_int_eq(harness_run_cli(d[2], &o, "get", uri, "-o", got, NULL),
	    0);
	ck_assert_msg(o.status == 0, "ferry get: %d %s", o.status, o.err);
	harness_output_free(&o);
	same_files(file, got);
	/* The thin client gets it through the intermediary, its requests
	 * (the list, then a fetch per batch) on one connection. */
	(void)snprintf(got, sizeof(got), "%s/got-remote.bin", dir);
	(void)snprintf(args, sizeof(args), "get --intermediary %s -o %s %s",
	    url, got, uri);
	conns = mesh_stat(d[0], "intermediary.connections");
	o = remote(args);
	ck_assert_msg(o.status == 0, "ferry remote get: %d %s", o.status,
	    o.err);
	harness_output_free(&o);
	same_files(file, got);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.connections"),
	    conns + 1);
	/* One encoding: a full peer with the same secret, the same URI. */
	ck_assert_int_eq(harness_run_cli(d[3], &o, "put", file, NULL), 0);
	ck_assert_msg(o.status == 0, "ferry put: %d %s", o.status, o.err);
	first_line(o.out, uri2, sizeof(uri2));
	harness_output_free(&o);
	ck_assert_str_eq(uri, uri2);
	/* The put took its receipts: the queue is empty. */
	o = remote("receipts");
	ck_assert_msg(o.status == 0, "ferry remote receipts: %s", o.err);
	ck_assert_str_eq(o.out, "");
	harness_output_free(&o);
	/* The client's key and secret are private. */
	ck_assert_int_eq(stat(client, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	(void)snprintf(path, sizeof(path), "%s/client.key", client);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
}
END_TEST

/* Remembered from the put: no --intermediary needed; --json lines. */
START_TEST(test_known_and_json)
{
	char file[600], args[1024];
	struct harness_output o;

	random_file("two.bin", 300000, file, sizeof(file));
	(void)snprintf(args, sizeof(args), "intermediaries --intermediary %s",
	    url);
	o = remote(args);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, url) != NULL &&
	        strstr(o.out, d[0]->id_str) != NULL,
	    "%s", o.out);
	harness_output_free(&o);
	(void)snprintf(args, sizeof(args), "put %s", file);
	o = sh("%s --json remote %s --config-dir %s --cacert %s",
	    harness_cli_path(), args, client, cert);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, "{\"event\":\"done\"") != NULL &&
	        strstr(o.out, "\"size\":300000") != NULL,
	    "%s", o.out);
	harness_output_free(&o);
	/* Every block to be fetched back through another intermediary,
	 * and there is none: status 9, said, no URI. */
	random_file("three.bin", 300000, file, sizeof(file));
	(void)snprintf(args, sizeof(args), "put --verify all %s", file);
	o = remote(args);
	ck_assert_msg(o.status == 9, "%d %s", o.status, o.err);
	ck_assert_msg(strstr(o.err, "could not be checked") != NULL, "%s",
	    o.err);
	ck_assert_str_eq(o.out, "");
	harness_output_free(&o);
	/* A cursor the intermediary never gave (its queue lost): said, and
	 * the queue taken from the start. */
	(void)snprintf(args, sizeof(args), "%s/cursors", client);
	o = sh("echo '%s 1000000' > %s", d[0]->id_str, args);
	harness_output_free(&o);
	o = remote("receipts");
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.err, "does not know cursor 1000000") != NULL,
	    "%s", o.err);
	harness_output_free(&o);
	/* A URI that is not one: usage, exit 2. */
	o = remote("get ferry:f1.12.NOTAURI");
	ck_assert_int_eq(o.status, 2);
	harness_output_free(&o);
}
END_TEST

static Suite *
remote_suite(void)
{
	Suite *s = suite_create("remote");
	TCase *tc = tcase_create("thin client");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_put_get);
	tcase_add_test(tc, test_known_and_json);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(remote_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
