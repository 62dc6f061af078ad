/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Batching, fragmentation and flow control between real daemons (issue
 * 4): a 1 MiB message crosses UDP with 5 % emulated loss intact; a burst
 * of small messages arrives complete in far fewer datagrams; a receiver
 * that stops reading makes its sender's queue hit its bound with memory
 * bounded, and traffic resumes when it continues; a receiver whose
 * client took its backlog tells its idle sender the window opened; a
 * restarted sender's frames are acknowledged at once, and a restarted
 * receiver is not sent the rest of messages its old session had begun.
 * And the largest message the documentation allows, FERRY_APP_MSG_MAX
 * bytes, crosses UDP and TCP with the default configuration (issue 11).
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include "harness.h"
#include "mesh.h"
#include "procstat.h"

#define LINK_MS 20000

static void
pair(struct harness *h, struct harness_daemon **d, const char *extra)
{
	mesh_start(h, d, 2, "udp", extra);
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
}

/* A message of len random bytes, for the caller to free. */
static uint8_t *
random_msg(size_t len)
{
	uint8_t *msg = malloc(len);

	ck_assert_ptr_nonnull(msg);
	randombytes_buf(msg, len);
	return msg;
}

/* Sends len bytes from one daemon to the other and checks that l, a
 * listener on the receiving one, gets them intact within timeout_ms. */
static void
send_intact(struct harness_daemon *from, struct harness_daemon *to,
    struct ferry_client *l, const uint8_t *msg, size_t len, int timeout_ms)
{
	struct ferry_message m;

	mesh_send(from, to, msg, len);
	ck_assert_int_eq(ferry_receive(l, &m, timeout_ms), 0);
	ck_assert_uint_eq(m.len, len);
	ck_assert_int_eq(memcmp(m.data, msg, len), 0);
}

/* The value of counter name of d once it has not moved for quiet_ms. */
static uint64_t
settled_stat(struct harness_daemon *d, const char *name, unsigned quiet_ms)
{
	uint64_t v = mesh_stat(d, name), end = harness_now_ms() + 20000;

	for (;;) {
		uint64_t now;

		harness_sleep_ms(quiet_ms);
		now = mesh_stat(d, name);
		if (now == v)
			return v;
		v = now;
		ck_assert_msg(harness_now_ms() < end, "%s never settles", name);
	}
}

START_TEST(test_1mib_over_lossy_udp)
{
	enum { SIZE = 1024 * 1024 };
	struct harness_daemon *d[2];
	struct ferry_client *l;
	struct harness *h;
	uint8_t *msg = random_msg(SIZE);

	ck_assert_int_eq(harness_new("lossy", &h), 0);
	pair(h, d, "[testing]\nENABLE = yes\nLOSS = 0.05\n");
	l = mesh_listener(d[1]);
	send_intact(d[0], d[1], l, msg, SIZE, 60000);
	/* It took resending: the loss was real and was repaired. */
	ck_assert_uint_gt(mesh_stat(d[0], "core.emu_dropped"), 0);
	ck_assert_uint_gt(mesh_stat(d[0], "core.frag_retx"), 0);
	ferry_client_close(l);
	harness_free(h);
	free(msg);
}
END_TEST

START_TEST(test_burst_shares_datagrams)
{
	enum { N = 10000 };
	struct harness_daemon *d[2];
	struct ferry_client *l, *s;
	struct ferry_message m;
	struct harness *h;
	uint64_t units0, units;
	uint8_t body[40];
	unsigned got = 0;

	ck_assert_int_eq(harness_new("burst", &h), 0);
	pair(h, d, NULL);
	l = mesh_listener(d[1]);
	units0 = mesh_stat(d[0], "udp.units_out");
	ck_assert_int_eq(harness_daemon_client(d[0], &s), 0);
	for (unsigned i = 0; i < N; i++) {
		memset(body, 0, sizeof(body));
		memcpy(body, &i, sizeof(i));
		ck_assert_int_eq(ferry_send(s, &d[1]->id, MESH_APP_TYPE, body,
				     sizeof(body)),
		    0);
	}
	ck_assert_int_eq(ferry_flush(s), 0);
	while (got < N && ferry_receive(l, &m, 5000) == 0) {
		unsigned idx;

		ck_assert_uint_eq(m.len, sizeof(body));
		memcpy(&idx, m.data, sizeof(idx));
		ck_assert_uint_lt(idx, N);
		got++;
	}
	ck_assert_uint_eq(got, N);
	units = mesh_stat(d[0], "udp.units_out") - units0;
	/* 40-byte messages and 1452-byte datagrams: ~30 fit in one. Demand
	 * at least 10 per datagram on average, ACKs and keepalives included. */
	ck_assert_msg(units * 10 <= N, "%u messages took %llu datagrams", N,
	    (unsigned long long)units);
	ferry_client_close(s);
	ferry_client_close(l);
	harness_free(h);
}
END_TEST

