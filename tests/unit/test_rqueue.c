/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary's receipt queue (src/intermediary/rqueue*.c): push,
 * take and acknowledge by cursor, answers lost and taken again, long
 * polls woken by a push or timing out, cancel, restart, expiry, the
 * bound per client, and files that are not a queue. Real SQLite files in
 * a scratch directory, a real event_base, the real worker thread.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>
#include <sqlite3.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "lib/time.h"
#include "intermediary/rqueue.h"
#include "intermediary/rqueue_int.h"
#include "unit.h"

#define T_NOW     1000000000ull /* the fake clock's start, seconds */
#define T_KEEP    3600          /* keep_s of these tests */
#define T_MAX     64            /* max_entries of these tests */
#define SKIP_EXIT 77            /* a child could not set up its mount */

static char dir[256];
static char path[512];
static struct event_base *base;
static uint64_t fake_now;
static struct unit_log logbuf;
static const uint8_t client_a[RQUEUE_CLIENT_LEN] = { 0xa1 };
static const uint8_t client_b[RQUEUE_CLIENT_LEN] = { 0xb2 };

/* A take's answer, copied by t_on_got. */
struct t_got {
	int calls;
	int status;
	size_t n;
	bool more;
	uint64_t at_us; /* monotonic time of the answer */
	struct rqueue_entry e[16];
};

/* A push's result. */
struct t_done {
	int calls;
	int status;
};

static uint64_t
fake_clock(void *cls)
{
	(void)cls;
	return fake_now;
}

static void
test_setup(void)
{
	unit_tmpdir(dir, sizeof(dir));
	ck_assert_int_eq(fs_path_join(path, sizeof(path), dir, RQUEUE_DB_FILE),
	    0);
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	fake_now = T_NOW;
	unit_log_capture(&logbuf, FERRY_LOG_INFO);
}

static void
test_teardown(void)
{
	unit_log_release();
	event_base_free(base);
	unit_rmtree(dir);
}

static struct rqueue *
t_open_max(unsigned max)
{
	struct rqueue_cfg cfg = { .max_entries = max, .keep_s = T_KEEP };
	struct rqueue *q = NULL;

	ck_assert_int_eq(rqueue_open(base, path, &cfg, &q), 0);
	ck_assert_ptr_nonnull(q);
	rqueue_set_clock(q, fake_clock, NULL);
	return q;
}

static struct rqueue *
t_open(void)
{
	return t_open_max(T_MAX);
}

static uint64_t
t_ctr(struct rqueue *q, const char *name)
{
	char full[96];

	(void)snprintf(full, sizeof(full), "intermediary.%s", name);
	return stats_get(rqueue_stats(q), full);
}

static void
t_run_until(const int *calls, int n)
{
	while (*calls < n)
		ck_assert_int_ge(event_base_loop(base, EVLOOP_ONCE), 0);
}

/* Runs the loop for ms milliseconds. */
static void
t_run_for(unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
		.tv_usec = (ms % 1000) * 1000 };

	ck_assert_int_eq(event_base_loopexit(base, &tv), 0);
	ck_assert_int_ge(event_base_dispatch(base), 0);
}

/* Receipt i of a put: every field made from seed. */
static void
t_receipt(struct rqueue_entry *e, uint8_t seed)
{
	memset(e, 0, sizeof(*e));
	e->type = RQUEUE_RECEIPT;
	memset(e->key.b, seed, sizeof(e->key.b));
	memset(e->put_hash, seed ^ 0x55, sizeof(e->put_hash));
	memcpy(e->receipt.put_hash, e->put_hash, sizeof(e->put_hash));
	memset(e->receipt.storer_pk, seed ^ 0x66, sizeof(e->receipt.storer_pk));
	memset(e->receipt.sig, seed ^ 0x77, sizeof(e->receipt.sig));
	e->receipt.expiry = T_NOW + 86400 + seed;
}

static void
t_done_entry(struct rqueue_entry *e, uint8_t seed, int status, unsigned n)
{
	memset(e, 0, sizeof(*e));
	e->type = RQUEUE_DONE;
	memset(e->key.b, seed, sizeof(e->key.b));
	memset(e->put_hash, seed ^ 0x55, sizeof(e->put_hash));
	e->status = status;
	e->receipts = n;
}

static void
t_on_done(void *cls, int status)
{
	struct t_done *d = cls;

	d->calls++;
	d->status = status;
}

static void
t_on_got(void *cls, int status, const struct rqueue_entry *e, size_t n,
    bool more)
{
	struct t_got *g = cls;

	g->calls++;
	g->status = status;
	g->n = n;
	g->more = more;
	g->at_us = time_mono_us();
	ck_assert(status == 0 || n == 0);
	ck_assert(n == 0 || e != NULL);
	ck_assert_uint_le(n, sizeof(g->e) / sizeof(g->e[0]));
	if (n > 0)
		memcpy(g->e, e, n * sizeof(*e));
}

/* Pushes n entries and waits until they are durable; returns the
 * status. */
