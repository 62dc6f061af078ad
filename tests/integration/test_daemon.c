/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferryd as a real process (issue 2's "done when"): start without a
 * configuration file, identity and socket, STATUS through libferry,
 * SIGTERM and SHUTDOWN, single instance, stale sockets, malformed and
 * unknown client frames, and the ferry CLI's output and exit codes.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include <ferry/client.h>

#include "core/identity.h"
#include "harness.h"
#include "lib/wire.h"

static struct harness *h;

/* snprintf into an array, failing the test if it does not fit. */
#define PATHF(buf, ...)                                                        \
	ck_assert_int_lt(snprintf(buf, sizeof(buf), __VA_ARGS__),              \
	    (int)sizeof(buf))

static void
setup(void)
{
	ck_assert_int_eq(harness_new("daemon", &h), 0);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

/* Plugins for tests: the loopback transport "test". */
static const char *
test_plugin_dir(void)
{
	const char *dir = getenv("FERRY_TEST_PLUGIN_DIR");

	return dir != NULL && *dir != '\0' ? dir
	                                   : FERRY_TEST_PLUGIN_DIR_DEFAULT;
}

static struct harness_daemon *
start_daemon(void)
{
	struct harness_daemon *d;

	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_plugin_dir(d, test_plugin_dir()), 0);
	ck_assert_int_eq(harness_daemon_transports(d, "test"), 0);
	/* Info lines too, for tests that look for them. */
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[ferryd]\nLOG_LEVEL = info\n"),
	    0);
	if (harness_daemon_start_ready(d) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferryd did not start");
	}
	return d;
}

/* A raw connection, for frames libferry would never send. */
static int
raw_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

static void
raw_write(int fd, const void *p, size_t len)
{
	ck_assert_int_eq(write(fd, p, len), (ssize_t)len);
}

/* Reads up to size bytes within timeout_ms; returns the count, 0 on EOF,
 * -ETIMEDOUT if nothing came. */
static ssize_t
raw_read(int fd, void *buf, size_t size, int timeout_ms)
{
	struct pollfd pfd = { fd, POLLIN, 0 };

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	return read(fd, buf, size);
}

/* Reads one whole frame into buf (at least 4 bytes) and returns its
 * size. */
static size_t
raw_frame(int fd, uint8_t *buf, size_t size)
{
	size_t have = 0, want = 4;
	ssize_t n;

	while (have < want) {
		n = raw_read(fd, buf + have, want - have, 5000);
		ck_assert_int_gt(n, 0);
		have += (size_t)n;
		if (have == 4) {
			want = wire_get16(buf);
			ck_assert_uint_ge(want, 4);
			ck_assert_uint_le(want, size);
		}
	}
	return want;
}

static uint64_t
stat_value(const struct harness_daemon *d, const char *name)
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

static void
assert_status_ok(const struct harness_daemon *d)
{
	struct ferry_client *c;
	struct ferry_status *st;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_status(c, &st), 0);
	ck_assert_mem_eq(st->id.bytes, d->id.bytes, FERRY_PEER_ID_LEN);
	ferry_status_free(st);
	ferry_client_close(c);
}

/*
 * The directories ferryd picks by itself (src/lib/dirs.c): systemd's
 * STATE_DIRECTORY and RUNTIME_DIRECTORY, which root needs here since it
 * would otherwise use /var/lib/ferry, or the XDG ones for a user.
 */
static void
set_default_dirs(struct harness_daemon *d, char *state, size_t ssize,
    char *runtime, size_t rsize)
{
	char home[PATH_MAX], xs[PATH_MAX], xr[PATH_MAX];

	PATHF(home, "%s/home", d->dir);
	ck_assert_int_eq(mkdir(home, 0700), 0);
	ck_assert_int_eq(harness_daemon_setenv(d, "HOME", home), 0);
	if (geteuid() == 0) {
		PATHF(xs, "%s/state-directory", d->dir);
		PATHF(xr, "%s/runtime-directory", d->dir);
		ck_assert_int_eq(harness_daemon_setenv(d, "STATE_DIRECTORY",
		                     xs),
		    0);
		ck_assert_int_eq(harness_daemon_setenv(d, "RUNTIME_DIRECTORY",
		                     xr),
		    0);
		ck_assert_int_lt(snprintf(state, ssize, "%s", xs), (int)ssize);
		ck_assert_int_lt(snprintf(runtime, rsize, "%s", xr),
		    (int)rsize);
		return;
	}
	PATHF(xs, "%s/xdg-state", d->dir);
	PATHF(xr, "%s/xdg-run", d->dir);
	ck_assert_int_eq(harness_daemon_setenv(d, "XDG_STATE_HOME", xs), 0);
	ck_assert_int_eq(harness_daemon_setenv(d, "XDG_RUNTIME_DIR", xr), 0);
	ck_assert_int_lt(snprintf(state, ssize, "%s/ferry", xs), (int)ssize);
	ck_assert_int_lt(snprintf(runtime, rsize, "%s/ferry", xr), (int)rsize);
}

