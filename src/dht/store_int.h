/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shared by store.c (the caller's thread), store_worker.c (the worker
 * thread) and store_db.c (the SQLite database), and by tests/unit. The
 * two threads share only the two queues of struct store_queue, under its
 * mutex; everything else belongs to one side, as marked.
 */
#ifndef FERRY_DHT_STORE_INT_H
#define FERRY_DHT_STORE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "dht/store.h"

#define STORE_SCHEMA_VERSION 1           /* PRAGMA user_version */
#define STORE_PAGE_SIZE      65536       /* of a new database, bytes */
#define STORE_APPLICATION_ID 0x46727279  /* PRAGMA application_id, "Frry" */
#define STORE_QUEUE_BYTES    (64u << 20) /* bytes of puts waiting, at most */
#define STORE_QUEUE_OPS      65536       /* operations waiting, at most */
#define STORE_EXPIRE_PERIOD  60          /* seconds between expiry passes */
#define STORE_EXPIRE_BATCH   4096        /* blocks one expiry pass drops */

struct event;
struct event_base;
struct map;
struct sqlite3;
struct sqlite3_stmt;

enum store_op_kind {
	STORE_OP_PUT,
	STORE_OP_GET,
	STORE_OP_EXPIRE, /* drop expired blocks; submitted by the store */
	STORE_OP_NOTE,   /* worker -> loop: a message to log */
	STORE_OP_JOB,    /* a layer above's work on the database */
};

/* A block a worker's operation deleted, for the caller's index. */
struct store_gone {
	uint8_t key[STORE_KEY_LEN];
	bool expired; /* dropped at its expiry; else evicted for the quota */
};

/* One operation, owned by whichever queue holds it or by the worker
 * between the two queues; freed by the caller's thread. */
struct store_op {
	TAILQ_ENTRY(store_op) link;
	enum store_op_kind kind;
	uint8_t key[STORE_KEY_LEN]; /* put, get */
	uint8_t *data;              /* put: the copy; get: what was read */
	size_t len;                 /* of data */
	uint64_t expiry;            /* put: asked, then held; get: read */
	uint64_t now;               /* the store's clock at submission, s */
	int status;                 /* 0 or a negative errno, by the worker */
	bool refused;               /* put: -ENOSPC came from the quota */
	bool committed;             /* last of a transaction that wrote */
	bool more;                  /* expire: may have left expired blocks */
	struct store_gone *gone;    /* blocks this operation deleted */
	size_t n_gone;              /* entries of gone used */
	size_t gone_cap;            /* entries of gone allocated */
	char *note;                 /* note: text to log (malloc'd) */
	store_done_fn *done;        /* put: may be NULL */
	store_got_fn *got;          /* get */
	store_job_fn *job;          /* job: run on the worker */
	void *cls;                  /* for done, got or job */
};

TAILQ_HEAD(store_op_list, store_op);

/* What the two threads share; every member under mu. */
struct store_queue {
	pthread_mutex_t mu;
	pthread_cond_t cond;            /* signalled when submitted grows
					 * or stop is set */
	struct store_op_list submitted; /* not yet taken by the worker */
	struct store_op_list done;      /* finished, for the caller */
	bool stop;                      /* store_free(): take no more */
	size_t batch_max;               /* operations per transaction,
					 * 0: all */
};

/* The database (store_db.c): the worker thread's alone once it runs. */
struct store_db;

/* Clock of expiry decisions: seconds since the epoch. */
typedef uint64_t store_clock_fn(void *cls);

/* The store. The caller's thread owns what is not marked otherwise. */
struct store {
	struct event_base *base;
	struct event *ev_done;    /* efd readable: operations finished */
	struct event *ev_expire;  /* every STORE_EXPIRE_PERIOD */
	int efd;                  /* eventfd, worker -> loop */
	struct map *index;        /* key -> struct store_entry, committed */
	struct store_stats stats; /* pending counts submitted operations */
	uint64_t queued_bytes;    /* of puts submitted, not finished */
	store_clock_fn *clock;    /* expiry decisions */
	void *clock_cls;
	bool expiring;        /* an expiry pass is submitted */
	bool failing;         /* writes fail; logged when it began */
	bool closing;         /* in store_free() */
	struct store_queue q; /* shared with the worker */
	pthread_t thread;     /* the worker */
	bool started;         /* thread is running, or joinable */
	struct store_db *db;  /* the worker's while it runs */
};

/* One block found by store_db_open(), for the caller's index. */
typedef int store_db_row_fn(void *cls, const uint8_t key[STORE_KEY_LEN],
    uint64_t size, uint64_t expiry);

/*
 * store_db.c: opens (creating if absent) and checks dir/STORE_DB_FILE,
 * calls fn for every block held, and returns the database ready for the
 * worker. Logs its own errors once; errors as store_open().
 */
int store_db_open(const char *dir, const uint8_t own_id[STORE_KEY_LEN],
    uint64_t quota, store_db_row_fn *fn, void *cls, struct store_db **ret_db);

/*
 * store_sql.c: the statements. store_sql_new() takes the connection db
 * of path, which store_db.c opened and checked: prepares the statements,
 * takes the write lock, records own_id (recomputing every distance if it
 * changed) and calls fn for every block. On success it owns db; on error
 * the caller still does. Logs its own errors once.
 */
int store_sql_new(struct sqlite3 *db, const char *path,
    const uint8_t own_id[STORE_KEY_LEN], uint64_t quota, store_db_row_fn *fn,
    void *cls, struct store_db **ret_db);
/* Finalises the statements and closes the database. NULL is allowed. */
void store_db_close(struct store_db *d);
/* Runs one write operation (put or expire) inside the open transaction,
 * setting op's status and gone list. 0 when done, whatever op->status
 * says; a negative errno when the transaction cannot go on. */
int store_db_write(struct store_db *d, struct store_op *op);
/* Runs a job (store_job) in a savepoint of the open transaction,
 * setting op's status to its result. 0 when done; a negative errno when
 * the transaction cannot go on. */
int store_db_job(struct store_db *d, struct store_op *op);
/* Runs a get outside any transaction, setting op's status and data. */
void store_db_read(struct store_db *d, struct store_op *op);
/* BEGIN IMMEDIATE: 0 or a negative errno. COMMIT: 1 if the transaction
 * wrote (a sync of the WAL), 0 if it changed nothing, or a negative
 * errno. ROLLBACK, if a transaction is open, undoing what
 * store_db_write() counted. */
int store_db_begin(struct store_db *d);
int store_db_commit(struct store_db *d);
void store_db_rollback(struct store_db *d);
/* SQLite's message for the last error on d. */
const char *store_db_errmsg(const struct store_db *d);

/* store_worker.c: the thread's body; arg is the struct store. Takes
 * ownership of st->db and closes it before returning, once q.stop is set
 * and the transaction it was in is over. */
void *store_worker_main(void *arg);

/* For tests and benchmarks. Replaces the clock (default: the real one). */
void store_set_clock(struct store *st, store_clock_fn *fn, void *cls);
/* Runs an expiry pass now instead of at the next period. */
void store_expire_now(struct store *st);
/* At most n operations per transaction (1: one commit per put); 0, the
 * default, takes everything queued. */
void store_set_batch_max(struct store *st, size_t n);

#endif /* FERRY_DHT_STORE_INT_H */