static int
t_push(struct rqueue *q, const uint8_t *client, const struct rqueue_entry *e,
    size_t n)
{
	struct t_done d = { 0 };

	ck_assert_int_eq(rqueue_push(q, client, e, n, t_on_done, &d), 0);
	ck_assert_int_eq(d.calls, 0); /* never from inside the call */
	t_run_until(&d.calls, 1);
	ck_assert_int_eq(d.calls, 1);
	return d.status;
}

/* Pushes n receipts made from seeds first, first + 1, ... */
static void
t_push_receipts(struct rqueue *q, const uint8_t *client, uint8_t first,
    size_t n)
{
	struct rqueue_entry e[16];

	ck_assert_uint_le(n, 16);
	for (size_t i = 0; i < n; i++)
		t_receipt(&e[i], (uint8_t)(first + i));
	ck_assert_int_eq(t_push(q, client, e, n), 0);
}

/* Takes without waiting and returns the answer. */
static void
t_take(struct rqueue *q, const uint8_t *client, uint64_t after, unsigned max,
    struct t_got *g)
{
	struct rqueue_take *t = NULL;

	memset(g, 0, sizeof(*g));
	ck_assert_int_eq(rqueue_take(q, client, after, max, 0, t_on_got, g, &t),
	    0);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(g->calls, 0);
	t_run_until(&g->calls, 1);
	ck_assert_int_eq(g->calls, 1);
}

/* t_take(), which must give n entries. */
static void
t_take_n(struct rqueue *q, const uint8_t *client, uint64_t after, unsigned max,
    unsigned n, struct t_got *g)
{
	t_take(q, client, after, max, g);
	ck_assert_uint_eq(g->n, n);
}

static void
t_assert_receipt(const struct rqueue_entry *got, uint8_t seed, uint64_t cursor)
{
	struct rqueue_entry want;

	t_receipt(&want, seed);
	ck_assert_uint_eq(got->cursor, cursor);
	ck_assert_int_eq(got->type, RQUEUE_RECEIPT);
	ck_assert_mem_eq(got->key.b, want.key.b, sizeof(want.key.b));
	ck_assert_mem_eq(got->put_hash, want.put_hash, sizeof(want.put_hash));
	ck_assert_mem_eq(&got->receipt.put_hash, want.put_hash,
	    sizeof(want.put_hash));
	ck_assert_mem_eq(got->receipt.storer_pk, want.receipt.storer_pk,
	    sizeof(want.receipt.storer_pk));
	ck_assert_mem_eq(got->receipt.sig, want.receipt.sig,
	    sizeof(want.receipt.sig));
	ck_assert_uint_eq(got->receipt.expiry, want.receipt.expiry);
}

START_TEST(test_push_take_ack)
{
	struct rqueue *q = t_open();
	struct rqueue_entry e[3];
	struct t_got g;

	t_receipt(&e[0], 1);
	t_receipt(&e[1], 2);
	t_done_entry(&e[2], 1, -ETIMEDOUT, 2);
	ck_assert_int_eq(t_push(q, client_a, e, 3), 0);
	ck_assert_uint_eq(t_ctr(q, "queue_pushed"), 3);
	ck_assert_uint_eq(t_ctr(q, "queue_entries"), 3);

	t_take(q, client_a, 0, 10, &g);
	ck_assert_int_eq(g.status, 0);
	ck_assert_uint_eq(g.n, 3);
	ck_assert(!g.more);
	t_assert_receipt(&g.e[0], 1, 1);
	t_assert_receipt(&g.e[1], 2, 2);
	ck_assert_uint_eq(g.e[2].cursor, 3);
	ck_assert_int_eq(g.e[2].type, RQUEUE_DONE);
	ck_assert_int_eq(g.e[2].status, -ETIMEDOUT);
	ck_assert_uint_eq(g.e[2].receipts, 2);
	ck_assert_mem_eq(g.e[2].put_hash, e[2].put_hash, DHTMSG_HASH_LEN);
	ck_assert_uint_eq(g.e[0].queued, T_NOW);

	/* The answer was lost: the same cursor brings the same entries. */
	t_take_n(q, client_a, 0, 10, 3, &g);
	ck_assert_uint_eq(g.e[0].cursor, 1);
	/* Part acknowledged: only what follows comes again. */
	t_take_n(q, client_a, 2, 10, 1, &g);
	ck_assert_uint_eq(g.e[0].cursor, 3);
	ck_assert_uint_eq(t_ctr(q, "queue_acked"), 2);
	/* All acknowledged: never sent again. */
	t_take(q, client_a, 3, 10, &g);
	ck_assert_int_eq(g.status, 0);
	ck_assert_uint_eq(g.n, 0);
	t_take_n(q, client_a, 0, 10, 0, &g);
	ck_assert_uint_eq(t_ctr(q, "queue_acked"), 3);
	ck_assert_uint_eq(t_ctr(q, "queue_entries"), 0);
	ck_assert_uint_eq(t_ctr(q, "queue_delivered"), 7);

	/* Cursors go on from the last one given, per client. */
	t_push_receipts(q, client_a, 4, 2);
	t_push_receipts(q, client_b, 9, 1);
	t_take_n(q, client_a, 3, 10, 2, &g);
	t_assert_receipt(&g.e[0], 4, 4);
	t_assert_receipt(&g.e[1], 5, 5);
	t_take_n(q, client_b, 0, 10, 1, &g);
	t_assert_receipt(&g.e[0], 9, 1);
	rqueue_free(q);
}
END_TEST

