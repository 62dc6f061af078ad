/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's client requests on a real ferryd that runs no DHT ([dht]
 * ENABLE = no; issue 12, client side): every DHT request is answered RESULT -ENOTCONN "the DHT
 * is not running", whatever its values, a chunked DHT_PUT only after its
 * last piece, and the connection goes on; malformed DHT frames cut the
 * client off with a RESULT saying why, as ferry-client(7) promises; and
 * `ferry dht status|get|put|find` print the documented error and exit
 * with status 4, leaving no file behind. (With a DHT running, the same
 * requests are tested in tests/unit/test_service_dht.c and, between
 * daemons, in test_dht.c.)
 */
/* ctest: TIMEOUT=120 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include <ferry/client.h>

#include "harness.h"
#include "lib/wire.h"

#define NOT_RUNNING "the DHT is not running"
#define WAIT_MS     5000
#define KEY_HEX                                                                \
	"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static struct harness *h;
static struct harness_daemon *d;

/* One daemon without transports or DHT: nothing but its client socket. */
static void
setup(void)
{
	ck_assert_int_eq(harness_new("dht-client", &h), 0);
	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_config(d, "[dht]\nENABLE = no\n"), 0);
	if (harness_daemon_start_ready(d) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferryd did not start");
	}
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
	d = NULL;
}

static int
raw_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memcpy(sun.sun_path, d->socket, strlen(d->socket) + 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

static void
raw_write(int fd, const void *p, size_t len)
{
	ck_assert_int_eq(write(fd, p, len), (ssize_t)len);
}

/* Reads exactly len bytes; false at EOF. */
static bool
raw_read_all(int fd, uint8_t *buf, size_t len)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	size_t have = 0;
	ssize_t n;

	while (have < len) {
		ck_assert_int_eq(poll(&pfd, 1, WAIT_MS), 1);
		n = read(fd, buf + have, len - have);
		if (n <= 0)
			return false;
		have += (size_t)n;
	}
	return true;
}

/* Expects RESULT {req_id, status} whose message has text. */
static void
raw_result(int fd, uint32_t req_id, int status, const char *text)
{
	static uint8_t buf[65536];
	size_t size;

	ck_assert(raw_read_all(fd, buf, 4));
	size = wire_get16(buf);
	ck_assert_uint_ge(size, 12);
	ck_assert(raw_read_all(fd, buf + 4, size - 4));
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_RESULT);
	ck_assert_uint_eq(wire_get32(buf + 4), req_id);
	ck_assert_int_eq((int32_t)wire_get32(buf + 8), status);
	ck_assert_msg(memmem(buf + 12, size - 12, text, strlen(text)) != NULL,
	    "RESULT %u does not say \"%s\"", req_id, text);
}

/* Nothing more comes: the daemon closes the connection. */
static void
raw_closed(int fd)
{
	uint8_t b;

	ck_assert(!raw_read_all(fd, &b, 1));
	(void)close(fd);
}

/* A DHT_PUT piece into buf; its size. */
static size_t
mk_put(uint8_t *buf, uint32_t req_id, uint8_t repl, uint8_t r8, uint32_t total,
    uint32_t offset, size_t len)
{
	wire_put_hdr(buf, (uint16_t)(FERRY_C_DHT_PUT_FIXED + len),
	    FERRY_C_DHT_PUT);
	wire_put32(buf + 4, req_id);
	buf[8] = repl;
	buf[9] = r8;
	wire_put16(buf + 10, 0);
	wire_put64(buf + 12, 0);
	wire_put32(buf + 20, total);
	wire_put32(buf + 24, offset);
	memset(buf + FERRY_C_DHT_PUT_FIXED, 0x61, len);
	return FERRY_C_DHT_PUT_FIXED + len;
}

/* A request of type with size bytes: req_id, then zeros (a key of 0). */
static size_t
mk_req(uint8_t *buf, uint16_t type, uint32_t req_id, size_t size)
{
	memset(buf, 0, size);
	wire_put_hdr(buf, (uint16_t)size, type);
	if (size >= 8)
		wire_put32(buf + 4, req_id);
	return size;
}

