/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Receipts mean durable, under fire (issue 16, "Crash safety, proved"):
 * six real ferryd on 127.0.0.N with the DHT on (REPLICATION 3); two
 * client threads keep 24 PUTs each in flight on d0 (pipelined with
 * ferry_dht_put_start / ferry_dht_next), blocks of 1 byte to 512 KiB,
 * each unique, and record every receipt, checked with
 * ferry_dht_receipt_verify (a PUT that succeeds has three, from three
 * storers). Meanwhile the main thread kills d1..d5 with
 * SIGKILL at random moments (one or two down at a time) and restarts
 * them. d0, the daemon the clients talk to, is never killed: it stays up
 * so that the clients see every receipt; it stores its share of blocks
 * like the others. At the end every daemon is stopped cleanly and its
 * blocks.sqlite opened read-only with SQLite: each block a receipt
 * promised must be in its storer's store, byte for byte. A PUT may fail
 * while its storers are down; only receipts are promises. That it can
 * fail was tried: with dht_route.c sending the receipt when the block
 * is queued for the store rather than once it is committed, each of
 * three 20 s runs found blocks lost, their receipts some 10 ms before
 * their storer's kill.
 *
 * The run prints its seed; FERRY_CRASH_SEED=N replays the same blocks
 * and the same kill schedule (the moments the kills fall on, relative to
 * the puts, differ from run to run: that is the point). The puts run
 * for 20 s by default, sized for CI's ASan build on 2 CPUs;
 * FERRY_CRASH_SECONDS=300 runs five minutes (run the binary itself, with
 * the variables of BUILD/ferry-env.sh, since ctest's TIMEOUT is 300 s):
 *
 *	(set -a; . build/ferry-env.sh; FERRY_CRASH_SECONDS=300 \
 *	    build/tests/integration/test_dht_crash)
 *
 * It runs alone (RUN_SERIAL): its load would starve the tests beside it.
 */
/* ctest: TIMEOUT=300 RUN_SERIAL=1 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <sodium.h>
#include <sqlite3.h>

#include <ferry/client.h>

#include "dhtcheck.h"
#include "harness.h"
#include "mesh.h"

#define N          6   /* daemons; d0 is the clients' and never killed */
#define REPL       3   /* [dht] REPLICATION */
#define CLIENTS    2   /* threads, a connection to d0 each */
#define IN_FLIGHT  24  /* PUTs per client */
#define SECONDS    20  /* of puts, unless FERRY_CRASH_SECONDS says */
#define MAX_DOWN   2   /* daemons down at once */
#define GAP_MIN_MS 150 /* between two kills or restarts */
#define GAP_MAX_MS 1200
#define LINK_MS    30000
#define BLOCK_MAX  (512 * 1024)
/* Quotas far above what a long run stores: a block refused for space
 * or evicted would be a failure of this test, not of durability. */
#define DHT_CFG                                                                \
	"[dht]\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n"               \
	"PER_NETWORK = 0\nREPLICATION = 3\nQUOTA = 64 GiB\n"                   \
	"ORIGIN_QUOTA = 64 GiB\n"

/* One PUT a client started. */
struct put_rec {
	uint64_t seq;  /* its block's number in its client's sequence */
	uint32_t size; /* bytes */
	uint32_t req_id;
	struct ferry_dht_key key;
	int status; /* how it ended */
	bool ended;
	uint64_t end_ms; /* since t0 */
};

/* One receipt a client got. */
struct receipt_rec {
	struct ferry_dht_key key;
	struct ferry_peer_id storer;
	uint32_t size;
	unsigned client;
	uint64_t seq;
	uint64_t ms; /* since t0, when the PUT ended */
};

/* One SIGKILL. */
struct kill_rec {
	unsigned daemon;
	uint64_t kill_ms; /* since t0 */
	uint64_t up_ms;   /* restarted and ready; 0 until then */
};

struct client {
	unsigned index;
	struct ferry_client *c;
	struct put_rec *puts;
	size_t n_puts, cap_puts;
	struct receipt_rec *receipts;
	size_t n_receipts, cap_receipts;
	size_t failed;     /* PUTs that ended with an error */
	size_t short_puts; /* of those, -EIO with some receipts */
	size_t bad; /* receipts that did not verify or came twice from one
	             * storer, successes without REPL of them */
	char error[256];   /* why the thread gave up, or "" */
};

static struct harness *h;
static struct harness_daemon *d[N];
static uint64_t seed;
static uint64_t t0;
static atomic_bool stop_puts;

static uint64_t
since_t0(void)
{
	return harness_now_ms() - t0;
}

/* splitmix64: the kill schedule's generator, from the logged seed. */
static uint64_t
rnd_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
rnd_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rnd_next(s) % (hi - lo + 1);
}