START_TEST(test_take_max_and_more)
{
	struct rqueue *q = t_open();
	struct t_got g;

	t_push_receipts(q, client_a, 1, 5);
	t_take_n(q, client_a, 0, 2, 2, &g);
	ck_assert(g.more);
	ck_assert_uint_eq(g.e[1].cursor, 2);
	t_take_n(q, client_a, 2, 2, 2, &g);
	ck_assert(g.more);
	ck_assert_uint_eq(g.e[0].cursor, 3);
	t_take_n(q, client_a, 4, 2, 1, &g);
	ck_assert(!g.more);
	ck_assert_uint_eq(g.e[0].cursor, 5);
	rqueue_free(q);
}
END_TEST

/* A cursor never given is refused, and deletes nothing. */
START_TEST(test_bad_cursor)
{
	struct rqueue *q = t_open();
	struct t_got g;

	t_take(q, client_a, 1, 10, &g);
	ck_assert_int_eq(g.status, -ERANGE);
	t_push_receipts(q, client_a, 1, 2);
	t_take(q, client_a, 3, 10, &g);
	ck_assert_int_eq(g.status, -ERANGE);
	ck_assert_uint_eq(t_ctr(q, "queue_bad_cursor"), 2);
	t_take(q, client_a, 0, 10, &g);
	ck_assert_int_eq(g.status, 0);
	ck_assert_uint_eq(g.n, 2);
	rqueue_free(q);
}
END_TEST

START_TEST(test_bad_arguments)
{
	struct rqueue *q = t_open();
	struct rqueue_take *t = NULL;
	struct rqueue_entry e;
	struct t_got g = { 0 };

	t_receipt(&e, 1);
	ck_assert_int_eq(rqueue_push(q, client_a, &e, 0, NULL, NULL), -EINVAL);
	ck_assert_int_eq(rqueue_push(q, client_a, &e, RQUEUE_PUSH_MAX + 1, NULL,
	                     NULL),
	    -EINVAL);
	e.receipt.put_hash[0] ^= 1; /* a receipt for another PUT */
	ck_assert_int_eq(rqueue_push(q, client_a, &e, 1, NULL, NULL), -EINVAL);
	e.type = 7;
	ck_assert_int_eq(rqueue_push(q, client_a, &e, 1, NULL, NULL), -EINVAL);
	ck_assert_int_eq(rqueue_take(q, client_a, 0, 0, 0, t_on_got, &g, &t),
	    -EINVAL);
	ck_assert_int_eq(rqueue_take(q, client_a, 0, RQUEUE_TAKE_MAX + 1, 0,
	                     t_on_got, &g, &t),
	    -EINVAL);
	ck_assert_ptr_null(t);
	rqueue_free(q);
	ck_assert_int_eq(g.calls, 0);
}
END_TEST

/* Pushes one receipt for client_a from a timer, as the DHT would. */
struct t_later {
	struct rqueue *q;
	const uint8_t *client;
	struct t_done d;
	uint64_t at_us; /* monotonic time of the push */
};

static void
t_push_later(evutil_socket_t fd, short what, void *arg)
{
	struct t_later *l = arg;
	struct rqueue_entry e;

	(void)fd;
	(void)what;
	t_receipt(&e, 42);
	l->at_us = time_mono_us();
	ck_assert_int_eq(rqueue_push(l->q, l->client, &e, 1, t_on_done, &l->d),
	    0);
}

