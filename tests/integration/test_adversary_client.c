/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Client-socket abuse (issue 6, "Adversarial peers"): hundreds of
 * connections past MAX_CLIENTS (the extra ones wait in the listen queue
 * and are served as slots free up), a registered client that never reads
 * while messages pour in for it (its buffer stops at CLIENT_BUFFER, the
 * rest is dropped and counted, other clients get everything), clients
 * that pipeline requests and read the answers never or a trickle at a
 * time (what the daemon holds for them stays bounded), frames left
 * half-sent, oversized frames (cut off), and a REGISTER as long as a
 * frame allows; and, as a control, an honest client that pipelines more
 * requests than CLIENT_BUFFER holds answers for gets every answer. A
 * client cut off is told why in a RESULT first, and the daemon's log
 * says so at its default level, a few lines a second however many
 * clients misbehave. Throughout, a well-behaved client gets its STATUS
 * answers within a bound and its messages, which a hostile peer linked
 * to the daemon keeps sending.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include "lib/wire.h"
#include "adv.h"
#include "procstat.h"
#include "harness.h"
#include "mesh.h"
#include "wirelink.h"
#include "wirepeer.h"

#define LINK_MS         10000
#define STATUS_BOUND_MS 500    /* a well-behaved client's answer, at most */
#define REQ_SIZE        8      /* {u16 size, u16 type, u32 req_id} */
#define WB_TYPE         0x4243 /* the well-behaved client's own messages */

/* The daemon, its well-behaved clients (one asks, one listens), and a
 * hostile peer linked to it that sends messages. */
struct fix {
	struct harness *h;
	struct harness_daemon *d;
	struct ferry_client *ask;
	struct ferry_client *lis;
	struct wirepeer *w;
	struct wirelink *l;
	unsigned sent;     /* WB_TYPE messages the peer sent */
	unsigned bulk;     /* MESH_APP_TYPE ones the listener got */
	uint64_t worst_ms; /* slowest STATUS answer */
};

static void
fix_setup(struct fix *f, const char *name, const char *cfg, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(harness_new(name, &f->h), 0);
	f->d = adv_daemon(f->h, cfg);
	ck_assert_int_eq(harness_daemon_client(f->d, &f->ask), 0);
	ck_assert_int_eq(harness_daemon_client(f->d, &f->lis), 0);
	ck_assert_int_eq(ferry_register(f->lis,
	                     (const uint16_t[]){ MESH_APP_TYPE, WB_TYPE }, 2),
	    0);
	ck_assert_int_eq(wirepeer_new(seed, &f->w), 0);
	ck_assert_int_eq(wirelink_new(f->w, &f->d->id, &f->d->addr, &f->l), 0);
	if (wirelink_handshake(f->l, LINK_MS) != 0) {
		harness_dump_logs(f->h);
		ck_abort_msg("the message source did not link");
	}
}

static void
fix_done(struct fix *f)
{
	fprintf(stderr, "%s: slowest STATUS answer %llu ms\n",
	    harness_dir(f->h), (unsigned long long)f->worst_ms);
	ferry_client_close(f->ask);
	ferry_client_close(f->lis);
	wirelink_free(f->l);
	wirepeer_free(f->w);
	harness_free(f->h);
}

/* A counter, asked over the well-behaved client's connection (a new
 * one could wait in the listen queue). */
