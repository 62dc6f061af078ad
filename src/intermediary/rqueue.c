/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary's receipt queue (see rqueue.h), intermediary layer,
 * issue 15: the loop's side. Operations go to the worker thread
 * (rqueue_worker.c) through a list; results come back through an eventfd
 * read on the loop, where takes that found nothing wait for a push to
 * their client or their deadline, and the callbacks run.
 *
 * A take's life:
 *   IN_FLIGHT  its operation is with the worker (acknowledge, read)
 *     -> answered   entries found, a failure, or no wait asked or left
 *     -> WAITING    none found, time left before the deadline
 *   WAITING    in its client's list, a timer at the deadline
 *     -> IN_FLIGHT  a push for its client became durable: read again
 *     -> answered   the deadline passed (no entries) or rqueue_free()
 *   rqueue_cancel() ends either state without an answer; in flight, the
 *   take is freed when its operation comes back.
 * A woken take reads again rather than answering the pushed entries
 * themselves: another taker of the same client may have acknowledged
 * them meanwhile, and a read sees only what is still queued.
 */
#define LOG_TAG "intermediary"
#include "intermediary/rqueue_int.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/log.h"
#include "lib/map.h"
#include "lib/stats.h"
#include "lib/time.h"

/* The takes waiting for one client. */
struct rqueue_waitlist {
	uint8_t client[RQUEUE_CLIENT_LEN]; /* the map's key points here */
	struct rqueue_take_list takes;
};

static uint64_t
rqueue_clock_real(void *cls)
{
	(void)cls;
	return time_real_s();
}

static uint64_t
rqueue_now(const struct rqueue *q)
{
	return q->clock(q->clock_cls);
}

static int
rqueue_bind(struct rqueue *q, struct stats *st)
{
	static const struct stats_slot slots[] = {
#define C(f) STATS_SLOT(struct rqueue_ctr, f)
		C(queue_pushed),
		C(queue_refused),
		C(queue_failed),
		C(queue_delivered),
		C(queue_acked),
		C(queue_expired),
		C(queue_bad_cursor),
		C(queue_damaged),
		C(queue_duplicate),
		C(queue_commits),
		C(queue_entries),
		C(queue_waiting),
#undef C
	};

	return stats_bind_prefix(st, "intermediary", &q->c, slots,
	    sizeof(slots) / sizeof(slots[0]));
}

static struct rqueue_op *
rqueue_op_new(struct rqueue *q, enum rqueue_op_kind kind, const uint8_t *client)
{
	struct rqueue_op *op = calloc(1, sizeof(*op));

	if (op == NULL)
		return NULL;
	op->kind = kind;
	if (client != NULL)
		memcpy(op->client, client, RQUEUE_CLIENT_LEN);
	op->now = rqueue_now(q);
	return op;
}

static void
rqueue_op_free(struct rqueue_op *op)
{
	free(op->e);
	free(op->note);
	free(op);
}

/* Hands op to the worker; its result comes back through rqueue_on_done. */
static void
rqueue_submit(struct rqueue *q, struct rqueue_op *op)
{
	(void)pthread_mutex_lock(&q->sh.mu);
	TAILQ_INSERT_TAIL(&q->sh.submitted, op, link);
	(void)pthread_cond_signal(&q->sh.cond);
	(void)pthread_mutex_unlock(&q->sh.mu);
	q->pending++;
}

/* --- takes ----------------------------------------------------------- */

static void
rqueue_take_free(struct rqueue_take *t)
{
	if (t->timer != NULL)
		event_free(t->timer);
	free(t);
}

/* Takes t out of its client's list; drops the list when it empties. */
static void
rqueue_unwait(struct rqueue_take *t)
{
	struct rqueue *q = t->q;
	struct rqueue_waitlist *w;

	if (!t->waiting)
		return;
	w = map_get(q->waiters, t->client, RQUEUE_CLIENT_LEN);
	TAILQ_REMOVE(&w->takes, t, wlink);
	if (TAILQ_EMPTY(&w->takes)) {
		(void)map_remove(q->waiters, t->client, RQUEUE_CLIENT_LEN);
		free(w);
	}
	t->waiting = false;
	(*q->c.queue_waiting)--;
	if (t->timer != NULL)
		(void)event_del(t->timer);
}

