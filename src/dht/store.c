/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's block store (see store.h), dht layer, DESIGN.md "Block store":
 * the caller's side. Operations go to the worker thread (store_worker.c)
 * through a queue; results come back through an eventfd read on the
 * caller's event_base, where the index of held keys is kept and the
 * callbacks run.
 *
 * Decisions (issue 12), measured by tests/bench/bench_store on the
 * project's 2-CPU VM, ext4 on virtio, 2026-11-26 (tests/bench/README):
 *
 * Durability: WAL with synchronous=FULL. With WAL, synchronous=NORMAL
 * syncs only at checkpoints: a killed process loses nothing, but a power
 * cut or a kernel crash can take back the last transactions, which here
 * are blocks whose receipts went out. FULL makes every commit sync the
 * WAL before SQLite returns, so a put's callback says 0 only after the
 * fsync that made its block durable (0.14 ms for 1 KiB, 0.32 ms for
 * 256 KiB on this disk). A new database is built under another name,
 * synced and renamed into place, the directory synced after; SQLite
 * syncs the directory itself when it creates the WAL. What no test here
 * shows is a power cut: it holds if the disk honours the flush fsync
 * sends (the kill -9 test shows the rest).
 *
 * Group commit: the worker takes everything queued and commits it in
 * one transaction, so one fsync of the WAL covers a window of puts: with
 * 64 in flight, 64 695 durable 1 KiB puts/s against 3115 with a
 * transaction each, and 455 against 277 MB/s of 256 KiB blocks. The
 * loop never waits: it only queues, and reads results from an eventfd.
 * A connection of our own on a thread of our own, rather than SQLite's
 * shared cache or libevent's threads, keeps one owner for each thing.
 *
 * Block bytes live in SQLite as BLOBs, not in files it indexes: a file
 * per block needs its own fdatasync, and the directory's, before its row
 * may commit: 1.3 against 75-87 MB/s for 1 KiB blocks, 207 against 414
 * MB/s for 256 KiB ones, and cold reads no faster (726 against 1025).
 * One transaction also leaves no orphan files and no rows naming lost
 * ones after a crash. Pages are 64 KiB, so that a 256 KiB block is 4
 * overflow pages rather than 64: 469 MB/s of 256 KiB puts against 235
 * with 4 KiB pages, for 12 % less on grouped 1 KiB puts.
 *
 * One process: locking_mode=EXCLUSIVE, taken at open; a second ferryd
 * on the same directory is refused with -EBUSY.
 */
#define LOG_TAG "dht"
#include "dht/store_int.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/log.h"
#include "lib/map.h"
#include "lib/time.h"

/* A block the caller's thread knows to be committed. */
struct store_entry {
	uint8_t key[STORE_KEY_LEN]; /* the map's key points here */
	uint64_t size;              /* bytes */
	uint64_t expiry;            /* seconds since the epoch */
};

static uint64_t
store_clock_real(void *cls)
{
	(void)cls;
	return time_real_s();
}

static uint64_t
store_now(const struct store *st)
{
	return st->clock(st->clock_cls);
}

