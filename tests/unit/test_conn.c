/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One connection of src/service/conn.c on a real event loop, over a real
 * socketpair whose other end the test plays: input that comes a byte at
 * a time and output larger than the socket takes, both put back together;
 * a peer that never reads (output bounded, input left in the kernel, the
 * stall counted and its output off the backlog until it reads); a peer
 * cut off for garbage (told why after what was queued before, then
 * closed, within the lingering); input the protocol can never parse;
 * the idle close; and the rate-limited log. The protocol is a toy: a
 * record is a 2-byte length and that many bytes, echoed; a record 'B'
 * asks for a large answer (its length field says 0xffff), an empty one
 * is garbage.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "lib/log.h"
#include "lib/time.h"
#include "lib/wire.h"
#include "service/conn.h"
#include "unit.h"

#define WAIT_MS 10000

/* The toy protocol's side of the connection. */
struct echo {
	struct conn conn;
	size_t records;      /* handled */
	size_t big;          /* bytes of the answer to 'B' */
	bool paused;         /* ops.paused says so */
	size_t out_peak;     /* the most output ever queued */
	unsigned drained;    /* ops.drained calls */
	uint64_t drained_us; /* monotonic time of the last */
	unsigned stops;      /* ops.stop calls */
	unsigned gone;       /* ops.gone calls */
	uint64_t gone_us;    /* monotonic time of the first */
};

static struct event_base *base;
static struct event *tick; /* bounds each round of the loop */
static struct conn_set set;
static struct echo e;
static struct conn_limits lim;
static int peer = -1;
static uint64_t n_in, n_out, n_stalled, n_overflow, n_idle;
static uint64_t backlog_seen; /* the last value on_backlog gave */
static unsigned backlog_calls;

static uint8_t
pattern(size_t i)
{
	return (uint8_t)(i * 7 + (i >> 11));
}

/* Queues a record of len bytes; the payload is copied from p, or the
 * pattern when p is NULL. */
static int
echo_put(struct echo *x, const uint8_t *p, size_t len)
{
	uint8_t *q;
	int r = conn_out_room(&x->conn, 2 + len);

	if (r < 0)
		return r;
	q = conn_out_append(&x->conn, 2 + len);
	ck_assert_ptr_nonnull(q);
	wire_put16(q, (uint16_t)(len > 0xffff ? 0xffff : len));
	for (size_t i = 0; i < len; i++)
		q[2 + i] = p != NULL ? p[i] : pattern(i);
	if (buf_size(&x->conn.out) > x->out_peak)
		x->out_peak = buf_size(&x->conn.out);
	return 0;
}

static int
echo_process(void *cls)
{
	struct echo *x = cls;
	struct buf *in = &x->conn.in;
	size_t len;
	int r;

	while (!x->paused && !conn_out_full(&x->conn) && buf_size(in) >= 2) {
		len = wire_get16(buf_head(in));
		if (len == 0) {
			/* Told why, then cut off. */
			(void)echo_put(x, (const uint8_t *)"bad", 3);
			conn_linger(&x->conn);
			return -EBADMSG;
		}
		if (buf_size(in) < 2 + len)
			break;
		/* -ENOBUFS: it waits until the output drains below out_max. */
		if (len == 1 && buf_head(in)[2] == 'B')
			r = echo_put(x, NULL, x->big);
		else
			r = echo_put(x, buf_head(in) + 2, len);
		if (r == -ENOBUFS)
			break;
		ck_assert_int_eq(r, 0);
		buf_consume(in, 2 + len);
		x->records++;
	}
	return 0;
}

static bool
echo_paused(void *cls)
{
	return ((struct echo *)cls)->paused;
}

static void
echo_drained(void *cls)
{
	struct echo *x = cls;

	x->drained++;
	x->drained_us = time_mono_us();
}

static void
echo_stop(void *cls)
{
	((struct echo *)cls)->stops++;
}

static void
echo_gone(void *cls)
{
	struct echo *x = cls;

	if (x->gone++ == 0)
		x->gone_us = time_mono_us();
	conn_done(&x->conn);
}

static const struct conn_ops echo_ops = {
	.process = echo_process,
	.paused = echo_paused,
	.drained = echo_drained,
	.stop = echo_stop,
	.gone = echo_gone,
};

