/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shared by rqueue.c (the loop's thread), rqueue_worker.c (the worker
 * thread), rqueue_db.c and rqueue_sql.c (the SQLite database), and by
 * tests/unit. The two threads share only the two lists of struct
 * rqueue_shared, under its mutex; the rest belongs to one side, as
 * marked.
 */
#ifndef FERRY_INTERMEDIARY_RQUEUE_INT_H
#define FERRY_INTERMEDIARY_RQUEUE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "intermediary/rqueue.h"

#define RQUEUE_SCHEMA_VERSION 2          /* PRAGMA user_version */
#define RQUEUE_APPLICATION_ID 0x46727251 /* PRAGMA application_id, "FrrQ" */
#define RQUEUE_QUEUE_OPS      65536      /* operations waiting, at most */
#define RQUEUE_EXPIRE_PERIOD  60         /* seconds between expiry passes */
#define RQUEUE_EXPIRE_BATCH   4096       /* entries one expiry pass drops */

struct event;
struct event_base;
struct map;
struct sqlite3;

enum rqueue_op_kind {
	RQUEUE_OP_PUSH,
	RQUEUE_OP_TAKE,
	RQUEUE_OP_EXPIRE, /* drop entries past keep_s; from the queue */
	RQUEUE_OP_NOTE,   /* worker -> loop: a failure to log */
};

/* One operation, owned by whichever list holds it or by the worker
 * between the two; freed by the loop's thread. */
struct rqueue_op {
	TAILQ_ENTRY(rqueue_op) link;
	enum rqueue_op_kind kind;
	uint8_t client[RQUEUE_CLIENT_LEN]; /* push, take */
	uint64_t now;           /* the queue's clock at submission, s */
	struct rqueue_entry *e; /* push: the copies, cursors set by the
				  * worker; take: what it read */
	size_t n;               /* entries of e */
	uint64_t after;         /* take: acknowledged up to here;
				  * expire: drop what was queued before */
	unsigned max;           /* take: entries to answer, at most */
	int status;             /* 0 or a negative errno, by the worker */
	bool refused;           /* push: the client's queue was full */
	bool has_origin;        /* push: rqueue_push_from(), e's cursors
				  * are origin's */
	uint8_t origin[RQUEUE_CLIENT_LEN]; /* push: the forwarder's id */
	uint64_t skipped;         /* push: entries origin had pushed before,
				  * not queued again (n counts the rest) */
	bool more;                /* take: entries wait past e; expire: may
				  * have left expired ones */
	bool committed;           /* last of a transaction that wrote */
	uint64_t deleted;         /* take: acknowledged; expire: expired */
	uint64_t damaged;         /* take: rows skipped, unreadable */
	char *note;               /* note: text to log (malloc'd) */
	rqueue_done_fn *done;     /* push: may be NULL */
	void *cls;                /* for done */
	struct rqueue_take *take; /* take: its handle, the loop's alone */
};

TAILQ_HEAD(rqueue_op_list, rqueue_op);

/* What the two threads share; every member under mu. */
struct rqueue_shared {
	pthread_mutex_t mu;
	pthread_cond_t cond;             /* submitted grew, or stop set */
	struct rqueue_op_list submitted; /* not yet taken by the worker */
	struct rqueue_op_list done;      /* finished, for the loop */
	bool stop; /* rqueue_free(): run what is submitted, then end */
};

/* The counters, "intermediary." + name (ferry-intermediary(7)). */
struct rqueue_ctr {
	uint64_t *queue_pushed;     /* entries queued, durable */
	uint64_t *queue_refused;    /* pushes refused: the client's queue
				     * was full */
	uint64_t *queue_failed;     /* pushes and takes the disk failed */
	uint64_t *queue_delivered;  /* entries answered to takes */
	uint64_t *queue_acked;      /* entries deleted, acknowledged */
	uint64_t *queue_expired;    /* entries dropped at RECEIPT_KEEP */
	uint64_t *queue_bad_cursor; /* takes refused: after never given */
	uint64_t *queue_damaged;    /* entries skipped, unreadable */
	uint64_t *queue_duplicate;  /* forwarded entries pushed before */
	uint64_t *queue_commits;    /* transactions that wrote */
	uint64_t *queue_entries;    /* gauge: entries held */
	uint64_t *queue_waiting;    /* gauge: takes waiting for a push */
};