static uint64_t
stat_of(struct fix *f, const char *name)
{
	struct ferry_stat *st;
	uint64_t v = 0;
	size_t n;

	ck_assert_int_eq(ferry_stats(f->ask, &st, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			v = st[i].value;
	ferry_stats_free(st, n);
	return v;
}

/* Waits until the daemon has exactly n clients. */
static void
wait_clients(struct fix *f, uint64_t n)
{
	uint64_t end = harness_now_ms() + 5000;

	while (stat_of(f, "service.clients_connected") != n) {
		ck_assert_msg(harness_now_ms() < end,
		    "%llu clients connected, expected %llu",
		    (unsigned long long)stat_of(f, "service.clients_connected"),
		    (unsigned long long)n);
		harness_sleep_ms(20);
	}
}

/* A message at the listener: bulk ones must come in order. Returns true
 * for the WB_TYPE message text. */
static bool
take(struct fix *f, const struct ferry_message *m, const char *text)
{
	if (m->type == WB_TYPE) {
		ck_assert_uint_eq(m->len, strlen(text));
		ck_assert_int_eq(memcmp(m->data, text, m->len), 0);
		return true;
	}
	ck_assert_uint_eq(m->type, MESH_APP_TYPE);
	ck_assert_uint_ge(m->len, 4);
	ck_assert_uint_eq(wire_get32(m->data), f->bulk);
	f->bulk++;
	return false;
}

/* The well-behaved side: one STATUS within the bound, one message from
 * the hostile peer delivered to the listener. */
static void
well_behaved(struct fix *f)
{
	struct ferry_status *st;
	struct ferry_message m;
	uint64_t t0 = harness_now_ms(), ms;
	char text[32];
	int r;

	r = ferry_status(f->ask, &st);
	ms = harness_now_ms() - t0;
	ck_assert_msg(r == 0, "STATUS failed: %s", strerror(-r));
	ferry_status_free(st);
	if (ms > f->worst_ms)
		f->worst_ms = ms;
	ck_assert_msg(ms <= STATUS_BOUND_MS, "STATUS took %llu ms",
	    (unsigned long long)ms);
	(void)snprintf(text, sizeof(text), "m%u", f->sent);
	ck_assert_int_eq(wirelink_send_msg(f->l, WB_TYPE, text, strlen(text)),
	    0);
	f->sent++;
	do {
		r = ferry_receive(f->lis, &m, STATUS_BOUND_MS);
		ck_assert_msg(r == 0, "message %u did not reach the listener",
		    f->sent - 1);
	} while (!take(f, &m, text));
}

/* A raw, non-blocking connection. While the listen queue is full
 * (connections come faster than the daemon accepts them) it tries again
 * for up to 2 s; then a negative errno. */
static int
raw_open(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	uint64_t end = harness_now_ms() + 2000;
	int fd, r;

	memcpy(sun.sun_path, path, strlen(path) + 1);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
		ck_assert_int_ge(fd, 0);
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			return fd;
		r = -errno;
		(void)close(fd);
		if (r != -EAGAIN || harness_now_ms() >= end)
			return r;
		harness_sleep_ms(10);
	}
}

/* Writes all of buf to a non-blocking socket, waiting for room. */
static void
raw_write(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		struct pollfd pfd = { fd, POLLOUT, 0 };
		ssize_t n;

		ck_assert_int_eq(poll(&pfd, 1, 5000), 1);
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN)
			continue;
		ck_assert_int_gt(n, 0);
		p += n;
		len -= (size_t)n;
	}
}

/* Reads one whole frame within timeout_ms: its size, 0 at EOF, or
 * -ETIMEDOUT. */
static ssize_t
raw_frame(int fd, uint8_t *buf, size_t size, int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;
	size_t have = 0, want = FERRY_HDR_SIZE;

	while (have < want) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		uint64_t now = harness_now_ms();
		ssize_t n;

		if (now >= end || poll(&pfd, 1, (int)(end - now)) <= 0)
			return -ETIMEDOUT;
		n = recv(fd, buf + have, want - have, MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n <= 0)
			return 0;
		have += (size_t)n;
		if (have == FERRY_HDR_SIZE) {
			want = wire_get16(buf);
			ck_assert_uint_ge(want, FERRY_HDR_SIZE);
			ck_assert_uint_le(want, size);
		}
	}
	return (ssize_t)want;
}

/* True if the daemon closes fd within timeout_ms (what it sent first is
 * read and dropped). */
static bool
raw_closed(int fd, int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;
	uint8_t buf[4096];

	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		uint64_t now = harness_now_ms();
		ssize_t n;

		if (now >= end || poll(&pfd, 1, (int)(end - now)) <= 0)
			return false;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			return true;
	}
}

static size_t
put_req(uint8_t *p, uint16_t type, uint32_t req_id)
{
	wire_put_hdr(p, REQ_SIZE, type);
	wire_put32(p + 4, req_id);
	return REQ_SIZE;
}

/* Polls the connections for ms and marks those whose answer came (each
 * sent one request). Returns how many newly answered. */
static unsigned
collect_answers(const int *fds, bool *answered, unsigned n, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;
	struct pollfd *pfd = calloc(n, sizeof(*pfd));
	uint8_t buf[1024];
	unsigned got = 0;

	ck_assert_ptr_nonnull(pfd);
	for (uint64_t now; (now = harness_now_ms()) < end;) {
		unsigned k = 0;

		for (unsigned i = 0; i < n; i++)
			if (fds[i] >= 0 && !answered[i]) {
				pfd[k].fd = fds[i];
				pfd[k].events = POLLIN;
				k++;
			}
		if (k == 0 || poll(pfd, k, (int)(end - now)) <= 0)
			break;
		for (unsigned i = 0, j = 0; i < n; i++) {
			if (fds[i] < 0 || answered[i])
				continue;
			if ((pfd[j++].revents & POLLIN) &&
			    raw_frame(fds[i], buf, sizeof(buf), 1000) > 0) {
				answered[i] = true;
				got++;
			}
		}
	}
	free(pfd);
	return got;
}