/* Calls t's got and frees t. */
static void
rqueue_answer(struct rqueue_take *t, int status, const struct rqueue_entry *e,
    size_t n, bool more)
{
	rqueue_unwait(t);
	*t->q->c.queue_delivered += n;
	t->got(t->cls, status, e, n, more);
	rqueue_take_free(t);
}

static void
rqueue_on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct rqueue_take *t = arg;
	uint64_t now = time_mono_us();
	struct timeval tv;

	(void)fd;
	(void)what;
	/* libevent times from the loop's cached clock, which may run a
	 * little behind: a wait is never cut short. */
	if (now < t->deadline_us) {
		time_us_to_tv(t->deadline_us - now, &tv);
		if (evtimer_add(t->timer, &tv) == 0)
			return;
	}
	rqueue_answer(t, 0, NULL, 0, false);
}

/* Puts t in its client's list until a push or its deadline. */
static int
rqueue_wait(struct rqueue_take *t, uint64_t left_us)
{
	struct rqueue *q = t->q;
	struct rqueue_waitlist *w;
	struct timeval tv;

	if (t->timer == NULL)
		t->timer = evtimer_new(q->base, rqueue_on_deadline, t);
	if (t->timer == NULL)
		return -ENOMEM;
	w = map_get(q->waiters, t->client, RQUEUE_CLIENT_LEN);
	if (w == NULL) {
		w = malloc(sizeof(*w));
		if (w == NULL)
			return -ENOMEM;
		memcpy(w->client, t->client, RQUEUE_CLIENT_LEN);
		TAILQ_INIT(&w->takes);
		if (map_put(q->waiters, w->client, RQUEUE_CLIENT_LEN, w) < 0) {
			free(w);
			return -ENOMEM;
		}
	}
	time_us_to_tv(left_us, &tv);
	if (evtimer_add(t->timer, &tv) < 0) {
		if (TAILQ_EMPTY(&w->takes)) {
			(void)map_remove(q->waiters, w->client,
			    RQUEUE_CLIENT_LEN);
			free(w);
		}
		return -ENOMEM;
	}
	TAILQ_INSERT_TAIL(&w->takes, t, wlink);
	t->waiting = true;
	(*q->c.queue_waiting)++;
	return 0;
}

/* Sends t's operation (again) to the worker. */
static int
rqueue_take_submit(struct rqueue_take *t)
{
	struct rqueue_op *op = rqueue_op_new(t->q, RQUEUE_OP_TAKE, t->client);

	if (op == NULL)
		return -ENOMEM;
	op->after = t->after;
	op->max = t->max;
	op->take = t;
	t->in_flight = true;
	rqueue_submit(t->q, op);
	return 0;
}

/* A push for client is durable: its waiting takes read again. */
static void
rqueue_wake(struct rqueue *q, const uint8_t *client)
{
	struct rqueue_waitlist *w;
	struct rqueue_take *t;
	int r;

	while ((w = map_get(q->waiters, client, RQUEUE_CLIENT_LEN)) != NULL) {
		t = TAILQ_FIRST(&w->takes);
		rqueue_unwait(t);
		r = rqueue_take_submit(t);
		if (r < 0)
			rqueue_answer(t, r, NULL, 0, false);
	}
}

/* What a take's operation brought back. */
static void
rqueue_take_done(struct rqueue *q, struct rqueue_op *op)
{
	struct rqueue_take *t = op->take;
	uint64_t now = time_mono_us();
	int r;

	*q->c.queue_acked += op->deleted;
	*q->c.queue_entries -= op->deleted;
	if (op->status == -ERANGE)
		(*q->c.queue_bad_cursor)++;
	else if (op->status < 0 && op->status != -ECANCELED)
		(*q->c.queue_failed)++;
	/* Every take of that client may meet it again: said once. */
	*q->c.queue_damaged += op->damaged;
	if (op->damaged > 0 && !q->damaged) {
		log_err("receipt queue: damaged entries in the database,"
		        " skipped (intermediary.queue_damaged)");
		q->damaged = true;
	}
	t->in_flight = false;
	if (t->cancelled) {
		rqueue_take_free(t);
		return;
	}
	if (op->status < 0 || op->n > 0 || t->deadline_us <= now) {
		rqueue_answer(t, op->status, op->e, op->n, op->more);
		return;
	}
	r = q->closing ? -ECANCELED : rqueue_wait(t, t->deadline_us - now);
	if (r < 0)
		rqueue_answer(t, r, NULL, 0, false);
}