/* The 32-byte seed of block seq of client c: everything about the block
 * follows from it and the run's seed. */
static void
block_seed(unsigned c, uint64_t seq, uint8_t out[32])
{
	uint64_t in[3] = { seed, c, seq };

	crypto_generichash(out, 32, (const uint8_t *)in, sizeof(in), NULL, 0);
}

/* Sizes: most blocks small, some of tens of KiB, a few large ones. */
static uint32_t
block_size(unsigned c, uint64_t seq)
{
	uint8_t s[32];
	uint64_t r;

	block_seed(c, seq, s);
	memcpy(&r, s, sizeof(r));
	switch (r % 10) {
	case 0:
		return (uint32_t)(64 * 1024 + (r >> 8) % (BLOCK_MAX - 65535));
	case 1:
	case 2:
	case 3:
		return (uint32_t)(4096 + (r >> 8) % (60 * 1024));
	default:
		return (uint32_t)(1 + (r >> 8) % 4096);
	}
}

static void
block_fill(unsigned c, uint64_t seq, uint8_t *buf, size_t size)
{
	uint8_t s[32];

	block_seed(c, seq, s);
	randombytes_buf_deterministic(buf, size, s);
}

static bool
grow(void **p, size_t *cap, size_t n, size_t elem)
{
	void *q;

	if (n < *cap)
		return true;
	q = realloc(*p, (*cap == 0 ? 1024 : *cap * 2) * elem);
	if (q == NULL)
		return false;
	*p = q;
	*cap = *cap == 0 ? 1024 : *cap * 2;
	return true;
}

/* Records how PUT e of cl ended, and each of its receipts. */
static int
client_end(struct client *cl, const struct ferry_dht_end *e)
{
	struct put_rec *p = NULL;

	for (size_t i = cl->n_puts; i-- > 0 && p == NULL;)
		if (cl->puts[i].req_id == e->req_id && !cl->puts[i].ended)
			p = &cl->puts[i];
	if (p == NULL || e->op != FERRY_C_DHT_PUT)
		return -EPROTO;
	p->ended = true;
	p->status = e->status;
	p->end_ms = since_t0();
	if (memcmp(&p->key, &e->key, sizeof(p->key)) != 0)
		return -EPROTO;
	if (e->status != 0) {
		cl->failed++;
		if (e->status == -EIO && e->receipts > 0)
			cl->short_puts++;
	} else if (e->receipts != REPL) {
		cl->bad++; /* success is a receipt from every storer */
	}
	for (size_t i = 0; i < e->receipts; i++) {
		struct receipt_rec *r;
		bool twice = false;

		for (size_t j = 0; j < i; j++)
			twice = twice ||
			    memcmp(&e->receipt_list[j].storer,
			        &e->receipt_list[i].storer,
			        sizeof(e->receipt_list[i].storer)) == 0;
		if (twice ||
		    ferry_dht_receipt_verify(&p->key, &e->receipt_list[i]) <
		        0) {
			cl->bad++;
			continue;
		}
		if (!grow((void **)&cl->receipts, &cl->cap_receipts,
		        cl->n_receipts, sizeof(*cl->receipts)))
			return -ENOMEM;
		r = &cl->receipts[cl->n_receipts++];
		r->key = p->key;
		r->storer = e->receipt_list[i].storer;
		r->size = p->size;
		r->client = cl->index;
		r->seq = p->seq;
		r->ms = p->end_ms;
	}
	return 0;
}

