/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * BPCC between real ferryd processes (issue 14; [dht] CONGESTION =
 * bpcc), each on its own 127.0.0.N, with small tables (K = 2: lookups
 * take more than one hop), a small control queue in the core and an
 * emulated rate limit, so that a flood congests the links. Every daemon
 * floods lookups of random keys (DHT_FIND, as many in flight as a client
 * may have) and each lookup ends well; the requests wait in neighbour
 * queues (dht.bpcc_queued) rather than fail; no daemon's memory grows past
 * a few MiB over its start; small application messages still get through
 * meanwhile. Then one daemon is stopped (SIGSTOP) and the others flood
 * again: their lookups still all end well, and no queue DHT_STATUS shows
 * (sampled every half second) stays blocked longer than BPCC_BLOCK_MAX
 * (2 s here) and a tick. Over UDP the core goes on taking requests for
 * the stopped daemon (it gives up frames that go unacknowledged), so its
 * neighbours' queues seldom block at all: the requests lost there are
 * sent again by their requesters' attempts, not rerouted by BPCC.
 */
/* ctest: TIMEOUT=300 RUN_SERIAL=1 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
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

#include "dhtcheck.h"
#include "harness.h"
#include "lib/wire.h"
#include "mesh.h"
#include "procstat.h"

#define N            8
#define STOPPED      5  /* the daemon stopped in the second flood */
#define WINDOW       48 /* FINDs in flight per connection (at most 64) */
#define CONNS        4  /* connections flooding each daemon */
#define LINK_MS      30000
#define FLOOD_MS     40000
#define BLOCK_MAX_MS 2000
#define DHT_CFG                                                                \
	"[dht]\nCONGESTION = bpcc\nBPCC_QUEUE = 8\nBPCC_BLOCK_MAX = 2 s\n"     \
	"K = 2\nPER_NETWORK = 0\nREFRESH_INTERVAL = 2 s\n"                     \
	"REQUEST_TIMEOUT = 20 s\nREQUEST_RATE = 0\n"                           \
	"[core]\nCONTROL_QUEUE_BYTES = 16 KiB\n"

static struct harness *h;
static struct harness_daemon *d[N];

/* One daemon's flood: a raw client connection with FINDs in flight. */
struct flooder {
	int fd;
	uint32_t next_id;
	int started, done, ok, want;
	int bad_status; /* of one that did not end well */
	uint8_t buf[65536 + 4];
	size_t have;
};

static void
setup(void)
{
	ck_assert_int_eq(harness_new("dht_bpcc", &h), 0);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(harness_daemon_new(h, &d[i]), 0);
		procstat_daemon_env(d[i]);
	}
	/* mesh_start makes new daemons: it is done by hand, with the
	 * environment above. */
	{
		char *uri = NULL;

		for (int i = 0; i < N; i++) {
			ck_assert_int_eq(harness_daemon_transports(d[i], "udp"),
			    0);
			ck_assert_int_eq(harness_daemon_config(d[i], "%s\n",
			                     DHT_CFG),
			    0);
			if (i > 0)
				ck_assert_int_eq(harness_daemon_config(d[i],
				                     "[core]\nBOOTSTRAP = %s\n",
				                     uri),
				    0);
			ck_assert_int_eq(harness_daemon_start_ready(d[i]), 0);
			if (i == 0)
				uri = mesh_hello(d[0]);
		}
		free(uri);
	}
	dhtcheck_wait_tables(h, d, N, 2, LINK_MS);
}

static void
teardown(void)
{
	if (d[STOPPED] != NULL && d[STOPPED]->pid > 0)
		(void)kill(d[STOPPED]->pid, SIGCONT);
	harness_free(h);
	h = NULL;
}

