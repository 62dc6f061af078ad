/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's block store, dht layer (DESIGN.md "Block store"; issues 12
 * and 16): immutable, content-addressed blocks in one SQLite database in
 * WAL mode in the daemon's state directory. A worker thread does all disk
 * work, so the event loop never waits on a disk; puts queued together are
 * committed in one transaction (group commit).
 */
#ifndef FERRY_DHT_STORE_H
#define FERRY_DHT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_KEY_LEN   32              /* bytes of a block key, a peer id */
#define STORE_BLOCK_MAX (8u << 20)      /* largest block, bytes */
#define STORE_DB_FILE   "blocks.sqlite" /* the database, in the given dir */

struct event_base;
struct sqlite3;
struct store;

/* What the store did, as the caller's thread has learnt it. */
struct store_stats {
	uint64_t blocks;  /* blocks held (committed, not yet dropped) */
	uint64_t bytes;   /* their data bytes, what the quota counts */
	uint64_t quota;   /* bytes, as given to store_open() */
	uint64_t puts;    /* puts acknowledged durable (status 0) */
	uint64_t commits; /* transactions that wrote: one WAL sync each */
	uint64_t evicted; /* blocks dropped for closer ones (quota) */
	uint64_t refused; /* puts refused for the quota (-ENOSPC) */
	uint64_t expired; /* blocks dropped at their expiry */
	uint64_t failed;  /* puts the disk failed (full, read-only, I/O) */
	uint64_t pending; /* operations submitted, callback not yet called */
};

/* Result of store_put(): 0 once the block is durable, or a negative
 * errno (see store_put). */
typedef void store_done_fn(void *cls, int status);
/* Result of store_get(): status 0 with the block's bytes, borrowed for
 * the call only, and its expiry; or a negative errno with data NULL. */
typedef void store_got_fn(void *cls, int status, const uint8_t *data,
    size_t len, uint64_t expiry);

/*
 * Opens the store in dir/STORE_DB_FILE, creating the database if there is
 * none, for a node whose id is own_id (copied) and which keeps at most
 * quota_bytes of block data. Callbacks run on base. Blocks the calling
 * thread while it checks the database (PRAGMA quick_check, which reads all
 * of it) and loads its index: call it at start, before the loop runs.
 * An existing database is never recreated or repaired: the error is
 * logged once with the path and SQLite's message, and returned:
 *   -EUCLEAN  not an SQLite database, truncated, corrupt, or another
 *             program's database
 *   -ENOTSUP  a schema version this code does not know
 *   -EBUSY    in use by another process
 *   -EROFS, -EACCES, -EISDIR, -EIO, -ENOMEM  as the system said
 */
int store_open(struct event_base *base, const char *dir,
    const uint8_t own_id[STORE_KEY_LEN], uint64_t quota_bytes,
    struct store **ret_st);

/*
 * Stores a copy of the len bytes at data under key, to be dropped at
 * expiry (seconds since the epoch). The store does not check that key is
 * the hash of data: callers do. Putting a key held already keeps the
 * bytes held and extends the expiry to the later of the two (renewal).
 * Returns 0 if queued: then cb (may be NULL) is called exactly once, on
 * the event loop, never from inside this call, with
 *   0        the block is durable: it survives a crash of the process
 *            and, if the disk honours fsync, a power cut
 *   -ENOSPC  refused for the quota (no farther blocks to evict), or the
 *            disk is full (stats tell which: refused or failed)
 *   -EROFS, -EIO  the disk failed the write; nothing was corrupted
 *   -ECANCELED  store_free() ran first and the put never began
 * Otherwise returns, and cb is never called:
 *   -EINVAL len 0 or expiry not in the future; -EMSGSIZE len above
 *   STORE_BLOCK_MAX; -EAGAIN too much queued (retry after a completion);
 *   -ENOMEM
 */
int store_put(struct store *st, const uint8_t key[STORE_KEY_LEN],
    const void *data, size_t len, uint64_t expiry, store_done_fn *cb,
    void *cls);

/*
 * Reads the block under key. Returns 0 if queued: cb (not NULL) is then
 * called exactly once, on the event loop, never from inside this call,
 * with 0 and the bytes, -ENOENT if the block is absent or expired, -EIO,
 * -ENOMEM, or -ECANCELED from store_free(). A get sees the puts whose
 * callbacks have run; it may run before puts queued with it. Otherwise
 * returns -EAGAIN (too much queued) or -ENOMEM, and cb is never called.
 */
int store_get(struct store *st, const uint8_t key[STORE_KEY_LEN],
    store_got_fn *cb, void *cls);

/*
 * Work of a layer above on the store's database, so that its records
 * live in the same file and reach the disk with the blocks, and the
 * event loop never waits on them (the transfer engine's progress, issue
 * 13). fn runs on the store's worker thread, inside its next write
 * transaction and a savepoint of its own: it may use db and what cls
 * points to, nothing else, and must not begin, commit or end the
 * transaction. Its tables are its own (never "blocks" or "meta"). It
 * returns 0 or a negative errno; on error what it changed is undone and
 * the transaction goes on without it. Returns 0 if queued: cb (not
 * NULL) is then called exactly once on the event loop, never from
 * inside this call, with fn's result once the transaction is durable,
 * the transaction's error if it failed (nothing fn did remains), or
 * -ECANCELED from store_free() if fn never ran. Otherwise returns
 * -EAGAIN (too much queued) or -ENOMEM, and neither is called.
 */
typedef int store_job_fn(struct sqlite3 *db, void *cls);
int store_job(struct store *st, store_job_fn *fn, store_done_fn *cb,
    void *cls);

/* True if a block under key is held and not expired, from an index in
 * memory (no I/O): true from the put's callback on, false from the
 * moment the callback of the operation that dropped it would run. */
bool store_has(const struct store *st, const uint8_t key[STORE_KEY_LEN]);

/* Fills ret with the counters. */
void store_stats(const struct store *st, struct store_stats *ret);

/*
 * Closes the store: lets the worker finish the transaction it is in, joins
 * it and closes the database. Before returning it calls every callback
 * not yet called: with the operation's result if the worker finished it
 * (a put may thus still report 0), -ECANCELED if it never began (such a
 * put is not stored). Those callbacks must not use st. Never call it
 * from a store callback. NULL is allowed.
 */
void store_free(struct store *st);

#endif /* FERRY_DHT_STORE_H */
