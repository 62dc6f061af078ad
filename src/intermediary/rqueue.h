/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary's receipt queue, intermediary layer (issue 15,
 * ferry-intermediary(7) "GET /v1/receipts"): per client key, the storing
 * peers' receipts and the end of each relayed PUT, kept in an SQLite
 * database of their own (WAL) until a taker acknowledges them by cursor.
 * A worker thread does all disk work; the event loop only queues.
 */
#ifndef FERRY_INTERMEDIARY_RQUEUE_H
#define FERRY_INTERMEDIARY_RQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cfg.h"
#include "dht/dhtkey.h"
#include "dht/dhtmsg.h"

#define RQUEUE_CLIENT_LEN   32                    /* an Ed25519 public key */
#define RQUEUE_DB_FILE      "intermediary.sqlite" /* the usual file name */
#define RQUEUE_TAKE_MAX     1000   /* entries one take answers, at most */
#define RQUEUE_PUSH_MAX     1024   /* entries of one push, at most */
#define RQUEUE_MAX_DEFAULT  10000  /* [intermediary] QUEUE_MAX */
#define RQUEUE_KEEP_DEFAULT 604800 /* [intermediary] RECEIPT_KEEP, s */

struct event_base;
struct rqueue;
struct rqueue_take;
struct stats;

enum rqueue_type {
	RQUEUE_RECEIPT = 1, /* a storing peer's signed receipt */
	RQUEUE_DONE = 2,    /* the relay of a PUT has ended */
};

/* One entry of a client's queue. */
struct rqueue_entry {
	uint64_t cursor; /* set by the queue: grows per client, never reused;
			  * ignored by rqueue_push() */
	uint64_t queued; /* set by the queue: when it was queued, seconds
			  * since the epoch; ignored by rqueue_push() */
	enum rqueue_type type;
	struct dhtkey key;                 /* the block's */
	uint8_t put_hash[DHTMSG_HASH_LEN]; /* of the signed PUT */
	struct dhtmsg_receipt receipt;     /* RECEIPT: as the storing peer
					    * signed it; its put_hash equals
					    * the entry's */
	int status;        /* DONE: the relay's result, 0 or a negative
			    * errno (the HTTP layer names it) */
	unsigned receipts; /* DONE: receipts queued for that PUT */
};

/* Settings ([intermediary] of ferryd.conf(5)). */
struct rqueue_cfg {
	unsigned max_entries; /* per client; a push past it is refused */
	uint64_t keep_s;      /* entries are dropped this long after being
			       * queued, acknowledged or not */
	struct stats *stats;  /* counters "intermediary.queue_*" go here;
			       * NULL: the queue keeps its own */
};

/* The keys rqueue_cfg_parse() reads, for the daemon's schema. */
extern const struct cfg_schema_key rqueue_cfg_keys[];
/* Fills ret (stats NULL) from cfg's [intermediary] section; logs and
 * returns -EINVAL for a bad value. */
int rqueue_cfg_parse(struct cfg *cfg, struct rqueue_cfg *ret);

/* Result of rqueue_push(): 0 once the entries are durable, or a negative
 * errno (see rqueue_push). */
typedef void rqueue_done_fn(void *cls, int status);

/*
 * Result of rqueue_take(): status 0 with the n entries past the take's
 * after (n may be 0), oldest first, borrowed for the call only, and more
 * true if more entries past them wait; or a negative errno with n 0.
 * The take is over when this runs: its handle is invalid.
 */
typedef void rqueue_got_fn(void *cls, int status, const struct rqueue_entry *e,
    size_t n, bool more);

/*
 * Opens the queue's database at path, creating it if there is none.
 * Callbacks run on base. Blocks the calling thread while it checks the
 * database (PRAGMA quick_check reads all of it): call it at start,
 * before the loop runs. An existing database is never recreated or
 * repaired; the error is logged once with the path and SQLite's message,
 * and returned:
 *   -EUCLEAN  not an SQLite database, corrupt, or another program's
 *   -ENOTSUP  a schema version this code does not know
 *   -EBUSY    in use by another process
 *   -EROFS, -EACCES, -EISDIR, -EIO, -ENOMEM  as the system said
 *   -EINVAL   cfg out of range (max_entries 0, keep_s 0)
 */
int rqueue_open(struct event_base *base, const char *path,
    const struct rqueue_cfg *cfg, struct rqueue **ret_q);