START_TEST(test_long_poll_woken)
{
	struct rqueue *q = t_open();
	struct t_later l = { .q = q, .client = client_a };
	struct timeval tv = { 0, 100000 };
	struct rqueue_take *t = NULL, *t2 = NULL, *tb = NULL;
	struct t_got g = { 0 }, g2 = { 0 }, gb = { 0 };
	uint64_t start = time_mono_us();

	ck_assert_int_eq(rqueue_take(q, client_a, 0, 10, 10000000, t_on_got, &g,
	                     &t),
	    0);
	/* Two takers of one client (the client and an intermediary
	 * forwarding for it) and another client's. */
	ck_assert_int_eq(rqueue_take(q, client_a, 0, 10, 10000000, t_on_got,
	                     &g2, &t2),
	    0);
	ck_assert_int_eq(rqueue_take(q, client_b, 0, 10, 10000000, t_on_got,
	                     &gb, &tb),
	    0);
	ck_assert_int_eq(event_base_once(base, -1, EV_TIMEOUT, t_push_later, &l,
	                     &tv),
	    0);
	t_run_until(&g.calls, 1);
	t_run_until(&g2.calls, 1);
	ck_assert_int_eq(l.d.calls, 1);
	ck_assert_int_eq(l.d.status, 0);
	ck_assert_int_eq(g.status, 0);
	ck_assert_uint_eq(g.n, 1);
	t_assert_receipt(&g.e[0], 42, 1);
	ck_assert_uint_eq(g2.n, 1);
	t_assert_receipt(&g2.e[0], 42, 1);
	/* Woken by the push, not by the deadline. */
	ck_assert_uint_ge(g.at_us, l.at_us);
	ck_assert_uint_lt(g.at_us - start, 5000000);
	ck_assert_int_eq(gb.calls, 0);
	ck_assert_uint_eq(t_ctr(q, "queue_waiting"), 1);
	rqueue_cancel(tb);
	ck_assert_uint_eq(t_ctr(q, "queue_waiting"), 0);
	rqueue_free(q);
	ck_assert_int_eq(gb.calls, 0);
}
END_TEST

START_TEST(test_long_poll_times_out)
{
	struct rqueue *q = t_open();
	struct rqueue_take *t = NULL;
	struct t_got g = { 0 };
	uint64_t start = time_mono_us();

	ck_assert_int_eq(rqueue_take(q, client_a, 0, 10, 300000, t_on_got, &g,
	                     &t),
	    0);
	t_run_until(&g.calls, 1);
	ck_assert_int_eq(g.status, 0);
	ck_assert_uint_eq(g.n, 0);
	ck_assert_uint_ge(g.at_us - start, 300000);
	ck_assert_uint_eq(t_ctr(q, "queue_waiting"), 0);
	/* Entries waiting already: answered at once, whatever the wait. */
	t_push_receipts(q, client_a, 1, 1);
	memset(&g, 0, sizeof(g));
	start = time_mono_us();
	ck_assert_int_eq(rqueue_take(q, client_a, 0, 10, 30000000, t_on_got, &g,
	                     &t),
	    0);
	t_run_until(&g.calls, 1);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_uint_lt(g.at_us - start, 5000000);
	rqueue_free(q);
}
END_TEST

START_TEST(test_cancel)
{
	struct rqueue *q = t_open();
	struct rqueue_take *t1 = NULL, *t2 = NULL;
	struct t_got g1 = { 0 }, g2 = { 0 }, g;

	t_push_receipts(q, client_a, 1, 2);
	/* In flight: its acknowledgement stands, its answer never comes. */
	ck_assert_int_eq(rqueue_take(q, client_a, 1, 10, 0, t_on_got, &g1, &t1),
	    0);
	rqueue_cancel(t1);
	/* Waiting: a push no longer answers it. */
	ck_assert_int_eq(rqueue_take(q, client_b, 0, 10, 10000000, t_on_got,
	                     &g2, &t2),
	    0);
	t_run_for(100);
	ck_assert_uint_eq(t_ctr(q, "queue_waiting"), 1);
	rqueue_cancel(t2);
	t_push_receipts(q, client_b, 5, 1);
	t_run_for(100);
	ck_assert_int_eq(g1.calls, 0);
	ck_assert_int_eq(g2.calls, 0);
	t_take_n(q, client_a, 0, 10, 1, &g);
	ck_assert_uint_eq(g.e[0].cursor, 2);
	rqueue_free(q);
	ck_assert_int_eq(g1.calls, 0);
	ck_assert_int_eq(g2.calls, 0);
}
END_TEST

/* Entries and cursor numbering survive a restart, and pushes accepted
 * before rqueue_free() are written, not dropped. */
START_TEST(test_restart)
{
	struct rqueue *q = t_open();
	struct rqueue_take *t = NULL;
	struct rqueue_entry e;
	struct t_done d = { 0 };
	struct t_got g, gw = { 0 };

	t_push_receipts(q, client_a, 1, 3);
	t_take_n(q, client_a, 1, 10, 2, &g);
	t_receipt(&e, 4);
	ck_assert_int_eq(rqueue_push(q, client_a, &e, 1, t_on_done, &d), 0);
	ck_assert_int_eq(rqueue_take(q, client_b, 0, 10, 10000000, t_on_got,
	                     &gw, &t),
	    0);
	rqueue_free(q);
	ck_assert_int_eq(d.calls, 1);
	ck_assert_int_eq(d.status, 0);
	ck_assert_int_eq(gw.calls, 1);
	ck_assert_int_eq(gw.status, -ECANCELED);

	q = t_open();
	ck_assert_uint_eq(t_ctr(q, "queue_entries"), 3);
	t_take_n(q, client_a, 1, 10, 3, &g);
	t_assert_receipt(&g.e[0], 2, 2);
	t_assert_receipt(&g.e[1], 3, 3);
	t_assert_receipt(&g.e[2], 4, 4);
	t_take_n(q, client_a, 4, 10, 0, &g);
	rqueue_free(q);

	q = t_open();
	t_push_receipts(q, client_a, 5, 1);
	t_take_n(q, client_a, 4, 10, 1, &g);
	t_assert_receipt(&g.e[0], 5, 5);
	rqueue_free(q);
}
END_TEST

