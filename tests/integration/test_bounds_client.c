/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Memory per client is capped by [service] CLIENT_BUFFER (what waits for
 * a client that does not read) and MAX_CLIENTS (connections served at
 * once), issue 6 "Resource bounds". Each test pushes past the cap and
 * checks the count and the daemon's peak RSS against the cap plus a
 * computed allowance; one measures what a client's half-sent message
 * holds, which no key caps.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include "harness.h"
#include "lib/wire.h"
#include "mesh.h"
#include "test_bounds.h"

#define LINK_MS       20000
#define SMALL         1000
#define OTHER_TYPE    (MESH_APP_TYPE + 1) /* what the stuck clients take */
/* A connection's input buffer: one read of 256 KiB and a partial frame
 * (service_int.h, SERVICE_READ_CHUNK). */
#define CLIENT_IN_KIB (256 + 64)

static void
pair(struct harness *h, struct harness_daemon **d, const char *tr,
    const char *extra1)
{
	char *uri = NULL;

	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(harness_daemon_new(h, &d[i]), 0);
		procstat_daemon_env(d[i]);
		ck_assert_int_eq(harness_daemon_transports(d[i], tr), 0);
		if (i == 1 && extra1 != NULL)
			ck_assert_int_eq(harness_daemon_config(d[i], "%s",
			                     extra1),
			    0);
		if (i == 1)
			ck_assert_int_eq(harness_daemon_config(d[i],
			                     "[core]\nBOOTSTRAP = %s\n", uri),
			    0);
		ck_assert_int_eq(harness_daemon_start_ready(d[i]), 0);
		if (i == 0)
			uri = mesh_hello(d[0]);
	}
	free(uri);
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
}

/* A client registered for type that will never read. */
static struct ferry_client *
stuck_client(struct harness_daemon *d, uint16_t type)
{
	struct ferry_client *c;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_register(c, &type, 1), 0);
	return c;
}

/* Receives MESH_APP_TYPE messages at l until n came or none for
 * quiet_ms; returns how many. */
static unsigned
count_arrivals(struct ferry_client *l, unsigned n, int quiet_ms)
{
	struct ferry_message m;
	unsigned got = 0;

	while (got < n && ferry_receive(l, &m, quiet_ms) == 0)
		got += m.type == MESH_APP_TYPE;
	return got;
}

/*
 * CLIENT_BUFFER: six registered clients that never read, a seventh that
 * does, and 20 MB of messages for all of them, over TCP so that none is
 * lost on the way. Each stuck client holds CLIENT_BUFFER, the rest is
 * dropped and counted, the reader gets everything, and the daemon's
 * memory stays within 7 buffers. RECV_WINDOW is above what the 6 stuck
 * clients hold (see test_client_buffer_default_stall), and the sender
 * keeps a pace the reader can follow on a busy machine: the reader has a
 * CLIENT_BUFFER too.
 */
START_TEST(test_client_buffer)
{
	enum { STUCK = 6, N = 20000 };
	const unsigned long slack_kib = 6144, buf_kib = 1024;
	struct ferry_client *stuck[STUCK], *l;
	struct harness_daemon *d[2];
	struct harness *h;
	unsigned long base, growth, allow;
	uint64_t dropped;
	unsigned got;
	pid_t tx;

	ck_assert_int_eq(harness_new("bcbuf", &h), 0);
	pair(h, d, "tcp",
	    "[service]\nCLIENT_BUFFER = 1 MiB\n[core]\nRECV_WINDOW = 16 MiB\n");
	l = mesh_listener(d[1]);
	for (int i = 0; i < STUCK; i++)
		stuck[i] = stuck_client(d[1], MESH_APP_TYPE);
	mesh_send(d[0], d[1], "warm", 4);
	ck_assert_uint_eq(count_arrivals(l, 1, 5000), 1);
	base = bounds_rss_kib(d[1]->pid);
	bounds_reset_peak(d[1]->pid);
	tx = bounds_sender_paced(d[0], &d[1]->id, MESH_APP_TYPE, SMALL, N, 50);
	got = count_arrivals(l, N, 5000);
	growth = bounds_peak_kib(d[1]->pid) - base;
	dropped = mesh_stat(d[1], "service.recv_dropped");
	allow = procstat_allow_kib((STUCK + 1) * buf_kib + CLIENT_IN_KIB,
	    slack_kib);
	fprintf(stderr,
	    "CLIENT_BUFFER 1 MiB: %u of %u to the reader, %llu copies "
	    "dropped for %d stuck clients; RSS %lu KiB + peak growth %lu KiB "
	    "(allowed %lu)\n",
	    got, N, (unsigned long long)dropped, STUCK, base, growth, allow);
	ck_assert_uint_eq(got, N);
	/* Each stuck client took at most 1 MiB of the 20 MB. */
	ck_assert_uint_ge(dropped, (uint64_t)STUCK * (N - 1100));
	ck_assert_msg(growth <= allow,
	    "RSS grew by %lu KiB with CLIENT_BUFFER = 1 MiB (allowed %lu)",
	    growth, allow);
	bounds_stop(tx);
	for (int i = 0; i < STUCK; i++)
		ferry_client_close(stuck[i]);
	ferry_client_close(l);
	harness_free(h);
}
END_TEST

