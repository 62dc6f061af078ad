/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The transfer engine (see xfer.h), storage layer: the tasks, running
 * and resumable, their progress and their end; the codecs of the users'
 * convergence secrets; the tick that hedges, flushes records and
 * reports progress. xfer_put.c and xfer_get.c run the transfers
 * themselves.
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

#include <event2/event.h>
#include <sodium.h>

#include "core/aead.h"
#include "dht/dht.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "lib/time.h"
#include "storage/secret.h"

static int
xfer_counters_bind(struct xfer *x)
{
	static const struct stats_slot slots[] = {
#define C(f) STATS_SLOT(struct xfer_counters, f)
		C(puts_started),
		C(puts_done),
		C(puts_failed),
		C(gets_started),
		C(gets_done),
		C(gets_failed),
		C(resumed),
		C(interrupted),
		C(cancelled),
		C(blocks_put),
		C(blocks_skipped),
		C(blocks_got),
		C(chunks_resumed),
		C(block_retries),
		C(hedges),
		C(hedges_won),
		C(put_hedges),
		C(put_hedges_won),
		C(blocks_bad),
		C(underreplicated),
		C(bytes_put),
		C(bytes_got),
		C(uri_bad),
		C(manifest_bad),
		C(file_changed),
		C(disk_full),
		C(checksum_bad),
		C(db_failed),
		C(records),
		C(in_flight),
		C(running),
#undef C
	};

	return stats_bind_prefix(x->stats, "storage", &x->c, slots,
	    sizeof(slots) / sizeof(slots[0]));
}

/* --- codecs --------------------------------------------------------- */

int
xfer_codec_load(const struct xfer_cfg *cfg, const char *state_dir, uid_t uid,
    struct storage_codec **ret)
{
	uint8_t secret[STORAGE_SECRET_LEN];
	char dir[PATH_MAX], name[64], path[PATH_MAX];
	const char *file = cfg->secret_file;
	int r;

	/* A shared secret is the administrator's file, read as it is; a
	 * user's own is made on first use, kept as the identity is. */
	if (*file == '\0') {
		(void)snprintf(name, sizeof(name), "convergence-%lu.key",
		    (unsigned long)uid);
		r = fs_path_join(dir, sizeof(dir), state_dir, "storage");
		if (r == 0)
			r = fs_mkdir_p(dir, 0700);
		if (r == 0)
			r = fs_path_join(path, sizeof(path), dir, name);
		if (r < 0)
			return log_err_errno(r, "cannot make %s/storage",
			    state_dir);
		file = path;
	}
	r = storage_secret_load(file, *cfg->secret_file == '\0', secret);
	if (r == 0)
		r = storage_codec_new(secret, cfg->iterations, aead_aes_fast(),
		    ret);
	sodium_memzero(secret, sizeof(secret));
	return r;
}

/* With a shared secret every uid has the same codec. */
static uid_t
xfer_codec_uid(const struct xfer *x, uid_t uid)
{
	return *x->cfg.secret_file != '\0' ? (uid_t)-1 : uid;
}

struct storage_codec *
xfer_codec_of(struct xfer *x, uid_t uid)
{
	struct xfer_codec *c;

	uid = xfer_codec_uid(x, uid);
	LIST_FOREACH(c, &x->codecs, link)
		if (c->uid == uid)
			return c->codec;
	return NULL;
}

struct storage_codec *
xfer_codec_keep(struct xfer *x, uid_t uid, struct storage_codec *codec)
{
	struct storage_codec *have = xfer_codec_of(x, uid);
	struct xfer_codec *c;

	if (have != NULL) {
		storage_codec_free(codec);
		return have;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		storage_codec_free(codec);
		return NULL;
	}
	c->uid = xfer_codec_uid(x, uid);
	c->codec = codec;
	LIST_INSERT_HEAD(&x->codecs, c, link);
	return codec;
}