static void
on_backlog(void *cls, uint64_t bytes)
{
	(void)cls;
	backlog_seen = bytes;
	backlog_calls++;
}

/* Starts the set with lim and a connection with the test at its peer. */
static void
start(void)
{
	const struct conn_counters c = {
		.bytes_in = &n_in,
		.bytes_out = &n_out,
		.stalled = &n_stalled,
		.overflow = &n_overflow,
		.idle = &n_idle,
	};
	const int type = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, type, 0, sv), 0);
	conn_set_init(&set, base, "test", &lim, &c, on_backlog, NULL);
	ck_assert_int_eq(conn_init(&e.conn, &set, sv[0], &echo_ops, &e), 0);
	peer = sv[1];
}

/* The bounds start() uses; each test starts from these. */
static const struct conn_limits lim_default = {
	.in_max = 64 * 1024,
	.out_max = 4 * 1024 * 1024,
	.stall_us = 1000 * 1000,
	.linger_us = 2000 * 1000,
	.idle_us = 0,
};

static void
on_tick(evutil_socket_t fd, short what, void *cls)
{
	(void)fd;
	(void)what;
	(void)cls;
}

static void
setup(void)
{
	const struct timeval ms = { 0, 1000 };

	lim = lim_default;
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	ck_assert_ptr_nonnull(tick);
	ck_assert_int_eq(event_add(tick, &ms), 0);
	memset(&e, 0, sizeof(e));
	e.conn.fd = -1;
	n_in = n_out = n_stalled = n_overflow = n_idle = 0;
	backlog_seen = 0;
	backlog_calls = 0;
	peer = -1;
}

static void
teardown(void)
{
	if (e.gone == 0)
		conn_done(&e.conn);
	if (peer >= 0)
		(void)close(peer);
	event_free(tick);
	event_base_free(base);
}

/* The callbacks of what is ready, or of the next thing to be, within a
 * millisecond (the tick). */
static void
loop_once(void)
{
	(void)event_base_loop(base, EVLOOP_ONCE);
}

/* Runs the loop until cond holds, and fails if it does not within
 * WAIT_MS. */
