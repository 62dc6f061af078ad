/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A hostile intermediary is detected by the thin client, which completes
 * through another (issue 15), with real daemons: a DHT of seven, d0 an
 * honest intermediary G, d1 to d5 the test build tests/tools/ferryd_hostile
 * as intermediaries that drop every PUT, withhold the receipts, forge
 * their signatures, replay one block's genuine receipts for the others,
 * or drop every PUT and answer it with receipts that verify, signed by
 * storers they made up (sybil), d6 a full peer and an honest
 * intermediary F. For each, `ferry remote put FILE --verify all
 * --intermediary H --intermediary G --intermediary F` with a fresh
 * client: the URI comes through G; stderr says what H did wrong (receipts
 * missing past --receipt-timeout, a forged receipt found as soon as it
 * came, or, for the sybil, blocks G cannot find when the client fetches
 * them back to check them: well before the timeout); H, not G or F, is in
 * the client's bad-intermediaries; H's log shows it did misbehave; every
 * block G relayed was fetched back through another (exit 0 under --verify
 * all says so, the others' counters show it); d6 gets the file back byte
 * for byte with `ferry get`; and a later put with the same options goes
 * through G without touching H.
 */
/* ctest: TIMEOUT=420 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>
#include <sodium.h>

#include "harness.h"
#include "imdnet.h"
#include "mesh.h"

#define N         7
#define N_MODES   5
#define FILE_LEN  (3 * 256 * 1024 + 12345) /* 4 data blocks, a node */
#define TIMEOUT_S 6  /* --receipt-timeout, when receipts never come */
#define FORGED_S  60 /* --receipt-timeout, when forgeries come at once */

/* d[1 + i] misbehaves as mode[i] says. */
static const struct {
	const char *name; /* FERRY_HOSTILE */
	bool forges;      /* found by a check, not by the timeout */
	const char *did;  /* what ferryd_hostile logs when it does it */
	const char *said; /* what the client says of it */
} mode[N_MODES] = {
	{ "drop", false, "dropped PUT", "receipts missing past the timeout" },
	{ "withhold", false, "withheld the",
	    "receipts missing past the timeout" },
	{ "forge", true, "forged the receipts", "passed a forged receipt" },
	{ "replay", true, "replayed another block's receipt",
	    "passed a forged receipt" },
	{ "sybil", true, "made up 3 receipts",
	    "not found when fetched back through" },
};

static struct harness *h;
static struct harness_daemon *d[N];
static char cert[600], url[N][64];

static void
setup(void)
{
	char hostile[600];

	ck_assert_int_eq(harness_new("remote-hostile", &h), 0);
	imdnet_daemons(h, d, N);
	imdnet_cert(h, d, N, cert, sizeof(cert));
	(void)snprintf(hostile, sizeof(hostile), "%s/ferryd_hostile",
	    FERRY_TOOL_DIR);
	for (int i = 0; i < N; i++)
		imdnet_listen(h, d[i], cert, url[i], sizeof(url[i]));
	for (int i = 0; i < N_MODES; i++) {
		ck_assert_int_eq(harness_daemon_program(d[1 + i], hostile), 0);
		ck_assert_int_eq(harness_daemon_setenv(d[1 + i],
		                     "FERRY_HOSTILE", mode[i].name),
		    0);
	}
	imdnet_start(h, d, N);
	for (int i = 0; i < N_MODES; i++)
		ck_assert(
		    harness_daemon_log_has(d[1 + i], "a hostile intermediary"));
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

/* A random file of FILE_LEN bytes at path. */
static void
random_file(const char *path)
{
	uint8_t *data = malloc(FILE_LEN);
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(data);
	ck_assert_ptr_nonnull(f);
	randombytes_buf(data, FILE_LEN);
	ck_assert_uint_eq(fwrite(data, 1, FILE_LEN, f), FILE_LEN);
	ck_assert_int_eq(fclose(f), 0);
	free(data);
}

/* Blocks the intermediaries other than G sent to clients. */
static uint64_t
fetched_elsewhere(void)
{
	uint64_t n = 0;

	for (int i = 1; i < N; i++)
		n += mesh_stat(d[i], "intermediary.blocks_fetched");
	return n;
}

/* The client's bad-intermediaries, "" if none. */
static void
bad_list(const char *client, char *buf, size_t size)
{
	char path[700];
	FILE *f;
	size_t n = 0;

	(void)snprintf(path, sizeof(path), "%s/bad-intermediaries", client);
	f = fopen(path, "r");
	if (f != NULL) {
		n = fread(buf, 1, size - 1, f);
		(void)fclose(f);
	}
	buf[n] = '\0';
}

START_TEST(test_hostile)
{
	struct harness_daemon *bad = d[1 + _i], *good = d[0];
	const char *hurl = url[1 + _i], *gurl = url[0], *furl = url[N - 1];
	char client[600], file[700], got[700], uri[256], args[2048];
	char list[4096];
	struct harness_output o;
	uint64_t t0, took_ms, conns, missing, fetched;
	unsigned timeout = mode[_i].forges ? FORGED_S : TIMEOUT_S;

	(void)snprintf(client, sizeof(client), "%s/client-%s", harness_dir(h),
	    mode[_i].name);
	(void)snprintf(file, sizeof(file), "%s/%s.bin", harness_dir(h),
	    mode[_i].name);
	random_file(file);
	(void)snprintf(args, sizeof(args),
	    "put --verify all --receipt-timeout %u --intermediary %s "
	    "--intermediary %s --intermediary %s %s",
	    timeout, hurl, gurl, furl, file);
	missing = mesh_stat(good, "intermediary.blocks_missing");
	fetched = fetched_elsewhere();
	t0 = harness_now_ms();
	o = imdnet_remote(client, cert, args);
	took_ms = harness_now_ms() - t0;
	if (o.status != 0)
		harness_dump_logs(h);
	ck_assert_msg(o.status == 0, "ferry remote put through %s: %d %s",
	    mode[_i].name, o.status, o.err);
	imdnet_first_line(o.out, uri, sizeof(uri));
	ck_assert_msg(strncmp(uri, "ferry:f1.", 9) == 0, "%s", uri);
	/* What H did wrong, said, with its URL. */
	ck_assert_msg(strstr(o.err, mode[_i].said) != NULL &&
	        strstr(o.err, hurl) != NULL &&
	        strstr(o.err, "remembered as bad") != NULL,
	    "%s: %s", mode[_i].name, o.err);
	harness_output_free(&o);
	/* Forgeries are found as they come, not by waiting. */
	if (mode[_i].forges)
		ck_assert_msg(took_ms < FORGED_S * 1000 / 2, "%s took %llu ms",
		    mode[_i].name, (unsigned long long)took_ms);
	else
		ck_assert_uint_ge(took_ms, TIMEOUT_S * 1000);
	/* It did misbehave, and G carried the file. */
	ck_assert_msg(harness_daemon_log_has(bad, mode[_i].did),
	    "%s never did it", mode[_i].name);
	ck_assert_uint_gt(mesh_stat(good, "intermediary.relays_stored"), 0);
	/* The sybil's blocks were asked of G, which found none of them. */
	if (strcmp(mode[_i].name, "sybil") == 0)
		ck_assert_uint_gt(mesh_stat(good,
		                      "intermediary.blocks_missing"),
		    missing);
	/* The blocks G relayed were fetched back through another (F, or
	 * one the client learnt): all five (4 data, 1 node) but under
	 * replay, whose H relayed the first honestly (and G checked that
	 * one). */
	ck_assert_uint_ge(fetched_elsewhere(), fetched + 4);
	/* H, not G or F, is remembered as bad. */
	bad_list(client, list, sizeof(list));
	ck_assert_msg(strstr(list, hurl) != NULL &&
	        strstr(list, gurl) == NULL && strstr(list, furl) == NULL,
	    "bad-intermediaries: %s", list);
	/* A full peer gets it from the DHT. */
	(void)snprintf(got, sizeof(got), "%s/%s.got", harness_dir(h),
	    mode[_i].name);
	ck_assert_int_eq(harness_run_cli(d[N - 1], &o, "get", uri, "-o", got,
	                     NULL),
	    0);
	ck_assert_msg(o.status == 0, "ferry get: %d %s", o.status, o.err);
	harness_output_free(&o);
	imdnet_same_files(file, got);
	/* A later put, named the same way, goes through G first: H sees
	 * no connection at all. */
	random_file(file);
	conns = mesh_stat(bad, "intermediary.connections");
	(void)snprintf(args, sizeof(args),
	    "put --verify all --receipt-timeout %u --intermediary %s "
	    "--intermediary %s --intermediary %s %s",
	    TIMEOUT_S * 5, hurl, gurl, furl, file);
	o = imdnet_remote(client, cert, args);
	ck_assert_msg(o.status == 0, "the later put: %d %s", o.status, o.err);
	ck_assert_msg(strstr(o.err, hurl) == NULL, "%s", o.err);
	harness_output_free(&o);
	ck_assert_uint_eq(mesh_stat(bad, "intermediary.connections"), conns);
}
END_TEST

static Suite *
remote_hostile_suite(void)
{
	Suite *s = suite_create("remote_hostile");
	TCase *tc = tcase_create("hostile intermediaries");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_hostile, 0, N_MODES);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(remote_hostile_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