/* The database (rqueue_db.c, rqueue_sql.c): the worker's once it runs. */
struct rqueue_db;

/* Clock of queued times and expiry: seconds since the epoch. */
typedef uint64_t rqueue_clock_fn(void *cls);

/* The takes waiting for one client's pushes. */
TAILQ_HEAD(rqueue_take_list, rqueue_take);

/* A take, from rqueue_take() until its got runs or it is cancelled. The
 * loop's alone. */
struct rqueue_take {
	struct rqueue *q;
	uint8_t client[RQUEUE_CLIENT_LEN];
	uint64_t after;
	unsigned max;
	uint64_t deadline_us; /* monotonic; 0: never waits */
	rqueue_got_fn *got;
	void *cls;
	struct event *timer; /* while waiting: at deadline_us */
	bool in_flight;      /* its operation is with the worker */
	bool cancelled;      /* in flight when cancelled: freed on return */
	bool waiting;        /* in its client's list of q->waiters */
	TAILQ_ENTRY(rqueue_take) wlink;
};

/* The queue. The loop's thread owns what is not marked otherwise. */
struct rqueue {
	struct event_base *base;
	struct event *ev_done;   /* efd readable: operations finished */
	struct event *ev_expire; /* every RQUEUE_EXPIRE_PERIOD */
	int efd;                 /* eventfd, worker -> loop */
	struct rqueue_cfg cfg;
	struct stats *own_stats; /* when cfg.stats was NULL */
	struct rqueue_ctr c;
	struct map *waiters; /* client -> struct rqueue_take_list */
	uint64_t pending;    /* operations submitted, not finished */
	rqueue_clock_fn *clock;
	void *clock_cls;
	bool expiring;           /* an expiry pass is submitted */
	bool failing;            /* writes fail; logged when it began */
	bool damaged;            /* a damaged entry was read; logged */
	bool closing;            /* in rqueue_free() */
	struct rqueue_shared sh; /* shared with the worker */
	pthread_t thread;        /* the worker */
	bool started;            /* thread is running, or joinable */
	struct rqueue_db *db;    /* the worker's while it runs */
};

/*
 * rqueue_db.c: opens (creating if absent) and checks the database at
 * path, for entries bounded by max_entries per client and kept keep_s.
 * Sets *ret_entries to the entries it holds. Logs its own errors once;
 * errors as rqueue_open().
 */
int rqueue_db_open(const char *path, unsigned max_entries,
    uint64_t *ret_entries, struct rqueue_db **ret_db);

/*
 * rqueue_sql.c: the statements. rqueue_sql_new() takes db, which
 * rqueue_db.c opened and checked, prepares the statements and counts the
 * entries. On success it owns db; on error the caller still does.
 */
int rqueue_sql_new(struct sqlite3 *db, const char *path, unsigned max_entries,
    uint64_t *ret_entries, struct rqueue_db **ret_db);
/* Finalises the statements and closes the database. NULL is allowed. */
void rqueue_db_close(struct rqueue_db *d);
/* Runs op (push, take or expire) inside the open transaction, setting
 * its results. 0 when done, whatever op->status says; a negative errno
 * when the transaction cannot go on. */
int rqueue_db_run(struct rqueue_db *d, struct rqueue_op *op);
/* BEGIN IMMEDIATE: 0 or a negative errno. COMMIT: 1 if the transaction
 * wrote, 0 if it changed nothing, or a negative errno. ROLLBACK, if a
 * transaction is open. */
int rqueue_db_begin(struct rqueue_db *d);
int rqueue_db_commit(struct rqueue_db *d);
void rqueue_db_rollback(struct rqueue_db *d);
/* SQLite's message for the last error on d. */
const char *rqueue_db_errmsg(const struct rqueue_db *d);

/* rqueue_worker.c: the thread's body; arg is the struct rqueue. Runs
 * until sh.stop is set and nothing is submitted; then closes q->db. */
void *rqueue_worker_main(void *arg);

/* For tests. Replaces the clock (NULL: the real one). */
void rqueue_set_clock(struct rqueue *q, rqueue_clock_fn *fn, void *cls);
/* Runs an expiry pass now instead of at the next period. */
void rqueue_expire_now(struct rqueue *q);

#endif /* FERRY_INTERMEDIARY_RQUEUE_INT_H */