#define ASSERT_SOON(cond)                                                      \
	do {                                                                   \
		uint64_t end_ = time_mono_us() + WAIT_MS * 1000ull;            \
		while (!(cond) && time_mono_us() < end_)                       \
			loop_once();                                           \
		ck_assert_msg((cond), "never true: %s", #cond);                \
	} while (0)

static void
loop_for_ms(unsigned ms)
{
	uint64_t end = time_mono_us() + ms * 1000ull;

	while (time_mono_us() < end)
		loop_once();
}

/* Writes all of p from the peer, running the loop while the socket is
 * full. */
static void
peer_write(const void *p, size_t len)
{
	const uint8_t *b = p;
	ssize_t n;

	while (len > 0) {
		n = write(peer, b, len);
		if (n < 0) {
			ck_assert_int_eq(errno, EAGAIN);
			loop_once();
			continue;
		}
		b += n;
		len -= (size_t)n;
	}
}

static void
peer_record(const char *s)
{
	uint8_t hdr[2];

	wire_put16(hdr, (uint16_t)strlen(s));
	peer_write(hdr, 2);
	peer_write(s, strlen(s));
}

/* Reads exactly len bytes at the peer, at most max at a time, running
 * the loop between reads. */
static void
peer_read(uint8_t *buf, size_t len, size_t max)
{
	uint64_t end = time_mono_us() + WAIT_MS * 1000ull;
	size_t have = 0;
	ssize_t n;

	while (have < len) {
		n = read(peer, buf + have, len - have < max ? len - have : max);
		if (n > 0) {
			have += (size_t)n;
			continue;
		}
		ck_assert_msg(n < 0 && errno == EAGAIN,
		    "peer read %zd after %zu of %zu bytes", n, have, len);
		ck_assert_msg(time_mono_us() < end, "only %zu of %zu bytes",
		    have, len);
		loop_once();
	}
}

/* Reads a record at the peer and checks it is the len bytes of want (or
 * of the pattern when want is NULL). */
static void
peer_expect(const void *want, size_t len, size_t max)
{
	uint8_t *buf = malloc(2 + len);
	size_t i;

	ck_assert_ptr_nonnull(buf);
	peer_read(buf, 2 + len, max);
	ck_assert_uint_eq(wire_get16(buf), len > 0xffff ? 0xffff : len);
	/* One check for all the bytes: Check marks each assertion. */
	for (i = 0; i < len; i++)
		if (buf[2 + i] !=
		    (want != NULL ? ((const uint8_t *)want)[i] : pattern(i)))
			break;
	ck_assert_msg(i == len, "byte %zu of %zu differs", i, len);
	free(buf);
}

/* True once the peer finds the connection closed, after any bytes left
 * over: end of file, or ECONNRESET where the connection was closed with
 * input it had not read (as AF_UNIX says it). */
static bool
peer_sees_close(void)
{
	uint8_t b[4096];
	ssize_t n;

	while ((n = read(peer, b, sizeof(b))) > 0)
		;
	return n == 0 || errno == ECONNRESET;
}

START_TEST(test_input_a_byte_at_a_time)
{
	static const uint8_t rec[] = { 0, 11, 'h', 'e', 'l', 'l', 'o', ' ', 'w',
		'o', 'r', 'l', 'd' };

	start();
	for (size_t i = 0; i < sizeof(rec); i++) {
		ck_assert_uint_eq(e.records, 0);
		peer_write(rec + i, 1);
		ASSERT_SOON(n_in == i + 1);
	}
	ck_assert_uint_eq(e.records, 1);
	peer_expect("hello world", 11, 3);
	/* Two records and a half in one write, the rest later. */
	peer_write("\0\1a\0\2bc\0\3d", 10);
	ASSERT_SOON(e.records == 3);
	peer_expect("a", 1, 1);
	peer_expect("bc", 2, 1);
	loop_for_ms(20);
	ck_assert_uint_eq(e.records, 3);
	peer_write("ef", 2);
	peer_expect("def", 3, 64);
	ck_assert_uint_eq(n_in, sizeof(rec) + 12);
	ck_assert_uint_eq(n_out, 13 + 3 + 4 + 5);
	ck_assert_uint_eq(backlog_seen, 0);
	ck_assert_uint_gt(e.drained, 0);
}
END_TEST

/* 3 MiB of answer through a socket that takes a fraction of it, read in
 * pieces: every byte in order, the backlog back at 0. */
START_TEST(test_output_in_pieces)
{
	enum { BIG = 3 * 1024 * 1024 };

	start();
	e.big = BIG;
	peer_record("B");
	ASSERT_SOON(e.records == 1);
	ck_assert(e.conn.writing); /* the socket took only part */
	ck_assert_uint_eq(backlog_seen, buf_size(&e.conn.out));
	peer_expect(NULL, BIG, 7919);
	ASSERT_SOON(backlog_seen == 0);
	ck_assert_uint_eq(n_out, 2 + BIG);
	ck_assert_uint_eq(buf_size(&e.conn.out), 0);
	ck_assert(!e.conn.writing);
	ck_assert_uint_eq(n_stalled, 0);
}
END_TEST

/*
 * A peer that asks and never reads: the connection stops reading once
 * more than out_max waits, so its output stays under out_max plus one
 * answer and its requests wait in the kernel; after stall_us its output
 * leaves the backlog and the stall is counted, once. When it reads, its
 * output counts again and every request is answered.
 */
START_TEST(test_peer_that_never_reads)
{
	enum { N = 400, ANSWER = 16 * 1024 };
	uint64_t full_us, out_at_stall;
	bool counted_again = false;

	lim.in_max = 4096;
	lim.out_max = 64 * 1024;
	lim.stall_us = 300 * 1000;
	start();
	e.big = ANSWER;
	for (int i = 0; i < N; i++)
		peer_record("B");
	ASSERT_SOON(!e.conn.reading);
	full_us = time_mono_us();
	ck_assert_uint_lt(e.records, N);
	ck_assert(conn_out_full(&e.conn));
	ck_assert_uint_le(e.out_peak, lim.out_max + 2 + ANSWER);
	ck_assert_uint_lt(buf_size(&e.conn.in), 2 * lim.in_max);
	ck_assert_uint_lt(n_in, (uint64_t)N * 3);
	ck_assert_uint_eq(n_stalled, 0);
	ck_assert_uint_eq(backlog_seen, buf_size(&e.conn.out));
	ASSERT_SOON(n_stalled == 1);
	ck_assert_uint_ge(time_mono_us() - full_us, lim.stall_us * 8 / 10);
	ck_assert(e.conn.stalled);
	ck_assert_uint_eq(backlog_seen, 0);
	/* Stuck, not closed: it stays, counted once. */
	loop_for_ms(700);
	ck_assert_uint_eq(n_stalled, 1);
	ck_assert_uint_eq(e.gone, 0);
	ck_assert_uint_le(e.out_peak, lim.out_max + 2 + ANSWER);
	out_at_stall = n_out;
	for (int i = 0; i < N; i++) {
		peer_expect(NULL, ANSWER, 65536);
		if (!counted_again && n_out > out_at_stall) {
			/* It took some: its output counts again. */
			ck_assert(!e.conn.stalled);
			ck_assert_uint_eq(backlog_seen, buf_size(&e.conn.out));
			counted_again = true;
		}
	}
	ck_assert(counted_again);
	ck_assert_uint_eq(e.records, N);
	ASSERT_SOON(backlog_seen == 0 && buf_size(&e.conn.out) == 0);
	ck_assert_uint_eq(n_stalled, 1);
	ck_assert_uint_le(e.out_peak, lim.out_max + 2 + ANSWER);
}
END_TEST

/* Queueing follows CLIENT_BUFFER's rule: whole while less than out_max
 * waits, however large; then -ENOBUFS. */
START_TEST(test_out_room)
{
	lim.out_max = 1000;
	start();
	ck_assert_int_eq(conn_out_room(&e.conn, 999), 0);
	ck_assert_ptr_nonnull(conn_out_append(&e.conn, 999));
	ck_assert(!conn_out_full(&e.conn));
	ck_assert_int_eq(conn_out_room(&e.conn, 100000), 0);
	ck_assert_ptr_nonnull(conn_out_append(&e.conn, 100000));
	ck_assert(conn_out_full(&e.conn));
	ck_assert_int_eq(conn_out_room(&e.conn, 1), -ENOBUFS);
	ck_assert_uint_eq(backlog_seen, 100999);
	conn_done(&e.conn);
	e.gone = 1; /* done: teardown must not free it again */
	ck_assert_uint_eq(backlog_seen, 0);
	ck_assert_int_eq(e.conn.fd, -1);
	conn_done(&e.conn); /* twice is harmless */
}
END_TEST

/* Garbage after a large answer: the peer gets that answer, then why it is
 * cut off, then end of file; nothing after the garbage is handled. */
START_TEST(test_garbage_told_then_closed)
{
	enum { BIG = 1024 * 1024 };

	start();
	e.big = BIG;
	peer_record("B");
	peer_write("\0\0\0\2hi", 6);
	ASSERT_SOON(e.stops == 1);
	ck_assert_uint_eq(e.records, 1);
	ck_assert_uint_eq(e.gone, 0);
	ck_assert(!e.conn.reading);
	peer_expect(NULL, BIG, 65536);
	peer_expect("bad", 3, 65536);
	ASSERT_SOON(e.gone == 1);
	ck_assert(peer_sees_close());
	ck_assert_uint_eq(e.records, 1);
	ck_assert_uint_eq(e.stops, 1);
	ck_assert_uint_eq(backlog_seen, 0);
}
END_TEST

/* Cut off and never reading: closed when the lingering ends, not at the
 * stall (shorter) and not later. */
START_TEST(test_linger_bounded)
{
	enum { BIG = 1024 * 1024 };
	uint64_t t0, took;

	lim.stall_us = 50 * 1000;
	lim.linger_us = 400 * 1000;
	start();
	e.big = BIG;
	peer_record("B");
	ASSERT_SOON(e.records == 1);
	t0 = time_mono_us();
	peer_write("\0\0", 2);
	ASSERT_SOON(e.gone == 1);
	took = time_mono_us() - t0;
	ck_assert_msg(took >= lim.linger_us * 9 / 10,
	    "closed after %llu ms of a %llu ms lingering",
	    (unsigned long long)took / 1000,
	    (unsigned long long)lim.linger_us / 1000);
	ck_assert_msg(took < 5 * lim.linger_us, "closed after %llu ms",
	    (unsigned long long)took / 1000);
	ck_assert_uint_eq(e.stops, 1);
	ck_assert_uint_eq(backlog_seen, 0);
}
END_TEST

/* A record the input cannot hold: counted, logged, closed. */
START_TEST(test_input_overflow_closed)
{
	static uint8_t rec[8192];
	struct unit_log log;

	unit_log_capture(&log, FERRY_LOG_NOTICE);
	lim.in_max = 4096;
	lim.out_max = 64 * 1024;
	start();
	wire_put16(rec, 60000);
	peer_write(rec, sizeof(rec));
	ASSERT_SOON(e.gone == 1);
	unit_log_release();
	ck_assert_uint_eq(n_overflow, 1);
	ck_assert_uint_eq(e.records, 0);
	ck_assert(peer_sees_close());
	ck_assert(unit_log_has(&log, "without a whole request"));
}
END_TEST

/* While the protocol pauses, nothing is read, however much comes; then
 * everything is handled. */
START_TEST(test_paused_reads_nothing)
{
	start();
	e.paused = true;
	ck_assert_int_eq(conn_work(&e.conn), 0);
	ck_assert(!e.conn.reading);
	for (int i = 0; i < 100; i++)
		peer_record("xyz");
	loop_for_ms(50);
	ck_assert_uint_eq(n_in, 0);
	ck_assert_uint_eq(n_overflow, 0);
	e.paused = false;
	ck_assert_int_eq(conn_work(&e.conn), 0);
	for (int i = 0; i < 100; i++)
		peer_expect("xyz", 3, 4096);
	ck_assert_uint_eq(e.records, 100);
}
END_TEST

/* idle_us: closed when nothing comes while input is wanted, but not
 * while its own answers wait for the peer. */
START_TEST(test_idle_closed)
{
	enum { BIG = 1024 * 1024 };

	lim.idle_us = 200 * 1000;
	start();
	e.big = BIG;
	peer_record("B");
	ASSERT_SOON(e.records == 1);
	loop_for_ms(500);
	ck_assert_uint_gt(buf_size(&e.conn.out), 0);
	ck_assert_uint_eq(e.gone, 0);
	peer_expect(NULL, BIG, 65536);
	ASSERT_SOON(e.gone == 1);
	/* Its idle time began when the socket took the last byte. */
	ck_assert_uint_ge(e.gone_us - e.drained_us, lim.idle_us * 9 / 10);
	ck_assert_uint_eq(n_idle, 1);
	ck_assert(peer_sees_close());
}
END_TEST

/* The peer leaves: gone once, the socket closed. */
START_TEST(test_peer_closes)
{
	start();
	peer_record("x");
	peer_expect("x", 1, 16);
	ck_assert_int_eq(close(peer), 0);
	peer = -1;
	ASSERT_SOON(e.gone == 1);
	ck_assert_int_eq(e.conn.fd, -1);
	loop_for_ms(20);
	ck_assert_uint_eq(e.gone, 1);
	ck_assert_uint_eq(e.stops, 0);
}
END_TEST

START_TEST(test_set_log_rate_limited)
{
	struct unit_log log;

	start();
	unit_log_capture(&log, FERRY_LOG_NOTICE);
	for (int i = 0; i < 8; i++)
		conn_set_log(&set, "line %d", i);
	ck_assert_uint_eq(log.n, 5);
	ck_assert_uint_eq(set.log.held, 3);
	/* A second later the bucket holds one more line. */
	set.log.rl.last_us -= 1000 * 1000;
	conn_set_log(&set, "line %d", 8);
	unit_log_release();
	ck_assert_uint_eq(log.n, 6);
	ck_assert(unit_log_has(&log, "line 8 (3 more such lines suppressed)"));
	ck_assert_uint_eq(set.log.held, 0);
}
END_TEST

static Suite *
conn_suite(void)
{
	Suite *s = suite_create("conn");
	TCase *tc = tcase_create("conn");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_input_a_byte_at_a_time);
	tcase_add_test(tc, test_output_in_pieces);
	tcase_add_test(tc, test_peer_that_never_reads);
	tcase_add_test(tc, test_out_room);
	tcase_add_test(tc, test_garbage_told_then_closed);
	tcase_add_test(tc, test_linger_bounded);
	tcase_add_test(tc, test_input_overflow_closed);
	tcase_add_test(tc, test_paused_reads_nothing);
	tcase_add_test(tc, test_idle_closed);
	tcase_add_test(tc, test_peer_closes);
	tcase_add_test(tc, test_set_log_rate_limited);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(conn_suite());
}