/* Clients rows left in the file, read with SQLite itself. */
static int64_t
t_db_int(const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int64_t v = -1;

	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	(void)sqlite3_finalize(s);
	(void)sqlite3_close(db);
	return v;
}

static void
t_expire(struct rqueue *q)
{
	uint64_t before = t_ctr(q, "queue_commits");

	rqueue_expire_now(q);
	/* The pass writes (the floor at least): one commit. */
	while (t_ctr(q, "queue_commits") == before)
		ck_assert_int_ge(event_base_loop(base, EVLOOP_ONCE), 0);
}

START_TEST(test_expiry)
{
	struct rqueue *q = t_open();
	struct t_got g;

	t_push_receipts(q, client_a, 1, 2);
	fake_now += T_KEEP / 2;
	t_push_receipts(q, client_a, 3, 1);
	t_push_receipts(q, client_b, 7, 3);
	t_take(q, client_b, 3, 10, &g); /* client_b has none left */
	fake_now += T_KEEP / 2 + 1;
	/* Past RECEIPT_KEEP: the first two; the third is younger. */
	t_expire(q);
	ck_assert_uint_eq(t_ctr(q, "queue_expired"), 2);
	ck_assert_uint_eq(t_ctr(q, "queue_entries"), 1);
	t_take_n(q, client_a, 0, 10, 1, &g);
	t_assert_receipt(&g.e[0], 3, 3);
	/* Both idle past RECEIPT_KEEP: their rows go; the cursors they
	 * were given are kept by the floor, so a client coming back never
	 * gets one again. */
	t_take(q, client_a, 3, 10, &g);
	fake_now += T_KEEP + 1;
	t_expire(q);
	rqueue_free(q);
	ck_assert_int_eq(t_db_int("SELECT count(*) FROM clients"), 0);
	ck_assert_int_eq(t_db_int("SELECT count(*) FROM entries"), 0);
	ck_assert_int_eq(t_db_int("SELECT value FROM meta"), 3);
	q = t_open();
	t_push_receipts(q, client_a, 8, 1);
	t_push_receipts(q, client_b, 9, 1);
	t_take_n(q, client_a, 3, 10, 1, &g);
	t_assert_receipt(&g.e[0], 8, 4);
	t_take_n(q, client_b, 3, 10, 1, &g);
	t_assert_receipt(&g.e[0], 9, 4);
	rqueue_free(q);
}
END_TEST

START_TEST(test_bound_per_client)
{
	struct rqueue *q = t_open_max(3);
	struct rqueue_entry e[2];
	struct t_got g;

	t_receipt(&e[0], 1);
	t_receipt(&e[1], 2);
	ck_assert_int_eq(t_push(q, client_a, e, 2), 0);
	ck_assert_int_eq(t_push(q, client_a, e, 2), -ENOSPC);
	ck_assert_uint_eq(t_ctr(q, "queue_refused"), 1);
	ck_assert_uint_eq(t_ctr(q, "queue_failed"), 0);
	/* Another client's queue is its own. */
	ck_assert_int_eq(t_push(q, client_b, e, 2), 0);
	ck_assert_int_eq(t_push(q, client_a, e, 1), 0);
	ck_assert_int_eq(t_push(q, client_a, e, 1), -ENOSPC);
	/* All or none: the refused pushes left nothing. */
	t_take_n(q, client_a, 0, 10, 3, &g);
	ck_assert_uint_eq(g.e[2].cursor, 3);
	/* Acknowledged entries make room. */
	t_take(q, client_a, 2, 10, &g);
	ck_assert_int_eq(t_push(q, client_a, e, 2), 0);
	t_take_n(q, client_a, 2, 10, 3, &g);
	ck_assert_uint_eq(g.e[2].cursor, 5);
	ck_assert_uint_eq(t_ctr(q, "queue_refused"), 2);
	rqueue_free(q);
}
END_TEST

/* Group commit: pushes queued together share a transaction, and each
 * one's done says 0 only once committed. */
START_TEST(test_many_pushes)
{
	struct rqueue *q = t_open_max(1000);
	struct t_done d[200];
	struct rqueue_entry e;
	struct t_got g;
	int calls = 0;

	memset(d, 0, sizeof(d));
	for (int i = 0; i < 200; i++) {
		t_receipt(&e, (uint8_t)i);
		ck_assert_int_eq(rqueue_push(q, client_a, &e, 1, t_on_done,
		                     &d[i]),
		    0);
	}
	while (calls < 200) {
		ck_assert_int_ge(event_base_loop(base, EVLOOP_ONCE), 0);
		calls = 0;
		for (int i = 0; i < 200; i++)
			calls += d[i].calls;
	}
	for (int i = 0; i < 200; i++)
		ck_assert_int_eq(d[i].status, 0);
	ck_assert_uint_lt(t_ctr(q, "queue_commits"), 200);
	t_take_n(q, client_a, 195, 10, 5, &g);
	t_assert_receipt(&g.e[4], 199, 200);
	rqueue_free(q);
}
END_TEST