/* --- completions ----------------------------------------------------- */

/* Logs a failing disk once when writes start failing, and once when they
 * work again. */
static void
rqueue_note(struct rqueue *q, const struct rqueue_op *op)
{
	if (op->kind == RQUEUE_OP_NOTE && !q->failing) {
		log_warn("receipt queue: %s; its writes fail until the disk"
		         " takes them again",
		    op->note);
		q->failing = true;
	} else if (op->kind == RQUEUE_OP_NOTE) {
		log_debug("receipt queue: %s", op->note);
	} else if (op->committed && q->failing) {
		log_notice("receipt queue: the disk takes writes again");
		q->failing = false;
	}
}

static void
rqueue_push_done(struct rqueue *q, struct rqueue_op *op)
{
	if (op->status == 0) {
		*q->c.queue_pushed += op->n;
		*q->c.queue_entries += op->n;
		*q->c.queue_duplicate += op->skipped;
	} else if (op->refused) {
		(*q->c.queue_refused)++;
	} else if (op->status != -ECANCELED) {
		(*q->c.queue_failed)++;
	}
	if (op->done != NULL)
		op->done(op->cls, op->status);
	if (op->status == 0 && op->n > 0 && !q->closing)
		rqueue_wake(q, op->client);
}

/* Applies op, calls its callback and frees it. */
static void
rqueue_finish(struct rqueue *q, struct rqueue_op *op)
{
	if (op->committed)
		(*q->c.queue_commits)++;
	rqueue_note(q, op);
	if (op->kind != RQUEUE_OP_NOTE)
		q->pending--;
	switch (op->kind) {
	case RQUEUE_OP_PUSH:
		rqueue_push_done(q, op);
		break;
	case RQUEUE_OP_TAKE:
		rqueue_take_done(q, op);
		break;
	case RQUEUE_OP_EXPIRE:
		*q->c.queue_expired += op->deleted;
		*q->c.queue_entries -= op->deleted;
		q->expiring = false;
		if (op->more && !q->closing)
			rqueue_expire_now(q);
		break;
	case RQUEUE_OP_NOTE:
		break;
	}
	rqueue_op_free(op);
}

/* Takes the whole done list and finishes it. */
static void
rqueue_drain(struct rqueue *q)
{
	struct rqueue_op_list done = TAILQ_HEAD_INITIALIZER(done);
	struct rqueue_op *op;

	(void)pthread_mutex_lock(&q->sh.mu);
	TAILQ_CONCAT(&done, &q->sh.done, link);
	(void)pthread_mutex_unlock(&q->sh.mu);
	while ((op = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, op, link);
		rqueue_finish(q, op);
	}
}

static void
rqueue_on_done(evutil_socket_t fd, short what, void *arg)
{
	uint64_t n;

	(void)what;
	(void)!read(fd, &n, sizeof(n));
	rqueue_drain(arg);
}

void
rqueue_expire_now(struct rqueue *q)
{
	struct rqueue_op *op;

	if (q->expiring || q->closing)
		return;
	op = rqueue_op_new(q, RQUEUE_OP_EXPIRE, NULL);
	if (op == NULL)
		return; /* the next period tries again */
	op->after = op->now > q->cfg.keep_s ? op->now - q->cfg.keep_s : 0;
	q->expiring = true;
	rqueue_submit(q, op);
}

static void
rqueue_on_expire(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	rqueue_expire_now(arg);
}

/* --- life ------------------------------------------------------------ */

/* Starts the worker with every signal blocked, so that signals keep
 * going to the loop's thread. */
static int
rqueue_start(struct rqueue *q)
{
	sigset_t all, old;
	int r;

	(void)sigfillset(&all);
	(void)pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&q->thread, NULL, rqueue_worker_main, q);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return log_err_errno(r,
		    "receipt queue: cannot start its thread");
	q->started = true;
	return 0;
}

/* The parts of a queue that hold no disk: lists, eventfd, events, map,
 * counters. */