START_TEST(test_no_config_file)
{
	struct harness_daemon *d;
	struct ferry_client *c;
	struct ferry_status *st;
	struct identity *ident;
	char state[PATH_MAX], run[PATH_MAX], sock[PATH_MAX];
	char key[PATH_MAX], lock[PATH_MAX];
	struct stat sb;
	int status;

	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	set_default_dirs(d, state, sizeof(state), run, sizeof(run));
	PATHF(sock, "%s/ferryd.sock", run);
	PATHF(key, "%s/identity.key", state);
	PATHF(lock, "%s.lock", sock);
	ck_assert_int_eq(harness_daemon_setenv(d, "FERRY_PLUGIN_DIR",
	                     test_plugin_dir()),
	    0);
	/* Only the transport list is set, on the command line: the default
	 * "udp tcp" would bind fixed ports shared by parallel tests. */
	ck_assert_int_eq(harness_daemon_arg(d, "-o"), 0);
	ck_assert_int_eq(harness_daemon_arg(d, "core.TRANSPORTS=test"), 0);
	ck_assert_int_eq(harness_daemon_no_config(d, sock), 0);
	ck_assert_int_eq(harness_daemon_start_ready(d), 0);

	ck_assert_int_eq(stat(key, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0600);
	ck_assert_int_eq(stat(sock, &sb), 0);
	ck_assert(S_ISSOCK(sb.st_mode));
	ck_assert_uint_eq(sb.st_mode & 0777, 0660);

	ck_assert_int_eq(ferry_client_open(sock, &c), 0);
	ck_assert_int_eq(ferry_status(c, &st), 0);
	/* The test reads the key file itself to know the expected id. */
	ck_assert_int_ge(sodium_init(), 0);
	ck_assert_int_eq(identity_load(state, &ident), 0);
	ck_assert_mem_eq(st->id.bytes, ident->id.bytes, FERRY_PEER_ID_LEN);
	identity_free(ident);
	ck_assert_str_eq(st->version, FERRY_VERSION);
	ck_assert_uint_eq(st->n_transports, 1);
	ck_assert_str_eq(st->transports[0].name, "test");
	ck_assert_uint_eq(st->transports[0].protocol, FERRY_PROTO_TEST);
	ck_assert_uint_gt(st->transports[0].mtu, 0);
	ck_assert_uint_lt(st->uptime_ms, 60000);
	ferry_status_free(st);
	ferry_client_close(c);

	ck_assert_int_eq(harness_daemon_stop(d, 10000, &status), 0);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(access(sock, F_OK), -1);
	ck_assert_int_eq(access(lock, F_OK), -1);
}
END_TEST

START_TEST(test_second_instance_refused)
{
	struct harness_daemon *a = start_daemon(), *b;
	char pid[32];
	int status;

	ck_assert_int_eq(harness_daemon_new(h, &b), 0);
	/* Its own state, a's socket. */
	ck_assert_int_eq(harness_daemon_config(b, "[service]\nSOCKET = %s\n",
	                     a->socket),
	    0);
	ck_assert_int_eq(harness_daemon_start(b), 0);
	ck_assert_int_eq(harness_daemon_wait_exit(b, 10000, &status), 0);
	ck_assert_int_ne(status, 0);
	PATHF(pid, "(pid %ld)", (long)a->pid);
	ck_assert(harness_daemon_log_has(b, "another ferryd"));
	ck_assert(harness_daemon_log_has(b, pid));
	ck_assert(harness_daemon_log_has(b, a->socket));
	/* The loser removed nothing: the first one still serves. */
	assert_status_ok(a);
	ck_assert(harness_daemon_running(a));
}
END_TEST

START_TEST(test_stale_socket_replaced)
{
	struct harness_daemon *d;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char lock[PATH_MAX];
	int fd;

	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_plugin_dir(d, test_plugin_dir()), 0);
	ck_assert_int_eq(harness_daemon_transports(d, "test"), 0);
	/* A dead daemon's leftovers: a bound socket nobody listens on and
	 * an unlocked lock file naming some pid. */
	ck_assert_int_eq(mkdir(d->runtime_dir, 0700), 0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memcpy(sun.sun_path, d->socket, strlen(d->socket) + 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
	PATHF(lock, "%s.lock", d->socket);
	fd = open(lock, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "999999\n", 7), 7);
	close(fd);

	ck_assert_int_eq(harness_daemon_start_ready(d), 0);
	ck_assert(harness_daemon_log_has(d, "replaced the stale socket"));

	/* And after a crash, the restarted daemon takes over its own. */
	ck_assert_int_eq(harness_daemon_kill(d), 0);
	ck_assert_int_eq(access(d->socket, F_OK), 0);
	ck_assert_int_eq(harness_daemon_start_ready(d), 0);
	assert_status_ok(d);
}
END_TEST

struct bad_frame {
	const char *what;
	uint8_t bytes[64];
	size_t len;
};

/* Each is sent on a fresh connection after nothing else. */
static const struct bad_frame bad_frames[] = {
	{ "size below 4", { 0, 2, 0, 2 }, 4 },
	{ "STATUS of 12 bytes", { 0, 12, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0 }, 12 },
	{ "STATUS without req_id", { 0, 4, 0, 2 }, 4 },
	{ "SEND shorter than its fixed part", { 0, 20, 0, 6 }, 20 },
	{ "PING of 8 bytes", { 0, 8, 0, 0x0d, 0, 0, 0, 1 }, 8 },
	{ "REGISTER with an odd type list", { 0, 9, 0, 5, 0, 0, 0, 1, 4 }, 9 },
	{ "CONNECT with an empty URI", { 0, 8, 0, 0x0c, 0, 0, 0, 1 }, 8 },
};

/* SEND {req_id 0, peer 0.., type 0x0400, total, offset} with len bytes. */
static size_t
make_send(uint8_t *p, uint32_t total, uint32_t offset, size_t len)
{
	memset(p, 0, FERRY_C_SEND_FIXED + len);
	wire_put_hdr(p, (uint16_t)(FERRY_C_SEND_FIXED + len), FERRY_C_SEND);
	wire_put16(p + 40, FERRY_APP_TYPE_MIN);
	wire_put32(p + 44, total);
	wire_put32(p + 48, offset);
	return FERRY_C_SEND_FIXED + len;
}

/* The daemon says why in a RESULT with status, then closes: nothing but
 * EOF (or a reset) comes after it. */
static void
assert_cut_off(int fd, int status)
{
	uint8_t buf[512];

	ck_assert_uint_gt(raw_frame(fd, buf, sizeof(buf)), 12);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_RESULT);
	ck_assert_int_eq((int32_t)wire_get32(buf + 8), status);
	ck_assert_int_le(raw_read(fd, buf, sizeof(buf), 5000), 0);
}