/* The largest file of the queue: where a write past a size limit
 * fails. */
static off_t
t_largest_file(void)
{
	char wal[600];
	struct stat a, b;

	(void)snprintf(wal, sizeof(wal), "%s-wal", path);
	ck_assert_int_eq(stat(path, &a), 0);
	if (stat(wal, &b) < 0)
		return a.st_size;
	return a.st_size > b.st_size ? a.st_size : b.st_size;
}

/* A write the system refuses (a file size limit: EFBIG, for any user)
 * fails the push and the take that acknowledges, with nothing changed,
 * counted and logged once; the queue works again when the limit goes. */
START_TEST(test_write_error_recovers)
{
	struct rqueue *q = t_open();
	struct rlimit saved, low;
	struct rqueue_entry e;
	void (*old_handler)(int);
	struct t_got g;

	t_push_receipts(q, client_a, 1, 2);
	t_receipt(&e, 3);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
	low = saved;
	low.rlim_cur = (rlim_t)t_largest_file();
	old_handler = signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &low), 0);
	ck_assert_int_eq(t_push(q, client_a, &e, 1), -EIO);
	t_take(q, client_a, 1, 10, &g);
	ck_assert_int_eq(g.status, -EIO);
	ck_assert_uint_eq(g.n, 0);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
	(void)signal(SIGXFSZ, old_handler);
	ck_assert_uint_eq(t_ctr(q, "queue_failed"), 2);
	ck_assert(unit_log_has(&logbuf, "writes fail until"));
	ck_assert_int_eq(t_push(q, client_a, &e, 1), 0);
	ck_assert(unit_log_has(&logbuf, "takes them again"));
	/* The failed acknowledgement deleted nothing; the failed push
	 * used no cursor. */
	t_take_n(q, client_a, 0, 10, 3, &g);
	t_assert_receipt(&g.e[2], 3, 3);
	rqueue_free(q);
}
END_TEST

/* Files at the path that are not this code's queue are refused, named
 * in the log, and left as they were. */
static void
t_make_sqlite(const char *sql)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}

static void
t_refused(int want, const char *why)
{
	struct rqueue_cfg cfg = { .max_entries = 10, .keep_s = T_KEEP };
	struct rqueue *q = NULL;

	ck_assert_int_eq(rqueue_open(base, path, &cfg, &q), want);
	ck_assert_ptr_null(q);
	ck_assert_msg(unit_log_has(&logbuf, why), "no \"%s\" in the log", why);
	ck_assert_msg(unit_log_has(&logbuf, path), "the path is not logged");
}

/* Pushes entries with origin cursors, as rqueue_push_from; the status. */
static int
t_push_from(struct rqueue *q, const uint8_t *client, const uint8_t *origin,
    const struct rqueue_entry *e, size_t n)
{
	struct t_done d = { 0 };

	ck_assert_int_eq(rqueue_push_from(q, client, origin, e, n, t_on_done,
	                     &d),
	    0);
	ck_assert_int_eq(d.calls, 0);
	t_run_until(&d.calls, 1);
	return d.status;
}

/* A batch forwarded by another intermediary and sent again after its
 * acknowledgement was lost is queued once: before the client took it,
 * after, and across a restart; another origin's cursors are its own. */
START_TEST(test_push_from_dedup)
{
	static const uint8_t origin_x[RQUEUE_CLIENT_LEN] = { 0x0f };
	static const uint8_t origin_y[RQUEUE_CLIENT_LEN] = { 0xf0 };
	struct rqueue *q = t_open();
	struct rqueue_entry e[4];
	struct t_got g;

	for (int i = 0; i < 4; i++) {
		t_receipt(&e[i], (uint8_t)(10 + i));
		e[i].cursor = (uint64_t)(100 + i);
	}
	ck_assert_int_eq(t_push_from(q, client_a, origin_x, e, 3), 0);
	ck_assert_int_eq(t_push_from(q, client_a, origin_x, e, 3), 0);
	ck_assert_uint_eq(t_ctr(q, "queue_pushed"), 3);
	ck_assert_uint_eq(t_ctr(q, "queue_duplicate"), 3);
	t_take_n(q, client_a, 0, 10, 3, &g);
	t_assert_receipt(&g.e[0], 10, 1); /* this queue's cursors */
	t_assert_receipt(&g.e[2], 12, 3);
	t_take(q, client_a, 3, 10, &g); /* taken and acknowledged */
	ck_assert_uint_eq(g.n, 0);
	/* Sent again with one more: only the new one is queued. */
	ck_assert_int_eq(t_push_from(q, client_a, origin_x, e, 4), 0);
	ck_assert_uint_eq(t_ctr(q, "queue_duplicate"), 6);
	rqueue_free(q);

	q = t_open();
	ck_assert_int_eq(t_push_from(q, client_a, origin_x, e, 4), 0);
	ck_assert_uint_eq(t_ctr(q, "queue_duplicate"), 4);
	ck_assert_int_eq(t_push_from(q, client_a, origin_y, e, 2), 0);
	ck_assert_int_eq(t_push_from(q, client_b, origin_x, e, 1), 0);
	t_take_n(q, client_a, 3, 10, 3, &g);
	t_assert_receipt(&g.e[0], 13, 4);
	t_assert_receipt(&g.e[1], 10, 5);
	t_assert_receipt(&g.e[2], 11, 6);
	t_take_n(q, client_b, 0, 10, 1, &g);
	/* Cursors out of order, or 0, are refused. */
	e[1].cursor = e[0].cursor;
	ck_assert_int_eq(rqueue_push_from(q, client_a, origin_x, e, 2,
	                     t_on_done, NULL),
	    -EINVAL);
	e[0].cursor = 0;
	ck_assert_int_eq(rqueue_push_from(q, client_a, origin_x, e, 1,
	                     t_on_done, NULL),
	    -EINVAL);
	rqueue_free(q);
}
END_TEST