/*
 * 250 connections at a daemon with MAX_CLIENTS = 128: the first ones get
 * the free slots, the others wait in the listen queue and are served,
 * in turn, when slots free up. The well-behaved client holds its slot.
 */
START_TEST(test_client_connection_flood)
{
	enum { MAX = 128, N = 250, FREED = 60 };
	int fds[N];
	bool answered[N];
	uint8_t buf[1024];
	unsigned n_answered;
	struct fix f;

	fix_setup(&f, "cli-conns", "[service]\nMAX_CLIENTS = 128\n", 601);
	for (unsigned i = 0; i < N; i++) {
		fds[i] = raw_open(f.d->socket);
		ck_assert_msg(fds[i] >= 0, "connection %u: %s", i,
		    strerror(-fds[i]));
		raw_write(fds[i], buf, put_req(buf, FERRY_C_STATUS_REQ, i));
		answered[i] = false;
	}
	well_behaved(&f);
	/* MAX slots, one of them the asking client's, one the listener's. */
	n_answered = collect_answers(fds, answered, N, 1500);
	ck_assert_uint_eq(n_answered, MAX - 2);
	ck_assert_uint_eq(stat_of(&f, "service.clients_connected"), MAX);
	ck_assert_uint_ge(stat_of(&f, "service.accept_paused"), 1);
	well_behaved(&f);
	/* Served clients leave: as many waiting ones take their place. */
	for (unsigned i = 0, closed = 0; i < N && closed < FREED; i++)
		if (answered[i]) {
			(void)close(fds[i]);
			fds[i] = -1;
			closed++;
		}
	n_answered = collect_answers(fds, answered, N, 1500);
	ck_assert_uint_eq(n_answered, FREED);
	for (unsigned i = 0; i < N; i++)
		if (fds[i] >= 0)
			(void)close(fds[i]);
	/* The rest are accepted and leave in turn. */
	wait_clients(&f, 2);
	well_behaved(&f);
	fix_done(&f);
}
END_TEST

/* A REGISTER for MESH_APP_TYPE on a raw connection, answered. */
static int
raw_listener(const char *path)
{
	uint8_t buf[64];
	int fd = raw_open(path);

	ck_assert_int_ge(fd, 0);
	wire_put_hdr(buf, REQ_SIZE + 2, FERRY_C_REGISTER);
	wire_put32(buf + 4, 1);
	wire_put16(buf + 8, MESH_APP_TYPE);
	raw_write(fd, buf, REQ_SIZE + 2);
	ck_assert_int_gt(raw_frame(fd, buf, sizeof(buf), 5000), 0);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_RESULT);
	ck_assert_int_eq((int32_t)wire_get32(buf + 8), 0);
	return fd;
}

/*
 * A client registered for the messages that never reads them: what the
 * daemon holds for it stops at CLIENT_BUFFER and the rest is dropped and
 * counted; the other listener gets every message, the asking client its
 * answers, and the daemon's memory stays put.
 */
START_TEST(test_client_slow_reader)
{
	enum { N = 3000, SIZE = 1000, BATCH = 50 };
	uint8_t body[SIZE];
	unsigned long rss0, rss1;
	uint64_t dropped, base;
	struct fix f;
	int slow;

	fix_setup(&f, "cli-slow", "[service]\nCLIENT_BUFFER = 64 KiB\n", 602);
	slow = raw_listener(f.d->socket);
	rss0 = procstat_kib(f.d->pid, "VmRSS");
	base = mesh_stat(f.d, "core.msg_in");
	memset(body, 0x3c, sizeof(body));
	for (unsigned i = 0; i < N; i++) {
		struct ferry_message m;

		wire_put32(body, i);
		ck_assert_int_eq(wirelink_send_msg(f.l, MESH_APP_TYPE, body,
		                     sizeof(body)),
		    0);
		if (i % BATCH != BATCH - 1)
			continue;
		/* The peer has no congestion control: let the daemon take
		 * each batch before the next. */
		ck_assert(mesh_wait_stat(f.d, "core.msg_in",
		    base + i + 1 + f.sent, 5000));
		while (ferry_receive(f.lis, &m, 0) == 0)
			(void)take(&f, &m, "");
		if (i % (10 * BATCH) == 10 * BATCH - 1)
			well_behaved(&f);
	}
	for (struct ferry_message m;
	     f.bulk < N && ferry_receive(f.lis, &m, 2000) == 0;)
		(void)take(&f, &m, "");
	ck_assert_uint_eq(f.bulk, N);
	well_behaved(&f);
	rss1 = procstat_kib(f.d->pid, "VmRSS");
	dropped = mesh_stat(f.d, "service.recv_dropped");
	fprintf(stderr,
	    "slow reader: %u messages of %u bytes, %llu dropped for it; "
	    "RSS %lu -> %lu KiB\n",
	    N, SIZE, (unsigned long long)dropped, rss0, rss1);
	/* It could take CLIENT_BUFFER and its socket buffers at most. */
	ck_assert_uint_ge(dropped, N / 2);
	ck_assert_msg(rss1 < rss0 + 8192, "RSS grew from %lu to %lu KiB", rss0,
	    rss1);
	(void)close(slow);
	fix_done(&f);
}
END_TEST

