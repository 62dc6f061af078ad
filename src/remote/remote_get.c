/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry remote get, remote client (issue 15): the manifest is walked with
 * the storage layer's reader, its nodes and then its chunks fetched in
 * batches by POST /v1/fetch (many keys in one request, the records
 * parsed as they stream in), each block checked against its key, opened,
 * and written at its offset. Blocks one intermediary does not deliver
 * are asked of the next. The whole file is checked against its XXH128
 * at the end. Memory: one batch of refs, one record, one chunk.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "storage/filesum.h"
#include "storage/manifest.h"
#include "storage/uri.h"

#define REMOTE_BATCH 64 /* keys in one POST /v1/fetch */

/* A block asked for: a node (offset unused) or a chunk. */
struct remote_want {
	struct storage_ref ref;
	uint64_t offset;
	bool got;
};

struct remote_get {
	struct remote *rc;
	int fd;
	struct manifest_reader *reader;
	struct remote_want want[REMOTE_BATCH];
	size_t n_want;
	bool node;      /* the batch is the one node the reader needs */
	uint8_t *plain; /* an opened block */
	uint64_t bytes_done, blocks_done;
	uint64_t size;
	struct remote_progress progress;
};

static void
remote_get_progress(struct remote_get *g, bool force)
{
	struct ferry_file_progress fp = { 0 };

	if (!remote_progress_due(&g->progress, force))
		return;
	fp.bytes_total = g->size;
	fp.bytes_done = g->bytes_done;
	fp.blocks_done = fp.blocks_total = g->blocks_done;
	fp.peers = 1;
	g->progress.fn(g->progress.cls, &fp);
}

static int
remote_get_write(int fd, const uint8_t *data, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, data, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* One wanted block arrived, checked against its key by the caller. */
static int
remote_get_block(struct remote_get *g, struct remote_want *w,
    const uint8_t *block, size_t len)
{
	size_t plain_len;
	int r;

	r = storage_open_hashed(&w->ref,
	    g->node ? STORAGE_KIND_NODE : STORAGE_KIND_DATA, block, len,
	    g->plain, STORAGE_CHUNK_MAX, &plain_len);
	if (r < 0)
		return r;
	if (g->node) {
		r = manifest_reader_feed(g->reader, g->plain, plain_len);
	} else {
		r = remote_get_write(g->fd, g->plain, plain_len, w->offset);
		g->bytes_done += plain_len;
	}
	sodium_memzero(g->plain, plain_len);
	if (r < 0)
		return r;
	w->got = true;
	g->blocks_done++;
	remote_get_progress(g, false);
	return 0;
}

/* remote_fetch_fn: a record of the stream. */
static int
remote_get_record(void *cls, unsigned status, const struct dhtkey *key,
    const uint8_t *block, size_t len)
{
	struct remote_get *g = cls;
	bool asked = false;
	int r;

	if (status != REMOTE_FETCH_FOUND)
		return 0; /* left for the next intermediary */
	/* remote_fetch_keys() checked the block against its key. */
	for (size_t i = 0; i < g->n_want; i++) {
		struct remote_want *w = &g->want[i];

		if (w->got || !dhtkey_equal(&w->ref.block, key))
			continue;
		asked = true;
		r = remote_get_block(g, w, block, len);
		/* A block that hashes to its key but does not open is the
		 * file's fault, not the intermediary's. */
		if (r == -EBADMSG || r == -EPROTO || r == -ENOTSUP)
			return remote_fail(g->rc, -EBADMSG,
			    "a block of the file is damaged: %s",
			    g->node ? manifest_reader_error(g->reader)
			            : "it does not open");
		if (r < 0)
			return r;
	}
	return asked ? 0 : REMOTE_FETCH_UNASKED;
}

/* Asks the intermediary in use for the blocks of the batch not got. */
static int
remote_get_fetch(struct remote_get *g)
{
	uint8_t keys[REMOTE_BATCH * DHTKEY_LEN];
	size_t n = 0;

	for (size_t i = 0; i < g->n_want; i++)
		if (!g->want[i].got)
			memcpy(keys + DHTKEY_LEN * n++, g->want[i].ref.block.b,
			    DHTKEY_LEN);
	return n == 0 ? 0
	              : remote_fetch_keys(g->rc, keys, n, remote_get_record, g);
}

static size_t
remote_get_missing(const struct remote_get *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n_want; i++)
		n += !g->want[i].got;
	return n;
}

/* Gets the whole batch, through the intermediary in use and then the
 * others. *cand is the one in use, and moves on. */
static int
remote_get_batch(struct remote_get *g, size_t *cand)
{
	struct remote *rc = g->rc;
	int r;

	for (;;) {
		r = remote_get_fetch(g);
		if (r == 0 && remote_get_missing(g) == 0)
			break;
		if (r == -ENOMEM || r == -ENOSPC || r == -EIO ||
		    (r == -EBADMSG && strstr(rc->error, "damaged") != NULL))
			return r;
		if (r == -EBADMSG)
			remote_mark_bad(rc, "it sent blocks not asked for");
		if (r == 0)
			remote_say(rc, false, "%s: %zu blocks not found",
			    rc->url, remote_get_missing(g));
		else
			remote_say(rc, true, "%s", rc->error);
		/* The next intermediary that answers. */
		do {
			if (++*cand >= rc->n_cand)
				return r < 0 && r != -EBADMSG
				    ? r
				    : remote_fail(rc, -ENOENT,
				          "%zu blocks of the file found through no intermediary",
				          remote_get_missing(g));
			r = remote_use(rc, *cand);
		} while (r < 0);
	}
	for (size_t i = 0; i < g->n_want; i++)
		sodium_memzero(&g->want[i].ref, sizeof(g->want[i].ref));
	g->n_want = 0;
	return 0;
}