/*
 * With the defaults (CLIENT_BUFFER 8 MiB above RECV_WINDOW 2 MiB) a
 * client that stops reading holds more than the window; the core, which
 * stops reading peers while clients' output exceeds it, must stop
 * counting the stuck client (service.clients_stalled) or no peer would
 * reach any client for as long as that one stays connected.
 */
START_TEST(test_client_buffer_default_stall)
{
	enum { FLOOD = 4000, N = 100 };
	struct ferry_client *stuck, *l;
	struct harness_daemon *d[2];
	struct harness *h;
	unsigned got;
	pid_t tx;

	ck_assert_int_eq(harness_new("bcstall", &h), 0);
	pair(h, d, "tcp", NULL);
	l = mesh_listener(d[1]);
	stuck = stuck_client(d[1], OTHER_TYPE);
	tx = bounds_sender(d[0], &d[1]->id, OTHER_TYPE, SMALL, FLOOD);
	ck_assert(
	    mesh_wait_stat(d[1], "service.recv_delivered", FLOOD / 2, 20000));
	harness_sleep_ms(1000);
	bounds_stop(tx);
	tx = bounds_sender(d[0], &d[1]->id, MESH_APP_TYPE, SMALL, N);
	got = count_arrivals(l, N, 10000);
	fprintf(stderr,
	    "one stuck client, defaults, TCP: %u of %u messages reached "
	    "another client; %llu copies queued for the stuck one\n",
	    got, N,
	    (unsigned long long)mesh_stat(d[1], "service.recv_delivered"));
	ck_assert_uint_eq(got, N);
	ck_assert_uint_gt(mesh_stat(d[1], "service.clients_stalled"), 0);
	bounds_stop(tx);
	ferry_client_close(stuck);
	ferry_client_close(l);
	harness_free(h);
}
END_TEST

/* A non-blocking connection to the daemon's socket; -1 if the listen
 * queue is full. */