static void
xfer_codecs_free(struct xfer *x)
{
	struct xfer_codec *c;

	while ((c = LIST_FIRST(&x->codecs)) != NULL ||
	    (c = LIST_FIRST(&x->retired)) != NULL) {
		LIST_REMOVE(c, link);
		storage_codec_free(c->codec);
		free(c);
	}
}

/* --- tasks ---------------------------------------------------------- */

struct xfer_task *
xfer_task_find(struct xfer *x, uint64_t id)
{
	struct xfer_task *t;

	TAILQ_FOREACH(t, &x->tasks, link)
		if (t->id == id)
			return t;
	return NULL;
}

struct xfer_attempt *
xfer_attempt_new(struct xfer_task *t, void *what)
{
	struct xfer_attempt *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->t = t;
	a->what = what;
	a->sent_us = time_mono_us();
	LIST_INSERT_HEAD(&t->attempts, a, link);
	return a;
}

struct xfer_task *
xfer_attempt_end(struct xfer_attempt *a, struct xfer_attempt *ret)
{
	struct xfer_task *t = a->t;

	if (t != NULL)
		LIST_REMOVE(a, link);
	*ret = *a;
	free(a);
	return t;
}

/* Frees t: its jobs are all back. Requests still out are left to call
 * back into nothing. */
static void
xfer_task_free(struct xfer_task *t)
{
	struct xfer_attempt *a;

	while ((a = LIST_FIRST(&t->attempts)) != NULL) {
		LIST_REMOVE(a, link);
		a->t = NULL;
	}
	xfer_db_detach(t);
	if (t->put != NULL)
		xfer_put_free(t);
	if (t->get != NULL)
		xfer_get_free(t);
	if (t->fd >= 0)
		(void)close(t->fd);
	free(t->recs);
	free(t->prior);
	free(t);
}

void
xfer_task_submit(struct xfer_task *t, struct xfer_job *job)
{
	t->jobs++;
	xfer_pool_submit(t->x->pool, job);
}

/* t ended and has no job out: freed from the loop, soon, so that the
 * code that ended it may still look at it (t->ended). */
static void
xfer_task_reap_later(struct xfer_task *t)
{
	TAILQ_INSERT_TAIL(&t->x->dead, t, link);
	event_active(t->x->ev_reap, EV_TIMEOUT, 0);
}

static void
xfer_on_reap(evutil_socket_t fd, short what, void *cls)
{
	struct xfer *x = cls;
	struct xfer_task *t;

	(void)fd;
	(void)what;
	while ((t = TAILQ_FIRST(&x->dead)) != NULL) {
		TAILQ_REMOVE(&x->dead, t, link);
		xfer_task_free(t);
	}
}

bool
xfer_task_job_back(struct xfer_task *t)
{
	t->jobs--;
	if (t->ended && t->jobs == 0)
		xfer_task_reap_later(t);
	return t->ended;
}

struct xfer_task *
xfer_task_new(struct xfer *x, enum xfer_kind kind, const struct xfer_req *req)
{
	struct xfer_task *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->x = x;
	t->kind = kind;
	t->state = XFER_RUNNING;
	t->uid = req->uid;
	t->fd = req->fd;
	do
		randombytes_buf(&t->id, sizeof(t->id));
	while (t->id == 0 || xfer_task_find(x, t->id) != NULL);
	t->progress = req->progress;
	t->done = req->done;
	t->cls = req->cls;
	t->progress_ms = req->progress_ms;
	t->rate_us = t->flush_us = t->progress_us = time_mono_us();
	xfer_window_init(&t->win, x->cfg.max_in_flight);
	LIST_INIT(&t->attempts);
	LIST_INIT(&t->dbjobs);
	TAILQ_INSERT_TAIL(&x->tasks, t, link);
	(*x->c.running)++;
	(*(kind == XFER_PUT ? x->c.puts_started : x->c.gets_started))++;
	return t;
}

void
xfer_task_start_later(struct xfer_task *t)
{
	t->start_pending = true;
	event_active(t->x->ev_start, EV_TIMEOUT, 0);
}