/* Adds a block to the index, or sets the expiry of one there. */
static int
store_index_set(struct store *st, const uint8_t key[STORE_KEY_LEN],
    uint64_t size, uint64_t expiry)
{
	struct store_entry *e = map_get(st->index, key, STORE_KEY_LEN);

	if (e != NULL) {
		e->expiry = expiry;
		return 0;
	}
	e = malloc(sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	memcpy(e->key, key, STORE_KEY_LEN);
	e->size = size;
	e->expiry = expiry;
	if (map_put(st->index, e->key, STORE_KEY_LEN, e) < 0) {
		free(e);
		return -ENOMEM;
	}
	st->stats.blocks++;
	st->stats.bytes += size;
	return 0;
}

static void
store_index_drop(struct store *st, const uint8_t key[STORE_KEY_LEN])
{
	struct store_entry *e = map_remove(st->index, key, STORE_KEY_LEN);

	if (e == NULL)
		return;
	st->stats.blocks--;
	st->stats.bytes -= e->size;
	free(e);
}

static int
store_index_load(void *cls, const uint8_t key[STORE_KEY_LEN], uint64_t size,
    uint64_t expiry)
{
	return store_index_set(cls, key, size, expiry);
}

static bool
store_index_free_one(void *cls, const void *key, size_t len, void *value)
{
	(void)cls;
	(void)key;
	(void)len;
	free(value);
	return true;
}

static struct store_op *
store_op_new(struct store *st, enum store_op_kind kind,
    const uint8_t key[STORE_KEY_LEN])
{
	struct store_op *op = calloc(1, sizeof(*op));

	if (op == NULL)
		return NULL;
	op->kind = kind;
	if (key != NULL)
		memcpy(op->key, key, STORE_KEY_LEN);
	op->now = store_now(st);
	return op;
}

static void
store_op_free(struct store_op *op)
{
	free(op->data);
	free(op->gone);
	free(op->note);
	free(op);
}

/* Hands op to the worker; its result comes back through store_on_done. */
static void
store_submit(struct store *st, struct store_op *op)
{
	(void)pthread_mutex_lock(&st->q.mu);
	TAILQ_INSERT_TAIL(&st->q.submitted, op, link);
	(void)pthread_cond_signal(&st->q.cond);
	(void)pthread_mutex_unlock(&st->q.mu);
	if (op->kind != STORE_OP_EXPIRE)
		st->stats.pending++;
}

/* Finishes op without the worker, yet on the loop as if it had run. */
static void
store_complete_later(struct store *st, struct store_op *op)
{
	uint64_t one = 1;

	(void)pthread_mutex_lock(&st->q.mu);
	TAILQ_INSERT_TAIL(&st->q.done, op, link);
	(void)pthread_mutex_unlock(&st->q.mu);
	st->stats.pending++;
	(void)!write(st->efd, &one, sizeof(one));
}

/* Logs a failing disk once when writes start failing, and once when they
 * work again. */
static void
store_note(struct store *st, const struct store_op *op)
{
	if (op->kind == STORE_OP_NOTE && !st->failing) {
		log_warn("block store: %s; puts fail until the disk takes"
		         " writes again",
		    op->note);
		st->failing = true;
	} else if (op->kind == STORE_OP_NOTE) {
		log_debug("block store: %s", op->note);
	} else if (op->committed && st->failing) {
		log_notice("block store: the disk takes writes again");
		st->failing = false;
	}
}

/* Brings the index up to date with what op did. */
static void
store_apply(struct store *st, struct store_op *op)
{
	for (size_t i = 0; i < op->n_gone; i++) {
		store_index_drop(st, op->gone[i].key);
		if (op->gone[i].expired)
			st->stats.expired++;
		else
			st->stats.evicted++;
	}
	if (op->committed)
		st->stats.commits++;
	store_note(st, op);
	if (op->kind != STORE_OP_PUT)
		return;
	st->queued_bytes -= op->len;
	if (op->status == 0 &&
	    store_index_set(st, op->key, op->len, op->expiry) < 0)
		/* Stored, but store_has() will not know until a restart. */
		log_warn("block store: out of memory for the index");
	if (op->status == 0)
		st->stats.puts++;
	else if (op->refused)
		st->stats.refused++;
	else if (op->status != -ECANCELED)
		st->stats.failed++;
}

/* Applies op, calls its callback and frees it. */
static void
store_finish(struct store *st, struct store_op *op)
{
	store_apply(st, op);
	if (op->kind == STORE_OP_PUT || op->kind == STORE_OP_GET ||
	    op->kind == STORE_OP_JOB)
		st->stats.pending--;
	switch (op->kind) {
	case STORE_OP_PUT:
	case STORE_OP_JOB:
		if (op->done != NULL)
			op->done(op->cls, op->status);
		break;
	case STORE_OP_GET:
		op->got(op->cls, op->status, op->status == 0 ? op->data : NULL,
		    op->status == 0 ? op->len : 0, op->expiry);
		break;
	case STORE_OP_EXPIRE:
		st->expiring = false;
		if (op->more && !st->closing)
			store_expire_now(st);
		break;
	case STORE_OP_NOTE:
		break;
	}
	store_op_free(op);
}

/* Takes the whole done list and finishes it. */
static void
store_drain(struct store *st)
{
	struct store_op_list done = TAILQ_HEAD_INITIALIZER(done);
	struct store_op *op;

	(void)pthread_mutex_lock(&st->q.mu);
	TAILQ_CONCAT(&done, &st->q.done, link);
	(void)pthread_mutex_unlock(&st->q.mu);
	while ((op = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, op, link);
		store_finish(st, op);
	}
}

static void
store_on_done(evutil_socket_t fd, short what, void *arg)
{
	uint64_t n;

	(void)what;
	(void)!read(fd, &n, sizeof(n));
	store_drain(arg);
}

void
store_expire_now(struct store *st)
{
	struct store_op *op;

	if (st->expiring)
		return;
	op = store_op_new(st, STORE_OP_EXPIRE, NULL);
	if (op == NULL)
		return; /* the next period tries again */
	st->expiring = true;
	store_submit(st, op);
}

static void
store_on_expire(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	store_expire_now(arg);
}

/* Starts the worker with every signal blocked, so that signals keep
 * going to the loop's thread. */
static int
store_start(struct store *st)
{
	sigset_t all, old;
	int r;

	(void)sigfillset(&all);
	(void)pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&st->thread, NULL, store_worker_main, st);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return log_err_errno(r, "block store: cannot start its thread");
	st->started = true;
	return 0;
}