/* Starts the next PUT of cl; -EAGAIN when IN_FLIGHT are out. */
static int
client_start(struct client *cl, uint8_t *buf)
{
	struct put_rec *p;
	int r;

	if (ferry_dht_pending(cl->c) >= IN_FLIGHT)
		return -EAGAIN;
	if (!grow((void **)&cl->puts, &cl->cap_puts, cl->n_puts,
	        sizeof(*cl->puts)))
		return -ENOMEM;
	p = &cl->puts[cl->n_puts];
	memset(p, 0, sizeof(*p));
	p->seq = cl->n_puts;
	p->size = block_size(cl->index, p->seq);
	block_fill(cl->index, p->seq, buf, p->size);
	r = ferry_dht_key_of(buf, p->size, &p->key);
	if (r == 0)
		r = ferry_dht_put_start(cl->c, buf, p->size, REPL, 0,
		    &p->req_id);
	if (r == 0)
		cl->n_puts++;
	return r;
}

/* A client thread: PUTs until told to stop, then collects the rest.
 * No Check calls here; what went wrong goes to cl->error. */
static void *
client_run(void *arg)
{
	struct client *cl = arg;
	uint8_t *buf = malloc(BLOCK_MAX);
	struct ferry_dht_end e;
	int r = 0;

	if (buf == NULL) {
		(void)snprintf(cl->error, sizeof(cl->error), "no memory");
		return NULL;
	}
	for (;;) {
		while (!atomic_load(&stop_puts) &&
		    (r = client_start(cl, buf)) == 0)
			;
		if (r < 0 && r != -EAGAIN)
			break;
		r = ferry_dht_next(cl->c, 100, &e);
		if (r == -ETIMEDOUT) {
			r = 0;
			continue;
		}
		if (r == -ENOENT && atomic_load(&stop_puts)) {
			r = 0;
			break;
		}
		if (r < 0)
			break;
		r = client_end(cl, &e);
		ferry_dht_end_free(&e);
		if (r < 0)
			break;
	}
	if (r < 0)
		(void)snprintf(cl->error, sizeof(cl->error),
		    "client %u at %" PRIu64 " ms: %s", cl->index, since_t0(),
		    strerror(-r));
	free(buf);
	return NULL;
}

