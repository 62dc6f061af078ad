/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * CSCC between real ferryd processes (issue 14): six daemons on their
 * own 127.0.0.N, each sending at most 256 KiB/s with 5 ms of delay
 * ([testing]) and a send queue of requests of 16 KiB, run [dht]
 * CONGESTION = cscc with at most 16 credits and 32 requests waiting.
 * Every daemon is flooded with lookups, 64 at a time on each of two
 * client connections, far more than its credits and queue take: the
 * ones over the queue are refused at once with EAGAIN (and asked again
 * a little later, as a client would), the queue never holds more than
 * its bound, and every lookup completes; meanwhile a message of the
 * message layer (ferry send) and a ping get through, and no daemon's
 * memory grows past a bound. The daemons' CSCC state shows it worked:
 * acknowledgements taken, credits within their bound.
 */
/* ctest: TIMEOUT=300 RUN_SERIAL=ON */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include <ferry/client.h>
#include <ferry/proto.h>

#include "lib/wire.h"
#include "dhtcheck.h"
#include "harness.h"
#include "mesh.h"
#include "procstat.h"

#define N     6
#define CONNS 2 /* client connections to each daemon */
#define PIPE                                                                   \
	64           /* requests in flight on one (the service's
			  * bound) */
#define LOOKUPS  240 /* per daemon */
#define CC_QUEUE 32
#define CREDITS  16
#define RETRY_MS 50    /* a refused lookup is asked again after */
#define FLOOD_MS 45000 /* all must be done by then */
#define LINK_MS  30000
#define RSS_KIB  (64u * 1024) /* no daemon's peak past this */

#define CC_CFG                                                                 \
	"[core]\nCONTROL_QUEUE_BYTES = 16 KiB\n"                               \
	"[testing]\nENABLE = yes\nDELAY = 5 ms\nRATE = 256 KiB\n"              \
	"[dht]\nCONGESTION = cscc\nCC_QUEUE = 32\nCSCC_MAX_CREDITS = 16\n"     \
	"REFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 10 s\nPER_NETWORK = 0\n"

static struct harness *h;
static struct harness_daemon *d[N];

/* One pipelined client connection: DHT_FINDs written back to back, their
 * DHT_NODEs and RESULTs read as they come. */
struct conn {
	int fd;
	int daemon;
	uint8_t buf[65536 + 4]; /* frames read, not yet taken */
	size_t have;
	unsigned in_flight;
	uint32_t next_id;
};

/* Per daemon: lookups to ask, done, and their fates. */
struct tally {
	unsigned to_ask;  /* not asked yet, or refused and to ask again */
	unsigned done;    /* RESULT 0 */
	unsigned refused; /* RESULT -EAGAIN: over CC_QUEUE */
	unsigned failed;  /* any other RESULT (asked again too) */
	int last_error;
	uint64_t retry_at; /* refused ones wait until then */
};

static struct conn conns[N * CONNS];
static struct tally tally[N];

