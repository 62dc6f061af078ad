/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * State shared by the transfer engine's files (see xfer.h), storage
 * layer: the engine, one transfer ("task") and what each file offers the
 * others. xfer.c keeps the tasks, their progress and the [storage]
 * configuration; xfer_put.c and xfer_get.c run puts and gets;
 * xfer_db.c keeps their records in the block store's database;
 * xfer_pool.c and xfer_window.c are the worker threads and the window.
 *
 * Lifetimes: a task is ended once (done, failed, detached, cancelled,
 * engine stopping) and freed from the loop once its last worker job has
 * come back, never inside the call that ended it.
 * DHT requests and database jobs cannot be taken back: each holds a
 * small record whose task pointer is cleared when the task is freed.
 */
#ifndef FERRY_STORAGE_XFER_INT_H
#define FERRY_STORAGE_XFER_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "dht/dhtkey.h"
#include "storage/chunk.h"
#include "storage/uri.h"
#include "storage/xfer.h"
#include "storage/xfer_pool.h"
#include "storage/xfer_window.h"

#define XFER_TICK_US       (100u * 1000)
#define XFER_RATE_WINDOW_S 2.0            /* rate: an average over about this */
#define XFER_FLUSH_RECORDS 64             /* done records written in one job */
#define XFER_FLUSH_US      (1000u * 1000) /* or after this long */
#define XFER_TRIES         4              /* asks of one block before failing */
#define XFER_IDENT_MAX     64 /* bytes naming what a task works on */
#define XFER_LABEL_MAX     255
#define XFER_PEERS_MAX     64 /* distinct peers remembered per task */
#define XFER_PEERS_AGE_US  (10u * 1000 * 1000) /* "in use": seen since */

/* [storage], parsed. */
struct xfer_cfg {
	uint32_t chunk_size;        /* CHUNK_SIZE */
	unsigned iterations;        /* ITERATIONS */
	unsigned workers;           /* WORKERS */
	unsigned max_in_flight;     /* MAX_IN_FLIGHT */
	unsigned replication;       /* REPLICATION, 0: the DHT's */
	uint64_t lifetime_s;        /* LIFETIME */
	char secret_file[PATH_MAX]; /* SHARED_SECRET_FILE, "" per user */
};

/* The "storage.*" counters. */
struct xfer_counters {
	uint64_t *puts_started;
	uint64_t *puts_done;
	uint64_t *puts_failed;
	uint64_t *gets_started;
	uint64_t *gets_done;
	uint64_t *gets_failed;
	uint64_t *resumed;     /* transfers that went on from records */
	uint64_t *interrupted; /* stopped by their client leaving or the
				* daemon stopping: resumable */
	uint64_t *cancelled;
	uint64_t *blocks_put;      /* blocks sent with DHT PUTs */
	uint64_t *blocks_skipped;  /* put: receipts recorded, not sent */
	uint64_t *blocks_got;      /* blocks fetched and opened */
	uint64_t *chunks_resumed;  /* get: written by an earlier run */
	uint64_t *block_retries;   /* a block asked or put again after a
				   * failure */
	uint64_t *hedges;          /* a slow block asked again */
	uint64_t *hedges_won;      /* ... and the second ask came first */
	uint64_t *put_hedges;      /* a block slow to be stored put again */
	uint64_t *put_hedges_won;  /* ... and that put completed it */
	uint64_t *blocks_bad;      /* failed their hash or AEAD check */
	uint64_t *underreplicated; /* put with fewer receipts than asked */
	uint64_t *bytes_put;       /* file bytes put */
	uint64_t *bytes_got;       /* file bytes written */
	uint64_t *uri_bad;         /* malformed URIs refused */
	uint64_t *manifest_bad;    /* manifests refused */
	uint64_t *file_changed;    /* files that changed while put */
	uint64_t *disk_full;       /* gets that ran out of space */
	uint64_t *checksum_bad;    /* gets whose XXH128 did not match */
	uint64_t *db_failed;       /* records that could not be written */
	uint64_t *records;         /* done records written (committed) */
	uint64_t *in_flight;       /* gauge: blocks asked of the DHT */
	uint64_t *running;         /* gauge: transfers running */
};

/* A convergence codec, one per uid (or one for all: shared secret). */
struct xfer_codec {
	LIST_ENTRY(xfer_codec) link;
	uid_t uid;
	struct storage_codec *codec;
};

struct xfer_db;
struct xfer_dbjob;
struct xfer_put;
struct xfer_get;