/* A child that sends messages of size bytes (at most 4 MiB) to `to`
 * through `from` until it is killed; ferry_send blocks it whenever the
 * daemon pushes back. */
static pid_t
start_sender(struct harness_daemon *from, struct harness_daemon *to,
    size_t size)
{
	static uint8_t body[4 * 1024 * 1024];
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	ck_assert_uint_le(size, sizeof(body));
	if (pid == 0) {
		struct ferry_client *c;

		if (harness_daemon_client(from, &c) != 0)
			_exit(1);
		for (;;)
			if (ferry_send(c, &to->id, MESH_APP_TYPE, body, size) !=
			    0)
				_exit(2);
	}
	return pid;
}

START_TEST(test_stopped_receiver_bounds_sender)
{
	enum { QUEUE = 1024 * 1024 };
	struct harness_daemon *d[2];
	struct ferry_client *l;
	struct ferry_message m;
	struct harness *h;
	unsigned long rss1, rss2;
	unsigned got = 0;
	pid_t sender;

	ck_assert_int_eq(harness_new("stop", &h), 0);
	pair(h, d, "[core]\nQUEUE_BYTES = 1 MiB\n");
	l = mesh_listener(d[1]);
	sender = start_sender(d[0], d[1], 1000);
	ck_assert_int_eq(ferry_receive(l, &m, 5000), 0);
	ck_assert_int_eq(kill(d[1]->pid, SIGSTOP), 0);
	/* The queue fills up to its bound and the sender is held back. */
	ck_assert(mesh_wait_stat(d[0], "service.send_blocked", 1, 10000));
	harness_sleep_ms(1000);
	rss1 = procstat_kib(d[0]->pid, "VmRSS");
	harness_sleep_ms(3000);
	rss2 = procstat_kib(d[0]->pid, "VmRSS");
	ck_assert_uint_le(mesh_stat(d[0], "core.queue_bytes"), QUEUE + 65536);
	ck_assert_msg(rss2 < rss1 + 8192, "RSS grew from %lu to %lu KiB",
	    rss1, rss2);
	/* Traffic resumes once the receiver runs again. */
	mesh_drain(l, 100);
	ck_assert_int_eq(kill(d[1]->pid, SIGCONT), 0);
	while (got < 1000 && ferry_receive(l, &m, 15000) == 0)
		got++;
	ck_assert_uint_eq(got, 1000);
	ck_assert_int_eq(kill(sender, SIGKILL), 0);
	(void)waitpid(sender, NULL, 0);
	ferry_client_close(l);
	harness_free(h);
}
END_TEST

/* Over TCP nothing in ferry's ACKs slows a sender; a slow local client
 * must still not lose messages: the daemon stops reading the stream and
 * TCP's own flow control holds the sender back. */
START_TEST(test_slow_client_over_tcp_loses_nothing)
{
	enum { N = 6000, SIZE = 1000 };
	struct harness_daemon *d[2];
	struct ferry_client *l, *s;
	struct ferry_message m;
	struct harness *h;
	static uint8_t body[SIZE];
	unsigned got = 0;
	pid_t pid;

	ck_assert_int_eq(harness_new("slowtcp", &h), 0);
	mesh_start(h, d, 2, "tcp",
	    "[core]\nRECV_WINDOW = 256 KiB\nQUEUE_BYTES = 256 KiB\n"
	    "[service]\nCLIENT_BUFFER = 512 KiB\n");
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
	l = mesh_listener(d[1]);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (harness_daemon_client(d[0], &s) != 0)
			_exit(1);
		for (unsigned i = 0; i < N; i++)
			if (ferry_send(s, &d[1]->id, MESH_APP_TYPE, body,
				sizeof(body)) != 0)
				_exit(2);
		_exit(ferry_flush(s) == 0 ? 0 : 3);
	}
	/* 6 MB against a 512 KiB client buffer: read in slow bursts. */
	while (got < N && ferry_receive(l, &m, 10000) == 0) {
		ck_assert_uint_eq(m.len, SIZE);
		if (++got % 500 == 0)
			harness_sleep_ms(50);
	}
	ck_assert_uint_eq(got, N);
	ck_assert_uint_eq(mesh_stat(d[1], "service.recv_dropped"), 0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ferry_client_close(l);
	harness_free(h);
}
END_TEST