static void
xfer_on_start(evutil_socket_t fd, short what, void *cls)
{
	struct xfer *x = cls;
	struct xfer_task *t;

	(void)fd;
	(void)what;
	/* Starting may end a task (and make records): look again each time. */
	for (;;) {
		TAILQ_FOREACH(t, &x->tasks, link)
			if (t->start_pending)
				break;
		if (t == NULL)
			return;
		t->start_pending = false;
		if (t->kind == XFER_PUT)
			xfer_put_start(t, t->replication);
		else
			xfer_get_start(t, &t->root);
	}
}

/* Makes t a resumable record (its client gone or its run failed). */
static void
xfer_task_park(struct xfer_task *t)
{
	struct xfer_task *rec = calloc(1, sizeof(*rec));
	struct xfer *x = t->x;

	if (rec == NULL)
		return; /* listed again after a restart */
	rec->x = x;
	rec->id = t->id;
	rec->kind = t->kind;
	rec->state = XFER_RESUMABLE;
	rec->uid = t->uid;
	memcpy(rec->label, t->label, sizeof(rec->label));
	memcpy(rec->ident, t->ident, sizeof(rec->ident));
	rec->ident_len = t->ident_len;
	rec->size = t->size;
	rec->bytes_done = t->bytes_done;
	rec->updated_s = time_real_s();
	rec->fd = -1;
	LIST_INIT(&rec->attempts);
	LIST_INIT(&rec->dbjobs);
	TAILQ_INSERT_TAIL(&x->tasks, rec, link);
}

static void
xfer_task_flushed(struct xfer_task *t, int status)
{
	t->flushing = false;
	if (status < 0)
		(*t->x->c.db_failed)++;
}

static void xfer_task_progress(struct xfer_task *t, uint64_t now,
    bool force);

/* Writes the queued records, and the transfer's progress. */
static void
xfer_task_flush(struct xfer_task *t)
{
	if (t->flushing || t->x->db == NULL)
		return;
	t->flush_us = time_mono_us();
	if (xfer_db_add_blocks(t->x->db, t, xfer_task_flushed) == 0)
		t->flushing = true;
}

void
xfer_task_end(struct xfer_task *t, int status, const char *why, bool forget)
{
	struct xfer *x = t->x;
	struct xfer_result res;

	if (t->ended)
		return;
	t->ended = true;
	(*x->c.running)--;
	TAILQ_REMOVE(&x->tasks, t, link);
	if (t->put != NULL)
		xfer_put_stop(t);
	memset(&res, 0, sizeof(res));
	res.id = t->id;
	res.status = status;
	res.why = why;
	res.resumable = status < 0 && !forget;
	res.uri = t->uri;
	res.size = t->size;
	res.blocks_sent = t->blocks_sent;
	res.blocks_skipped = t->blocks_skipped;
	memcpy(res.xxh128, t->xxh128, sizeof(res.xxh128));
	/* The last figures, whatever the period: a transfer shorter than
	 * it would otherwise end with no progress shown at all. */
	if (status == 0)
		xfer_task_progress(t, time_mono_us(), true);
	if (status == 0 || forget) {
		if (x->db != NULL)
			(void)xfer_db_forget(x->db, t->id);
	} else {
		/* What is done stays done for the next run. */
		if (t->n_recs > 0 && x->db != NULL)
			(void)xfer_db_add_blocks(x->db, t, NULL);
		xfer_task_park(t);
	}
	if (status == 0)
		(*(t->kind == XFER_PUT ? x->c.puts_done : x->c.gets_done))++;
	else if (x->stopping || status == -ECONNRESET)
		(*x->c.interrupted)++;
	else if (status == -ECANCELED)
		(*x->c.cancelled)++;
	else
		(*(t->kind == XFER_PUT ? x->c.puts_failed
		                       : x->c.gets_failed))++;
	if (status < 0 && status != -ECANCELED && why != NULL && !x->stopping)
		log_info("%s %016llx failed: %s",
		    t->kind == XFER_PUT ? "put" : "get",
		    (unsigned long long)t->id, why);
	if (t->done != NULL)
		t->done(t->cls, &res);
	t->done = NULL;
	t->progress = NULL;
	if (t->jobs == 0)
		xfer_task_reap_later(t);
}