/*
 * A client that writes STATUS requests as fast as the socket takes them
 * and never reads the answers: once they pass CLIENT_BUFFER the daemon
 * stops reading it, so its writes stall after a bounded amount and the
 * daemon's memory with them.
 */
START_TEST(test_client_requests_never_read)
{
	enum { LIMIT = 8 << 20 };
	unsigned long rss0, rss1;
	uint8_t req[8192];
	size_t written = 0;
	uint64_t quiet_since, frames;
	struct fix f;
	int fd;

	fix_setup(&f, "cli-unread", "[service]\nCLIENT_BUFFER = 64 KiB\n", 603);
	rss0 = procstat_kib(f.d->pid, "VmRSS");
	fd = raw_open(f.d->socket);
	ck_assert_int_ge(fd, 0);
	for (size_t i = 0; i < sizeof(req); i += REQ_SIZE)
		(void)put_req(req + i, FERRY_C_STATUS_REQ, (uint32_t)i);
	/* Write until the socket has taken nothing for a second. */
	quiet_since = harness_now_ms();
	while (written < LIMIT && harness_now_ms() - quiet_since < 1000) {
		ssize_t n = send(fd, req, sizeof(req), MSG_NOSIGNAL);

		if (n > 0) {
			written += (size_t)n;
			quiet_since = harness_now_ms();
			continue;
		}
		ck_assert_int_eq(errno, EAGAIN);
		well_behaved(&f);
		harness_sleep_ms(20);
	}
	frames = stat_of(&f, "service.frames_in");
	rss1 = procstat_kib(f.d->pid, "VmRSS");
	fprintf(stderr,
	    "unread answers: %zu bytes of requests taken, %llu frames "
	    "read; RSS %lu -> %lu KiB\n",
	    written, (unsigned long long)frames, rss0, rss1);
	/* The daemon's read buffer, what CLIENT_BUFFER and the socket
	 * buffers hold of the answers: some hundreds of KiB, not the 8 MiB
	 * offered. */
	ck_assert_msg(written < (4u << 20), "the daemon took %zu bytes",
	    written);
	ck_assert_msg(rss1 < rss0 + 8192, "RSS grew from %lu to %lu KiB", rss0,
	    rss1);
	well_behaved(&f);
	(void)close(fd);
	well_behaved(&f);
	fix_done(&f);
}
END_TEST

/*
 * The same client, but reading its answers now and then, a few KiB at a
 * time: each read lets the daemon's output dip under CLIENT_BUFFER. The
 * requests it has taken in and not yet answered must still be bounded
 * (a read chunk, a frame and the socket buffer: well under 2 MiB), or
 * the client makes the daemon buffer everything it writes.
 */