struct xfer {
	struct event_base *base;
	struct stats *stats;
	struct dht *dht;
	struct store *store;
	struct xfer_pool *pool;
	struct xfer_db *db;
	struct event *ev_tick;
	struct event *ev_start; /* tasks waiting to start */
	struct event *ev_reap;  /* ended tasks waiting to be freed */
	struct xfer_cfg cfg;
	struct xfer_counters c;
	TAILQ_HEAD(, xfer_task) tasks; /* running and resumable */
	TAILQ_HEAD(, xfer_task) dead;  /* ended, no job out: to free */
	LIST_HEAD(, xfer_codec) codecs;
	LIST_HEAD(, xfer_codec)
	retired;       /* replaced by a reload, maybe in
					  * use by running puts */
	bool loaded;   /* the records were read back */
	bool stopping; /* in xfer_free() */
	char state_dir[PATH_MAX];
	uint64_t sink; /* counter of last resort */
};

/* A record waiting to be written: a block done (put: with its receipts;
 * get: its chunk written). idx >= 0 a chunk, < 0 the -idx-th node. */
struct xfer_rec {
	int64_t idx;
	struct dhtkey key;
};

/* A peer a task's blocks went to (put: a storer of a receipt) or came
 * from (get: the peer that answered), and when. */
struct xfer_peer {
	struct dhtkey id;
	uint64_t seen_us;
};

/* One transfer. */
struct xfer_task {
	TAILQ_ENTRY(xfer_task) link; /* x->tasks */
	struct xfer *x;
	uint64_t id;
	enum xfer_kind kind;
	enum xfer_state state;
	uid_t uid;
	char label[XFER_LABEL_MAX + 1]; /* put: the client's; get: URI */
	uint8_t ident[XFER_IDENT_MAX];  /* what it works on (resume key) */
	size_t ident_len;
	uint64_t size;       /* the file's */
	uint64_t bytes_done; /* as recorded (resumable) or counted */
	uint64_t updated_s;
	/* running */
	int fd;        /* the client's file, -1 */
	bool ended;    /* end_task ran; freed once jobs == 0 */
	bool failed;   /* a failure is being reported */
	unsigned jobs; /* worker jobs not yet back */
	LIST_HEAD(, xfer_attempt) attempts; /* DHT requests out */
	LIST_HEAD(, xfer_dbjob) dbjobs;     /* database jobs out */
	xfer_progress_fn *progress;
	xfer_done_fn *done;
	void *cls;
	uint32_t progress_ms;
	uint64_t progress_us; /* when progress was last reported */
	struct xfer_window win;
	unsigned in_flight; /* DHT requests of blocks out */
	uint64_t blocks_done;
	uint64_t blocks_total;
	uint64_t blocks_sent;
	uint64_t blocks_skipped;
	double rate;           /* bytes/s */
	uint64_t rate_bytes;   /* bytes_done at the last sample */
	uint64_t rate_us;      /* its time */
	struct xfer_rec *recs; /* done records to write */
	size_t n_recs, cap_recs;
	uint64_t flush_us;      /* last write of records */
	bool flushing;          /* a record job is out */
	struct xfer_rec *prior; /* done by an earlier run (sorted by idx) */
	size_t n_prior;
	void (*on_loaded)(struct xfer_task *t); /* waits for the records */
	bool start_pending;                     /* xfer_task_start_later() */
	unsigned replication;                   /* put: asked by the client */
	struct storage_ref root;                /* get: from the URI */
	struct xfer_put *put;                   /* kind's state */
	struct xfer_get *get;
	char uri[STORAGE_URI_MAX]; /* the file's, once known */
	uint8_t xxh128[16];
	struct xfer_peer peers[XFER_PEERS_MAX]; /* the latest seen */
	unsigned n_peers;
};

/* xfer.c */
/* The codec of uid, NULL if not loaded yet. */
struct storage_codec *xfer_codec_of(struct xfer *x, uid_t uid);
/* Loads uid's secret (a worker thread's call: it may create the file)
 * and makes a codec for it. 0 or a negative errno (logged). */
int xfer_codec_load(const struct xfer_cfg *cfg, const char *state_dir,
    uid_t uid, struct storage_codec **ret);
/* Keeps codec for uid (takes it; frees it if one is kept already). */
struct storage_codec *xfer_codec_keep(struct xfer *x, uid_t uid,
    struct storage_codec *codec);
/* Starts t from the loop, soon (xfer_put_start or xfer_get_start). */
void xfer_task_start_later(struct xfer_task *t);
/* Submits a worker job of t. */
void xfer_task_submit(struct xfer_task *t, struct xfer_job *job);
/* A worker job of t came back; true if t has ended (the caller does
 * nothing more for it; t itself stays valid until the loop comes
 * back). */
bool xfer_task_job_back(struct xfer_task *t);
/* Ends t with r (0: success, the result's other fields from t), calls
 * its client's done, and frees it once its jobs are back. A failure
 * keeps its records (resumable) unless forget. */