static int
rqueue_new(struct event_base *base, const struct rqueue_cfg *cfg,
    struct rqueue **ret_q)
{
	struct rqueue *q = calloc(1, sizeof(*q));
	struct timeval period = { .tv_sec = RQUEUE_EXPIRE_PERIOD };
	struct stats *st;

	if (q == NULL)
		return -ENOMEM;
	q->base = base;
	q->cfg = *cfg;
	q->clock = rqueue_clock_real;
	q->efd = -1;
	TAILQ_INIT(&q->sh.submitted);
	TAILQ_INIT(&q->sh.done);
	(void)pthread_mutex_init(&q->sh.mu, NULL);
	(void)pthread_cond_init(&q->sh.cond, NULL);
	*ret_q = q;
	st = cfg->stats;
	if (st == NULL)
		st = q->own_stats = stats_new();
	if (st == NULL || rqueue_bind(q, st) < 0)
		return -ENOMEM;
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd < 0)
		return -errno;
	q->waiters = map_new();
	q->ev_done =
	    event_new(base, q->efd, EV_READ | EV_PERSIST, rqueue_on_done, q);
	q->ev_expire = event_new(base, -1, EV_PERSIST, rqueue_on_expire, q);
	if (q->waiters == NULL || q->ev_done == NULL || q->ev_expire == NULL ||
	    event_add(q->ev_done, NULL) < 0 ||
	    event_add(q->ev_expire, &period) < 0)
		return -ENOMEM;
	return 0;
}

int
rqueue_open(struct event_base *base, const char *path,
    const struct rqueue_cfg *cfg, struct rqueue **ret_q)
{
	struct rqueue *q = NULL;
	uint64_t entries = 0;
	int r;

	if (base == NULL || path == NULL || cfg == NULL ||
	    cfg->max_entries == 0 || cfg->keep_s == 0)
		return -EINVAL;
	r = rqueue_new(base, cfg, &q);
	if (r < 0) {
		log_err_errno(r, "receipt queue: cannot set up");
		goto out;
	}
	r = rqueue_db_open(path, cfg->max_entries, &entries, &q->db);
	if (r == 0)
		r = rqueue_start(q);
	if (r < 0)
		goto out;
	*q->c.queue_entries = entries;
	/* Entries may have aged past RECEIPT_KEEP while the daemon was
	 * down: a first pass as soon as the loop runs. */
	event_active(q->ev_expire, EV_TIMEOUT, 0);
	log_info("receipt queue %s: %llu entries", path,
	    (unsigned long long)entries);
	*ret_q = q;
	q = NULL;
out:
	rqueue_free(q);
	return r;
}

/* Checks one entry of a push. */
static bool
rqueue_entry_is_valid(const struct rqueue_entry *e)
{
	if (e->type == RQUEUE_DONE)
		return e->status <= 0;
	return e->type == RQUEUE_RECEIPT &&
	    memcmp(e->receipt.put_hash, e->put_hash, DHTMSG_HASH_LEN) == 0;
}

/* A push, from an origin (rqueue_push_from) or not (NULL). */
static int
rqueue_push_op(struct rqueue *q, const uint8_t client[RQUEUE_CLIENT_LEN],
    const uint8_t *origin, const struct rqueue_entry *e, size_t n,
    rqueue_done_fn *done, void *cls)
{
	struct rqueue_op *op;

	if (FERRY_BUG(q->closing))
		return -EPROTO;
	if (n == 0 || n > RQUEUE_PUSH_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!rqueue_entry_is_valid(&e[i]) ||
		    (origin != NULL &&
		        (e[i].cursor == 0 || e[i].cursor > INT64_MAX ||
		            (i > 0 && e[i].cursor <= e[i - 1].cursor))))
			return -EINVAL;
	if (q->pending >= RQUEUE_QUEUE_OPS)
		return -EAGAIN;
	op = rqueue_op_new(q, RQUEUE_OP_PUSH, client);
	if (op == NULL || (op->e = calloc(n, sizeof(*e))) == NULL) {
		free(op);
		return -ENOMEM;
	}
	memcpy(op->e, e, n * sizeof(*e));
	op->n = n;
	if (origin != NULL) {
		op->has_origin = true;
		memcpy(op->origin, origin, RQUEUE_CLIENT_LEN);
	}
	op->done = done;
	op->cls = cls;
	rqueue_submit(q, op);
	return 0;
}

