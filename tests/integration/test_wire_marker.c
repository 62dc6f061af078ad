/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Nothing of a file's plaintext goes on the wire (issue 13), checked
 * rather than trusted: four real ferryd processes, each run under strace,
 * link over UDP (one network) or TCP (another); a file with a marker
 * planted every 4000 bytes is put on d0 and got on d2, and every byte the
 * daemons handed to a UDP or TCP socket (sendto, sendmsg, sendmmsg, write,
 * writev, as strace saw them) is decoded and searched for the marker, as
 * given and hex-encoded. As a control that the capture sees the wire, the
 * bytes are there, and on TCP the stream's clear magic "FERRYTCP" is
 * among them. test_storage's test_marker checks the block stores and logs,
 * test_mail_marker the mail (it needs the MTA fixture).
 */
/* ctest: TIMEOUT=120 RUN_SERIAL=1 */
#include "storage_test.h"

#include <ctype.h>

static const char marker[] = "ferry-MARKER-5c7d21a8";

/* strace's path from $PATH, or NULL. */
static char *
find_program(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL;

	copy = strdup(path != NULL ? path : "/usr/bin:/bin");
	ck_assert_ptr_nonnull(copy);
	for (dir = strtok_r(copy, ":", &save); dir != NULL && found == NULL;
	     dir = strtok_r(NULL, ":", &save)) {
		ck_assert_int_gt(asprintf(&found, "%s/%s", dir, name), 0);
		if (access(found, X_OK) != 0) {
			free(found);
			found = NULL;
		}
	}
	free(copy);
	return found;
}

/* Stops ferryd, strace's only child, and waits for strace to end. */
static void
stop_traced(struct harness_daemon *dd)
{
	char path[64];
	FILE *f;
	int child = 0, status;

	(void)snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
	    (int)dd->pid, (int)dd->pid);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "no %s", path);
	ck_assert_int_eq(fscanf(f, "%d", &child), 1);
	fclose(f);
	ck_assert_int_eq(kill(child, SIGTERM), 0);
	ck_assert_int_eq(harness_daemon_wait_exit(dd, HARNESS_STOP_TIMEOUT_MS,
	                     &status),
	    0);
	ck_assert_int_eq(status, 0); /* strace exits as ferryd did */
}

/* What the daemons sent, decoded, per transport. */
struct wire {
	uint8_t *buf;
	size_t len, cap;
	size_t calls; /* syscalls that sent on such a socket */
};

static void
wire_add(struct wire *w, uint8_t byte)
{
	if (w->len == w->cap) {
		w->cap = w->cap != 0 ? 2 * w->cap : 1 << 16;
		w->buf = realloc(w->buf, w->cap);
		ck_assert_ptr_nonnull(w->buf);
	}
	w->buf[w->len++] = byte;
}

/* Decodes one string of strace -xx ("\x41\x42"), p just past its opening
 * quote, into w; where it ended. */
static const char *
wire_string(struct wire *w, const char *p)
{
	unsigned v;

	while (*p != '"') {
		ck_assert_msg(p[0] == '\\' && p[1] == 'x' &&
		        isxdigit((unsigned char)p[2]) &&
		        isxdigit((unsigned char)p[3]),
		    "not an strace -xx string: %.40s", p);
		ck_assert_int_eq(sscanf(p + 2, "%2x", &v), 1);
		wire_add(w, (uint8_t)v);
		p += 4;
	}
	/* "..." after the string: strace cut it, and the rest went unseen. */
	ck_assert_msg(strncmp(p + 1, "...", 3) != 0, "strace cut a payload");
	return p + 1;
}

/* One line of the trace: the payload of a call on a UDP or TCP socket,
 * i.e. the string right after the descriptor (sendto, write) and every
 * iov_base (sendmsg, sendmmsg, writev); addresses, which -xx escapes
 * too, are left out. */
static void
wire_line(struct wire *udp, struct wire *tcp, const char *line)
{
	const char *open = strchr(line, '('), *p;
	struct wire *w;

	if (open == NULL || strstr(line, " resumed>") != NULL)
		return;
	if (strncmp(open + 1 + strspn(open + 1, "0123456789"), "<UDP:", 5) == 0)
		w = udp;
	else if (strncmp(open + 1 + strspn(open + 1, "0123456789"),
	             "<TCP:", 5) == 0)
		w = tcp;
	else
		return; /* a file, the client socket, the log */
	w->calls++;
	/* The descriptor's note ends "]>", its addresses hold "->". */
	p = strstr(open, "]>");
	if (p != NULL && strncmp(p, "]>, \"", 5) == 0)
		(void)wire_string(w, p + 5);
	for (p = line; (p = strstr(p, "iov_base=\"")) != NULL;)
		p = wire_string(w, p + 10);
}

static void
wire_read(struct wire *udp, struct wire *tcp, const char *trace)
{
	FILE *f = fopen(trace, "r");
	char *line = NULL;
	size_t size = 0;

	ck_assert_msg(f != NULL, "no trace %s", trace);
	while (getline(&line, &size, f) > 0)
		wire_line(udp, tcp, line);
	free(line);
	fclose(f);
}

static bool
wire_has(const struct wire *w, const void *needle, size_t len)
{
	return w->len >= len && memmem(w->buf, w->len, needle, len) != NULL;
}