void
xfer_task_count(struct xfer_task *t, uint64_t len)
{
	t->bytes_done += len;
	t->blocks_done++;
	(*(t->kind == XFER_PUT ? t->x->c.bytes_put : t->x->c.bytes_got)) += len;
}

void
xfer_task_record(struct xfer_task *t, int64_t idx, const struct dhtkey *key)
{
	struct xfer_rec *r;

	if (t->n_recs == t->cap_recs) {
		size_t cap = t->cap_recs ? 2 * t->cap_recs : 16;

		r = realloc(t->recs, cap * sizeof(*r));
		if (r == NULL)
			return; /* done again by the next run: no harm */
		t->recs = r;
		t->cap_recs = cap;
	}
	t->recs[t->n_recs].idx = idx;
	t->recs[t->n_recs].key = *key;
	t->n_recs++;
	if (t->n_recs >= XFER_FLUSH_RECORDS ||
	    time_mono_us() - t->flush_us >= XFER_FLUSH_US)
		xfer_task_flush(t);
}

static int
xfer_rec_cmp(const void *a, const void *b)
{
	int64_t x = ((const struct xfer_rec *)a)->idx;
	int64_t y = ((const struct xfer_rec *)b)->idx;

	return x < y ? -1 : x > y;
}

const struct dhtkey *
xfer_task_prior(const struct xfer_task *t, int64_t idx)
{
	struct xfer_rec key = { .idx = idx }, *r;

	if (t->n_prior == 0)
		return NULL;
	r = bsearch(&key, t->prior, t->n_prior, sizeof(*r), xfer_rec_cmp);
	return r != NULL ? &r->key : NULL;
}

void
xfer_task_prior_sort(struct xfer_task *t)
{
	if (t->n_prior > 1)
		qsort(t->prior, t->n_prior, sizeof(*t->prior), xfer_rec_cmp);
}

void
xfer_task_peer(struct xfer_task *t, const struct dhtkey *peer, uint64_t now_us)
{
	struct xfer_peer *p = NULL;

	if (dhtkey_equal(peer, dht_self(t->x->dht)))
		return;
	/* The same peer, a free slot, or else the one seen longest ago. */
	for (unsigned i = 0; i < t->n_peers; i++)
		if (dhtkey_equal(&t->peers[i].id, peer)) {
			t->peers[i].seen_us = now_us;
			return;
		}
	if (t->n_peers < XFER_PEERS_MAX) {
		p = &t->peers[t->n_peers++];
	} else {
		p = &t->peers[0];
		for (unsigned i = 1; i < t->n_peers; i++)
			if (t->peers[i].seen_us < p->seen_us)
				p = &t->peers[i];
	}
	p->id = *peer;
	p->seen_us = now_us;
}

unsigned
xfer_task_peers(const struct xfer_task *t, uint64_t now_us)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->n_peers; i++)
		n += now_us - t->peers[i].seen_us < XFER_PEERS_AGE_US;
	return n;
}

static void
xfer_task_progress(struct xfer_task *t, uint64_t now, bool force)
{
	struct xfer_progress p;
	double dt;

	if (now - t->rate_us >= 250000) {
		dt = (double)(now - t->rate_us) / 1e6;
		/* An average over about XFER_RATE_WINDOW_S. */
		t->rate +=
		    (((double)(t->bytes_done - t->rate_bytes) / dt) - t->rate) *
		    (dt / XFER_RATE_WINDOW_S > 1 ? 1 : dt / XFER_RATE_WINDOW_S);
		t->rate_bytes = t->bytes_done;
		t->rate_us = now;
	}
	if (t->progress == NULL || t->progress_ms == 0 ||
	    (!force && now - t->progress_us < (uint64_t)t->progress_ms * 1000))
		return;
	t->progress_us = now;
	memset(&p, 0, sizeof(p));
	p.id = t->id;
	p.bytes_done = t->bytes_done;
	p.bytes_total = t->size;
	p.blocks_done = t->blocks_done;
	p.blocks_total = t->blocks_total;
	p.rate = t->rate > 0 ? (uint64_t)t->rate : 0;
	p.in_flight = t->in_flight;
	p.window = xfer_window_allowed(&t->win);
	p.peers = xfer_task_peers(t, now);
	t->progress(t->cls, &p);
}

