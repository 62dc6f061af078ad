/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A put, storage layer (issue 13; seed 001 section III's pipeline):
 * the client's file is read in chunks by the worker threads, each chunk
 * sealed there, and the sealed blocks put to the DHT, many at once, as
 * the window allows. The whole-file XXH128 and the manifest need the
 * chunks in file order: a worker that sealed chunk i waits for chunk
 * i - 1's turn to be over before it adds its plaintext to the sum and
 * its ref to the manifest builder (so both see the very bytes sealed),
 * which is why jobs are taken in the order queued (xfer_pool.h). Nodes
 * the builder finishes are put like chunks. A block with all its
 * receipts is recorded; a run that resumes an interrupted one seals
 * every chunk again (convergent: the same blocks) and sends only those
 * not recorded with the same key.
 *
 * Memory: chunks being sealed, sealed blocks waiting and blocks in
 * flight are together at most the window plus the workers.
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

/* After a hedge won (a peer among the closest is slow or gone), blocks
 * are put toward one peer more from their first ask for this long, so
 * that each does not wait out the hedge delay on that peer. */
#define XFER_WIDE_US (2000u * 1000)

/* A sealed block to put: a chunk or a manifest node. */
struct xfer_block {
	TAILQ_ENTRY(xfer_block) link; /* sendq, a job's nodes, or out */
	int64_t idx;                  /* chunk, or -n for the n-th node */
	uint8_t *data;
	size_t len;
	struct dhtkey key;
	uint64_t plain_len; /* file bytes under it (chunks) */
	unsigned tries;     /* failed rounds */
	unsigned asks_out;  /* DHT PUTs of it out */
	uint64_t sent_us;   /* when this round's first went */
	bool hedged;        /* this round was hedged */
	unsigned n_holders; /* distinct storers of its receipts so far */
	struct dhtkey holders[DHTMSG_REPL_MAX];
};
TAILQ_HEAD(xfer_block_list, xfer_block);

/* A worker job: chunk idx read, sealed and added in its turn, or (finish)
 * the manifest closed. */
struct xfer_put_chunk {
	struct xfer_job job; /* first: the pool hands this back */
	struct xfer_task *t;
	uint64_t idx;
	bool finish;
	struct xfer_block *blk;       /* the chunk's */
	struct xfer_block_list nodes; /* nodes finished in its turn */
	const char *why;              /* a failure, for the client */
};

struct xfer_put {
	struct storage_codec *codec; /* the engine's, for this uid */
	uint32_t chunk_size;
	uint64_t n_chunks;
	uint64_t next;    /* next chunk to hand a worker */
	unsigned sealing; /* chunk jobs out */
	bool finish_sent;
	bool have_root;
	unsigned replication; /* the client's or [storage]'s, 0: the DHT's */
	unsigned want;        /* storers each block needs */
	uint64_t wide_until;  /* puts go wide until (XFER_WIDE_US) */
	uint64_t expiry;
	uint64_t old_id;              /* the record resumed, 0 if none */
	struct xfer_block_list sendq; /* sealed, waiting for the window */
	unsigned queued;
	struct xfer_block_list out; /* in flight */
	struct timespec mtime;      /* of the file at the start */
	/* shared with the workers: under mu */
	pthread_mutex_t mu;
	pthread_cond_t cond; /* turn moved, or stop */
	uint64_t turn;       /* the chunk whose turn it is */
	bool stop;
	struct filesum *sum;
	struct manifest_builder *mb;
	struct xfer_put_chunk *cur; /* the job in its turn, for emit */
	int64_t nodes;
	struct storage_ref root;
	uint8_t xxh[16];
};

static void
xfer_block_free(struct xfer_block *b)
{
	if (b == NULL)
		return;
	free(b->data);
	free(b);
}

static void
xfer_block_list_free(struct xfer_block_list *l)
{
	struct xfer_block *b;

	while ((b = TAILQ_FIRST(l)) != NULL) {
		TAILQ_REMOVE(l, b, link);
		xfer_block_free(b);
	}
}

/* The builder's emit, in a worker, in the turn of p->cur. */
static int
xfer_put_emit(void *arg, const uint8_t *sealed, size_t len,
    const struct storage_ref *ref)
{
	struct xfer_put *p = arg;
	struct xfer_block *b = calloc(1, sizeof(*b));

	if (b == NULL || (b->data = malloc(len)) == NULL) {
		free(b);
		return -ENOMEM;
	}
	memcpy(b->data, sealed, len);
	b->len = len;
	b->key = ref->block;
	b->idx = -(++p->nodes);
	TAILQ_INSERT_TAIL(&p->cur->nodes, b, link);
	return 0;
}

/* Waits for job's turn; false if the put stopped meanwhile. Holds mu
 * when true. */
static bool
xfer_put_wait_turn(struct xfer_put *p, uint64_t idx)
{
	(void)pthread_mutex_lock(&p->mu);
	while (p->turn != idx && !p->stop)
		(void)pthread_cond_wait(&p->cond, &p->mu);
	if (p->stop) {
		(void)pthread_mutex_unlock(&p->mu);
		return false;
	}
	return true;
}

static void
xfer_put_next_turn(struct xfer_put *p)
{
	p->turn++;
	(void)pthread_cond_broadcast(&p->cond);
	(void)pthread_mutex_unlock(&p->mu);
}

/* A failure stops every worker of the put. */
static void
xfer_put_halt(struct xfer_put *p)
{
	(void)pthread_mutex_lock(&p->mu);
	p->stop = true;
	(void)pthread_cond_broadcast(&p->cond);
	(void)pthread_mutex_unlock(&p->mu);
}

/* Reads len bytes at off: 0, -ESTALE if the file is shorter now, or
 * -errno. */
static int
xfer_put_read(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(fd, buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ESTALE;
		got += (size_t)n;
	}
	return 0;
}

/* Worker: read, seal, then in turn sum and add. */
static void
xfer_put_chunk_run(struct xfer_job *job)
{
	struct xfer_put_chunk *j = (struct xfer_put_chunk *)job;
	struct xfer_task *t = j->t;
	struct xfer_put *p = t->put;
	uint64_t off = j->idx * p->chunk_size;
	size_t len = t->size - off < p->chunk_size ? (size_t)(t->size - off)
	                                           : p->chunk_size;
	uint8_t *plain = malloc(len);
	struct storage_ref ref;
	int r;

	j->blk = calloc(1, sizeof(*j->blk));
	if (plain == NULL || j->blk == NULL ||
	    (j->blk->data = malloc(storage_sealed_len(p->chunk_size))) ==
	        NULL) {
		r = -ENOMEM;
		goto fail;
	}
	r = xfer_put_read(t->fd, plain, len, off);
	if (r == -ESTALE)
		j->why = "the file shrank while it was being put";
	/* Every block of the file one size: the last chunk is padded. */
	if (r == 0)
		r = storage_seal_pad(p->codec, plain, len, p->chunk_size,
		    j->blk->data, &ref);
	if (r < 0)
		goto fail;
	j->blk->len = storage_sealed_len(p->chunk_size);
	j->blk->key = ref.block;
	j->blk->idx = (int64_t)j->idx;
	j->blk->plain_len = len;
	if (!xfer_put_wait_turn(p, j->idx)) {
		r = -ECANCELED;
		goto out;
	}
	filesum_update(p->sum, plain, len);
	p->cur = j;
	r = manifest_builder_add(p->mb, &ref);
	p->cur = NULL;
	xfer_put_next_turn(p);
	if (r < 0)
		goto fail;
	goto out;
fail:
	xfer_put_halt(p);
out:
	sodium_memzero(&ref, sizeof(ref));
	if (plain != NULL)
		sodium_memzero(plain, len);
	free(plain);
	job->status = r;
}

/* Worker: the file must be as it was; then the manifest's last nodes. */
static void
xfer_put_finish_run(struct xfer_job *job)
{
	struct xfer_put_chunk *j = (struct xfer_put_chunk *)job;
	struct xfer_task *t = j->t;
	struct xfer_put *p = t->put;
	struct stat st;
	uint8_t one;
	ssize_t n;
	int r = 0;

	if (!xfer_put_wait_turn(p, p->n_chunks)) {
		job->status = -ECANCELED;
		return;
	}
	n = pread(t->fd, &one, 1, (off_t)t->size);
	if (fstat(t->fd, &st) < 0)
		r = -errno;
	else if (n != 0 || (uint64_t)st.st_size != t->size ||
	    st.st_mtim.tv_sec != p->mtime.tv_sec ||
	    st.st_mtim.tv_nsec != p->mtime.tv_nsec) {
		r = -ESTALE;
		j->why = "the file changed while it was being put";
	}
	if (r == 0) {
		filesum_final(p->sum, p->xxh);
		p->cur = j;
		r = manifest_builder_finish(p->mb, p->xxh, &p->root);
		p->cur = NULL;
	}
	xfer_put_next_turn(p);
	if (r < 0)
		xfer_put_halt(p);
	job->status = r;
}

/* Fails t for a worker's or the DHT's reason. */
static void
xfer_put_fail(struct xfer_task *t, int r, const char *why)
{
	char buf[160];
	bool forget = false;

	if (r == -ESTALE) {
		(*t->x->c.file_changed)++;
		forget = true; /* the records are of other contents */
	}
	if (why == NULL) {
		(void)snprintf(buf, sizeof(buf), "%s", strerror(-r));
		why = buf;
	}
	xfer_task_end(t, r, why, forget);
}

/* A block sealed: put it unless an earlier run has its receipts. */
static void
xfer_put_enqueue(struct xfer_task *t, struct xfer_block *b)
{
	struct xfer_put *p = t->put;
	const struct dhtkey *prior = xfer_task_prior(t, b->idx);

	if (prior != NULL && dhtkey_equal(prior, &b->key)) {
		t->blocks_skipped++;
		(*t->x->c.blocks_skipped)++;
		xfer_task_count(t, b->plain_len);
		xfer_block_free(b);
		return;
	}
	TAILQ_INSERT_TAIL(&p->sendq, b, link);
	p->queued++;
}

static void
xfer_put_chunk_done(struct xfer_job *job)
{
	struct xfer_put_chunk *j = (struct xfer_put_chunk *)job;
	struct xfer_task *t = j->t;
	struct xfer_put *p = t->put;
	struct xfer_block *b;
	int r = job->status;

	if (!j->finish)
		p->sealing--;
	if (r == 0 && !t->ended && !t->x->stopping) {
		if (j->blk != NULL) {
			xfer_put_enqueue(t, j->blk);
			j->blk = NULL;
		}
		while ((b = TAILQ_FIRST(&j->nodes)) != NULL) {
			TAILQ_REMOVE(&j->nodes, b, link);
			xfer_put_enqueue(t, b);
			t->blocks_total++;
		}
		if (j->finish) {
			p->have_root = true;
			memcpy(t->xxh128, p->xxh, sizeof(t->xxh128));
			(void)storage_uri_format(&p->root, t->uri,
			    sizeof(t->uri));
		}
	} else if (r < 0 && r != -ECANCELED && !t->ended) {
		xfer_put_fail(t, r, j->why);
	}
	xfer_block_free(j->blk);
	xfer_block_list_free(&j->nodes);
	free(j);
	if (xfer_task_job_back(t) || t->ended || t->x->stopping)
		return;
	xfer_put_pump(t);
}

static void
xfer_put_submit(struct xfer_task *t, bool finish)
{
	struct xfer_put_chunk *j = calloc(1, sizeof(*j));

	if (j == NULL) {
		xfer_task_end(t, -ENOMEM, "out of memory", false);
		return;
	}
	j->t = t;
	j->finish = finish;
	j->idx = finish ? t->put->n_chunks : t->put->next++;
	TAILQ_INIT(&j->nodes);
	j->job.run = finish ? xfer_put_finish_run : xfer_put_chunk_run;
	j->job.done = xfer_put_chunk_done;
	if (finish)
		t->put->finish_sent = true;
	else
		t->put->sealing++;
	xfer_task_submit(t, &j->job);
}

static const char *
xfer_put_why(int status)
{
	switch (status) {
	case -ETIMEDOUT:
		return "the DHT did not answer a block's put in time";
	case -EIO:
		return "no storing peer sent a receipt for a block";
	case -ENOSPC:
		return "the storing peers are full";
	case -EREMOTEIO:
		return "the storing peers' disks failed to take a block";
	case -EDQUOT:
		return "the storing peers hold all they take from this daemon ([dht] ORIGIN_QUOTA)";
	case -EHOSTUNREACH:
		return "no route toward a block's key: too few peers";
	case -EAGAIN:
		return "the storing peers refuse more from this daemon now";
	case -EBADMSG:
		return "the DHT refused a block";
	case -ECANCELED:
		return "the DHT is shutting down";
	default:
		return NULL;
	}
}

/* Sends what the window allows, hands workers what memory allows, and
 * ends the put once everything is done. */
static void xfer_put_send(struct xfer_task *t);
static void xfer_put_block_done(void *cls, const struct dht_result *res);

/* Adds the storers of res's receipts to b's holders. */
static void
xfer_put_holders(struct xfer_block *b, const struct dht_result *res)
{
	for (unsigned i = 0; i < res->receipts; i++) {
		unsigned j = 0;

		while (j < b->n_holders &&
		    !dhtkey_equal(&b->holders[j], &res->storer[i]))
			j++;
		if (j == b->n_holders && b->n_holders < DHTMSG_REPL_MAX)
			b->holders[b->n_holders++] = res->storer[i];
	}
}

/*
 * Puts b to the DHT once more. The first round asks the replication
 * closest peers for all their receipts. A hedge (a round slow to end)
 * asks one peer more and ends with as many receipts as needed, so that
 * one slow or gone peer among the closest holds nothing up, and so does
 * every first round for a while after a hedge won; a retry after a
 * round that failed asks, besides, as many more peers as it lacks
 * holders (one if none answered), so that it reaches past those that
 * did not answer. Holders are counted across rounds.
 */
static int
xfer_put_ask(struct xfer_task *t, struct xfer_block *b, bool hedge)
{
	struct xfer_put *p = t->put;
	unsigned missing = b->n_holders < p->want ? p->want - b->n_holders : 1;
	unsigned repl = p->want, quorum = p->want;
	struct xfer_attempt *a;
	int r;

	if (hedge || (b->tries == 0 && time_mono_us() < p->wide_until))
		repl = p->want + 1;
	else if (b->tries > 0)
		repl = p->want + (b->n_holders > 0 ? missing : 1);
	if (repl > DHTMSG_REPL_MAX)
		repl = DHTMSG_REPL_MAX;
	a = xfer_attempt_new(t, b);
	if (a == NULL)
		return -ENOMEM;
	a->hedge = hedge;
	/* The key is the sealed block's, computed when it was sealed. */
	r = dht_put_quorum(t->x->dht, &b->key, b->data, b->len, p->expiry, repl,
	    quorum, xfer_put_block_done, a);
	if (r < 0) {
		struct xfer_attempt gone;

		(void)xfer_attempt_end(a, &gone);
		return r;
	}
	if (b->asks_out == 0)
		b->sent_us = a->sent_us;
	b->asks_out++;
	t->in_flight++;
	return 0;
}

/* b is done (or failed): its other asks no longer find it. */
static void
xfer_put_forget_asks(struct xfer_task *t, struct xfer_block *b)
{
	struct xfer_attempt *a;

	LIST_FOREACH(a, &t->attempts, link)
		if (a->what == b) {
			a->what = NULL;
			t->in_flight--;
		}
	b->asks_out = 0;
}

/* b has the storers it needs, or as many as it will get. */
static void
xfer_put_block_ok(struct xfer_task *t, struct xfer_block *b, uint64_t lat_us,
    uint64_t now)
{
	struct xfer *x = t->x;

	if (b->n_holders < t->put->want)
		(*x->c.underreplicated)++;
	xfer_window_ok(&t->win, lat_us, now);
	xfer_put_forget_asks(t, b);
	TAILQ_REMOVE(&t->put->out, b, link);
	t->blocks_sent++;
	(*x->c.blocks_put)++;
	xfer_task_record(t, b->idx, &b->key);
	xfer_task_count(t, b->plain_len);
	xfer_block_free(b);
}

static void
xfer_put_block_done(void *cls, const struct dht_result *res)
{
	struct xfer_attempt a;
	struct xfer_task *t = xfer_attempt_end(cls, &a);
	struct xfer_block *b = a.what;
	struct xfer *x;
	uint64_t now = time_mono_us();

	/* An ended put's blocks stay in out until it is freed; what comes
	 * back for it now is not recorded (it may have been forgotten).
	 * A block another ask completed is gone. */
	if (t == NULL || t->ended || b == NULL)
		return;
	x = t->x;
	b->asks_out--;
	t->in_flight--;
	for (unsigned i = 0; i < res->receipts; i++)
		xfer_task_peer(t, &res->storer[i], now);
	xfer_put_holders(b, res);
	if (res->status == 0 || b->n_holders >= t->put->want) {
		if (a.hedge) {
			(*x->c.put_hedges_won)++;
			t->put->wide_until = now + XFER_WIDE_US;
		}
		xfer_put_block_ok(t, b, now - a.sent_us, now);
		xfer_put_pump(t);
		return;
	}
	/* The other ask may still bring what is missing. */
	if (b->asks_out > 0) {
		xfer_put_pump(t);
		return;
	}
	b->tries++;
	xfer_window_fail(&t->win, now);
	if (b->tries < XFER_TRIES && res->status != -ECANCELED) {
		(*x->c.block_retries)++;
		b->hedged = false;
		TAILQ_REMOVE(&t->put->out, b, link);
		TAILQ_INSERT_HEAD(&t->put->sendq, b, link);
		t->put->queued++;
	} else if (b->n_holders > 0 && res->status != -ECANCELED) {
		/* Taken, counted, as long as one peer holds it. */
		xfer_put_block_ok(t, b, now - a.sent_us, now);
	} else {
		xfer_put_fail(t, res->status, xfer_put_why(res->status));
		return;
	}
	xfer_put_pump(t);
}

static void
xfer_put_send(struct xfer_task *t)
{
	struct xfer_put *p = t->put;
	struct xfer_block *b;
	int r;

	while (t->in_flight < xfer_window_allowed(&t->win) &&
	    (b = TAILQ_FIRST(&p->sendq)) != NULL) {
		r = xfer_put_ask(t, b, false);
		if (r == -ENOMEM)
			return; /* the next tick tries again */
		if (r < 0) {
			xfer_put_fail(t, r, "the DHT refused a block's put");
			return;
		}
		TAILQ_REMOVE(&p->sendq, b, link);
		p->queued--;
		TAILQ_INSERT_TAIL(&p->out, b, link);
	}
}

void
xfer_put_hedge(struct xfer_task *t, uint64_t now_us)
{
	struct xfer_put *p = t->put;
	uint64_t delay = xfer_window_hedge_us(&t->win);
	struct xfer_block *b;

	if (p == NULL || t->ended)
		return;
	/* No peer past the most a put may ask of. */
	if (p->want < DHTMSG_REPL_MAX)
		TAILQ_FOREACH(b, &p->out, link) {
			if (b->hedged || b->asks_out == 0 ||
			    now_us - b->sent_us < delay)
				continue;
			b->hedged = true;
			if (xfer_put_ask(t, b, true) == 0)
				(*t->x->c.put_hedges)++;
		}
	xfer_put_pump(t);
}

void
xfer_put_pump(struct xfer_task *t)
{
	struct xfer_put *p = t->put;
	unsigned room = xfer_window_allowed(&t->win) + t->x->cfg.workers;

	if (p == NULL || p->sum == NULL || t->ended)
		return;
	while (p->next < p->n_chunks &&
	    p->sealing + p->queued + t->in_flight < room)
		xfer_put_submit(t, false);
	if (p->next == p->n_chunks && !p->finish_sent)
		xfer_put_submit(t, true);
	if (t->ended)
		return;
	xfer_put_send(t);
	if (t->ended)
		return;
	if (p->have_root && p->sealing == 0 && p->queued == 0 &&
	    t->in_flight == 0)
		xfer_task_end(t, 0, NULL, false);
}

/* --- starting ------------------------------------------------------- */

static void
xfer_put_begin(struct xfer_task *t)
{
	struct xfer_put *p = t->put;
	int r;

	p->sum = filesum_new();
	if (p->sum == NULL) {
		xfer_task_end(t, -ENOMEM, "out of memory", false);
		return;
	}
	r = manifest_builder_new(p->codec, p->chunk_size, p->chunk_size,
	    xfer_put_emit, p, &p->mb);
	if (r < 0) {
		xfer_task_end(t, r, "cannot start the manifest", false);
		return;
	}
	if (xfer_db_save(t->x->db, t, NULL) < 0)
		log_warn("put %016llx: cannot record it; it will not resume",
		    (unsigned long long)t->id);
	xfer_put_pump(t);
}

/* An earlier run's records are read: they become this run's. */
static void
xfer_put_prior_loaded(struct xfer_task *t, int status)
{
	struct xfer_put *p = t->put;

	if (status == 0 && t->n_prior > 0) {
		free(t->recs);
		t->recs = malloc(t->n_prior * sizeof(*t->recs));
		t->n_recs = t->cap_recs = 0;
		if (t->recs != NULL) {
			memcpy(t->recs, t->prior,
			    t->n_prior * sizeof(*t->recs));
			t->n_recs = t->cap_recs = t->n_prior;
		}
	}
	(void)xfer_db_forget(t->x->db, p->old_id);
	xfer_put_begin(t);
}

/* Takes over the resumable record of the same file, if there is one. */
static void
xfer_put_ready(struct xfer_task *t)
{
	struct xfer *x = t->x;
	struct xfer_task *o;

	if (!x->loaded) {
		t->on_loaded = xfer_put_ready;
		return;
	}
	TAILQ_FOREACH(o, &x->tasks, link)
		if (o->state == XFER_RESUMABLE && o->kind == XFER_PUT &&
		    o->uid == t->uid && o->ident_len == t->ident_len &&
		    memcmp(o->ident, t->ident, t->ident_len) == 0)
			break;
	if (o == NULL) {
		xfer_put_begin(t);
		return;
	}
	t->put->old_id = o->id;
	TAILQ_REMOVE(&x->tasks, o, link);
	free(o);
	(*x->c.resumed)++;
	if (xfer_db_load_blocks(x->db, t, t->put->old_id,
	        xfer_put_prior_loaded) < 0)
		xfer_put_prior_loaded(t, -EIO);
}

/* Loading a user's secret may create it (a write and fsyncs): a
 * worker's job. */
struct xfer_codec_job {
	struct xfer_job job; /* first */
	struct xfer_task *t;
	struct xfer_cfg cfg;
	struct storage_codec *codec;
};

static void
xfer_put_codec_run(struct xfer_job *job)
{
	struct xfer_codec_job *j = (struct xfer_codec_job *)job;

	job->status =
	    xfer_codec_load(&j->cfg, j->t->x->state_dir, j->t->uid, &j->codec);
}

static void
xfer_put_codec_done(struct xfer_job *job)
{
	struct xfer_codec_job *j = (struct xfer_codec_job *)job;
	struct xfer_task *t = j->t;
	int r = job->status;

	if (r == 0)
		t->put->codec = xfer_codec_keep(t->x, t->uid, j->codec);
	else
		storage_codec_free(j->codec);
	free(j);
	if (xfer_task_job_back(t) || t->ended || t->x->stopping)
		return;
	if (r == 0 && t->put->codec == NULL)
		r = -ENOMEM;
	if (r < 0) {
		xfer_task_end(t, r,
		    "cannot load the convergence secret (see the daemon's log)",
		    false);
		return;
	}
	xfer_put_ready(t);
}

void
xfer_put_start(struct xfer_task *t, unsigned replication)
{
	struct xfer_put *p = calloc(1, sizeof(*p));
	struct xfer_codec_job *j;
	struct xfer *x = t->x;

	if (p == NULL) {
		xfer_task_end(t, -ENOMEM, "out of memory", false);
		return;
	}
	t->put = p;
	TAILQ_INIT(&p->sendq);
	TAILQ_INIT(&p->out);
	(void)pthread_mutex_init(&p->mu, NULL);
	(void)pthread_cond_init(&p->cond, NULL);
	p->chunk_size = x->cfg.chunk_size;
	p->n_chunks = (t->size + p->chunk_size - 1) / p->chunk_size;
	p->replication = replication ? replication : x->cfg.replication;
	p->want =
	    p->replication ? p->replication : dht_config(x->dht)->replication;
	p->expiry = time_real_s() + x->cfg.lifetime_s;
	t->blocks_total = p->n_chunks;
	{
		uint64_t v[5];

		memcpy(v, t->ident, sizeof(v));
		p->mtime.tv_sec = (time_t)v[3];
		p->mtime.tv_nsec = (long)v[4];
	}
	p->codec = xfer_codec_of(x, t->uid);
	if (p->codec != NULL) {
		xfer_put_ready(t);
		return;
	}
	j = calloc(1, sizeof(*j));
	if (j == NULL) {
		xfer_task_end(t, -ENOMEM, "out of memory", false);
		return;
	}
	j->t = t;
	j->cfg = x->cfg;
	j->job.run = xfer_put_codec_run;
	j->job.done = xfer_put_codec_done;
	xfer_task_submit(t, &j->job);
}

void
xfer_put_stop(struct xfer_task *t)
{
	if (t->put != NULL)
		xfer_put_halt(t->put);
}

void
xfer_put_free(struct xfer_task *t)
{
	struct xfer_put *p = t->put;

	xfer_block_list_free(&p->sendq);
	xfer_block_list_free(&p->out);
	manifest_builder_free(p->mb);
	filesum_free(p->sum);
	(void)pthread_cond_destroy(&p->cond);
	(void)pthread_mutex_destroy(&p->mu);
	sodium_memzero(&p->root, sizeof(p->root));
	free(p);
	t->put = NULL;
}

/* --- the request ---------------------------------------------------- */

/* Fills t's ident: what the file is, so that the same file unchanged is
 * known again (device, inode, size, modification time). */
static void
xfer_put_ident(struct xfer_task *t, const struct stat *st)
{
	uint64_t v[5] = { (uint64_t)st->st_dev, (uint64_t)st->st_ino,
		(uint64_t)st->st_size, (uint64_t)st->st_mtim.tv_sec,
		(uint64_t)st->st_mtim.tv_nsec };

	memcpy(t->ident, v, sizeof(v));
	t->ident_len = sizeof(v);
}

int
xfer_put(struct xfer *x, const struct xfer_req *req, uint64_t *ret_id,
    const char **why)
{
	struct xfer_task *t, *o;
	struct stat st;
	int fl;

	if (fstat(req->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "the descriptor is not a regular file";
		goto inval;
	}
	fl = fcntl(req->fd, F_GETFL);
	if (fl < 0 ||
	    ((fl & O_ACCMODE) != O_RDONLY && (fl & O_ACCMODE) != O_RDWR)) {
		*why = "the file is not open for reading";
		goto inval;
	}
	if ((uint64_t)st.st_size > MANIFEST_FILE_MAX) {
		*why = "the file is over 256 TiB, the largest a manifest holds";
		goto inval;
	}
	TAILQ_FOREACH(o, &x->tasks, link) {
		struct xfer_task probe;

		xfer_put_ident(&probe, &st);
		if (o->state == XFER_RUNNING && o->kind == XFER_PUT &&
		    o->uid == req->uid && o->ident_len == probe.ident_len &&
		    memcmp(o->ident, probe.ident, probe.ident_len) == 0) {
			(void)close(req->fd);
			*why = "this file is being put already";
			return -EBUSY;
		}
	}
	t = xfer_task_new(x, XFER_PUT, req);
	if (t == NULL) {
		(void)close(req->fd);
		*why = "out of memory";
		return -ENOMEM;
	}
	t->size = (uint64_t)st.st_size;
	(void)snprintf(t->label, sizeof(t->label), "%s",
	    req->label != NULL ? req->label : "");
	xfer_put_ident(t, &st);
	t->replication = req->replication;
	*ret_id = t->id;
	/* Started from the loop: done is never called inside this call. */
	xfer_task_start_later(t);
	return 0;
inval:
	(void)close(req->fd);
	return -EINVAL;
}
