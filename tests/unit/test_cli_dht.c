/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry dht put|get|find|status (src/cli/dht.c) with a DHT running: the
 * real CLI against the one-node daemon of dhtd.h. put from a file and
 * from standard input, --json with the receipt verified, get to a file
 * (whole, no FILE.tmp left) and to standard output, a key nobody holds
 * (status 6, no file), fewer receipts than asked (status 1, the key
 * printed), find with the bits shared and the distance, and status.
 */
/* unit-link: libferry ferry_testlib */
/* unit-depends: ferry_cli */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include <ferry/client.h>

#include "dhtd.h"
#include "harness.h"
#include "unit.h"

/* ferry --socket S ARGS... with stdin_data (may be NULL) as its input. */
static void
cli_run(struct harness_output *o, const char *stdin_data, const char *a1,
    const char *a2, const char *a3, const char *a4, const char *a5)
{
	char *argv[] = { (char *)harness_cli_path(), (char *)"--socket",
		dhtd.socket, (char *)a1, (char *)a2, (char *)a3, (char *)a4,
		(char *)a5, NULL };

	ck_assert_int_eq(harness_run(argv, stdin_data, 30000, o), 0);
}

/* A file of the scratch directory with text; its path. */
static const char *
cli_file(const char *name, const char *text)
{
	static char path[512];

	(void)snprintf(path, sizeof(path), "%s",
	    unit_write_str(dhtd.dir, name, text));
	return path;
}

START_TEST(test_cli_put_get)
{
	char hex[FERRY_DHT_KEY_STRLEN + 1], want[FERRY_DHT_KEY_STRLEN + 2];
	char out[512], tmp[520], id[FERRY_PEER_ID_STRLEN + 1];
	const char *text = "a block for ferry dht\n";
	const char *file = cli_file("block", text);
	struct harness_output o;
	struct ferry_dht_key key;
	FILE *f;
	char got[64] = "";

	ck_assert_int_eq(ferry_dht_key_of(text, strlen(text), &key), 0);
	ferry_dht_key_format(&key, hex);
	(void)snprintf(want, sizeof(want), "%s\n", hex);
	cli_run(&o, NULL, "dht", "put", "-r", "1", file);
	ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.err);
	ck_assert_str_eq(o.out, want);
	harness_output_free(&o);
	/* The same bytes from standard input are the same key. */
	cli_run(&o, text, "dht", "put", "--replication=1", "-", NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_str_eq(o.out, want);
	harness_output_free(&o);
	cli_run(&o, NULL, "--json", "dht", "put", "-r1", file);
	ck_assert_int_eq(o.status, 0);
	ferry_peer_id_to_string(&dhtd.dht_id, id);
	ck_assert_ptr_nonnull(strstr(o.out, hex));
	ck_assert_ptr_nonnull(strstr(o.out, "\"receipts\":1,"));
	ck_assert_ptr_nonnull(strstr(o.out, id));
	ck_assert_ptr_nonnull(strstr(o.out, "\"verified\":true"));
	harness_output_free(&o);
	/* To a file, whole, and no FILE.tmp left. */
	(void)snprintf(out, sizeof(out), "%s/got", dhtd.dir);
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	cli_run(&o, NULL, "dht", "get", hex, "-o", out);
	ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.err);
	ck_assert_str_eq(o.out, "");
	harness_output_free(&o);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(got, sizeof(got), f));
	(void)fclose(f);
	ck_assert_str_eq(got, text);
	ck_assert_int_ne(access(tmp, F_OK), 0);
	/* To standard output, and as JSON. */
	cli_run(&o, NULL, "dht", "get", hex, NULL, NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_str_eq(o.out, text);
	harness_output_free(&o);
	cli_run(&o, NULL, "dht", "--json", "get", hex, NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(
	    strstr(o.out, "\"data\":\"a block for ferry dht\\n\""));
	harness_output_free(&o);
}
END_TEST

START_TEST(test_cli_failures_find_status)
{
	char id[FERRY_PEER_ID_STRLEN + 1], out[512], tmp[520];
	const char *file = cli_file("other", "kept by one peer only");
	struct harness_output o;

	(void)snprintf(out, sizeof(out), "%s/absent", dhtd.dir);
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	cli_run(&o, NULL, "dht", "get",
	    "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
	    "-o", out);
	ck_assert_int_eq(o.status, 6);
	ck_assert_ptr_nonnull(strstr(o.err, "no peer holds the block"));
	harness_output_free(&o);
	ck_assert_int_ne(access(out, F_OK), 0);
	ck_assert_int_ne(access(tmp, F_OK), 0);
	/* Fewer receipts than asked: the key all the same, and status 1. */
	cli_run(&o, NULL, "dht", "put", "-r", "2", file);
	ck_assert_int_eq(o.status, 1);
	ck_assert_uint_eq(strlen(o.out), FERRY_DHT_KEY_STRLEN + 1);
	ck_assert_ptr_nonnull(strstr(o.err, "only 1 storing peer"));
	harness_output_free(&o);
	/* The daemon is the only peer: it shares all bits with its id. */
	ferry_peer_id_to_string(&dhtd.dht_id, id);
	cli_run(&o, NULL, "dht", "find", id, "-n", "3");
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, id));
	ck_assert_ptr_nonnull(strstr(o.out, "   256  0000000000"));
	harness_output_free(&o);
	cli_run(&o, NULL, "--json", "dht", "find", id, NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, "\"common_bits\":256"));
	harness_output_free(&o);
	cli_run(&o, NULL, "dht", "status", NULL, NULL, NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, "1 blocks, 21 bytes of 67108864"));
	ck_assert_ptr_nonnull(strstr(o.out, "congestion:    cscc, 0 requests"));
	ck_assert_ptr_nonnull(strstr(o.out, "credits 5.00, ssthresh 1000.00"));
	harness_output_free(&o);
	cli_run(&o, NULL, "dht", "status", "--json", NULL, NULL);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, "\"k\":20,\"replication\":3,"));
	ck_assert_ptr_nonnull(strstr(o.out, "\"blocks\":1,\"bytes\":21,"));
	ck_assert_ptr_nonnull(strstr(o.out,
	    "\"congestion\":{\"scheme\":\"cscc\",\"waiting\":0,"));
	harness_output_free(&o);
}
END_TEST

static Suite *
cli_dht_suite(void)
{
	Suite *s = suite_create("cli_dht");
	TCase *tc = tcase_create("dht on");

	tcase_add_checked_fixture(tc, dhtd_setup, dhtd_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cli_put_get);
	tcase_add_test(tc, test_cli_failures_find_status);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(cli_dht_suite());
}