/* The marker as given, and in hex both ways. */
static void
assert_no_marker(const struct wire *w, const char *what)
{
	char hex[2 * sizeof(marker)], upper[2 * sizeof(marker)];

	sodium_bin2hex(hex, sizeof(hex), (const uint8_t *)marker,
	    strlen(marker));
	for (size_t i = 0; i < sizeof(upper); i++)
		upper[i] = (char)toupper((unsigned char)hex[i]);
	ck_assert_msg(!wire_has(w, marker, strlen(marker)),
	    "the marker went out over %s", what);
	ck_assert_msg(!wire_has(w, hex, strlen(hex)),
	    "the marker went out hex-encoded over %s", what);
	ck_assert_msg(!wire_has(w, upper, strlen(upper)),
	    "the marker went out hex-encoded over %s", what);
}

/* LeakSanitizer cannot work under ptrace: a ferryd built with ASan ends
 * with status 1 under strace. The daemons of this test inherit
 * ASAN_OPTIONS with leak detection off; every other test checks leaks. */
static void
leaks_unchecked(void)
{
	const char *was = getenv("ASAN_OPTIONS");
	char opts[1024];

	(void)snprintf(opts, sizeof(opts), "%s%sdetect_leaks=0",
	    was != NULL ? was : "", was != NULL && *was != '\0' ? ":" : "");
	ck_assert_int_eq(setenv("ASAN_OPTIONS", opts, 1), 0);
}

START_TEST(test_wire_marker)
{
	const char *transport = _i == 0 ? "udp" : "tcp";
	char *strace = find_program("strace"), *setpriv;
	char *hello = NULL, *file, *out, *uri, trace[N][4200];
	struct wire udp = { 0 }, tcp = { 0 };

	ck_assert_msg(strace != NULL, "strace is not installed");
	setpriv = find_program("setpriv");
	ck_assert_msg(setpriv != NULL, "setpriv is not installed");
	leaks_unchecked();
	ck_assert_int_eq(harness_new("wire-marker", &h), 0);
	for (int i = 0; i < N; i++) {
		const char *const wrap[] = { strace, "-f", "-qq", "-yy", "-xx",
			"-s", "1000000", "-e",
			"trace=sendto,sendmsg,sendmmsg,write,writev,pwrite64,"
			"pwritev",
			"-e", "signal=none", "-o", trace[i],
			/* strace runs ferryd as its child, which would
			 * outlive a test that dies: tie it to strace. */
			setpriv, "--pdeathsig", "KILL", "--" };

		ck_assert_int_eq(harness_daemon_new(h, &d[i]), 0);
		(void)snprintf(trace[i], sizeof(trace[i]), "%s/strace.txt",
		    d[i]->dir);
		for (size_t k = 0; k < sizeof(wrap) / sizeof(wrap[0]); k++)
			ck_assert_int_eq(harness_daemon_wrap(d[i], wrap[k]), 0);
		ck_assert_int_eq(harness_daemon_transports(d[i], transport), 0);
		ck_assert_int_eq(harness_daemon_config(d[i], "%s\n", DHT_CFG),
		    0);
		if (i > 0)
			ck_assert_int_eq(harness_daemon_config(d[i],
			                     "[core]\nBOOTSTRAP = %s\n", hello),
			    0);
		ck_assert_int_eq(harness_daemon_start_ready(d[i]), 0);
		if (i == 0)
			hello = mesh_hello(d[0]);
	}
	wait_tables();

	file = make_file("marked", 20 * CHUNK + 100, marker);
	uri = put_cli(d[0], file);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	ck_assert_int_eq(get_cli(d[2], uri, out, NULL, 0), 0);
	ck_assert(same_files(file, out));

	/* strace writes the last lines as it ends, which it does when
	 * ferryd does; it does not pass SIGTERM on. */
	for (int i = 0; i < N; i++) {
		stop_traced(d[i]);
		wire_read(&udp, &tcp, trace[i]);
	}
	fprintf(stderr,
	    "%s: %zu UDP calls, %zu bytes; %zu TCP calls, %zu bytes\n",
	    transport, udp.calls, udp.len, tcp.calls, tcp.len);
	/* The capture saw the wire: a 20 KiB file crossed it at least
	 * twice (to the stores, back to d2). */
	if (_i == 0) {
		ck_assert_uint_gt(udp.calls, 0);
		ck_assert_uint_gt(udp.len, 2 * 20 * CHUNK);
	} else {
		ck_assert_uint_gt(tcp.calls, 0);
		ck_assert_uint_gt(tcp.len, 2 * 20 * CHUNK);
		ck_assert(wire_has(&tcp, "FERRYTCP", 8));
	}
	assert_no_marker(&udp, "UDP");
	assert_no_marker(&tcp, "TCP");

	free(udp.buf);
	free(tcp.buf);
	free(out);
	free(uri);
	free(file);
	free(hello);
	free(setpriv);
	free(strace);
}
END_TEST

/* SIGKILL to strace, which setpriv passes on to ferryd: harness_free's
 * SIGTERM would wait in vain for a strace that ignores it. */
static void
wire_teardown(void)
{
	for (int i = 0; h != NULL && i < N; i++)
		if (d[i] != NULL)
			(void)harness_daemon_kill(d[i]);
	harness_free(h);
	h = NULL;
	memset(d, 0, sizeof(d));
}

static Suite *
wire_marker_suite(void)
{
	Suite *s = suite_create("wire_marker");
	TCase *tc = tcase_create("daemons");

	tcase_set_timeout(tc, 100);
	tcase_add_checked_fixture(tc, NULL, wire_teardown);
	/* 0: UDP, 1: TCP. */
	tcase_add_loop_test(tc, test_wire_marker, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(wire_marker_suite());
	int failed;

	if (sodium_init() < 0)
		return 1;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