/*
 * Queues copies of the n entries e for client, in order, with cursors
 * that follow every cursor the client was given, here, before (also
 * across restarts). All or none: a push that would take the client past
 * max_entries is refused whole. Returns 0 if queued: then done (may be
 * NULL) is called exactly once, on the loop, never from inside this
 * call, with
 *   0         durable: the entries survive a crash of the process, and
 *             a take asked from now on sees them
 *   -ENOSPC   refused: the client's queue is full (counted in
 *             queue_refused), or the disk is full (queue_failed)
 *   -EROFS, -EIO  the disk failed the write; nothing was queued
 * Takes waiting for client are answered once the entries are durable.
 * Otherwise returns, and done is never called: -EINVAL (n 0 or over
 * RQUEUE_PUSH_MAX, a type unknown, a receipt whose put_hash differs from
 * its entry's), -EAGAIN (too much queued: retry after a completion),
 * -ENOMEM.
 */
int rqueue_push(struct rqueue *q, const uint8_t client[RQUEUE_CLIENT_LEN],
    const struct rqueue_entry *e, size_t n, rqueue_done_fn *done, void *cls);

/*
 * rqueue_push() of entries another intermediary, origin (its peer id),
 * forwards from its own queue for client (ferry-intermediary(7),
 * FEDERATION): each e[i].cursor is the cursor origin gave the entry, 1
 * to INT64_MAX and growing along e. The queue remembers, with the
 * entries and in the same transaction, the last of origin's cursors it
 * queued for client, and skips (queue_duplicate) the entries at or
 * below it: a batch origin sends again because our acknowledgement was
 * lost is not queued twice, also when the client took the first copy
 * already. The entries queued get cursors of this queue, as by
 * rqueue_push(). done's 0 then means that every entry up to e[n - 1]
 * is held (or was taken); -EINVAL as rqueue_push(), and for cursors out
 * of order.
 */
int rqueue_push_from(struct rqueue *q, const uint8_t client[RQUEUE_CLIENT_LEN],
    const uint8_t origin[RQUEUE_CLIENT_LEN], const struct rqueue_entry *e,
    size_t n, rqueue_done_fn *done, void *cls);

/*
 * Takes from client's queue, for whoever answers for the client (the
 * client itself, or an intermediary of the federation forwarding its
 * entries): acknowledges, deleting them, the entries with cursors up to
 * after, then answers those past it, up to max, oldest first. When there
 * are none and wait_us is above 0, the answer waits until entries are
 * pushed for client (then comes with them) or wait_us has passed (then
 * with none). Entries the database holds damaged are skipped, counted
 * and logged once. got (not NULL) is called exactly once, on the loop, never
 * from inside this call, unless rqueue_cancel() comes first; with
 * status:
 *   0          see rqueue_got_fn
 *   -ERANGE    after is past every cursor given to client: nothing was
 *              deleted (a cursor this intermediary never gave)
 *   -EROFS, -EIO, -ENOSPC  the disk failed; nothing was deleted
 *   -ECANCELED rqueue_free() ran first
 * An answer lost on its way leaves its entries queued: the next take
 * with the same after answers them again. Returns 0 and the take in
 * ret_t (for rqueue_cancel(); valid until got runs), or -EINVAL (max 0
 * or over RQUEUE_TAKE_MAX, after over INT64_MAX), -EAGAIN (too much
 * queued), -ENOMEM; then got is never called.
 */
int rqueue_take(struct rqueue *q, const uint8_t client[RQUEUE_CLIENT_LEN],
    uint64_t after, unsigned max, uint64_t wait_us, rqueue_got_fn *got,
    void *cls, struct rqueue_take **ret_t);

/* Ends t without calling its got: its taker is gone (the HTTP connection
 * closed). What t deleted stays deleted, as the taker asked. t must be a
 * take whose got has not run. */
void rqueue_cancel(struct rqueue_take *t);

/* The counters "intermediary.queue_*" (ferry-intermediary(7)
 * STATISTICS): cfg's stats, or the queue's own. */
struct stats *rqueue_stats(struct rqueue *q);

/*
 * Closes the queue: the worker finishes every operation already queued
 * (pushes accepted are committed), then the database is closed. Before
 * returning it calls every callback not yet called: pushes and takes
 * with their results, takes still waiting with -ECANCELED. Those
 * callbacks must not use q. Never call it from a callback of q. NULL is
 * allowed.
 */
void rqueue_free(struct rqueue *q);

#endif /* FERRY_INTERMEDIARY_RQUEUE_H */