static void
xfer_on_tick(evutil_socket_t fd, short what, void *cls)
{
	struct xfer *x = cls;
	struct xfer_task *t, *next;
	uint64_t now = time_mono_us(), in_flight = 0;

	(void)fd;
	(void)what;
	for (t = TAILQ_FIRST(&x->tasks); t != NULL; t = next) {
		next = TAILQ_NEXT(t, link);
		if (t->state != XFER_RUNNING)
			continue;
		in_flight += t->in_flight;
		if (t->n_recs > 0 && now - t->flush_us >= XFER_FLUSH_US)
			xfer_task_flush(t);
		xfer_task_progress(t, now, false);
		/* Either may end t. */
		if (t->get != NULL)
			xfer_get_hedge(t, now);
		else if (t->put != NULL)
			xfer_put_hedge(t, now);
	}
	*x->c.in_flight = in_flight;
}

/* --- the engine ----------------------------------------------------- */

static void
xfer_on_loaded(struct xfer *x, int status)
{
	struct xfer_task *t, *next;

	if (status < 0)
		log_warn_errno(status,
		    "cannot read the transfer records; earlier transfers do not resume");
	x->loaded = true;
	/* Tasks that came before the records waited for them. */
	for (t = TAILQ_FIRST(&x->tasks); t != NULL; t = next) {
		next = TAILQ_NEXT(t, link);
		if (t->state == XFER_RUNNING && t->on_loaded != NULL) {
			void (*fn)(struct xfer_task *) = t->on_loaded;

			t->on_loaded = NULL;
			fn(t);
		}
	}
}

int
xfer_new(struct event_base *base, struct cfg *cfg, struct stats *stats,
    struct dht *dht, struct store *store, const char *state_dir,
    struct xfer **ret)
{
	struct timeval tv = { 0, XFER_TICK_US };
	struct xfer *x;
	int r;