/* A sender learns the receiver's window only from ACKs. Two 1 MiB
 * messages wait for a client that does not read: the last ACKs tell a
 * window of well under half of RECV_WINDOW. When the client takes them,
 * the receiver says the window is open again (a window update) although
 * nothing new arrived; before, the idle sender kept the small window,
 * and its next 1 MiB stopped there and waited a round trip. */
START_TEST(test_window_update_after_drain)
{
	enum { SIZE = 1024 * 1024 };
	struct harness_daemon *d[2];
	struct ferry_client *l;
	struct harness *h;
	uint8_t *msg = random_msg(SIZE);
	struct ferry_message m;
	uint64_t acks, updates;

	ck_assert_int_eq(harness_new("window-update", &h), 0);
	/* The client is slow on purpose: with the DHT's lookups on the link
	 * the counters settle only after more than a second, the default
	 * STALL_TIMEOUT after which its output would stop counting and the
	 * window open before it reads. */
	pair(h, d, "[service]\nSTALL_TIMEOUT = 60 s\n");
	l = mesh_listener(d[1]);
	mesh_send(d[0], d[1], msg, SIZE);
	mesh_send(d[0], d[1], msg, SIZE);
	ck_assert(mesh_wait_stat(d[1], "core.reasm_done", 2, 10000));
	acks = settled_stat(d[0], "core.acks_in", 500);
	updates = settled_stat(d[1], "core.window_updates", 200);
	ck_assert_uint_eq(mesh_stat(d[1], "service.clients_stalled"), 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(ferry_receive(l, &m, 5000), 0);
		ck_assert_uint_eq(m.len, SIZE);
		ck_assert_int_eq(memcmp(m.data, msg, SIZE), 0);
	}
	ck_assert(mesh_wait_stat(d[1], "core.window_updates", updates + 1,
	    5000));
	ck_assert(mesh_wait_stat(d[0], "core.acks_in", acks + 1, 5000));
	ferry_client_close(l);
	free(msg);
	harness_free(h);
}
END_TEST

/*
 * A sender that is killed and started again numbers its frames afresh
 * while its peer stays up. The peer must acknowledge the new session's
 * frames at once: it once kept the old session's ACK ranges, dropped the
 * new, low counters as older than its ACK history, and the sender got no
 * ACK until its counter caught up with the old one (a UDP path stalled
 * for a minute after every restart in the soak).
 */
START_TEST(test_restarted_sender_acked)
{
	enum { SIZE = 1024 * 1024, FRAMES = 20000 };
	struct harness_daemon *d[2];
	struct ferry_client *l;
	struct harness *h;
	uint8_t *msg = random_msg(SIZE);

	ck_assert_int_eq(harness_new("restart-acks", &h), 0);
	pair(h, d, NULL);
	/* d1, the sender, finds d0 again from its BOOTSTRAP. */
	l = mesh_listener(d[0]);
	/* More frames than the receiver's ACK history spans. */
	while (mesh_stat(d[1], "core.enc_out") < FRAMES)
		send_intact(d[1], d[0], l, msg, SIZE, 30000);
	ck_assert_int_eq(harness_daemon_kill(d[1]), 0);
	ck_assert_int_eq(harness_daemon_start_ready(d[1]), 0);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
	/* A window's worth and more: it needs ACKs to get through. */
	send_intact(d[1], d[0], l, msg, SIZE, 15000);
	ck_assert_uint_gt(mesh_stat(d[1], "core.acks_in"), 0);
	ck_assert_uint_eq(mesh_stat(d[1], "core.path_failures"), 0);
	ferry_client_close(l);
	harness_free(h);
	free(msg);
}
END_TEST

/*
 * A receiver killed and started again while large messages are under way
 * to it: its old session's share of them is gone, so the sender gives up
 * their remainder (counted) instead of sending fragments that the new
 * session could never put together and would hold until
 * REASSEMBLY_TIMEOUT; the messages after them arrive whole. Messages of
 * 4 MiB through a 64 KiB window: at the kill, the one under way has
 * almost surely had fragments acknowledged, which are not sent again.
 */