/* The parts of a store that hold no disk: queue, eventfd, events, index. */
static int
store_new(struct event_base *base, struct store **ret_st)
{
	struct store *st = calloc(1, sizeof(*st));
	struct timeval period = { .tv_sec = STORE_EXPIRE_PERIOD };

	if (st == NULL)
		return -ENOMEM;
	st->base = base;
	st->clock = store_clock_real;
	st->efd = -1;
	TAILQ_INIT(&st->q.submitted);
	TAILQ_INIT(&st->q.done);
	(void)pthread_mutex_init(&st->q.mu, NULL);
	(void)pthread_cond_init(&st->q.cond, NULL);
	*ret_st = st;
	st->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (st->efd < 0)
		return -errno;
	st->index = map_new();
	st->ev_done =
	    event_new(base, st->efd, EV_READ | EV_PERSIST, store_on_done, st);
	st->ev_expire = event_new(base, -1, EV_PERSIST, store_on_expire, st);
	if (st->index == NULL || st->ev_done == NULL || st->ev_expire == NULL ||
	    event_add(st->ev_done, NULL) < 0 ||
	    event_add(st->ev_expire, &period) < 0)
		return -ENOMEM;
	return 0;
}

int
store_open(struct event_base *base, const char *dir,
    const uint8_t own_id[STORE_KEY_LEN], uint64_t quota_bytes,
    struct store **ret_st)
{
	struct store *st = NULL;
	int r;

	if (base == NULL || dir == NULL || own_id == NULL)
		return -EINVAL;
	r = store_new(base, &st);
	if (r < 0) {
		log_err_errno(r, "block store: cannot set up");
		goto out;
	}
	st->stats.quota = quota_bytes;
	r = store_db_open(dir, own_id, quota_bytes, store_index_load, st,
	    &st->db);
	if (r == 0)
		r = store_start(st);
	if (r < 0)
		goto out;
	/* Blocks may have expired while the daemon was down: a first pass
	 * as soon as the loop runs. */
	event_active(st->ev_expire, EV_TIMEOUT, 0);
	log_info("block store in %s: %llu blocks, %llu of %llu bytes", dir,
	    (unsigned long long)st->stats.blocks,
	    (unsigned long long)st->stats.bytes,
	    (unsigned long long)quota_bytes);
	*ret_st = st;
	st = NULL;
out:
	store_free(st);
	return r;
}

/* -EAGAIN when taking len more bytes would pass the queue's bounds. */
static int
store_room(const struct store *st, size_t len)
{
	if (st->stats.pending >= STORE_QUEUE_OPS ||
	    st->queued_bytes + len > STORE_QUEUE_BYTES)
		return -EAGAIN;
	return 0;
}