static void
setup(void)
{
	ck_assert_int_eq(harness_new("dht-cc", &h), 0);
	for (int i = 0; i < N; i++)
		d[i] = NULL;
	mesh_start(h, d, N, "udp", CC_CFG);
	dhtcheck_wait_tables(h, d, N, N - 1, LINK_MS);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

static int
conn_open(struct harness_daemon *dd)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_lt(strlen(dd->socket), sizeof(sun.sun_path));
	memcpy(sun.sun_path, dd->socket, strlen(dd->socket) + 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

/* DHT_FIND: 4 req_id  8 key[32]  40 want  42 reserved. */
static void
conn_ask(struct conn *c)
{
	uint8_t f[FERRY_C_DHT_FIND_SIZE];

	wire_put_hdr(f, sizeof(f), FERRY_C_DHT_FIND);
	wire_put32(f + 4, ++c->next_id);
	randombytes_buf(f + 8, FERRY_DHT_KEY_LEN);
	wire_put16(f + 40, 4);
	wire_put16(f + 42, 0);
	ck_assert_int_eq(write(c->fd, f, sizeof(f)), (ssize_t)sizeof(f));
	c->in_flight++;
}

/* A RESULT for one of c's lookups. */
static void
conn_result(struct conn *c, int status)
{
	struct tally *t = &tally[c->daemon];

	ck_assert_uint_gt(c->in_flight, 0);
	c->in_flight--;
	if (status == 0) {
		t->done++;
		return;
	}
	t->to_ask++;
	t->retry_at = harness_now_ms() + RETRY_MS;
	if (status == -EAGAIN) {
		t->refused++;
		return;
	}
	t->failed++;
	t->last_error = status;
}

/* Takes the whole frames c has read. */
static void
conn_take(struct conn *c)
{
	size_t off = 0, size;

	while (c->have - off >= 4) {
		size = wire_get16(c->buf + off);
		ck_assert_uint_ge(size, 8);
		if (c->have - off < size)
			break;
		if (wire_get16(c->buf + off + 2) == FERRY_C_RESULT) {
			ck_assert_uint_ge(size, 12);
			conn_result(c, (int32_t)wire_get32(c->buf + off + 8));
		} else {
			ck_assert_uint_eq(wire_get16(c->buf + off + 2),
			    FERRY_C_DHT_NODE);
		}
		off += size;
	}
	memmove(c->buf, c->buf + off, c->have - off);
	c->have -= off;
}

/* One round: every connection asks what it may, then what came within
 * wait_ms is read. */
static void
flood_round(int wait_ms)
{
	struct pollfd pfd[N * CONNS];
	uint64_t now = harness_now_ms();
	ssize_t n;

	for (int i = 0; i < N * CONNS; i++) {
		struct conn *c = &conns[i];
		struct tally *t = &tally[c->daemon];

		while (c->in_flight < PIPE && t->to_ask > 0 &&
		    now >= t->retry_at) {
			t->to_ask--;
			conn_ask(c);
		}
		pfd[i] = (struct pollfd){ c->fd, POLLIN, 0 };
	}
	if (poll(pfd, N * CONNS, wait_ms) <= 0)
		return;
	for (int i = 0; i < N * CONNS; i++) {
		struct conn *c = &conns[i];

		if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(c->fd, c->buf + c->have, sizeof(c->buf) - c->have);
		ck_assert_msg(n > 0, "d%d closed a client connection",
		    c->daemon);
		c->have += (size_t)n;
		conn_take(c);
	}
}

static bool
flood_done(void)
{
	for (int i = 0; i < N; i++)
		if (tally[i].done < LOOKUPS)
			return false;
	return true;
}

/* The waiting queue's gauge of every daemon, at most CC_QUEUE; the
 * largest seen so far is kept. */
static void
check_waiting(uint64_t *max_waiting)
{
	for (int i = 0; i < N; i++) {
		struct ferry_dht_status *st = dhtcheck_status(d[i]);

		ck_assert_ptr_nonnull(st->cc);
		ck_assert_uint_eq(st->cc->scheme, FERRY_DHT_CC_CSCC);
		ck_assert_uint_le(st->cc->waiting, CC_QUEUE);
		ck_assert(st->cc->credits <= CREDITS);
		ck_assert_uint_le(st->cc->in_flight, CREDITS);
		if (st->cc->waiting > *max_waiting)
			*max_waiting = st->cc->waiting;
		ferry_dht_status_free(st);
	}
}

/* A message of the message layer and a ping, from d0 to d1, in the
 * middle of the flood. */
static void
check_small_traffic(void)
{
	struct ferry_client *lis = mesh_listener(d[1]), *c;
	struct ferry_ping_result pr;

	mesh_send(d[0], d[1], "through the flood", 17);
	mesh_expect(h, lis, d[0], "through the flood", 17, 5000);
	ferry_client_close(lis);
	c = dhtcheck_client(d[0]);
	ck_assert_int_eq(ferry_ping(c, &d[1]->id, 3, 64, 5000, &pr), 0);
	ck_assert_uint_eq(pr.count, 3);
	ferry_client_close(c);
}

START_TEST(test_flood_completes)
{
	uint64_t end, next_check, max_waiting = 0, acks = 0, refused = 0;
	bool small_done = false;
	unsigned long rss;

	memset(tally, 0, sizeof(tally));
	for (int i = 0; i < N; i++)
		tally[i].to_ask = LOOKUPS;
	for (int i = 0; i < N * CONNS; i++) {
		memset(&conns[i], 0, sizeof(conns[i]));
		conns[i].daemon = i / CONNS;
		conns[i].fd = conn_open(d[i / CONNS]);
	}
	end = harness_now_ms() + FLOOD_MS;
	next_check = harness_now_ms() + 200;
	while (!flood_done()) {
		ck_assert_msg(harness_now_ms() < end,
		    "d0 %u done, %u refused, %u failed (last %d)",
		    tally[0].done, tally[0].refused, tally[0].failed,
		    tally[0].last_error);
		flood_round(20);
		if (harness_now_ms() < next_check)
			continue;
		check_waiting(&max_waiting);
		next_check = harness_now_ms() + 200;
		if (!small_done && tally[0].done > LOOKUPS / 4) {
			check_small_traffic();
			small_done = true;
		}
	}
	for (int i = 0; i < N * CONNS; i++)
		(void)close(conns[i].fd);
	ck_assert(small_done);
	for (int i = 0; i < N; i++) {
		fprintf(stderr,
		    "d%d: %u done, %u refused, %u failed; acks %llu "
		    "losses %llu retransmits %llu drops %llu dup %llu, "
		    "peak %lu KiB\n",
		    i, tally[i].done, tally[i].refused, tally[i].failed,
		    (unsigned long long)mesh_stat(d[i], "dht.cscc_acks"),
		    (unsigned long long)mesh_stat(d[i], "dht.cscc_losses"),
		    (unsigned long long)mesh_stat(d[i], "dht.cscc_retransmits"),
		    (unsigned long long)mesh_stat(d[i], "dht.cc_drops"),
		    (unsigned long long)mesh_stat(d[i], "dht.cc_duplicates"),
		    procstat_kib(d[i]->pid, "VmHWM"));
		ck_assert_uint_eq(tally[i].done, LOOKUPS);
		/* The daemon's own lookups (a bucket's refresh) may have
		 * been refused too. */
		ck_assert_uint_ge(mesh_stat(d[i], "dht.cc_refused"),
		    tally[i].refused);
		acks += mesh_stat(d[i], "dht.cscc_acks");
		refused += tally[i].refused;
		rss = procstat_kib(d[i]->pid, "VmHWM");
		ck_assert_uint_gt(rss, 0);
		ck_assert_uint_le(rss, procstat_allow_kib(RSS_KIB, 0));
	}
	/* The bound was reached, and held. */
	ck_assert_uint_gt(refused, 0);
	ck_assert_uint_le(max_waiting, CC_QUEUE);
	/* Most lookups went out (those that ended at their own daemon,
	 * closest to the key, gave their credit back unacknowledged). */
	ck_assert_uint_ge(acks, (uint64_t)N * LOOKUPS / 2);
	check_waiting(&max_waiting);
}
END_TEST

static Suite *
dht_cc_suite(void)
{
	Suite *s = suite_create("dht_cc");
	TCase *tc = tcase_create("cscc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 150);
	tcase_add_test(tc, test_flood_completes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dht_cc_suite());
	int failed;

	if (sodium_init() < 0)
		return 1;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
