/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A get, storage layer (issue 13): the manifest is walked from the root
 * the URI names, node by node as the reader asks for them, and the data
 * chunks it yields are fetched from the DHT, many at once as the window
 * allows, opened and written at their offsets into the client's .part
 * file by the worker threads. A chunk slow to come is asked again after
 * a delay from the measured latencies, and the first answer wins. Once
 * every chunk is written the file is synced and read back, and its
 * XXH128 must be the manifest's before the client hears of success.
 * Chunks written are recorded once synced, so that a get run again into
 * the same .part file skips them.
 *
 * Memory: the manifest reader's nodes (one per level) and, at most, the
 * window plus the workers' chunks.
 */
#define LOG_TAG "storage"
#include "storage/xfer_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "dht/dht.h"
#include "lib/log.h"
#include "lib/time.h"
#include "storage/filesum.h"
#include "storage/manifest.h"

#define XFER_VERIFY_BUF (1u << 20)

/* A block asked of the DHT: a data chunk, or a manifest node. */
struct xfer_fetch {
	struct xfer_job job;          /* first: open (and write) in a worker */
	TAILQ_ENTRY(xfer_fetch) link; /* g->waiting or g->asked */
	struct xfer_task *t;
	bool node;
	struct storage_ref ref;
	uint64_t offset;   /* of a chunk in the file */
	int64_t idx;       /* chunk index */
	size_t chunk_size; /* of the file: a chunk block's plaintext */
	uint64_t start_us; /* when first asked */
	unsigned asks_out; /* DHT requests out */
	unsigned tries;    /* failed asks */
	bool hedged;
	uint8_t *sealed; /* the block, while a worker opens it */
	size_t sealed_len;
	uint8_t *plain; /* a node's plaintext, for the reader */
	size_t plain_len;
	const char *why;
};
TAILQ_HEAD(xfer_fetch_list, xfer_fetch);

/* A worker job over the whole file: prepare (size it) or verify. */
struct xfer_file_job {
	struct xfer_job job; /* first */
	struct xfer_task *t;
	bool verify;
	uint8_t sum[FILESUM_LEN];
	const char *why;
};

struct xfer_get {
	struct manifest_reader *rd;
	bool walked;                    /* the reader said DONE */
	struct xfer_fetch *node;        /* the node asked, or NULL */
	struct xfer_fetch_list waiting; /* chunks not yet asked */
	struct xfer_fetch_list asked;   /* asked, not yet answered */
	unsigned n_waiting, n_asked;
	unsigned working;          /* chunks in workers */
	uint64_t old_id;           /* the record resumed, 0 if none */
	struct xfer_rec *unsynced; /* written, not yet synced */
	size_t n_unsynced, cap_unsynced;
	bool syncing;
	bool verifying;
	uint64_t sync_us;
};

static void xfer_get_walk(struct xfer_task *t);

static void
xfer_fetch_free(struct xfer_fetch *f)
{
	if (f == NULL)
		return;
	free(f->sealed);
	if (f->plain != NULL)
		sodium_memzero(f->plain, f->plain_len);
	free(f->plain);
	sodium_memzero(&f->ref, sizeof(f->ref));
	free(f);
}

static void
xfer_get_fail(struct xfer_task *t, int r, const char *why, bool forget)
{
	char buf[160];

	if (why == NULL) {
		(void)snprintf(buf, sizeof(buf), "%s", strerror(-r));
		why = buf;
	}
	xfer_task_end(t, r, why, forget);
}

/* --- asking the DHT ------------------------------------------------- */

static void xfer_get_block_done(void *cls, const struct dht_result *res);