static int
flood_connect(struct harness_daemon *dd)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memcpy(sun.sun_path, dd->socket, strlen(dd->socket) + 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

/* Sends FINDs of random keys until WINDOW are in flight or all started. */
static void
flood_top_up(struct flooder *f)
{
	uint8_t m[FERRY_C_DHT_FIND_SIZE];

	while (f->started < f->want && f->started - f->done < WINDOW) {
		memset(m, 0, sizeof(m));
		wire_put_hdr(m, FERRY_C_DHT_FIND_SIZE, FERRY_C_DHT_FIND);
		wire_put32(m + 4, ++f->next_id);
		randombytes_buf(m + 8, FERRY_DHT_KEY_LEN);
		wire_put16(m + 40, 2);
		ck_assert_int_eq(write(f->fd, m, sizeof(m)),
		    (ssize_t)sizeof(m));
		f->started++;
	}
}

/* Reads what came, counts the RESULTs (DHT_NODEs before them are the
 * peers found). */
static void
flood_read(struct flooder *f)
{
	ssize_t n = read(f->fd, f->buf + f->have, sizeof(f->buf) - f->have);
	size_t off = 0, size;

	ck_assert_int_gt(n, 0);
	f->have += (size_t)n;
	while (f->have - off >= 4) {
		size = wire_get16(f->buf + off);
		ck_assert_uint_ge(size, 4);
		if (f->have - off < size)
			break;
		if (wire_get16(f->buf + off + 2) == FERRY_C_RESULT) {
			int32_t st = (int32_t)wire_get32(f->buf + off + 8);

			f->done++;
			if (st == 0)
				f->ok++;
			else
				f->bad_status = st;
		}
		off += size;
	}
	memmove(f->buf, f->buf + off, f->have - off);
	f->have -= off;
}

/* The longest any daemon's queue (but skip's) is blocked now, in ms. */
static uint32_t
blocked_now_ms(int skip)
{
	uint32_t worst = 0;

	for (int i = 0; i < N; i++) {
		struct ferry_dht_status *st;

		if (i == skip)
			continue;
		st = dhtcheck_status(d[i]);
		ck_assert_ptr_nonnull(st->bpcc);
		for (size_t j = 0; j < st->bpcc->n_peers; j++)
			if ((st->bpcc->peers[j].flags &
			        FERRY_DHT_BPCC_BLOCKED) &&
			    st->bpcc->peers[j].blocked_ms > worst)
				worst = st->bpcc->peers[j].blocked_ms;
		ferry_dht_status_free(st);
	}
	return worst;
}

static uint64_t
stat_sum(const char *name, int skip)
{
	uint64_t n = 0;

	for (int i = 0; i < N; i++)
		if (i != skip)
			n += mesh_stat(d[i], name);
	return n;
}

static void
report(const char *what, int skip)
{
	fprintf(stderr,
	    "%s: queued %llu, holds %llu, releases %llu, block_timeouts "
	    "%llu, failed_over %llu, overflow %llu, retries %llu, "
	    "answers_lost %llu, completed %llu, hops %llu, no_route %llu, "
	    "timeouts %llu\n",
	    what, (unsigned long long)stat_sum("dht.bpcc_queued", skip),
	    (unsigned long long)stat_sum("dht.bpcc_holds", skip),
	    (unsigned long long)stat_sum("dht.bpcc_releases", skip),
	    (unsigned long long)stat_sum("dht.bpcc_block_timeouts", skip),
	    (unsigned long long)stat_sum("dht.bpcc_failed_over", skip),
	    (unsigned long long)stat_sum("dht.bpcc_overflow", skip),
	    (unsigned long long)stat_sum("dht.retries", skip),
	    (unsigned long long)stat_sum("dht.answers_lost", skip),
	    (unsigned long long)stat_sum("dht.completed", skip),
	    (unsigned long long)stat_sum("dht.hops_total", skip),
	    (unsigned long long)stat_sum("dht.no_route", skip),
	    (unsigned long long)stat_sum("dht.timeouts", skip));
}

/*
 * Every daemon but skip (-1: none) starts `each` lookups on each of CONNS
 * connections, WINDOW at a time, until all ended or FLOOD_MS. With
 * worst_ms, the longest blocked queue is sampled every half second.
 */
static void
flood(int each, int skip, uint32_t *worst_ms)
{
	static struct flooder f[N * CONNS];
	struct pollfd pfd[N * CONNS];
	uint64_t end = harness_now_ms() + FLOOD_MS, next_sample = 0;
	bool all;

	memset(f, 0, sizeof(f));
	for (int i = 0; i < N * CONNS; i++) {
		f[i].fd = -1;
		if (i / CONNS == skip)
			continue;
		f[i].fd = flood_connect(d[i / CONNS]);
		f[i].want = each;
		flood_top_up(&f[i]);
	}
	do {
		for (int i = 0; i < N * CONNS; i++)
			pfd[i] =
			    (struct pollfd){ .fd = f[i].fd, .events = POLLIN };
		ck_assert_int_ge(poll(pfd, N * CONNS, 200), 0);
		for (int i = 0; i < N * CONNS; i++)
			if (f[i].fd >= 0 && (pfd[i].revents & POLLIN)) {
				flood_read(&f[i]);
				flood_top_up(&f[i]);
			}
		if (worst_ms != NULL && harness_now_ms() >= next_sample) {
			uint32_t w = blocked_now_ms(skip);

			if (w > *worst_ms)
				*worst_ms = w;
			next_sample = harness_now_ms() + 500;
		}
		all = true;
		for (int i = 0; i < N * CONNS; i++)
			if (f[i].fd >= 0 && f[i].done < each)
				all = false;
	} while (!all && harness_now_ms() < end);
	for (int i = 0; i < N * CONNS; i++) {
		if (f[i].fd < 0)
			continue;
		(void)close(f[i].fd);
		if (f[i].done == each && f[i].ok == each)
			continue;
		report("failed", skip);
		ck_abort_msg("d%d: %d of %d lookups ended, %d well (a bad "
		             "one: %s)",
		    i / CONNS, f[i].done, each, f[i].ok,
		    strerror(-f[i].bad_status));
	}
}

START_TEST(test_flood_and_stop)
{
	unsigned long rss0[N];
	struct ferry_client *listener;
	uint32_t worst = 0;
	uint64_t t0;

	for (int i = 0; i < N; i++)
		rss0[i] = procstat_kib(d[i]->pid, "VmRSS");
	listener = mesh_listener(d[1]);
	t0 = harness_now_ms();
	flood(150, -1, NULL);
	fprintf(stderr, "flood: %llu ms\n",
	    (unsigned long long)(harness_now_ms() - t0));
	report("flood", -1);
	ck_assert_uint_gt(stat_sum("dht.bpcc_queued", -1), 0);
	/* Memory stays bounded: a few MiB over what each had. */
	for (int i = 0; i < N; i++) {
		unsigned long rss = procstat_kib(d[i]->pid, "VmHWM");

		ck_assert_msg(rss <= rss0[i] + procstat_allow_kib(8192, 4096),
		    "d%d: VmHWM %lu KiB, %lu at the start", i, rss, rss0[i]);
	}
	/* Small traffic of the message layer gets through a flood. */
	{
		static struct flooder bg;

		memset(&bg, 0, sizeof(bg));
		bg.fd = flood_connect(d[0]);
		bg.want = 10 * WINDOW;
		flood_top_up(&bg);
		mesh_send(d[0], d[1], "small", 5);
		mesh_expect(h, listener, d[0], "small", 5, 10000);
		mesh_send(d[2], d[1], "small2", 6);
		mesh_expect(h, listener, d[2], "small2", 6, 10000);
		(void)close(bg.fd);
	}
	ferry_client_close(listener);
	/* One daemon stops reading for good: the others still end their
	 * lookups, and no queue of theirs is blocked past BPCC_BLOCK_MAX. */
	ck_assert_int_eq(kill(d[STOPPED]->pid, SIGSTOP), 0);
	t0 = harness_now_ms();
	flood(100, STOPPED, &worst);
	fprintf(stderr, "flood with d%d stopped: %llu ms, worst block %u ms\n",
	    STOPPED, (unsigned long long)(harness_now_ms() - t0), worst);
	report("stopped", STOPPED);
	ck_assert_msg(worst <= BLOCK_MAX_MS + 500,
	    "a queue was blocked for %u ms", worst);
	ck_assert_int_eq(kill(d[STOPPED]->pid, SIGCONT), 0);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_bpcc");
	TCase *tc = tcase_create("bpcc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_flood_and_stop);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(test_suite());
	int failed;

	if (sodium_init() < 0)
		return 1;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