static uint64_t
stat_value(const char *name)
{
	struct ferry_client *c;
	struct ferry_stat *st;
	uint64_t v = 0;
	size_t n;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_stats(c, &st, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			v = st[i].value;
	ferry_stats_free(st, n);
	ferry_client_close(c);
	return v;
}

START_TEST(test_libferry_not_running)
{
	static uint8_t block[200000];
	struct ferry_dht_receipt *rc = NULL;
	struct ferry_dht_status *st = NULL;
	struct ferry_peer_id *ids = NULL;
	struct ferry_client *c;
	struct ferry_status *s;
	struct ferry_dht_key key;
	uint8_t *data = NULL;
	size_t n = 0, len = 0;

	memset(block, 0x5a, sizeof(block));
	ck_assert_int_eq(ferry_dht_key_parse(KEY_HEX, &key), 0);
	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_dht_status(c, &st), -ENOTCONN);
	ck_assert_int_eq(ferry_dht_get(c, &key, &data, &len), -ENOTCONN);
	ck_assert_int_eq(ferry_dht_find(c, &key, 20, &ids, &n), -ENOTCONN);
	ck_assert_int_eq(ferry_dht_put(c, block, 10, 0, 0, &key, &rc, &n),
	    -ENOTCONN);
	/* In four pieces: answered once, after the last. */
	ck_assert_int_eq(ferry_dht_put(c, block, sizeof(block), 3, 0, &key, &rc,
	                     &n),
	    -ENOTCONN);
	/* Nothing was written on failure, and the connection goes on. */
	ck_assert_ptr_null(st);
	ck_assert_ptr_null(data);
	ck_assert_ptr_null(ids);
	ck_assert_ptr_null(rc);
	ck_assert_int_eq(ferry_status(c, &s), 0);
	ferry_status_free(s);
	ferry_client_close(c);
}
END_TEST

/* In raw frames, values the daemon would refuse make no difference:
 * without a DHT there is nothing to judge them for. */
START_TEST(test_raw_not_running)
{
	static uint8_t buf[65536];
	int fd = raw_connect();

	raw_write(fd, buf, mk_req(buf, FERRY_C_DHT_STATUS_REQ, 1, 8));
	raw_result(fd, 1, -ENOTCONN, NOT_RUNNING);
	raw_write(fd, buf, mk_req(buf, FERRY_C_DHT_GET, 2, 40));
	raw_result(fd, 2, -ENOTCONN, NOT_RUNNING);
	raw_write(fd, buf, mk_req(buf, FERRY_C_DHT_FIND, 3, 44));
	raw_result(fd, 3, -ENOTCONN, NOT_RUNNING);
	raw_write(fd, buf, mk_put(buf, 4, 1, 0, 5, 0, 5));
	raw_result(fd, 4, -ENOTCONN, NOT_RUNNING);
	raw_write(fd, buf, mk_put(buf, 5, 99, 1, 0, 0, 0));
	raw_result(fd, 5, -ENOTCONN, NOT_RUNNING);
	/* Chunked: the first piece's req_id is not answered. */
	raw_write(fd, buf, mk_put(buf, 6, 1, 0, 100, 0, 60));
	raw_write(fd, buf, mk_put(buf, 7, 1, 0, 100, 60, 40));
	raw_result(fd, 7, -ENOTCONN, NOT_RUNNING);
	/* req_id 0 is an id like any other here. */
	raw_write(fd, buf, mk_req(buf, FERRY_C_DHT_STATUS_REQ, 0, 8));
	raw_result(fd, 0, -ENOTCONN, NOT_RUNNING);
	(void)close(fd);
}
END_TEST

struct bad_frame {
	const char *what;  /* the test's name for it */
	int status;        /* of the RESULT */
	const char *why;   /* in its message */
	uint8_t bytes[96]; /* built by bad_frame_build */
	size_t len;
};