static int
raw_connect(const struct harness_daemon *d)
{
	struct sockaddr_un sun;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, d->socket, strlen(d->socket) + 1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* Writes all of buf, waiting as needed; false if the daemon hung up or
 * does not read within 5 s. */
static bool
raw_write(int fd, const uint8_t *buf, size_t len)
{
	uint64_t end = harness_now_ms() + 5000;

	while (len > 0 && harness_now_ms() < end) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return false;
		if (n < 0) {
			harness_sleep_ms(5);
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return len == 0;
}

/* One SEND frame: piece [offset, offset + len) of a total-byte message to
 * peer, without asking for a RESULT. */
static bool
raw_send_piece(int fd, const struct ferry_peer_id *peer, uint32_t total,
    uint32_t offset, const uint8_t *data, size_t len)
{
	static uint8_t frame[FERRY_MSG_SIZE_MAX];

	wire_put16(frame, (uint16_t)(FERRY_C_SEND_FIXED + len));
	wire_put16(frame + 2, FERRY_C_SEND);
	wire_put32(frame + 4, 0);
	memcpy(frame + 8, peer->bytes, FERRY_PEER_ID_LEN);
	wire_put16(frame + 40, MESH_APP_TYPE);
	wire_put16(frame + 42, 0);
	wire_put32(frame + 44, total);
	wire_put32(frame + 48, offset);
	memcpy(frame + FERRY_C_SEND_FIXED, data, len);
	return raw_write(fd, frame, FERRY_C_SEND_FIXED + len);
}

/* A counter through an open client (the daemon may have no slot for
 * another); 0 if absent. */
static uint64_t
stat_of(struct ferry_client *c, const char *name)
{
	struct ferry_stat *st;
	uint64_t v = 0;
	size_t n;

	if (ferry_stats(c, &st, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			v = st[i].value;
	ferry_stats_free(st, n);
	return v;
}

/*
 * MAX_CLIENTS: 200 connections against a limit of 32, each leaving a
 * frame of almost 64 KiB unfinished. 32 are served (one of them ours, to
 * read the counters; the others' partial frames held), the rest wait in
 * the listen queue or are refused by it; the pause is counted and the
 * daemon holds 32 input buffers at most. Once they go, a new client is
 * served again.
 */
START_TEST(test_max_clients)
{
	enum { MAX = 32, TRY = 200, PART = 60000 };
	const unsigned long slack_kib = 6144;
	static uint8_t part[PART];
	struct harness_daemon *d;
	struct ferry_client *c;
	struct ferry_status *st;
	struct harness *h;
	unsigned long base, growth, allow;
	uint64_t paused = 0, conns;
	int fds[TRY], n = 0;

	ck_assert_int_eq(harness_new("bmaxc", &h), 0);
	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	procstat_daemon_env(d);
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[service]\nMAX_CLIENTS = %d\n", MAX),
	    0);
	ck_assert_int_eq(harness_daemon_start_ready(d), 0);
	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_status(c, &st), 0);
	ferry_status_free(st);
	base = bounds_rss_kib(d->pid);
	bounds_reset_peak(d->pid);
	/* SEND header claiming 65535 bytes, then most of them. */
	wire_put16(part, 0xffff);
	wire_put16(part + 2, FERRY_C_SEND);
	for (int i = 0; i < TRY; i++) {
		fds[i] = raw_connect(d);
		if (fds[i] >= 0 && raw_write(fds[i], part, sizeof(part)))
			n++;
	}
	for (int i = 0; i < 50 && paused == 0; i++) {
		harness_sleep_ms(100);
		paused = stat_of(c, "service.accept_paused");
	}
	harness_sleep_ms(500);
	conns = stat_of(c, "service.clients_connected");
	growth = bounds_peak_kib(d->pid) - base;
	allow = procstat_allow_kib(MAX * CLIENT_IN_KIB, slack_kib);
	fprintf(stderr,
	    "MAX_CLIENTS %d: %d of %d connections took a partial frame, "
	    "%llu connected, accept paused %llu times; RSS %lu KiB + peak "
	    "growth %lu KiB (allowed %lu)\n",
	    MAX, n, TRY, (unsigned long long)conns, (unsigned long long)paused,
	    base, growth, allow);
	ck_assert_uint_gt(paused, 0);
	ck_assert_uint_eq(conns, MAX);
	ck_assert_msg(growth <= allow,
	    "RSS grew by %lu KiB with MAX_CLIENTS = %d (allowed %lu)", growth,
	    MAX, allow);
	for (int i = 0; i < TRY; i++)
		if (fds[i] >= 0)
			(void)close(fds[i]);
	ferry_client_close(c);
	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_status(c, &st), 0);
	ferry_status_free(st);
	ferry_client_close(c);
	harness_free(h);
}
END_TEST

/*
 * A message a client sends in pieces is reassembled in the daemon until
 * its last piece, up to FERRY_APP_MSG_MAX (8 MiB), whatever CLIENT_BUFFER
 * says: eight clients that stop 7.5 MiB into a message hold 60 MiB, and
 * more at the peak while the buffer doubles. The memory per client is
 * thus CLIENT_BUFFER + 8 MiB (x 1.5 at the peak) + an input buffer, and
 * no key caps the middle term; this measures it.
 */
START_TEST(test_client_half_sent_messages)
{
	enum { K = 8, PIECE = 60000 };
	const unsigned long slack_kib = 6144, held = 7680 * 1024UL;
	static uint8_t piece[PIECE];
	struct ferry_peer_id peer;
	struct harness_daemon *d;
	struct harness *h;
	unsigned long base, growth, allow;
	int fds[K];

	ck_assert_int_eq(harness_new("bchunk", &h), 0);
	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	procstat_daemon_env(d);
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[service]\nCLIENT_BUFFER = 256 KiB\n"),
	    0);
	ck_assert_int_eq(harness_daemon_start_ready(d), 0);
	randombytes_buf(&peer, sizeof(peer));
	randombytes_buf(piece, sizeof(piece));
	base = bounds_rss_kib(d->pid);
	bounds_reset_peak(d->pid);
	for (int i = 0; i < K; i++) {
		fds[i] = raw_connect(d);
		ck_assert_int_ge(fds[i], 0);
		for (unsigned long off = 0; off < held; off += PIECE)
			ck_assert(raw_send_piece(fds[i], &peer,
			    FERRY_APP_MSG_MAX, (uint32_t)off, piece, PIECE));
	}
	harness_sleep_ms(500);
	growth = bounds_peak_kib(d->pid) - base;
	allow = procstat_allow_kib(K * (FERRY_APP_MSG_MAX / 1024 * 3 / 2 +
		CLIENT_IN_KIB), slack_kib);
	fprintf(stderr,
	    "%d clients 7.5 MiB into a message each: RSS %lu KiB + peak "
	    "growth %lu KiB, %lu KiB per client (CLIENT_BUFFER is 256 KiB)\n",
	    K, base, growth, growth / K);
	ck_assert_msg(growth <= allow,
	    "RSS grew by %lu KiB for %d half-sent messages (allowed %lu)",
	    growth, K, allow);
	for (int i = 0; i < K; i++)
		(void)close(fds[i]);
	harness_free(h);
}
END_TEST

static Suite *
bounds_suite(void)
{
	Suite *s = suite_create("bounds_client");
	TCase *tc = tcase_create("client");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_client_buffer);
	tcase_add_test(tc, test_client_buffer_default_stall);
	tcase_add_test(tc, test_max_clients);
	tcase_add_test(tc, test_client_half_sent_messages);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	if (sodium_init() < 0)
		return 1;
	sr = srunner_create(bounds_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