	*ret = NULL;
	if (dht == NULL || store == NULL) {
		log_notice("no DHT runs: ferry put and get are off");
		return 0;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return -ENOMEM;
	x->base = base;
	x->stats = stats;
	x->dht = dht;
	x->store = store;
	TAILQ_INIT(&x->tasks);
	TAILQ_INIT(&x->dead);
	LIST_INIT(&x->codecs);
	LIST_INIT(&x->retired);
	r = xfer_cfg_parse(cfg, &x->cfg);
	if (r == 0 &&
	    snprintf(x->state_dir, sizeof(x->state_dir), "%s", state_dir) >=
	        (int)sizeof(x->state_dir))
		r = -ENAMETOOLONG;
	if (r == 0)
		r = xfer_counters_bind(x);
	if (r == 0)
		r = xfer_pool_new(base, x->cfg.workers, &x->pool);
	if (r == 0)
		r = xfer_db_new(x, xfer_on_loaded, &x->db);
	if (r == 0) {
		x->ev_tick = event_new(base, -1, EV_PERSIST, xfer_on_tick, x);
		x->ev_start = event_new(base, -1, 0, xfer_on_start, x);
		x->ev_reap = event_new(base, -1, 0, xfer_on_reap, x);
		if (x->ev_tick == NULL || x->ev_start == NULL ||
		    x->ev_reap == NULL || event_add(x->ev_tick, &tv) < 0)
			r = -ENOMEM;
	}
	if (r < 0) {
		log_err_errno(r, "cannot start the transfer engine");
		xfer_free(x);
		return r;
	}
	*ret = x;
	return 0;
}

int
xfer_reload(struct xfer *x, struct cfg *cfg)
{
	struct xfer_cfg c;
	int r;

	if (x == NULL)
		return 0;
	r = xfer_cfg_parse(cfg, &c);
	if (r < 0)
		return r;
	if (c.workers != x->cfg.workers)
		log_notice("[storage] WORKERS takes effect after a restart");
	c.workers = x->cfg.workers;
	/* Codecs follow the new secret or iterations from now on; running
	 * puts keep theirs, so the old ones stay until the engine goes. */
	if (c.iterations != x->cfg.iterations ||
	    strcmp(c.secret_file, x->cfg.secret_file) != 0) {
		struct xfer_codec *k;

		while ((k = LIST_FIRST(&x->codecs)) != NULL) {
			LIST_REMOVE(k, link);
			LIST_INSERT_HEAD(&x->retired, k, link);
		}
	}
	x->cfg = c;
	return 0;
}

void
xfer_free(struct xfer *x)
{
	struct xfer_task *t;

	if (x == NULL)
		return;
	x->stopping = true;
	if (x->ev_tick != NULL)
		event_free(x->ev_tick);
	if (x->ev_start != NULL)
		event_free(x->ev_start);
	/* Running ones stop and stay resumable; their workers see it. */
	TAILQ_FOREACH(t, &x->tasks, link)
		if (t->state == XFER_RUNNING && t->put != NULL)
			xfer_put_stop(t);
	/* Every job comes back (a running one ends first). */
	xfer_pool_free(x->pool);
	x->pool = NULL;
	while ((t = TAILQ_FIRST(&x->tasks)) != NULL) {
		if (t->state == XFER_RUNNING) {
			t->done = NULL;
			xfer_task_end(t, -ECANCELED, NULL, false);
			continue;
		}
		TAILQ_REMOVE(&x->tasks, t, link);
		xfer_task_free(t);
	}
	/* Parked records made while ending are freed by the loop above;
	 * the ended tasks wait in dead. */
	xfer_on_reap(-1, 0, x);
	if (x->ev_reap != NULL)
		event_free(x->ev_reap);
	xfer_db_free(x->db);
	xfer_codecs_free(x);
	free(x);
}

void
xfer_detach(struct xfer *x, uint64_t id)
{
	struct xfer_task *t = xfer_task_find(x, id);

	if (t == NULL || t->state != XFER_RUNNING)
		return;
	t->done = NULL;
	t->progress = NULL;
	xfer_task_end(t, -ECONNRESET, "its client went away", false);
}

int
xfer_cancel(struct xfer *x, uint64_t id, uid_t uid, bool admin)
{
	struct xfer_task *t = xfer_task_find(x, id);

	if (t == NULL || (!admin && t->uid != uid))
		return -ENOENT;
	if (t->state == XFER_RUNNING) {
		xfer_task_end(t, -ECANCELED, "cancelled", true);
		return 0;
	}
	(*x->c.cancelled)++;
	(void)xfer_db_forget(x->db, t->id);
	TAILQ_REMOVE(&x->tasks, t, link);
	xfer_task_free(t);
	return 0;
}

void
xfer_list(struct xfer *x, uid_t uid, bool all, xfer_list_fn *fn, void *cls)
{
	struct xfer_task *t;
	struct xfer_info info;

	TAILQ_FOREACH(t, &x->tasks, link) {
		if (!all && t->uid != uid)
			continue;
		memset(&info, 0, sizeof(info));
		info.id = t->id;
		info.kind = t->kind;
		info.state = t->state;
		info.uid = t->uid;
		info.bytes_done = t->bytes_done;
		info.bytes_total = t->size;
		info.updated_s =
		    t->state == XFER_RUNNING ? time_real_s() : t->updated_s;
		info.label = t->label;
		fn(cls, &info);
	}
}