START_TEST(test_client_trickle_reader_bounded)
{
	enum { RUN_MS = 5000, LIMIT = 256 << 20, SLACK = 2 << 20 };
	unsigned long rss0, rss1;
	uint8_t req[8192], ans[4096];
	size_t written = 0, taken = 0, answer, pending;
	uint64_t t0, next_wb;
	struct fix f;
	ssize_t n;
	int fd;

	fix_setup(&f, "cli-trickle", "[service]\nCLIENT_BUFFER = 64 KiB\n",
	    606);
	rss0 = procstat_kib(f.d->pid, "VmRSS");
	fd = raw_open(f.d->socket);
	ck_assert_int_ge(fd, 0);
	/* The size of one answer, to count the answered requests. */
	raw_write(fd, req, put_req(req, FERRY_C_STATUS_REQ, 0));
	n = raw_frame(fd, ans, sizeof(ans), 5000);
	ck_assert_int_gt(n, 0);
	answer = (size_t)n;
	for (size_t i = 0; i < sizeof(req); i += REQ_SIZE)
		(void)put_req(req + i, FERRY_C_STATUS_REQ, (uint32_t)i);
	t0 = next_wb = harness_now_ms();
	while (harness_now_ms() - t0 < RUN_MS && written < LIMIT) {
		while ((n = send(fd, req, sizeof(req), MSG_NOSIGNAL)) > 0)
			written += (size_t)n;
		ck_assert_int_eq(errno, EAGAIN);
		n = recv(fd, ans, sizeof(ans), MSG_DONTWAIT);
		if (n > 0)
			taken += (size_t)n;
		if (harness_now_ms() >= next_wb) {
			well_behaved(&f);
			next_wb += 500;
		}
		harness_sleep_ms(2);
	}
	rss1 = procstat_kib(f.d->pid, "VmRSS");
	pending = written - taken / answer * REQ_SIZE;
	fprintf(stderr,
	    "trickle reader: wrote %zu bytes of requests, read %zu bytes "
	    "of answers, %zu bytes of requests pending; RSS %lu -> %lu "
	    "KiB\n",
	    written, taken, pending, rss0, rss1);
	ck_assert_msg(pending < SLACK,
	    "%zu bytes of one client's requests taken in and not answered",
	    pending);
	ck_assert_msg(rss1 < rss0 + 16384,
	    "RSS grew from %lu to %lu KiB for one client", rss0, rss1);
	(void)close(fd);
	well_behaved(&f);
	fix_done(&f);
}
END_TEST

enum { PIPE_N = 5000 };

/* Reads PIPE_N STATUS answers numbered from first, 3 s at most for each;
 * fails the test naming how far it got. */
static void
pipe_read(int fd, uint32_t first)
{
	uint8_t ans[1024];
	unsigned got = 0;
	ssize_t n = 0;

	while (got < PIPE_N && (n = raw_frame(fd, ans, sizeof(ans), 3000)) > 0) {
		ck_assert_uint_eq(wire_get16(ans + 2), FERRY_C_STATUS);
		ck_assert_uint_eq(wire_get32(ans + 4), first + got);
		got++;
	}
	ck_assert_msg(got == PIPE_N,
	    "%u of %d pipelined requests answered, then %s", got, PIPE_N,
	    n == 0 ? "the daemon closed" : "nothing for 3 s");
}

/* Writes PIPE_N STATUS requests numbered from first in one go. */
static void
pipe_write(int fd, uint32_t first)
{
	static uint8_t req[PIPE_N * REQ_SIZE];

	for (unsigned i = 0; i < PIPE_N; i++)
		(void)put_req(req + i * REQ_SIZE, FERRY_C_STATUS_REQ, first + i);
	raw_write(fd, req, sizeof(req));
}

/* Returns once the daemon has stopped writing to fd. */
static void
pipe_settle(int fd)
{
	int q = -1, prev;

	do {
		prev = q;
		harness_sleep_ms(30);
		ck_assert_int_eq(ioctl(fd, FIONREAD, &q), 0);
	} while (q != prev);
}

/* Waits up to 3 s until more than have bytes wait in fd; returns how
 * many do. */
static int
pipe_wait_more(int fd, int have)
{
	uint64_t end = harness_now_ms() + 3000;
	int q;

	for (;;) {
		ck_assert_int_eq(ioctl(fd, FIONREAD, &q), 0);
		if (q > have)
			return q;
		ck_assert_msg(harness_now_ms() < end,
		    "no answer to a STATUS request within 3 s");
		harness_sleep_ms(1);
	}
}

/*
 * Not an attack: a client pipelines 5000 STATUS requests (40 KB, one
 * write) and then reads. Their answers are five times CLIENT_BUFFER, so
 * the daemon must stop and go on as the client reads, to the last one.
 */
START_TEST(test_client_pipelined_all_answered)
{
	struct fix f;
	int fd;

	fix_setup(&f, "cli-pipeline", "[service]\nCLIENT_BUFFER = 64 KiB\n",
	    607);
	fd = raw_open(f.d->socket);
	ck_assert_int_ge(fd, 0);
	pipe_write(fd, 0);
	pipe_read(fd, 0);
	(void)close(fd);
	well_behaved(&f);
	fix_done(&f);
}
END_TEST

/*
 * The same client reading only once the daemon's socket buffer is full.
 * When a write of all the daemon held fills that buffer exactly, the
 * next answers stop above CLIENT_BUFFER with every request already read
 * from the socket, and the daemon once waited after writing them out for
 * a read event that could not come (seen as 4555 of 5000 answered). The
 * client shifts where the buffer fills by leaving j short answers unread
 * first (each a kernel buffer of its own), over more than one write's
 * worth of offsets, so that some j meet that case whatever the kernel's
 * buffer sizes.
 */