START_TEST(test_malformed_frames_disconnect)
{
	struct harness_daemon *d = start_daemon();
	struct ferry_client *good;
	struct ferry_status *st;
	uint8_t buf[256];
	size_t n, count = sizeof(bad_frames) / sizeof(bad_frames[0]);
	int fd;

	ck_assert_int_eq(harness_daemon_client(d, &good), 0);
	for (size_t i = 0; i < count; i++) {
		fd = raw_connect(d->socket);
		raw_write(fd, bad_frames[i].bytes, bad_frames[i].len);
		assert_cut_off(fd, -EBADMSG);
		close(fd);
		/* Another client goes on being served meanwhile. */
		ck_assert_int_eq(ferry_status(good, &st), 0);
		ferry_status_free(st);
	}
	/* A message above FERRY_APP_MSG_MAX. */
	fd = raw_connect(d->socket);
	raw_write(fd, buf, make_send(buf, FERRY_APP_MSG_MAX + 1, 0, 8));
	assert_cut_off(fd, -EMSGSIZE);
	close(fd);
	/* A piece that does not continue where the last one ended. */
	fd = raw_connect(d->socket);
	n = make_send(buf, 100, 0, 10);
	raw_write(fd, buf, n);
	raw_write(fd, buf, make_send(buf, 100, 20, 10));
	assert_cut_off(fd, -EBADMSG);
	close(fd);
	/* Another request inside a chunked SEND. */
	fd = raw_connect(d->socket);
	raw_write(fd, buf, make_send(buf, 100, 0, 10));
	wire_put_hdr(buf, 8, FERRY_C_STATUS_REQ);
	wire_put32(buf + 4, 5);
	raw_write(fd, buf, 8);
	assert_cut_off(fd, -EBADMSG);
	close(fd);

	ck_assert_int_eq(ferry_status(good, &st), 0);
	ferry_status_free(st);
	ferry_client_close(good);
	ck_assert_uint_eq(stat_value(d, "service.malformed"), count + 3);
	ck_assert(harness_daemon_log_has(d, "disconnecting"));
	ck_assert(harness_daemon_running(d));
}
END_TEST

