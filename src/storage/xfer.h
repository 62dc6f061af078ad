/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The transfer engine, storage layer (DESIGN.md "Storage"; issue 13,
 * "Transfers"): files put into the DHT as sealed chunks under a manifest
 * and got back from their URI, many blocks in flight, resumable, with
 * progress. The daemon never opens a path: the client hands it an open
 * file (put: the file; get: the temporary file beside the target, which
 * the client renames once told the transfer succeeded).
 *
 * A transfer belongs to the uid of the client that started it: its
 * convergence secret, and who may list or cancel it. One that stops
 * before the end (its client gone, the daemon stopped, a failure that
 * may pass) stays resumable: running the same put (the same file,
 * unchanged) or the same get (the same URI into the same .part file)
 * again goes on from what its records in the block store's database say
 * is done.
 */
#ifndef FERRY_STORAGE_XFER_H
#define FERRY_STORAGE_XFER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/cfg.h"

struct dht;
struct event_base;
struct stats;
struct store;
struct xfer;

enum xfer_kind { XFER_PUT = 1, XFER_GET = 2 };
enum xfer_state {
	XFER_RUNNING = 1,   /* a client waits for it */
	XFER_RESUMABLE = 2, /* stopped; records of what is done are kept */
};

/* What a transfer has done so far. */
struct xfer_progress {
	uint64_t id;
	uint64_t bytes_done;   /* file bytes whose blocks are done */
	uint64_t bytes_total;  /* the file's size */
	uint64_t blocks_done;  /* chunks and manifest nodes */
	uint64_t blocks_total; /* chunks, and nodes once known (put: 0
				* until the manifest is finished) */
	uint64_t rate;         /* bytes a second, over the last seconds */
	uint32_t in_flight;    /* blocks asked of the DHT now */
	uint32_t window;       /* the most it may have in flight now */
	uint32_t peers;        /* distinct peers its blocks went to (put:
				* storers of receipts) or came from (get:
				* the peers that answered) in the last
				* 10 s; this daemon not counted */
};

/* How a transfer ended. Borrowed for the callback. */
struct xfer_result {
	uint64_t id;
	int status;      /* 0, or a negative errno */
	const char *why; /* a sentence for status < 0, or NULL */
	bool resumable;  /* status < 0 and its records are kept */
	const char *uri; /* the file's URI (status 0; put and get) */
	uint64_t size;
	uint64_t blocks_sent;    /* put: blocks put to the DHT */
	uint64_t blocks_skipped; /* put: receipts recorded by an earlier
				  * run, not sent again; get: chunks
				  * found written by an earlier run */
	uint8_t xxh128[16];      /* XXH128 of the whole file, checked */
};

typedef void xfer_progress_fn(void *cls, const struct xfer_progress *p);
typedef void xfer_done_fn(void *cls, const struct xfer_result *r);

/* What a client asks for. */
struct xfer_req {
	int fd;               /* taken by xfer_put/xfer_get, also on error */
	uid_t uid;            /* the client's (SO_PEERCRED) */
	const char *label;    /* put: a name for lists; may be "" */
	const char *uri;      /* get: the file's URI */
	unsigned replication; /* put: 0 the DHT's default */
	uint32_t progress_ms; /* between progress calls; 0 none */
	xfer_progress_fn *progress;
	xfer_done_fn *done; /* called once, never from inside the call */
	void *cls;
};

/* One transfer, for lists. Borrowed for the callback. */
struct xfer_info {
	uint64_t id;
	enum xfer_kind kind;
	enum xfer_state state;
	uid_t uid;
	uint64_t bytes_done;
	uint64_t bytes_total;
	uint64_t updated_s; /* seconds since the epoch */
	const char *label;  /* put: the client's name; get: the URI */
};
typedef void xfer_list_fn(void *cls, const struct xfer_info *info);

/* The [storage] keys with their defaults. */
extern const struct cfg_schema_key xfer_cfg_keys[];
/* Checks [storage]; logs each problem. 0 or -EINVAL. */
int xfer_config_check(struct cfg *cfg);

/*
 * Starts the engine: its worker threads, its records in the block
 * store's database (read back through store_job, so the loop never
 * waits) and the convergence secrets under state_dir. dht and store
 * NULL (no DHT runs): *ret is NULL, and the service answers every
 * storage request -ENOTCONN. Borrowed: base, stats, dht, store.
 */
int xfer_new(struct event_base *base, struct cfg *cfg, struct stats *stats,
    struct dht *dht, struct store *store, const char *state_dir,
    struct xfer **ret);
/* Applies a checked [storage] to new transfers. */
int xfer_reload(struct xfer *x, struct cfg *cfg);
/* Stops every transfer (they stay resumable; their clients' done is not
 * called) and frees the engine. NULL is allowed. */
void xfer_free(struct xfer *x);

/*
 * Starts a put of req->fd (a regular file open for reading) or a get of
 * req->uri into req->fd (a regular file open for writing, not O_APPEND).
 * 0 with *ret_id set, and then req->done is called once; or a negative
 * errno, with *why a sentence for the client: -EINVAL (a malformed URI,
 * not a regular file, opened the wrong way), -EBUSY (this file is being
 * transferred already), -ENOMEM.
 */
int xfer_put(struct xfer *x, const struct xfer_req *req, uint64_t *ret_id,
    const char **why);
int xfer_get(struct xfer *x, const struct xfer_req *req, uint64_t *ret_id,
    const char **why);
/* The client of transfer id went away: it stops and stays resumable;
 * its callbacks are not called again. */
void xfer_detach(struct xfer *x, uint64_t id);
/* Stops transfer id and forgets its records (its client's done gets
 * -ECANCELED). 0, -ENOENT (none, or another user's for a non-admin),
 * -EPERM. */
int xfer_cancel(struct xfer *x, uint64_t id, uid_t uid, bool admin);
/* Calls fn for each transfer of uid (every one's if all), running and
 * resumable. */
void xfer_list(struct xfer *x, uid_t uid, bool all, xfer_list_fn *fn,
    void *cls);

#endif /* FERRY_STORAGE_XFER_H */