START_TEST(test_client_pipelined_late_reader)
{
	enum { SHIFTS = 96 };
	uint8_t req[REQ_SIZE], ans[1024];
	uint32_t id = 0;
	struct fix f;
	int fd;

	fix_setup(&f, "cli-pipeline-late",
	    "[service]\nCLIENT_BUFFER = 64 KiB\n", 608);
	fd = raw_open(f.d->socket);
	ck_assert_int_ge(fd, 0);
	for (unsigned j = 0; j < SHIFTS; j += 3) {
		int q = 0;

		for (unsigned k = 0; k < j; k++) {
			/* One request at a time, each answer its own write. */
			(void)put_req(req, FERRY_C_STATUS_REQ, id + k);
			raw_write(fd, req, sizeof(req));
			q = pipe_wait_more(fd, q);
		}
		pipe_write(fd, id + j);
		pipe_settle(fd);
		for (unsigned k = 0; k < j; k++) {
			ck_assert_int_gt(raw_frame(fd, ans, sizeof(ans), 3000), 0);
			ck_assert_uint_eq(wire_get32(ans + 4), id + k);
		}
		pipe_read(fd, id + j);
		id += j + PIPE_N;
	}
	(void)close(fd);
	well_behaved(&f);
	fix_done(&f);
}
END_TEST

/* Partial frames: what each hanging connection sent. */
static size_t
partial(unsigned kind, uint8_t *buf)
{
	switch (kind % 5) {
	case 0: /* one byte of a header */
		buf[0] = 0;
		return 1;
	case 1: /* three */
		wire_put_hdr(buf, 8, FERRY_C_STATUS_REQ);
		return 3;
	case 2: /* a 65535-byte frame of an unknown type, 60000 sent */
		memset(buf, 0x11, 60000);
		wire_put_hdr(buf, 65535, 0x7777);
		return 60000;
	case 3: /* a SEND of 65535 bytes, its fixed part and 1000 more */
		memset(buf, 0, FERRY_C_SEND_FIXED + 1000);
		wire_put_hdr(buf, 65535, FERRY_C_SEND);
		wire_put16(buf + 40, MESH_APP_TYPE);
		wire_put32(buf + 44, 65535 - FERRY_C_SEND_FIXED);
		return FERRY_C_SEND_FIXED + 1000;
	default: /* a STATUS request but its last byte */
		(void)put_req(buf, FERRY_C_STATUS_REQ, kind);
		return REQ_SIZE - 1;
	}
}

/*
 * 100 connections leave frames half-sent while oversized requests of
 * every fixed-size type (and frames too small to have a header) arrive
 * on others: the daemon cuts off the malformed ones, keeps the partial
 * ones waiting without holding anyone up, and completes a partial frame
 * when its last byte comes. An oversized request of variable size (a
 * 64 KiB URI) is answered with an error.
 */