/* Walks the manifest, fetching as it asks. */
static int
remote_get_walk(struct remote_get *g, size_t *cand)
{
	struct storage_ref ref;
	uint64_t offset;
	int step, r = 0;

	for (;;) {
		step = manifest_reader_next(g->reader, &ref, &offset);
		if (step < 0)
			return remote_fail(g->rc, -EBADMSG,
			    "the file's manifest is damaged: %s",
			    manifest_reader_error(g->reader));
		if (step == MANIFEST_CHUNK) {
			g->want[g->n_want++] = (struct remote_want){ .ref = ref,
				.offset = offset };
			if (g->n_want < REMOTE_BATCH)
				continue;
		}
		/* A node comes alone: the reader needs it to go on. */
		g->node = false;
		if (g->n_want > 0)
			r = remote_get_batch(g, cand);
		if (r == 0 && step == MANIFEST_NEED_NODE) {
			g->node = true;
			g->want[0] = (struct remote_want){ .ref = ref };
			g->n_want = 1;
			r = remote_get_batch(g, cand);
			if (r == 0 && g->size == 0 &&
			    manifest_reader_size(g->reader) > 0 &&
			    ftruncate(g->fd,
			        (off_t)(g->size = manifest_reader_size(
			                    g->reader))) < 0)
				r = -errno;
		}
		sodium_memzero(&ref, sizeof(ref));
		if (r < 0 || step == MANIFEST_DONE)
			return r;
	}
}

/* The XXH128 of what was written, against the root's. */
static int
remote_get_check(struct remote_get *g, uint8_t sum[FILESUM_LEN])
{
	struct filesum *s = filesum_new();
	uint8_t buf[65536];
	uint64_t off = 0;
	ssize_t n;

	if (s == NULL)
		return -ENOMEM;
	if (ftruncate(g->fd, (off_t)manifest_reader_size(g->reader)) < 0) {
		filesum_free(s);
		return -errno;
	}
	while ((n = pread(g->fd, buf, sizeof(buf), (off_t)off)) > 0) {
		filesum_update(s, buf, (size_t)n);
		off += (uint64_t)n;
	}
	filesum_final(s, sum);
	filesum_free(s);
	sodium_memzero(buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (off != manifest_reader_size(g->reader) ||
	    memcmp(sum, manifest_reader_xxh128(g->reader), FILESUM_LEN) != 0)
		return remote_fail(g->rc, -EBADMSG,
		    "the file got does not match its XXH128");
	return 0;
}

int
remote_get(struct remote *rc, const char *uri, int fd, uint32_t progress_ms,
    ferry_file_progress_fn *fn, void *cls, struct ferry_file_result *ret)
{
	struct remote_get g = { .rc = rc,
		.fd = fd,
		.progress = { .fn = fn, .cls = cls, .ms = progress_ms } };
	struct storage_ref root;
	const char *why = NULL;
	size_t cand = 0;
	uint8_t sum[FILESUM_LEN];
	int r;

	rc->error[0] = '\0';
	if (storage_uri_parse(uri, &root, &why) < 0)
		return remote_fail(rc, -EINVAL, "%s", why);
	g.plain = malloc(STORAGE_CHUNK_MAX);
	r = g.plain == NULL
	    ? -ENOMEM
	    : manifest_reader_new(&root, STORAGE_CHUNK_MAX, &g.reader);
	if (r < 0)
		goto out;
	if (rc->n_cand == 0) {
		r = remote_fail(rc, -EHOSTUNREACH,
		    "no intermediary known: name one with --intermediary URL");
		goto out;
	}
	while ((r = remote_use(rc, cand)) < 0) {
		if (++cand >= rc->n_cand)
			goto out;
		remote_say(rc, true, "%s; trying the next intermediary",
		    rc->error);
	}
	r = remote_get_walk(&g, &cand);
	if (r == 0)
		r = remote_get_check(&g, sum);
	if (r < 0)
		goto out;
	remote_get_progress(&g, true);
	memset(ret, 0, sizeof(*ret));
	ret->size = manifest_reader_size(g.reader);
	memcpy(ret->xxh128, sum, sizeof(ret->xxh128));
	(void)snprintf(ret->uri, sizeof(ret->uri), "%s", uri);
out:
	if (r < 0 && rc->error[0] == '\0')
		(void)remote_fail(rc, r, "%s", strerror(-r));
	sodium_memzero(&root, sizeof(root));
	manifest_reader_free(g.reader);
	if (g.plain != NULL)
		sodium_memzero(g.plain, STORAGE_CHUNK_MAX);
	free(g.plain);
	return r;
}