int
rqueue_push(struct rqueue *q, const uint8_t client[RQUEUE_CLIENT_LEN],
    const struct rqueue_entry *e, size_t n, rqueue_done_fn *done, void *cls)
{
	return rqueue_push_op(q, client, NULL, e, n, done, cls);
}

int
rqueue_push_from(struct rqueue *q, const uint8_t client[RQUEUE_CLIENT_LEN],
    const uint8_t origin[RQUEUE_CLIENT_LEN], const struct rqueue_entry *e,
    size_t n, rqueue_done_fn *done, void *cls)
{
	return rqueue_push_op(q, client, origin, e, n, done, cls);
}

int
rqueue_take(struct rqueue *q, const uint8_t client[RQUEUE_CLIENT_LEN],
    uint64_t after, unsigned max, uint64_t wait_us, rqueue_got_fn *got,
    void *cls, struct rqueue_take **ret_t)
{
	struct rqueue_take *t;
	int r;

	if (FERRY_BUG(q->closing || got == NULL))
		return -EPROTO;
	if (max == 0 || max > RQUEUE_TAKE_MAX || after > INT64_MAX)
		return -EINVAL;
	if (q->pending >= RQUEUE_QUEUE_OPS)
		return -EAGAIN;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	t->q = q;
	memcpy(t->client, client, RQUEUE_CLIENT_LEN);
	t->after = after;
	t->max = max;
	t->deadline_us = wait_us > 0 ? time_mono_us() + wait_us : 0;
	t->got = got;
	t->cls = cls;
	r = rqueue_take_submit(t);
	if (r < 0) {
		free(t);
		return r;
	}
	*ret_t = t;
	return 0;
}

void
rqueue_cancel(struct rqueue_take *t)
{
	if (t == NULL)
		return;
	if (t->in_flight) {
		t->cancelled = true;
		return;
	}
	rqueue_unwait(t);
	rqueue_take_free(t);
}

struct stats *
rqueue_stats(struct rqueue *q)
{
	return q->cfg.stats != NULL ? q->cfg.stats : q->own_stats;
}

void
rqueue_set_clock(struct rqueue *q, rqueue_clock_fn *fn, void *cls)
{
	q->clock = fn != NULL ? fn : rqueue_clock_real;
	q->clock_cls = cls;
}

static bool
rqueue_waitlist_free(void *cls, const void *key, size_t len, void *value)
{
	struct rqueue_waitlist *w = value;
	struct rqueue_take *t;

	(void)cls;
	(void)key;
	(void)len;
	/* The map is freed after this pass: answer without touching it. */
	while ((t = TAILQ_FIRST(&w->takes)) != NULL) {
		TAILQ_REMOVE(&w->takes, t, wlink);
		t->waiting = false;
		(*t->q->c.queue_waiting)--;
		t->got(t->cls, -ECANCELED, NULL, 0, false);
		rqueue_take_free(t);
	}
	free(w);
	return true;
}

void
rqueue_free(struct rqueue *q)
{
	if (q == NULL)
		return;
	q->closing = true;
	if (q->started) {
		(void)pthread_mutex_lock(&q->sh.mu);
		q->sh.stop = true;
		(void)pthread_cond_signal(&q->sh.cond);
		(void)pthread_mutex_unlock(&q->sh.mu);
		(void)pthread_join(q->thread, NULL);
	} else {
		rqueue_db_close(q->db);
	}
	/* The worker ran everything submitted and is gone: both lists are
	 * this thread's now. */
	rqueue_drain(q);
	if (q->waiters != NULL) {
		map_foreach(q->waiters, rqueue_waitlist_free, NULL);
		map_free(q->waiters);
	}
	if (q->ev_done != NULL)
		event_free(q->ev_done);
	if (q->ev_expire != NULL)
		event_free(q->ev_expire);
	if (q->efd >= 0)
		(void)close(q->efd);
	stats_free(q->own_stats);
	(void)pthread_cond_destroy(&q->sh.cond);
	(void)pthread_mutex_destroy(&q->sh.mu);
	free(q);
}