START_TEST(test_client_partial_and_oversized)
{
	enum { PARTIAL = 100 };
	static const uint16_t fixed_types[] = { FERRY_C_STATUS_REQ,
		FERRY_C_SHUTDOWN, FERRY_C_PEERS_REQ, FERRY_C_HELLO_REQ,
		FERRY_C_STATS_REQ, FERRY_C_PING };
	static const uint16_t tiny_sizes[] = { 0, 1, 3 };
	static uint8_t buf[65536];
	int part[PARTIAL], bad[10], var;
	unsigned n_bad = 0;
	unsigned long rss0, rss1;
	uint64_t malformed0;
	struct fix f;

	fix_setup(&f, "cli-partial", NULL, 604);
	rss0 = procstat_kib(f.d->pid, "VmRSS");
	malformed0 = stat_of(&f, "service.malformed");
	for (unsigned i = 0; i < PARTIAL; i++) {
		part[i] = raw_open(f.d->socket);
		ck_assert_int_ge(part[i], 0);
		raw_write(part[i], buf, partial(i, buf));
		if (i % 20 == 19)
			well_behaved(&f);
	}
	/* Oversized fixed-size requests: 65535 bytes each. */
	for (size_t i = 0; i < sizeof(fixed_types) / sizeof(fixed_types[0]);
	     i++) {
		memset(buf, 0, 65535);
		wire_put_hdr(buf, 65535, fixed_types[i]);
		bad[n_bad] = raw_open(f.d->socket);
		ck_assert_int_ge(bad[n_bad], 0);
		raw_write(bad[n_bad++], buf, 65535);
	}
	for (size_t i = 0; i < sizeof(tiny_sizes) / sizeof(tiny_sizes[0]);
	     i++) {
		wire_put_hdr(buf, tiny_sizes[i], FERRY_C_STATUS_REQ);
		bad[n_bad] = raw_open(f.d->socket);
		ck_assert_int_ge(bad[n_bad], 0);
		raw_write(bad[n_bad++], buf, 8);
	}
	/* Oversized but well-formed: a URI of 64 KiB. */
	memset(buf, 'A', 65535);
	wire_put_hdr(buf, 65535, FERRY_C_CONNECT);
	wire_put32(buf + 4, 7);
	var = raw_open(f.d->socket);
	ck_assert_int_ge(var, 0);
	raw_write(var, buf, 65535);
	well_behaved(&f);

	for (unsigned i = 0; i < n_bad; i++) {
		ck_assert_msg(raw_closed(bad[i], 5000),
		    "malformed request %u was not cut off", i);
		(void)close(bad[i]);
	}
	ck_assert_uint_eq(stat_of(&f, "service.malformed") - malformed0, n_bad);
	ck_assert_int_gt(raw_frame(var, buf, sizeof(buf), 5000), 0);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_RESULT);
	ck_assert_uint_eq(wire_get32(buf + 4), 7);
	ck_assert_int_lt((int32_t)wire_get32(buf + 8), 0);
	/* A 65535-byte SHUTDOWN is malformed, not a shutdown. */
	ck_assert(harness_daemon_running(f.d));
	well_behaved(&f);
	rss1 = procstat_kib(f.d->pid, "VmRSS");
	fprintf(stderr, "partial frames: %d hanging; RSS %lu -> %lu KiB\n",
	    PARTIAL, rss0, rss1);
	/* Every partial frame is still waiting, its connection open. */
	ck_assert_uint_eq(stat_of(&f, "service.clients_connected"),
	    2 + PARTIAL + 1);
	/* The last byte of a STATUS request arrives: it is answered. */
	raw_write(part[4], (const uint8_t[]){ 4 }, 1);
	ck_assert_int_gt(raw_frame(part[4], buf, sizeof(buf), 5000), 0);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_STATUS);
	ck_assert_uint_eq(wire_get32(buf + 4), 4);
	ck_assert_msg(rss1 < rss0 + PARTIAL * 320,
	    "RSS grew from %lu to %lu KiB", rss0, rss1);
	for (unsigned i = 0; i < PARTIAL; i++)
		(void)close(part[i]);
	(void)close(var);
	wait_clients(&f, 2);
	well_behaved(&f);
	fix_done(&f);
}
END_TEST

/*
 * REGISTER takes a list of types as long as a frame allows, 32000 in
 * 64 KiB. Whatever one client asks for, the daemon must not stop serving
 * the others while it does it: three such frames in a row, then the
 * well-behaved client's STATUS must still come within the bound.
 */
START_TEST(test_client_huge_register_no_stall)
{
	enum { TYPES = 32000, FRAMES = 3 };
	static uint8_t buf[65536];
	size_t len = REQ_SIZE + 2 * TYPES;
	struct fix f;
	int fd;

	fix_setup(&f, "cli-register", NULL, 605);
	fd = raw_open(f.d->socket);
	ck_assert_int_ge(fd, 0);
	for (unsigned k = 0; k < FRAMES; k++) {
		wire_put_hdr(buf, (uint16_t)len, FERRY_C_REGISTER);
		wire_put32(buf + 4, k + 1);
		/* A different order each time, none of them WB_TYPE. */
		for (unsigned i = 0; i < TYPES; i++)
			wire_put16(buf + REQ_SIZE + 2 * i,
			    0x8000 + (k % 2 ? TYPES - 1 - i : i));
		raw_write(fd, buf, len);
	}
	harness_sleep_ms(50);
	well_behaved(&f);
	for (unsigned k = 0; k < FRAMES; k++) {
		ck_assert_int_gt(raw_frame(fd, buf, sizeof(buf), 30000), 0);
		ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_RESULT);
	}
	(void)close(fd);
	fix_done(&f);
}
END_TEST

/* Lines of d's log that contain needle. */
static unsigned
log_count(const struct harness_daemon *d, const char *needle)
{
	char *log = harness_daemon_log(d), *p;
	unsigned n = 0;

	ck_assert_ptr_nonnull(log);
	for (p = log; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	free(log);
	return n;
}

/* Expects RESULT {req_id, status} with text in it, then the close. */
static void
expect_cut_off(int fd, uint32_t req_id, int status, const char *text)
{
	static uint8_t buf[65536];
	ssize_t n = raw_frame(fd, buf, sizeof(buf), 5000);

	ck_assert_int_gt(n, 12);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_RESULT);
	ck_assert_uint_eq(wire_get32(buf + 4), req_id);
	ck_assert_int_eq((int32_t)wire_get32(buf + 8), status);
	ck_assert_msg(memmem(buf + 12, (size_t)n - 12, text, strlen(text)),
	    "RESULT does not say \"%s\"", text);
	ck_assert_msg(raw_closed(fd, 5000), "not disconnected after RESULT");
	(void)close(fd);
}