static void
setup(void)
{
	ck_assert_int_eq(harness_new("dht-crash", &h), 0);
	mesh_start(h, d, N, "udp", DHT_CFG);
	dhtcheck_wait_tables(h, d, N, N - 1, LINK_MS);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

static unsigned
run_seconds(void)
{
	const char *s = getenv("FERRY_CRASH_SECONDS");

	return s != NULL && atoi(s) > 0 ? (unsigned)atoi(s) : SECONDS;
}

/* The kills and restarts, until the puts' time is up; every daemon is
 * up again when it returns. */
static size_t
kill_loop(struct kill_rec **ret_kills, unsigned seconds)
{
	uint64_t rs = seed, end = t0 + seconds * 1000ULL;
	struct kill_rec *kills = NULL;
	size_t n = 0, cap = 0;
	int down[MAX_DOWN];
	size_t n_down = 0;

	while (harness_now_ms() < end || n_down > 0) {
		bool kill;

		harness_sleep_ms(
		    (unsigned)rnd_range(&rs, GAP_MIN_MS, GAP_MAX_MS));
		kill = harness_now_ms() < end &&
		    (n_down == 0 ||
		        (n_down < MAX_DOWN && rnd_range(&rs, 0, 9) < 3));
		if (!kill && n_down == 0)
			continue; /* time is up, all are up */
		if (kill) {
			int v;

			do {
				v = 1 + (int)rnd_range(&rs, 0, N - 2);
			} while (n_down > 0 && down[0] == v);
			ck_assert(
			    grow((void **)&kills, &cap, n, sizeof(*kills)));
			ck_assert_int_eq(harness_daemon_kill(d[v]), 0);
			kills[n].daemon = (unsigned)v;
			kills[n].kill_ms = since_t0();
			kills[n].up_ms = 0;
			n++;
			down[n_down++] = v;
		} else {
			/* The one down longest comes back first. */
			int v = down[0], r;

			memmove(down, down + 1, --n_down * sizeof(down[0]));
			r = harness_daemon_start_ready(d[v]);
			if (r != 0) {
				harness_dump_logs(h);
				ck_abort_msg("d%d did not restart at %" PRIu64
				             " ms: %s (exit status %d)",
				    v, since_t0(), strerror(-r),
				    d[v]->exit_status);
			}
			for (size_t i = n; i-- > 0;)
				if (kills[i].daemon == (unsigned)v) {
					kills[i].up_ms = since_t0();
					break;
				}
		}
	}
	*ret_kills = kills;
	return n;
}

/* Prints the kills of daemon v from 5 s before ms to 5 s after. */
static void
print_kills_near(const struct kill_rec *kills, size_t n, int v, uint64_t ms)
{
	for (size_t i = 0; i < n; i++)
		if (kills[i].daemon == (unsigned)v &&
		    kills[i].kill_ms + 5000 >= ms &&
		    kills[i].kill_ms <= ms + 5000)
			fprintf(stderr,
			    "    d%d killed at %" PRIu64 " ms, up at %" PRIu64
			    " ms\n",
			    v, kills[i].kill_ms, kills[i].up_ms);
}

/* Checks every receipt of cl against the stores (sel: each daemon's
 * SELECT); returns how many blocks are missing or different. */
static size_t
check_receipts(sqlite3_stmt **sel, const struct client *cl,
    const struct kill_rec *kills, size_t n_kills, uint8_t *buf)
{
	size_t lost = 0;

	for (size_t i = 0; i < cl->n_receipts; i++) {
		const struct receipt_rec *r = &cl->receipts[i];
		int v = dhtcheck_index_of(d, N, &r->storer);
		char hex[FERRY_DHT_KEY_STRLEN + 1];
		const char *why = NULL;
		sqlite3_stmt *s;
		int rc;

		ck_assert_msg(v >= 0, "a receipt from a peer not in the test");
		s = sel[v];
		ck_assert_int_eq(sqlite3_bind_blob(s, 1, r->key.bytes,
		                     sizeof(r->key.bytes), SQLITE_STATIC),
		    SQLITE_OK);
		rc = sqlite3_step(s);
		if (rc == SQLITE_DONE) {
			why = "missing";
		} else {
			ck_assert_int_eq(rc, SQLITE_ROW);
			block_fill(r->client, r->seq, buf, r->size);
			if ((size_t)sqlite3_column_bytes(s, 0) != r->size ||
			    memcmp(sqlite3_column_blob(s, 0), buf, r->size) !=
			        0)
				why = "different";
		}
		ck_assert_int_eq(sqlite3_reset(s), SQLITE_OK);
		if (why == NULL)
			continue;
		lost++;
		ferry_dht_key_format(&r->key, hex);
		fprintf(stderr,
		    "LOST: block %s (%u bytes, client %u #%" PRIu64
		    ") %s at d%d, whose receipt came at %" PRIu64 " ms\n",
		    hex, r->size, r->client, r->seq, why, v, r->ms);
		print_kills_near(kills, n_kills, v, r->ms);
	}
	return lost;
}

/* Opens every daemon's store read-only, with its SELECT by key. */
static void
open_stores(sqlite3 **db, sqlite3_stmt **sel)
{
	char path[PATH_MAX];

	for (int i = 0; i < N; i++) {
		ck_assert_int_lt(snprintf(path, sizeof(path),
		                     "%s/blocks.sqlite", d[i]->state_dir),
		    (int)sizeof(path));
		ck_assert_msg(sqlite3_open_v2(path, &db[i],
		                  SQLITE_OPEN_READONLY, NULL) == SQLITE_OK,
		    "%s: %s", path, sqlite3_errmsg(db[i]));
		ck_assert_msg(sqlite3_prepare_v2(db[i],
		                  "SELECT data FROM blocks WHERE key = ?1", -1,
		                  &sel[i], NULL) == SQLITE_OK,
		    "%s: %s", path, sqlite3_errmsg(db[i]));
	}
}

START_TEST(test_kill_during_puts)
{
	static struct client cl[CLIENTS];
	pthread_t th[CLIENTS];
	struct kill_rec *kills;
	size_t n_kills, n_puts = 0, receipts = 0, failed = 0, short_puts = 0;
	size_t bad = 0, lost = 0, per[N] = { 0 };
	unsigned seconds = run_seconds();
	sqlite3 *db[N];
	sqlite3_stmt *sel[N];
	uint8_t *buf;

	atomic_store(&stop_puts, false);
	t0 = harness_now_ms();
	for (unsigned i = 0; i < CLIENTS; i++) {
		memset(&cl[i], 0, sizeof(cl[i]));
		cl[i].index = i;
		ck_assert_int_eq(harness_daemon_client(d[0], &cl[i].c), 0);
		ck_assert_int_eq(pthread_create(&th[i], NULL, client_run,
		                     &cl[i]),
		    0);
	}
	n_kills = kill_loop(&kills, seconds);
	atomic_store(&stop_puts, true);
	for (unsigned i = 0; i < CLIENTS; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ferry_client_close(cl[i].c);
		ck_assert_msg(cl[i].error[0] == '\0', "%s", cl[i].error);
		n_puts += cl[i].n_puts;
		receipts += cl[i].n_receipts;
		failed += cl[i].failed;
		short_puts += cl[i].short_puts;
		bad += cl[i].bad;
	}
	/* Clean stops: every daemon must exit by itself, with 0. */
	for (int i = 0; i < N; i++) {
		int status = -1;

		ck_assert_int_eq(harness_daemon_stop(d[i],
		                     HARNESS_STOP_TIMEOUT_MS, &status),
		    0);
		ck_assert_msg(status == 0, "d%d exited with %d", i, status);
	}
	for (size_t i = 0; i < n_kills; i++)
		per[kills[i].daemon]++;
	printf("dht_crash: %zu puts, %zu receipts (%zu bad), %zu failed "
	       "(%zu with fewer receipts), %zu kills in %" PRIu64 " ms "
	       "(d1..d5: %zu %zu %zu %zu %zu)\n",
	    n_puts, receipts, bad, failed, short_puts, n_kills, since_t0(),
	    per[1], per[2], per[3], per[4], per[5]);
	(void)fflush(stdout); /* a failing check ends the process */
	buf = malloc(BLOCK_MAX);
	ck_assert_ptr_nonnull(buf);
	open_stores(db, sel);
	for (unsigned i = 0; i < CLIENTS; i++)
		lost += check_receipts(sel, &cl[i], kills, n_kills, buf);
	for (int i = 0; i < N; i++) {
		(void)sqlite3_finalize(sel[i]);
		(void)sqlite3_close(db[i]);
	}
	printf("dht_crash: %zu blocks with a receipt missing or different\n",
	    lost);
	(void)fflush(stdout);
	free(buf);
	for (unsigned i = 0; i < CLIENTS; i++) {
		free(cl[i].puts);
		free(cl[i].receipts);
	}
	free(kills);
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(lost, 0);
	/* The test proves something only if it put and killed. */
	ck_assert_uint_gt(receipts, 0);
	ck_assert_uint_ge(n_kills, 3);
}
END_TEST

static Suite *
dht_crash_suite(void)
{
	Suite *s = suite_create("dht_crash");
	TCase *tc = tcase_create("kill9");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120 + 2 * run_seconds());
	tcase_add_test(tc, test_kill_during_puts);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	const char *s = getenv("FERRY_CRASH_SEED");
	SRunner *sr;
	int failed;

	if (sodium_init() < 0)
		return 1;
	if (s != NULL)
		seed = strtoull(s, NULL, 0);
	else
		randombytes_buf(&seed, sizeof(seed));
	printf("dht_crash: seed %" PRIu64 " (FERRY_CRASH_SEED replays it), "
	       "%u s of puts\n",
	    seed, run_seconds());
	(void)fflush(stdout);
	sr = srunner_create(dht_crash_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