int
store_put(struct store *st, const uint8_t key[STORE_KEY_LEN], const void *data,
    size_t len, uint64_t expiry, store_done_fn *cb, void *cls)
{
	struct store_op *op;
	int r;

	if (FERRY_BUG(st->closing))
		return -EPROTO;
	if (len > STORE_BLOCK_MAX)
		return -EMSGSIZE;
	/* SQLite's integers are signed; nothing lives that long anyway. */
	if (expiry > INT64_MAX)
		expiry = INT64_MAX;
	if (len == 0 || expiry <= store_now(st))
		return -EINVAL;
	r = store_room(st, len);
	if (r < 0)
		return r;
	op = store_op_new(st, STORE_OP_PUT, key);
	if (op == NULL || (op->data = malloc(len)) == NULL) {
		free(op);
		return -ENOMEM;
	}
	memcpy(op->data, data, len);
	op->len = len;
	op->expiry = expiry;
	op->done = cb;
	op->cls = cls;
	st->queued_bytes += len;
	store_submit(st, op);
	return 0;
}

int
store_get(struct store *st, const uint8_t key[STORE_KEY_LEN], store_got_fn *cb,
    void *cls)
{
	struct store_op *op;
	int r;

	if (FERRY_BUG(st->closing || cb == NULL))
		return -EPROTO;
	r = store_room(st, 0);
	if (r < 0)
		return r;
	op = store_op_new(st, STORE_OP_GET, key);
	if (op == NULL)
		return -ENOMEM;
	op->got = cb;
	op->cls = cls;
	/* What the index does not hold, the database does not either: no
	 * need to wait behind the worker's transaction to say so. */
	if (!store_has(st, key)) {
		op->status = -ENOENT;
		store_complete_later(st, op);
	} else {
		store_submit(st, op);
	}
	return 0;
}

int
store_job(struct store *st, store_job_fn *fn, store_done_fn *cb, void *cls)
{
	struct store_op *op;
	int r;

	if (FERRY_BUG(st->closing || fn == NULL || cb == NULL))
		return -EPROTO;
	r = store_room(st, 0);
	if (r < 0)
		return r;
	op = store_op_new(st, STORE_OP_JOB, NULL);
	if (op == NULL)
		return -ENOMEM;
	op->job = fn;
	op->done = cb;
	op->cls = cls;
	store_submit(st, op);
	return 0;
}

bool
store_has(const struct store *st, const uint8_t key[STORE_KEY_LEN])
{
	const struct store_entry *e = map_get(st->index, key, STORE_KEY_LEN);

	return e != NULL && e->expiry > store_now(st);
}

void
store_stats(const struct store *st, struct store_stats *ret)
{
	*ret = st->stats;
}

/* Cancels what the worker never took. */
static void
store_cancel_unstarted(struct store *st)
{
	struct store_op *op;

	while ((op = TAILQ_FIRST(&st->q.submitted)) != NULL) {
		TAILQ_REMOVE(&st->q.submitted, op, link);
		op->status = -ECANCELED;
		op->more = false;
		store_finish(st, op);
	}
}

void
store_free(struct store *st)
{
	if (st == NULL)
		return;
	st->closing = true;
	if (st->started) {
		(void)pthread_mutex_lock(&st->q.mu);
		st->q.stop = true;
		(void)pthread_cond_signal(&st->q.cond);
		(void)pthread_mutex_unlock(&st->q.mu);
		(void)pthread_join(st->thread, NULL);
	} else {
		store_db_close(st->db);
	}
	/* The worker is gone: both queues are this thread's now. */
	store_drain(st);
	store_cancel_unstarted(st);
	if (st->ev_done != NULL)
		event_free(st->ev_done);
	if (st->ev_expire != NULL)
		event_free(st->ev_expire);
	if (st->efd >= 0)
		(void)close(st->efd);
	if (st->index != NULL) {
		map_foreach(st->index, store_index_free_one, NULL);
		map_free(st->index);
	}
	(void)pthread_cond_destroy(&st->q.cond);
	(void)pthread_mutex_destroy(&st->q.mu);
	free(st);
}

void
store_set_clock(struct store *st, store_clock_fn *fn, void *cls)
{
	st->clock = fn != NULL ? fn : store_clock_real;
	st->clock_cls = cls;
}

void
store_set_batch_max(struct store *st, size_t n)
{
	(void)pthread_mutex_lock(&st->q.mu);
	st->q.batch_max = n;
	(void)pthread_mutex_unlock(&st->q.mu);
}