START_TEST(test_unknown_type)
{
	struct harness_daemon *d = start_daemon();
	uint8_t buf[1024];
	size_t n;
	int fd = raw_connect(d->socket);

	wire_put_hdr(buf, 12, 0x7777);
	wire_put32(buf + 4, 42);
	wire_put32(buf + 8, 0);
	raw_write(fd, buf, 12);
	n = raw_frame(fd, buf, sizeof(buf));
	ck_assert_uint_ge(n, 12);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_RESULT);
	ck_assert_uint_eq(wire_get32(buf + 4), 42);
	ck_assert_int_eq((int32_t)wire_get32(buf + 8), -EOPNOTSUPP);
	/* The connection stays usable. */
	wire_put_hdr(buf, 8, FERRY_C_STATUS_REQ);
	wire_put32(buf + 4, 43);
	raw_write(fd, buf, 8);
	n = raw_frame(fd, buf, sizeof(buf));
	ck_assert_uint_ge(n, FERRY_C_STATUS_FIXED);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_STATUS);
	ck_assert_uint_eq(wire_get32(buf + 4), 43);
	ck_assert_mem_eq(buf + 8, d->id.bytes, FERRY_PEER_ID_LEN);
	close(fd);
	ck_assert_uint_eq(stat_value(d, "service.unknown_type"), 1);
}
END_TEST

START_TEST(test_send_register_results)
{
	struct harness_daemon *d = start_daemon();
	struct ferry_client *c;
	struct ferry_peer_id nobody;
	struct ferry_status *st;
	uint16_t reserved = 0x0100, app = 0x0400;
	size_t big = 200 * 1000;
	uint8_t *data = calloc(1, big);
	uint8_t buf[64];
	int fd;

	ck_assert_ptr_nonnull(data);
	memset(&nobody, 0x5a, sizeof(nobody));
	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_register(c, &reserved, 1), -EINVAL);
	ck_assert_int_eq(ferry_register(c, &app, 1), 0);
	/* No link to a made-up peer: the verdict comes back, for a small
	 * message and for one reassembled from four pieces. */
	ck_assert_int_eq(ferry_send_confirmed(c, &nobody, app, "hi", 2),
	    -ENOTCONN);
	ck_assert_int_eq(ferry_send_confirmed(c, &nobody, app, data, big),
	    -ENOTCONN);
	ck_assert_int_eq(ferry_send(c, &nobody, 0x0401, data, 100), 0);
	ck_assert_int_eq(ferry_flush(c), 0);
	/* A request on the same connection: the SEND before it is handled
	 * once the answer is here. */
	ck_assert_int_eq(ferry_status(c, &st), 0);
	ferry_status_free(st);
	ck_assert_int_eq(ferry_send(c, &nobody, 0x0100, data, 1), -EINVAL);
	ck_assert_int_eq(ferry_send(c, &nobody, app, data,
	                     FERRY_APP_MSG_MAX + 1),
	    -EMSGSIZE);
	ferry_client_close(c);
	free(data);
	ck_assert_uint_eq(stat_value(d, "service.send_notconn"), 3);

	/* The daemon checks types too, for clients other than libferry. */
	fd = raw_connect(d->socket);
	wire_put_hdr(buf, 10, FERRY_C_REGISTER);
	wire_put32(buf + 4, 9);
	wire_put16(buf + 8, 0x0001);
	raw_write(fd, buf, 10);
	ck_assert_uint_eq(raw_frame(fd, buf, sizeof(buf)),
	    12 + strlen("types below 0x0400 are reserved"));
	ck_assert_int_eq((int32_t)wire_get32(buf + 8), -EINVAL);
	close(fd);
}
END_TEST