static int
xfer_get_ask(struct xfer_task *t, struct xfer_fetch *f, bool hedge)
{
	struct xfer_attempt *a = xfer_attempt_new(t, f);
	int r;

	if (a == NULL)
		return -ENOMEM;
	a->hedge = hedge;
	/* A hedge asks the holders directly: the route the first ask took
	 * may be what is slow. */
	r = hedge
	    ? dht_get_wide(t->x->dht, &f->ref.block, xfer_get_block_done, a)
	    : dht_get(t->x->dht, &f->ref.block, xfer_get_block_done, a);
	if (r < 0) {
		struct xfer_attempt gone;

		(void)xfer_attempt_end(a, &gone);
		return r;
	}
	if (f->asks_out == 0 && !hedge)
		f->start_us = a->sent_us;
	f->asks_out++;
	t->in_flight++;
	return 0;
}

/* f's answer is in (or f failed): its other asks no longer find it. */
static void
xfer_get_forget_asks(struct xfer_task *t, struct xfer_fetch *f)
{
	struct xfer_attempt *a;

	LIST_FOREACH(a, &t->attempts, link)
		if (a->what == f) {
			a->what = NULL;
			t->in_flight--;
		}
	f->asks_out = 0;
}

static const char *
xfer_get_why(int status, bool node)
{
	switch (status) {
	case -ENOENT:
		return node
		    ? "a manifest block is not in the DHT: no peer holds it (or the URI names no file)"
		    : "a data block is not in the DHT: no peer holds it";
	case -ETIMEDOUT:
		return "the DHT did not answer for a block in time";
	case -EHOSTUNREACH:
		return "no route toward a block's key: too few peers";
	case -EBADMSG:
		return "a block fails its check on every peer asked";
	case -ECANCELED:
		return "the DHT is shutting down";
	default:
		return NULL;
	}
}

/* A failed ask, or a block that would not open: again while tries
 * remain. */
static void
xfer_get_retry(struct xfer_task *t, struct xfer_fetch *f, int status)
{
	uint64_t now = time_mono_us();
	int r;

	f->tries++;
	xfer_window_fail(&t->win, now);
	if (f->tries >= XFER_TRIES || status == -ECANCELED) {
		xfer_get_fail(t, status, xfer_get_why(status, f->node), false);
		return;
	}
	(*t->x->c.block_retries)++;
	f->hedged = false;
	r = xfer_get_ask(t, f, false);
	if (r < 0)
		xfer_get_fail(t, r, "the DHT refused a request", false);
}

static void xfer_get_open_run(struct xfer_job *job);
static void xfer_get_open_done(struct xfer_job *job);

static void
xfer_get_block_done(void *cls, const struct dht_result *res)
{
	struct xfer_attempt a;
	struct xfer_task *t = xfer_attempt_end(cls, &a);
	struct xfer_fetch *f = a.what;
	uint64_t now = time_mono_us();

	if (t == NULL || f == NULL || t->ended)
		return; /* its task is over, or another ask won */
	f->asks_out--;
	t->in_flight--;
	if (res->status < 0) {
		/* The other ask may still come. */
		if (f->asks_out == 0)
			xfer_get_retry(t, f, res->status);
		xfer_get_pump(t);
		return;
	}
	if (a.hedge)
		(*t->x->c.hedges_won)++;
	if (res->responder != NULL)
		xfer_task_peer(t, res->responder, now);
	xfer_window_ok(&t->win, now - a.sent_us, now);
	xfer_get_forget_asks(t, f);
	f->sealed = malloc(res->block_len);
	if (f->sealed == NULL) {
		xfer_get_fail(t, -ENOMEM, "out of memory", false);
		return;
	}
	memcpy(f->sealed, res->block, res->block_len);
	f->sealed_len = res->block_len;
	if (!f->node) {
		TAILQ_REMOVE(&t->get->asked, f, link);
		t->get->n_asked--;
		t->get->working++;
	}
	f->job.run = xfer_get_open_run;
	f->job.done = xfer_get_open_done;
	xfer_task_submit(t, &f->job);
	xfer_get_pump(t);
}

/* --- opening and writing -------------------------------------------- */