/* A forwarded batch refused as too much leaves no mark: sent again once
 * there is room, it is queued. */
START_TEST(test_push_from_refused)
{
	static const uint8_t origin_x[RQUEUE_CLIENT_LEN] = { 0x0f };
	struct rqueue *q = t_open_max(2);
	struct rqueue_entry e[3];
	struct t_got g;

	for (int i = 0; i < 3; i++) {
		t_receipt(&e[i], (uint8_t)(20 + i));
		e[i].cursor = (uint64_t)(7 + i);
	}
	t_push_receipts(q, client_a, 1, 1);
	ck_assert_int_eq(t_push_from(q, client_a, origin_x, e, 3), -ENOSPC);
	ck_assert_int_eq(t_push_from(q, client_a, origin_x, e, 1), 0);
	t_take_n(q, client_a, 2, 10, 0, &g);
	ck_assert_int_eq(t_push_from(q, client_a, origin_x, e, 3), 0);
	t_take_n(q, client_a, 2, 10, 2, &g);
	t_assert_receipt(&g.e[0], 21, 3);
	rqueue_free(q);
}
END_TEST

/* A database of schema version 1 (before forwarding) is upgraded in
 * place, its entries kept. */
START_TEST(test_upgrade_v1)
{
	struct rqueue *q = t_open();
	struct t_got g;

	t_push_receipts(q, client_a, 1, 2);
	rqueue_free(q);
	t_make_sqlite("DROP TABLE origins; PRAGMA user_version=1;");
	q = t_open();
	ck_assert(unit_log_has(&logbuf, "upgraded to schema version 2"));
	t_take_n(q, client_a, 0, 10, 2, &g);
	rqueue_free(q);
	ck_assert_int_eq(t_db_int("PRAGMA user_version"), 2);
	ck_assert_int_eq(t_db_int("SELECT count(*) FROM origins"), 0);
}
END_TEST

START_TEST(test_garbage_file)
{
	char junk[8192];
	uint64_t state = 7;
	uint8_t *after = NULL;
	size_t len;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(unit_rand(&state) >> 24);
	(void)unit_write(dir, RQUEUE_DB_FILE, junk, sizeof(junk));
	t_refused(-EUCLEAN, "not an SQLite database");
	ck_assert_int_eq(fs_read_file(path, 1 << 20, &after, &len), 0);
	ck_assert_uint_eq(len, sizeof(junk));
	ck_assert_mem_eq(after, junk, sizeof(junk));
	free(after);
}
END_TEST

START_TEST(test_other_database)
{
	t_make_sqlite("CREATE TABLE t(x); PRAGMA application_id=1;");
	t_refused(-EUCLEAN, "not a ferry receipt queue");
}
END_TEST

START_TEST(test_unknown_schema)
{
	struct rqueue *q = t_open();

	rqueue_free(q);
	t_make_sqlite("PRAGMA user_version=99;");
	t_refused(-ENOTSUP, "schema version 99");
}
END_TEST

/* A queue whose pages were overwritten past its header. */
START_TEST(test_damaged_pages)
{
	struct rqueue *q = t_open();
	uint8_t *data = NULL;
	size_t len;

	t_push_receipts(q, client_a, 1, 16);
	rqueue_free(q);
	ck_assert_int_eq(fs_read_file(path, 1 << 24, &data, &len), 0);
	ck_assert_uint_gt(len, 4096);
	memset(data + 4096, 0xee, len - 4096);
	(void)unit_write(dir, RQUEUE_DB_FILE, data, len);
	free(data);
	t_refused(-EUCLEAN, "corrupt");
}
END_TEST

/* A row that SQLite finds sound but that no push wrote (a signature cut
 * short) is skipped, counted and logged once; the client's queue goes
 * on past it. */