/*
 * A malformed frame gets RESULT -EBADMSG naming what was wrong, a SEND
 * of a message over FERRY_APP_MSG_MAX RESULT -EMSGSIZE, and then the
 * connection closes; the daemon, at its default log level, names the
 * client's pid. Forty bad clients in a row make a handful of lines and
 * say how many were held back.
 */
START_TEST(test_client_told_why)
{
	enum { FLOOD = 40 };
	uint8_t f[FERRY_C_SEND_FIXED + 4];
	char pid_text[32];
	uint64_t malformed0;
	unsigned lines;
	struct fix fx;
	int fd;

	fix_setup(&fx, "cli-why", NULL, 605);
	malformed0 = stat_of(&fx, "service.malformed");
	/* A STATUS request one byte too long. */
	fd = raw_open(fx.d->socket);
	ck_assert_int_ge(fd, 0);
	memset(f, 0, sizeof(f));
	wire_put_hdr(f, REQ_SIZE + 1, FERRY_C_STATUS_REQ);
	wire_put32(f + 4, 77);
	raw_write(fd, f, REQ_SIZE + 1);
	expect_cut_off(fd, 77, -EBADMSG, "malformed STATUS request");
	(void)snprintf(pid_text, sizeof(pid_text), "(pid %ld,", (long)getpid());
	ck_assert_int_eq(harness_daemon_wait_log(fx.d, pid_text, 5000), 0);
	ck_assert(harness_daemon_log_has(fx.d, "malformed STATUS request"));
	/* A SEND of one byte more than the largest message. */
	fd = raw_open(fx.d->socket);
	ck_assert_int_ge(fd, 0);
	wire_put_hdr(f, sizeof(f), FERRY_C_SEND);
	wire_put32(f + 4, 78);
	memcpy(f + 8, fx.d->id.bytes, FERRY_PEER_ID_LEN);
	wire_put16(f + 40, MESH_APP_TYPE);
	wire_put32(f + 44, FERRY_APP_MSG_MAX + 1);
	wire_put32(f + 48, 0);
	raw_write(fd, f, sizeof(f));
	expect_cut_off(fd, 78, -EMSGSIZE, "over FERRY_APP_MSG_MAX");
	/* A flood of frames with a size field of 2. */
	harness_sleep_ms(1500);
	for (unsigned i = 0; i < FLOOD; i++) {
		fd = raw_open(fx.d->socket);
		ck_assert_int_ge(fd, 0);
		wire_put_hdr(f, 2, FERRY_C_STATUS_REQ);
		raw_write(fd, f, REQ_SIZE);
		expect_cut_off(fd, 0, -EBADMSG, "size field below 4");
	}
	ck_assert_uint_eq(stat_of(&fx, "service.malformed") - malformed0,
	    2 + FLOOD);
	lines = log_count(fx.d, "size field below 4");
	ck_assert_msg(lines >= 1 && lines < FLOOD / 2,
	    "%u log lines for %u bad clients", lines, FLOOD);
	/* The next line after a pause tells of those held back. */
	harness_sleep_ms(1500);
	fd = raw_open(fx.d->socket);
	ck_assert_int_ge(fd, 0);
	wire_put_hdr(f, 2, FERRY_C_STATUS_REQ);
	raw_write(fd, f, REQ_SIZE);
	expect_cut_off(fd, 0, -EBADMSG, "size field below 4");
	ck_assert_int_eq(harness_daemon_wait_log(fx.d,
	                     "more such lines suppressed", 5000),
	    0);
	well_behaved(&fx);
	fix_done(&fx);
}
END_TEST

static Suite *
client_suite(void)
{
	Suite *s = suite_create("adversary_client");
	TCase *tc = tcase_create("client");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_client_connection_flood);
	tcase_add_test(tc, test_client_slow_reader);
	tcase_add_test(tc, test_client_requests_never_read);
	tcase_add_test(tc, test_client_trickle_reader_bounded);
	tcase_add_test(tc, test_client_pipelined_all_answered);
	tcase_add_test(tc, test_client_pipelined_late_reader);
	tcase_add_test(tc, test_client_partial_and_oversized);
	tcase_add_test(tc, test_client_huge_register_no_stall);
	tcase_add_test(tc, test_client_told_why);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(client_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