START_TEST(test_shutdown_request)
{
	struct harness_daemon *d = start_daemon();
	struct ferry_client *c;
	int status;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_shutdown(c), 0);
	ferry_client_close(c);
	ck_assert_int_eq(harness_daemon_wait_exit(d, 10000, &status), 0);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(access(d->socket, F_OK), -1);
	ck_assert(harness_daemon_log_has(d, "shutdown requested"));
}
END_TEST

START_TEST(test_cli)
{
	struct harness_daemon *d = start_daemon();
	struct harness_output o;
	char want[128], nowhere[PATH_MAX];

	ck_assert_int_eq(harness_run_cli(d, &o, "status", NULL), 0);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, d->id_str));
	ck_assert_ptr_nonnull(strstr(o.out, FERRY_VERSION));
	ck_assert_ptr_nonnull(strstr(o.out, "test"));
	harness_output_free(&o);

	ck_assert_int_eq(harness_run_cli(d, &o, "id", NULL), 0);
	ck_assert_int_eq(o.status, 0);
	PATHF(want, "%s\n", d->id_str);
	ck_assert_str_eq(o.out, want);
	harness_output_free(&o);

	ck_assert_int_eq(harness_run_cli(d, &o, "status", "--json", NULL), 0);
	ck_assert_int_eq(o.status, 0);
	PATHF(want, "{\"identity\":\"%s\",\"version\":\"%s\",", d->id_str,
	    FERRY_VERSION);
	ck_assert_ptr_eq(strstr(o.out, want), o.out);
	ck_assert_ptr_nonnull(
	    strstr(o.out, "\"transports\":[{\"name\":\"test\""));
	ck_assert_int_eq(o.out[o.out_len - 1], '\n');
	harness_output_free(&o);

	/* Exit codes: 4 no link to the peer, 3 no daemon, 2 usage. */
	ck_assert_int_eq(
	    harness_run_cli(d, &o, "send",
	        "0000000000000000000000000000000000000000000000000000", "1024",
	        "hello", NULL),
	    0);
	ck_assert_int_eq(o.status, 4);
	harness_output_free(&o);
	PATHF(nowhere, "%s/nothing.sock", harness_dir(h));
	ck_assert_int_eq(harness_run_cli(NULL, &o, "--socket", nowhere,
	                     "status", NULL),
	    0);
	ck_assert_int_eq(o.status, 3);
	ck_assert_ptr_nonnull(strstr(o.err, "cannot reach ferryd"));
	harness_output_free(&o);
	ck_assert_int_eq(harness_run_cli(d, &o, "status", "extra", NULL), 0);
	ck_assert_int_eq(o.status, 2);
	harness_output_free(&o);
	ck_assert_int_eq(harness_run_cli(d, &o, "frobnicate", NULL), 0);
	ck_assert_int_eq(o.status, 2);
	harness_output_free(&o);
	ck_assert_int_eq(harness_run_cli(d, &o, "send", "notapeer", "1024",
	                     NULL),
	    0);
	ck_assert_int_eq(o.status, 2);
	harness_output_free(&o);
	ck_assert_int_eq(harness_run_cli(d, &o, "status", "--help", NULL), 0);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, "Usage: ferry"));
	harness_output_free(&o);
}
END_TEST

static Suite *
daemon_suite(void)
{
	Suite *s = suite_create("daemon");
	TCase *tc = tcase_create("process");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_no_config_file);
	tcase_add_test(tc, test_second_instance_refused);
	tcase_add_test(tc, test_stale_socket_replaced);
	tcase_add_test(tc, test_malformed_frames_disconnect);
	tcase_add_test(tc, test_unknown_type);
	tcase_add_test(tc, test_send_register_results);
	tcase_add_test(tc, test_shutdown_request);
	tcase_add_test(tc, test_cli);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(daemon_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
