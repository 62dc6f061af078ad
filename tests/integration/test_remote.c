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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include "harness.h"
#include "imdnet.h"
#include "mesh.h"

#define N 4

static struct harness *h;
static struct harness_daemon *d[N];
static char dir[512], cert[600], url[64], client[600];

/* ferry remote OP ARGS with the client's directory and the test's CA;
 * out and err kept in the returned output. */
static struct harness_output
remote(const char *args)
{
	return imdnet_remote(client, cert, args);
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
	ck_assert_int_eq(harness_new("remote", &h), 0);
	(void)snprintf(dir, sizeof(dir), "%s", harness_dir(h));
	client_secret();
	imdnet_daemons(h, d, N);
	imdnet_cert(h, d, 1, cert, sizeof(cert));
	imdnet_listen(h, d[0], cert, url, sizeof(url));
	/* d3 shares the thin client's convergence secret. */
	ck_assert_int_eq(
	    harness_daemon_config(d[3],
	        "[storage]\nSHARED_SECRET_FILE = %s/convergence.key\n", client),
	    0);
	imdnet_start(h, d, N);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

START_TEST(test_put_get)
{
	char file[600], got[600], uri[256], uri2[256], args[2048], path[700];
	struct harness_output o;
	uint64_t conns;
	struct stat st;

	imdnet_random_file(h, "one.bin", 1500000, file, sizeof(file));
	(void)snprintf(args, sizeof(args),
	    "put --intermediary https://127.0.0.1:1 --intermediary %s %s", url,
	    file);
	o = remote(args);
	ck_assert_msg(o.status == 0, "ferry remote put: %d %s", o.status,
	    o.err);
	imdnet_first_line(o.out, uri, sizeof(uri));
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
	imdnet_same_files(file, got);
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
	imdnet_same_files(file, got);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.connections"),
	    conns + 1);
	/* One encoding: a full peer with the same secret, the same URI. */
	ck_assert_int_eq(harness_run_cli(d[3], &o, "put", file, NULL), 0);
	ck_assert_msg(o.status == 0, "ferry put: %d %s", o.status, o.err);
	imdnet_first_line(o.out, uri2, sizeof(uri2));
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

	imdnet_random_file(h, "two.bin", 300000, file, sizeof(file));
	(void)snprintf(args, sizeof(args), "intermediaries --intermediary %s",
	    url);
	o = remote(args);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, url) != NULL &&
	        strstr(o.out, d[0]->id_str) != NULL,
	    "%s", o.out);
	harness_output_free(&o);
	(void)snprintf(args, sizeof(args), "put %s", file);
	o = imdnet_sh("%s --json remote %s --config-dir %s --cacert %s",
	    harness_cli_path(), args, client, cert);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, "{\"event\":\"done\"") != NULL &&
	        strstr(o.out, "\"size\":300000") != NULL,
	    "%s", o.out);
	harness_output_free(&o);
	/* Every block to be fetched back through another intermediary,
	 * and there is none: status 9, said, no URI. */
	imdnet_random_file(h, "three.bin", 300000, file, sizeof(file));
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
	o = imdnet_sh("echo '%s 1000000' > %s", d[0]->id_str, args);
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