static int
xfer_get_write(int fd, const uint8_t *p, size_t len, uint64_t off)
{
	ssize_t n;

	while (len > 0) {
		n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Worker: open the block; write a chunk at its offset. */
static void
xfer_get_open_run(struct xfer_job *job)
{
	struct xfer_fetch *f = (struct xfer_fetch *)job;
	/* A chunk's block holds the chunk size (the last one padded); the
	 * reader checked that the refs are no longer. */
	size_t size = f->node ? STORAGE_CHUNK_MAX : f->chunk_size;
	int r;

	f->plain = malloc(size > 0 ? size : 1);
	if (f->plain == NULL) {
		job->status = -ENOMEM;
		return;
	}
	/* dht_get() checked the block against f->ref.block. */
	r = storage_open_hashed(&f->ref,
	    f->node ? STORAGE_KIND_NODE : STORAGE_KIND_DATA, f->sealed,
	    f->sealed_len, f->plain, size, &f->plain_len);
	free(f->sealed);
	f->sealed = NULL;
	if (r == 0 && !f->node) {
		r = xfer_get_write(f->t->fd, f->plain, f->plain_len, f->offset);
		if (r == -ENOSPC || r == -EDQUOT)
			f->why =
			    "no space left on the disk of the file being written";
		else if (r < 0)
			f->why = "cannot write the file";
	}
	job->status = r;
}

/* The chunks written since the last sync are synced, then recorded. */
static void xfer_get_sync(struct xfer_task *t, bool force);

static void
xfer_get_note_written(struct xfer_task *t, struct xfer_fetch *f)
{
	struct xfer_get *g = t->get;

	if (g->n_unsynced == g->cap_unsynced) {
		size_t cap = g->cap_unsynced ? 2 * g->cap_unsynced : 64;
		struct xfer_rec *n = realloc(g->unsynced, cap * sizeof(*n));

		if (n == NULL)
			return; /* fetched again by a later run */
		g->unsynced = n;
		g->cap_unsynced = cap;
	}
	g->unsynced[g->n_unsynced].idx = f->idx;
	g->unsynced[g->n_unsynced].key = f->ref.block;
	g->n_unsynced++;
	xfer_get_sync(t, false);
}

static void
xfer_get_open_done(struct xfer_job *job)
{
	struct xfer_fetch *f = (struct xfer_fetch *)job;
	struct xfer_task *t = f->t;
	struct xfer_get *g = t->get;
	int r = job->status;

	if (!f->node)
		g->working--;
	if (xfer_task_job_back(t) || t->x->stopping) {
		if (f == g->node)
			g->node = NULL;
		xfer_fetch_free(f);
		return;
	}
	if (r == -EBADMSG || r == -EPROTO) {
		/* Another peer may hold it whole; the DHT checked its hash,
		 * so this is rare: count it and ask again. */
		(*t->x->c.blocks_bad)++;
		free(f->plain);
		f->plain = NULL;
		if (!f->node) {
			TAILQ_INSERT_TAIL(&g->asked, f, link);
			g->n_asked++;
		}
		xfer_get_retry(t, f, -EBADMSG);
		xfer_get_pump(t);
		return;
	}
	if (r < 0) {
		if (r == -ENOSPC || r == -EDQUOT)
			(*t->x->c.disk_full)++;
		if (f == g->node)
			g->node = NULL;
		xfer_get_fail(t, r, f->why, false);
		xfer_fetch_free(f);
		return;
	}
	(*t->x->c.blocks_got)++;
	if (f->node) {
		g->node = NULL;
		r = manifest_reader_feed(g->rd, f->plain, f->plain_len);
		t->blocks_done++;
		xfer_fetch_free(f);
		if (r < 0) {
			(*t->x->c.manifest_bad)++;
			/* Malformed or of an unknown version: either way
			 * nothing can be got from it. */
			xfer_get_fail(t, -EBADMSG, manifest_reader_error(g->rd),
			    true);
			return;
		}
	} else {
		xfer_task_count(t, f->plain_len);
		xfer_get_note_written(t, f);
		xfer_fetch_free(f);
	}
	xfer_get_pump(t);
}

/* --- syncing and verifying ------------------------------------------ */

struct xfer_sync_job {
	struct xfer_job job; /* first */
	struct xfer_task *t;
	struct xfer_rec *recs;
	size_t n;
};

static void
xfer_get_sync_run(struct xfer_job *job)
{
	struct xfer_sync_job *j = (struct xfer_sync_job *)job;

	job->status = fdatasync(j->t->fd) < 0 ? -errno : 0;
}

static void
xfer_get_sync_done(struct xfer_job *job)
{
	struct xfer_sync_job *j = (struct xfer_sync_job *)job;
	struct xfer_task *t = j->t;

	if (!xfer_task_job_back(t) && !t->ended) {
		t->get->syncing = false;
		if (job->status == 0)
			for (size_t i = 0; i < j->n; i++)
				xfer_task_record(t, j->recs[i].idx,
				    &j->recs[i].key);
	}
	free(j->recs);
	free(j);
}

/* Syncs what was written when enough has been, or a second passed, or
 * (force) now. */
static void
xfer_get_sync(struct xfer_task *t, bool force)
{
	struct xfer_get *g = t->get;
	struct xfer_sync_job *j;
	uint64_t now = time_mono_us();

	if (g->syncing || g->n_unsynced == 0 ||
	    (!force && g->n_unsynced < XFER_FLUSH_RECORDS &&
	        now - g->sync_us < XFER_FLUSH_US))
		return;
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return;
	j->t = t;
	j->recs = g->unsynced;
	j->n = g->n_unsynced;
	g->unsynced = NULL;
	g->n_unsynced = g->cap_unsynced = 0;
	g->syncing = true;
	g->sync_us = now;
	j->job.run = xfer_get_sync_run;
	j->job.done = xfer_get_sync_done;
	xfer_task_submit(t, &j->job);
}

/* Worker: size the file (prepare), or sync it and sum it (verify). */
static void
xfer_get_file_run(struct xfer_job *job)
{
	struct xfer_file_job *j = (struct xfer_file_job *)job;
	struct xfer_task *t = j->t;
	struct filesum *s;
	uint8_t *buf;
	uint64_t off = 0;
	ssize_t n;

	if (!j->verify) {
		/* Space is taken now, so that a full disk says so before
		 * anything is fetched; where fallocate is not supported
		 * the writes will say it. */
		if (ftruncate(t->fd, (off_t)t->size) < 0) {
			job->status = -errno;
			j->why = "cannot size the file";
			return;
		}
		if (t->size > 0 && fallocate(t->fd, 0, 0, (off_t)t->size) < 0 &&
		    (errno == ENOSPC || errno == EDQUOT)) {
			job->status = -errno;
			j->why =
			    "no space left on the disk of the file being written";
		}
		return;
	}
	if (fdatasync(t->fd) < 0) {
		job->status = -errno;
		j->why = "cannot sync the file";
		return;
	}
	s = filesum_new();
	buf = malloc(XFER_VERIFY_BUF);
	while (s != NULL && buf != NULL && off < t->size) {
		n = pread(t->fd, buf, XFER_VERIFY_BUF, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		filesum_update(s, buf, (size_t)n);
		off += (uint64_t)n;
	}
	if (s == NULL || buf == NULL)
		job->status = -ENOMEM;
	else if (off != t->size) {
		job->status = -EIO;
		j->why = "cannot read the file back to check it";
	} else
		filesum_final(s, j->sum);
	filesum_free(s);
	free(buf);
}

static void xfer_get_ready(struct xfer_task *t);

static void
xfer_get_file_done(struct xfer_job *job)
{
	struct xfer_file_job *j = (struct xfer_file_job *)job;
	struct xfer_task *t = j->t;
	const uint8_t *want;
	int r = job->status;

	if (xfer_task_job_back(t) || t->ended || t->x->stopping) {
		free(j);
		return;
	}
	if (r < 0) {
		if (r == -ENOSPC || r == -EDQUOT)
			(*t->x->c.disk_full)++;
		xfer_get_fail(t, r, j->why, false);
	} else if (!j->verify) {
		xfer_get_ready(t);
	} else {
		want = manifest_reader_xxh128(t->get->rd);
		memcpy(t->xxh128, j->sum, sizeof(t->xxh128));
		if (want == NULL || memcmp(want, j->sum, FILESUM_LEN) != 0) {
			(*t->x->c.checksum_bad)++;
			xfer_get_fail(t, -EBADMSG,
			    "the file's XXH128 is not the manifest's: it is damaged",
			    true);
		} else {
			xfer_task_end(t, 0, NULL, false);
		}
	}
	free(j);
}

static void
xfer_get_file_job(struct xfer_task *t, bool verify)
{
	struct xfer_file_job *j = calloc(1, sizeof(*j));

	if (j == NULL) {
		xfer_get_fail(t, -ENOMEM, "out of memory", false);
		return;
	}
	j->t = t;
	j->verify = verify;
	j->job.run = xfer_get_file_run;
	j->job.done = xfer_get_file_done;
	xfer_task_submit(t, &j->job);
}

/* --- walking -------------------------------------------------------- */

static struct xfer_fetch *
xfer_fetch_new(struct xfer_task *t, const struct storage_ref *ref, bool node)
{
	struct xfer_fetch *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->t = t;
	f->ref = *ref;
	f->node = node;
	return f;
}

/* Takes the reader's steps while memory allows. */
static void
xfer_get_walk(struct xfer_task *t)
{
	struct xfer_get *g = t->get;
	unsigned room = xfer_window_allowed(&t->win) + t->x->cfg.workers;
	struct storage_ref ref;
	const struct dhtkey *prior;
	struct xfer_fetch *f;
	uint64_t off;
	int r;

	while (!g->walked && g->node == NULL &&
	    g->n_waiting + g->n_asked + g->working < room) {
		r = manifest_reader_next(g->rd, &ref, &off);
		if (r < 0) {
			(*t->x->c.manifest_bad)++;
			xfer_get_fail(t, -EBADMSG, manifest_reader_error(g->rd),
			    true);
			return;
		}
		if (r == MANIFEST_DONE) {
			g->walked = true;
			break;
		}
		f = xfer_fetch_new(t, &ref, r == MANIFEST_NEED_NODE);
		sodium_memzero(&ref, sizeof(ref));
		if (f == NULL) {
			xfer_get_fail(t, -ENOMEM, "out of memory", false);
			return;
		}
		if (f->node) {
			g->node = f;
			t->blocks_total++;
			r = xfer_get_ask(t, f, false);
			if (r < 0) {
				g->node = NULL;
				xfer_fetch_free(f);
				xfer_get_fail(t, r, "the DHT refused a request",
				    false);
				return;
			}
			continue;
		}
		f->offset = off;
		f->chunk_size = manifest_reader_chunk_size(g->rd);
		f->idx = (int64_t)(off / f->chunk_size);
		t->blocks_total++;
		prior = xfer_task_prior(t, f->idx);
		if (prior != NULL && dhtkey_equal(prior, &f->ref.block)) {
			(*t->x->c.chunks_resumed)++;
			t->blocks_skipped++;
			xfer_task_count(t, f->ref.len);
			xfer_fetch_free(f);
			continue;
		}
		TAILQ_INSERT_TAIL(&g->waiting, f, link);
		g->n_waiting++;
	}
}

void
xfer_get_pump(struct xfer_task *t)
{
	struct xfer_get *g = t->get;
	struct xfer_fetch *f;
	int r;

	if (g == NULL || g->rd == NULL || t->ended || g->verifying)
		return;
	xfer_get_walk(t);
	while (!t->ended && t->in_flight < xfer_window_allowed(&t->win) &&
	    (f = TAILQ_FIRST(&g->waiting)) != NULL) {
		TAILQ_REMOVE(&g->waiting, f, link);
		g->n_waiting--;
		TAILQ_INSERT_TAIL(&g->asked, f, link);
		g->n_asked++;
		r = xfer_get_ask(t, f, false);
		if (r < 0) {
			xfer_get_fail(t, r, "the DHT refused a request", false);
			return;
		}
	}
	if (t->ended || !g->walked || g->node != NULL || g->n_waiting > 0 ||
	    g->n_asked > 0 || g->working > 0)
		return;
	/* Everything written: sync it, read it back and check it. */
	g->verifying = true;
	xfer_get_file_job(t, true);
}

void
xfer_get_hedge(struct xfer_task *t, uint64_t now_us)
{
	struct xfer_get *g = t->get;
	uint64_t delay = xfer_window_hedge_us(&t->win);
	struct xfer_fetch *f;

	if (g == NULL || t->ended)
		return;
	xfer_get_sync(t, false);
	TAILQ_FOREACH(f, &g->asked, link) {
		if (f->hedged || f->asks_out == 0 ||
		    now_us - f->start_us < delay)
			continue;
		f->hedged = true;
		if (xfer_get_ask(t, f, true) == 0)
			(*t->x->c.hedges)++;
	}
	if (g->node != NULL && !g->node->hedged && g->node->asks_out > 0 &&
	    now_us - g->node->start_us >= delay) {
		g->node->hedged = true;
		if (xfer_get_ask(t, g->node, true) == 0)
			(*t->x->c.hedges)++;
	}
	xfer_get_pump(t);
}

/* --- starting ------------------------------------------------------- */

static void
xfer_get_begin(struct xfer_task *t)
{
	int r = manifest_reader_new(&t->root, STORAGE_CHUNK_MAX, &t->get->rd);

	if (r < 0) {
		xfer_get_fail(t, r, "cannot start reading the manifest", false);
		return;
	}
	if (xfer_db_save(t->x->db, t, NULL) < 0)
		log_warn("get %016llx: cannot record it; it will not resume",
		    (unsigned long long)t->id);
	xfer_get_pump(t);
}

static void
xfer_get_prior_loaded(struct xfer_task *t, int status)
{
	if (status == 0 && t->n_prior > 0) {
		free(t->recs);
		t->n_recs = t->cap_recs = 0;
		t->recs = malloc(t->n_prior * sizeof(*t->recs));
		if (t->recs != NULL) {
			memcpy(t->recs, t->prior,
			    t->n_prior * sizeof(*t->recs));
			t->n_recs = t->cap_recs = t->n_prior;
		}
	}
	(void)xfer_db_forget(t->x->db, t->get->old_id);
	xfer_get_begin(t);
}

/* The file is sized; an earlier run into the same file is taken over. */
static void
xfer_get_ready(struct xfer_task *t)
{
	struct xfer *x = t->x;
	struct xfer_task *o;

	if (!x->loaded) {
		t->on_loaded = xfer_get_ready;
		return;
	}
	TAILQ_FOREACH(o, &x->tasks, link)
		if (o->state == XFER_RESUMABLE && o->kind == XFER_GET &&
		    o->uid == t->uid && o->ident_len == t->ident_len &&
		    memcmp(o->ident, t->ident, t->ident_len) == 0)
			break;
	if (o == NULL) {
		xfer_get_begin(t);
		return;
	}
	t->get->old_id = o->id;
	TAILQ_REMOVE(&x->tasks, o, link);
	free(o);
	(*x->c.resumed)++;
	if (xfer_db_load_blocks(x->db, t, t->get->old_id,
	        xfer_get_prior_loaded) < 0)
		xfer_get_prior_loaded(t, -EIO);
}

void
xfer_get_start(struct xfer_task *t, const struct storage_ref *root)
{
	struct xfer_get *g = calloc(1, sizeof(*g));

	(void)root;
	if (g == NULL) {
		xfer_task_end(t, -ENOMEM, "out of memory", false);
		return;
	}
	t->get = g;
	TAILQ_INIT(&g->waiting);
	TAILQ_INIT(&g->asked);
	g->sync_us = time_mono_us();
	xfer_get_file_job(t, false);
}

void
xfer_get_free(struct xfer_task *t)
{
	struct xfer_get *g = t->get;
	struct xfer_fetch *f;

	while ((f = TAILQ_FIRST(&g->waiting)) != NULL) {
		TAILQ_REMOVE(&g->waiting, f, link);
		xfer_fetch_free(f);
	}
	while ((f = TAILQ_FIRST(&g->asked)) != NULL) {
		TAILQ_REMOVE(&g->asked, f, link);
		xfer_fetch_free(f);
	}
	xfer_fetch_free(g->node);
	manifest_reader_free(g->rd);
	free(g->unsynced);
	free(g);
	t->get = NULL;
}

/* --- the request ---------------------------------------------------- */

int
xfer_get(struct xfer *x, const struct xfer_req *req, uint64_t *ret_id,
    const char **why)
{
	uint8_t ident[DHTKEY_LEN + 2 * sizeof(uint64_t)];
	struct storage_ref root;
	struct xfer_task *t, *o;
	struct stat st;
	uint64_t v[2];
	int fl;

	if (req->uri == NULL || storage_uri_parse(req->uri, &root, why) < 0) {
		(*x->c.uri_bad)++;
		(void)close(req->fd);
		return -EINVAL;
	}
	fl = fcntl(req->fd, F_GETFL);
	if (fstat(req->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "the descriptor is not a regular file";
		goto inval;
	}
	if (fl < 0 || (fl & O_ACCMODE) != O_RDWR || (fl & O_APPEND)) {
		*why =
		    "the file is not open for reading and writing without O_APPEND";
		goto inval;
	}
	/* The file, and the place it goes: the same URI into the same
	 * .part file is the same get. */
	v[0] = (uint64_t)st.st_dev;
	v[1] = (uint64_t)st.st_ino;
	memcpy(ident, root.block.b, DHTKEY_LEN);
	memcpy(ident + DHTKEY_LEN, v, sizeof(v));
	/* Run again while the first still runs (its client killed, and
	 * the daemon not yet told): both would write the file, and the
	 * second would not resume the first. */
	TAILQ_FOREACH(o, &x->tasks, link)
		if (o->state == XFER_RUNNING && o->kind == XFER_GET &&
		    o->uid == req->uid && o->ident_len == sizeof(ident) &&
		    memcmp(o->ident, ident, sizeof(ident)) == 0) {
			sodium_memzero(&root, sizeof(root));
			(void)close(req->fd);
			*why = "this file is being got already";
			return -EBUSY;
		}
	t = xfer_task_new(x, XFER_GET, req);
	if (t == NULL) {
		sodium_memzero(&root, sizeof(root));
		(void)close(req->fd);
		*why = "out of memory";
		return -ENOMEM;
	}
	t->root = root;
	t->size = root.len;
	sodium_memzero(&root, sizeof(root));
	(void)snprintf(t->label, sizeof(t->label), "%s", req->uri);
	(void)snprintf(t->uri, sizeof(t->uri), "%s", req->uri);
	memcpy(t->ident, ident, sizeof(ident));
	t->ident_len = sizeof(ident);
	*ret_id = t->id;
	xfer_task_start_later(t);
	return 0;
inval:
	sodium_memzero(&root, sizeof(root));
	(void)close(req->fd);
	return -EINVAL;
}