START_TEST(test_restarted_receiver_no_orphans)
{
	enum { SIZE = 4 * 1024 * 1024 };
	struct harness_daemon *d[2];
	struct ferry_client *l;
	struct ferry_message m;
	struct harness *h;
	pid_t sender;

	ck_assert_int_eq(harness_new("restart-orphans", &h), 0);
	pair(h, d,
	    "[core]\nREASSEMBLY_TIMEOUT = 1 s\nRECV_WINDOW = 64 KiB\n");
	/* d1, the receiver, finds d0 again from its BOOTSTRAP. */
	l = mesh_listener(d[1]);
	sender = start_sender(d[0], d[1], SIZE);
	for (uint64_t round = 1; round <= 2; round++) {
		ck_assert_int_eq(ferry_receive(l, &m, 20000), 0);
		ck_assert_int_eq(harness_daemon_kill(d[1]), 0);
		ferry_client_close(l);
		harness_sleep_ms(500);
		ck_assert_int_eq(harness_daemon_start_ready(d[1]), 0);
		mesh_wait_peers(h, d[1], 1, LINK_MS);
		l = mesh_listener(d[1]);
		for (int i = 0; i < 2; i++) {
			ck_assert_int_eq(ferry_receive(l, &m, 20000), 0);
			ck_assert_uint_eq(m.len, SIZE);
		}
		/* Past REASSEMBLY_TIMEOUT: nothing was left half put
		 * together. */
		harness_sleep_ms(2500);
		ck_assert_uint_eq(mesh_stat(d[1], "core.reasm_dropped"), 0);
		ck_assert_uint_ge(mesh_stat(d[0], "core.msgs_abandoned"),
		    round);
	}
	ck_assert_int_eq(kill(sender, SIGKILL), 0);
	(void)waitpid(sender, NULL, 0);
	ferry_client_close(l);
	harness_free(h);
}
END_TEST

/*
 * Exactly FERRY_APP_MSG_MAX bytes, from a client's SEND through both
 * daemons to a registered client, with nothing configured but the
 * transport. A message this large plus its RECEIVE framing is more than
 * the default CLIENT_BUFFER, which used to drop it at the receiver.
 */
static void
largest_message(const char *transport)
{
	struct harness_daemon *d[2];
	struct ferry_client *l;
	struct harness *h;
	uint8_t *msg = random_msg(FERRY_APP_MSG_MAX);

	ck_assert_int_eq(harness_new("largest", &h), 0);
	mesh_start(h, d, 2, transport, NULL);
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
	l = mesh_listener(d[1]);
	send_intact(d[0], d[1], l, msg, FERRY_APP_MSG_MAX, 60000);
	/* And again, in case a first one left state behind. */
	msg[0] ^= 0xff;
	send_intact(d[0], d[1], l, msg, FERRY_APP_MSG_MAX, 60000);
	ck_assert_uint_eq(mesh_stat(d[1], "service.recv_dropped"), 0);
	ck_assert_uint_eq(mesh_stat(d[1], "service.recv_delivered"), 2);
	ferry_client_close(l);
	harness_free(h);
	free(msg);
}

START_TEST(test_largest_message_udp)
{
	largest_message("udp");
}
END_TEST

START_TEST(test_largest_message_tcp)
{
	largest_message("tcp");
}
END_TEST

static Suite *
flow_suite(void)
{
	Suite *s = suite_create("flow");
	TCase *tc = tcase_create("flow");

	tcase_set_timeout(tc, 150);
	tcase_add_test(tc, test_1mib_over_lossy_udp);
	tcase_add_test(tc, test_burst_shares_datagrams);
	tcase_add_test(tc, test_stopped_receiver_bounds_sender);
	tcase_add_test(tc, test_slow_client_over_tcp_loses_nothing);
	tcase_add_test(tc, test_window_update_after_drain);
	tcase_add_test(tc, test_restarted_sender_acked);
	tcase_add_test(tc, test_restarted_receiver_no_orphans);
	suite_add_tcase(s, tc);
	/* A case of its own, so that CK_RUN_CASE=largest runs just these. */
	tc = tcase_create("largest");
	tcase_set_timeout(tc, 150);
	tcase_add_test(tc, test_largest_message_udp);
	tcase_add_test(tc, test_largest_message_tcp);
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
	sr = srunner_create(flow_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