/* The malformed frames, each alone on a fresh connection. */
static size_t
bad_frames(struct bad_frame *b)
{
	size_t n = 0;

	b[n++] = (struct bad_frame){ "short DHT_GET", -EBADMSG,
		"malformed DHT_GET request", { 0 }, 0 };
	b[n - 1].len = mk_req(b[n - 1].bytes, FERRY_C_DHT_GET, 11, 39);
	b[n++] = (struct bad_frame){ "long DHT_GET", -EBADMSG,
		"malformed DHT_GET request", { 0 }, 0 };
	b[n - 1].len = mk_req(b[n - 1].bytes, FERRY_C_DHT_GET, 12, 41);
	b[n++] = (struct bad_frame){ "short DHT_FIND", -EBADMSG,
		"malformed DHT_FIND request", { 0 }, 0 };
	b[n - 1].len = mk_req(b[n - 1].bytes, FERRY_C_DHT_FIND, 13, 43);
	b[n++] = (struct bad_frame){ "long DHT_STATUS_REQ", -EBADMSG,
		"malformed DHT_STATUS request", { 0 }, 0 };
	b[n - 1].len = mk_req(b[n - 1].bytes, FERRY_C_DHT_STATUS_REQ, 14, 9);
	b[n++] = (struct bad_frame){ "DHT_PUT without its fixed part", -EBADMSG,
		"malformed DHT_PUT request", { 0 }, 0 };
	b[n - 1].len = mk_req(b[n - 1].bytes, FERRY_C_DHT_PUT, 15, 27);
	b[n++] = (struct bad_frame){ "DHT_PUT data past total_len", -EBADMSG,
		"malformed DHT_PUT request", { 0 }, 0 };
	b[n - 1].len = mk_put(b[n - 1].bytes, 16, 1, 0, 4, 0, 5);
	b[n++] = (struct bad_frame){ "DHT_PUT over 4 MiB", -EMSGSIZE,
		"over FERRY_DHT_BLOCK_MAX", { 0 }, 0 };
	b[n - 1].len =
	    mk_put(b[n - 1].bytes, 17, 1, 0, FERRY_DHT_BLOCK_MAX + 1, 0, 8);
	b[n++] = (struct bad_frame){ "DHT_PUT starting past 0", -EBADMSG,
		"DHT_PUT piece out of sequence", { 0 }, 0 };
	b[n - 1].len = mk_put(b[n - 1].bytes, 18, 1, 0, 100, 10, 8);
	return n;
}

START_TEST(test_malformed_disconnect)
{
	static struct bad_frame bad[16];
	static uint8_t buf[256];
	uint64_t malformed0 = stat_value("service.malformed");
	size_t n = bad_frames(bad);
	struct ferry_client *good;
	struct ferry_status *st;
	int fd;

	ck_assert_int_eq(harness_daemon_client(d, &good), 0);
	for (size_t i = 0; i < n; i++) {
		fd = raw_connect();
		raw_write(fd, bad[i].bytes, bad[i].len);
		raw_result(fd, wire_get32(bad[i].bytes + 4), bad[i].status,
		    bad[i].why);
		raw_closed(fd);
		ck_assert_int_eq(ferry_status(good, &st), 0);
		ferry_status_free(st);
	}
	/* Pieces that do not continue where the last one ended, or that
	 * change the block's fields. */
	fd = raw_connect();
	raw_write(fd, buf, mk_put(buf, 20, 1, 0, 100, 0, 40));
	raw_write(fd, buf, mk_put(buf, 21, 1, 0, 100, 50, 40));
	raw_result(fd, 21, -EBADMSG, "DHT_PUT piece out of sequence");
	raw_closed(fd);
	fd = raw_connect();
	raw_write(fd, buf, mk_put(buf, 22, 1, 0, 100, 0, 40));
	raw_write(fd, buf, mk_put(buf, 23, 2, 0, 100, 40, 40));
	raw_result(fd, 23, -EBADMSG, "DHT_PUT piece out of sequence");
	raw_closed(fd);
	/* Another request inside a chunked DHT_PUT, even a DHT one. */
	fd = raw_connect();
	raw_write(fd, buf, mk_put(buf, 24, 1, 0, 100, 0, 40));
	raw_write(fd, buf, mk_req(buf, FERRY_C_DHT_STATUS_REQ, 25, 8));
	raw_result(fd, 25, -EBADMSG, "interleaved with a chunked DHT_PUT");
	raw_closed(fd);
	/* And a DHT_PUT inside a chunked SEND. */
	fd = raw_connect();
	memset(buf, 0, FERRY_C_SEND_FIXED + 10);
	wire_put_hdr(buf, FERRY_C_SEND_FIXED + 10, FERRY_C_SEND);
	wire_put16(buf + 40, FERRY_APP_TYPE_MIN);
	wire_put32(buf + 44, 100);
	raw_write(fd, buf, FERRY_C_SEND_FIXED + 10);
	raw_write(fd, buf, mk_put(buf, 26, 1, 0, 5, 0, 5));
	raw_result(fd, 26, -EBADMSG, "interleaved with a chunked SEND");
	raw_closed(fd);
	ferry_client_close(good);
	ck_assert_uint_eq(stat_value("service.malformed") - malformed0, n + 4);
	ck_assert(harness_daemon_log_has(d, "malformed DHT_GET request"));
	ck_assert(harness_daemon_running(d));
}
END_TEST

/* ferry ARGS... with the daemon's socket: exits with status and says
 * text on standard error; prints nothing on standard output. */