START_TEST(test_damaged_entry)
{
	struct rqueue *q = t_open();
	struct t_got g;

	t_push_receipts(q, client_a, 1, 3);
	rqueue_free(q);
	t_make_sqlite("UPDATE entries SET sig = x'0102' WHERE cursor = 2");
	q = t_open();
	t_take(q, client_a, 0, 10, &g);
	ck_assert_int_eq(g.status, 0);
	ck_assert_uint_eq(g.n, 2);
	t_assert_receipt(&g.e[0], 1, 1);
	t_assert_receipt(&g.e[1], 3, 3);
	ck_assert(unit_log_has(&logbuf, "damaged entries"));
	ck_assert_uint_eq(t_ctr(q, "queue_damaged"), 1);
	/* more counts only what can be answered. */
	t_take_n(q, client_a, 0, 1, 1, &g);
	ck_assert(g.more);
	t_take_n(q, client_a, 1, 1, 1, &g);
	ck_assert(!g.more);
	t_assert_receipt(&g.e[0], 3, 3);
	t_take(q, client_a, 3, 10, &g);
	ck_assert_uint_eq(t_ctr(q, "queue_acked"), 3);
	ck_assert_uint_eq(t_ctr(q, "queue_entries"), 0);
	rqueue_free(q);
}
END_TEST

START_TEST(test_path_is_a_directory)
{
	ck_assert_int_eq(mkdir(path, 0700), 0);
	t_refused(-EISDIR, "not a regular file");
}
END_TEST

/* A private mount namespace for a child, or SKIP_EXIT. */
static void
t_own_mounts(void)
{
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(SKIP_EXIT);
}

#define CHILD_CHECK(c)                                                         \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,     \
			    #c);                                               \
			_exit(1);                                              \
		}                                                              \
	} while (0)

/* A queue is refused on a read-only file system. */
static _Noreturn void
t_ro_child(void)
{
	struct rqueue_cfg cfg = { .max_entries = 10, .keep_s = T_KEEP };
	struct event_base *b = event_base_new();
	struct rqueue *q = NULL;

	t_own_mounts();
	if (mount(dir, dir, "none", MS_BIND, NULL) < 0 ||
	    mount("none", dir, "none", MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) <
	        0)
		_exit(SKIP_EXIT);
	CHILD_CHECK(b != NULL);
	CHILD_CHECK(rqueue_open(b, path, &cfg, &q) == -EROFS);
	CHILD_CHECK(q == NULL);
	event_base_free(b);
	_exit(0);
}

START_TEST(test_read_only)
{
	struct rqueue_cfg cfg = { .max_entries = 10, .keep_s = T_KEEP };
	struct rqueue *q = t_open();
	struct t_got g;
	int status;
	pid_t pid;

	t_push_receipts(q, client_a, 1, 2);
	rqueue_free(q);
	q = NULL;
	if (geteuid() != 0) {
		ck_assert_int_eq(chmod(dir, 0500), 0);
		ck_assert_int_eq(rqueue_open(base, path, &cfg, &q), -EACCES);
		ck_assert(unit_log_has(&logbuf, "not writable"));
		ck_assert_int_eq(chmod(dir, 0700), 0);
		return;
	}
	(void)cfg;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		t_ro_child();
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == SKIP_EXIT) {
		fprintf(stderr,
		    "test_read_only: skipped (no mount namespace)\n");
		return;
	}
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	q = t_open();
	t_take_n(q, client_a, 0, 10, 2, &g);
	rqueue_free(q);
}
END_TEST

static Suite *
rqueue_suite(void)
{
	Suite *s = suite_create("rqueue");
	TCase *tc = tcase_create("queue");
	TCase *td = tcase_create("damage");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_push_take_ack);
	tcase_add_test(tc, test_take_max_and_more);
	tcase_add_test(tc, test_bad_cursor);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_long_poll_woken);
	tcase_add_test(tc, test_long_poll_times_out);
	tcase_add_test(tc, test_cancel);
	tcase_add_test(tc, test_push_from_dedup);
	tcase_add_test(tc, test_push_from_refused);
	tcase_add_test(tc, test_upgrade_v1);
	tcase_add_test(tc, test_restart);
	tcase_add_test(tc, test_expiry);
	tcase_add_test(tc, test_bound_per_client);
	tcase_add_test(tc, test_many_pushes);
	tcase_add_test(tc, test_write_error_recovers);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(td, test_setup, test_teardown);
	tcase_add_test(td, test_garbage_file);
	tcase_add_test(td, test_other_database);
	tcase_add_test(td, test_unknown_schema);
	tcase_add_test(td, test_damaged_pages);
	tcase_add_test(td, test_damaged_entry);
	tcase_add_test(td, test_path_is_a_directory);
	tcase_add_test(td, test_read_only);
	suite_add_tcase(s, td);
	return s;
}

int
main(void)
{
	return unit_run(rqueue_suite());
}