void xfer_task_end(struct xfer_task *t, int status, const char *why,
    bool forget);
/* Counts len bytes and a block done. */
void xfer_task_count(struct xfer_task *t, uint64_t len);
/* Queues a done record; writes a batch when due. */
void xfer_task_record(struct xfer_task *t, int64_t idx,
    const struct dhtkey *key);
/* Sorts t->prior by idx (after xfer_db_load_blocks). */
void xfer_task_prior_sort(struct xfer_task *t);
/* The key an earlier run recorded for idx, or NULL. */
const struct dhtkey *xfer_task_prior(const struct xfer_task *t, int64_t idx);
/* Notes a peer a block went to or came from at now_us (progress's
 * peers); this daemon itself is not one. */
void xfer_task_peer(struct xfer_task *t, const struct dhtkey *peer,
    uint64_t now_us);
/* The distinct peers noted in the XFER_PEERS_AGE_US before now_us. */
unsigned xfer_task_peers(const struct xfer_task *t, uint64_t now_us);
/* The task of id, or NULL. */
struct xfer_task *xfer_task_find(struct xfer *x, uint64_t id);

/* A DHT request of a task's block, out until its callback. */
struct xfer_attempt {
	LIST_ENTRY(xfer_attempt) link; /* t->attempts */
	struct xfer_task *t;           /* NULL once t is gone */
	void *what;                    /* the block it is for */
	uint64_t sent_us;
	bool hedge; /* a second ask of a slow block */
};
/* A new attempt of t for what, linked. NULL on OOM. */
struct xfer_attempt *xfer_attempt_new(struct xfer_task *t, void *what);
/* Unlinks a (its callback came), copies it to *ret and frees it;
 * returns its task, NULL if the task is gone. */
struct xfer_task *xfer_attempt_end(struct xfer_attempt *a,
    struct xfer_attempt *ret);

/* xfer_cfg.c */
int xfer_cfg_parse(struct cfg *cfg, struct xfer_cfg *ret);

/* xfer_db.c: the records, through store_job. Every call is
 * asynchronous; callbacks run on the loop, never inside the call, and
 * not at all once their task is gone. */
typedef void xfer_db_loaded_fn(struct xfer *x, int status);
/* Makes the tables if absent and reads every transfer record into
 * x->tasks (state XFER_RESUMABLE); then loaded. */
int xfer_db_new(struct xfer *x, xfer_db_loaded_fn *loaded,
    struct xfer_db **ret);
/* Stops calling back; frees once its jobs are back. NULL ok. */
void xfer_db_free(struct xfer_db *db);
typedef void xfer_db_done_fn(struct xfer_task *t, int status);
/* Writes t's record (insert or replace). */
int xfer_db_save(struct xfer_db *db, struct xfer_task *t,
    xfer_db_done_fn *done);
/* Reads the block records of transfer id into t->prior. */
int xfer_db_load_blocks(struct xfer_db *db, struct xfer_task *t, uint64_t id,
    xfer_db_done_fn *done);
/* Writes t's queued records (t->recs, taken) and bytes_done. */
int xfer_db_add_blocks(struct xfer_db *db, struct xfer_task *t,
    xfer_db_done_fn *done);
/* Deletes the records of transfer id (no task needed). */
int xfer_db_forget(struct xfer_db *db, uint64_t id);
/* Clears t's pointer from its outstanding jobs. */
void xfer_db_detach(struct xfer_task *t);

/* xfer_put.c */
/* Starts the put of a task made by xfer_put(). */
void xfer_put_start(struct xfer_task *t, unsigned replication);
/* Makes the task of a request, linked and counted (running); the caller
 * fills what its kind needs. NULL on OOM. */
struct xfer_task *xfer_task_new(struct xfer *x, enum xfer_kind kind,
    const struct xfer_req *req);
/* Frees its state (the task is being freed). */
void xfer_put_free(struct xfer_task *t);
/* Wakes its workers so they see the task ended. */
void xfer_put_stop(struct xfer_task *t);
/* Pumps blocks into the window (after the window grew, a tick). */
void xfer_put_pump(struct xfer_task *t);
/* Puts again, toward one more peer, the blocks slow to be stored (a
 * tick); then pumps. */
void xfer_put_hedge(struct xfer_task *t, uint64_t now_us);

/* xfer_get.c */
void xfer_get_start(struct xfer_task *t, const struct storage_ref *root);
void xfer_get_free(struct xfer_task *t);
void xfer_get_pump(struct xfer_task *t);
/* Asks again the blocks that are slow to come (a tick). */
void xfer_get_hedge(struct xfer_task *t, uint64_t now_us);

#endif /* FERRY_STORAGE_XFER_INT_H */