static void
cli_expect(int status, const char *text, const char *a1, const char *a2,
    const char *a3, const char *a4, const char *a5)
{
	struct harness_output o;

	ck_assert_int_eq(harness_run_cli(d, &o, a1, a2, a3, a4, a5, NULL), 0);
	ck_assert_msg(o.status == status, "ferry %s %s %s: status %d: %s", a1,
	    a2, a3 != NULL ? a3 : "", o.status, o.err);
	ck_assert_msg(strstr(o.err, text) != NULL,
	    "ferry %s %s: \"%s\" not in: %s", a1, a2, text, o.err);
	ck_assert_str_eq(o.out, "");
	harness_output_free(&o);
}

START_TEST(test_cli_not_running)
{
	char file[PATH_MAX], out[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;

	(void)snprintf(file, sizeof(file), "%s/block", harness_dir(h));
	(void)snprintf(out, sizeof(out), "%s/got", harness_dir(h));
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs("a block of the DHT\n", f), 1);
	ck_assert_int_eq(fclose(f), 0);
	cli_expect(4, "ferry dht status: " NOT_RUNNING, "dht", "status", NULL,
	    NULL, NULL);
	cli_expect(4, "ferry dht status: " NOT_RUNNING, "--json", "dht",
	    "status", NULL, NULL);
	cli_expect(4, "ferry dht get: " NOT_RUNNING, "dht", "get", KEY_HEX,
	    NULL, NULL);
	cli_expect(4, "ferry dht get: " NOT_RUNNING, "dht", "get", KEY_HEX,
	    "-o", out);
	ck_assert_int_ne(access(out, F_OK), 0);
	ck_assert_int_ne(access(tmp, F_OK), 0);
	/* A peer id is a key too. */
	cli_expect(4, "ferry dht get: " NOT_RUNNING, "dht", "get", d->id_str,
	    NULL, NULL);
	cli_expect(4, "ferry dht put: " NOT_RUNNING, "dht", "put", file, NULL,
	    NULL);
	cli_expect(4, "ferry dht put: " NOT_RUNNING, "dht", "put", "-r", "2",
	    file);
	cli_expect(4, "ferry dht find: " NOT_RUNNING, "dht", "find", KEY_HEX,
	    "-n", "5");
	/* Usage errors are found before the daemon is asked. */
	cli_expect(2, "is not a key", "dht", "get", "not-a-key", NULL, NULL);
	cli_expect(2, "--count", "dht", "find", KEY_HEX, "-n", "33");
	cli_expect(2, "--replication", "dht", "put", "-r", "17", file);
	cli_expect(2, "unknown operation", "dht", "fetch", NULL, NULL, NULL);
	cli_expect(1, "No such file", "dht", "put", out, NULL, NULL);
}
END_TEST

/* Files need the DHT too: ferry put, get, transfers and cancel say so
 * with status 4 (ferry(1)), and a get leaves no .part it made. */
START_TEST(test_files_not_running)
{
	char file[PATH_MAX], out[PATH_MAX], part[PATH_MAX + 8];
	static const char uri[] = "ferry:f1.5.0000000000000000000000000000000"
	                          "0000000000000000000000000000000000000000"
	                          "0000000000000000000000000000000000000000";
	FILE *f;

	(void)snprintf(file, sizeof(file), "%s/file", harness_dir(h));
	(void)snprintf(out, sizeof(out), "%s/got", harness_dir(h));
	(void)snprintf(part, sizeof(part), "%s.part", out);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs("a file\n", f), 1);
	ck_assert_int_eq(fclose(f), 0);
	cli_expect(4, "ferry put: " NOT_RUNNING, "put", file, NULL, NULL, NULL);
	cli_expect(4, "ferry get: " NOT_RUNNING, "get", uri, "-o", out, NULL);
	ck_assert_int_ne(access(out, F_OK), 0);
	ck_assert_int_ne(access(part, F_OK), 0);
	cli_expect(4, NOT_RUNNING, "transfers", NULL, NULL, NULL, NULL);
	cli_expect(4, NOT_RUNNING, "cancel", "1234", NULL, NULL, NULL);
	cli_expect(7, "No such file", "put", out, NULL, NULL, NULL);
}
END_TEST

static Suite *
dht_client_suite(void)
{
	Suite *s = suite_create("dht_client");
	TCase *tc = tcase_create("dht off");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_libferry_not_running);
	tcase_add_test(tc, test_raw_not_running);
	tcase_add_test(tc, test_malformed_disconnect);
	tcase_add_test(tc, test_cli_not_running);
	tcase_add_test(tc, test_files_not_running);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dht_client_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
