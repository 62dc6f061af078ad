/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry remote put, remote client (issue 15): the file is read chunk by
 * chunk, each chunk sealed and the manifest built with the storage
 * layer's code exactly as a daemon's put does (the same file and secret
 * give the same URI), one DHT PUT signed per block with the client key,
 * and the records streamed up in one POST /v1/blocks as libcurl asks for
 * them: memory is one chunk and the manifest's open nodes, whatever the
 * file's size. Then the receipts are awaited (long-polls of GET
 * /v1/receipts) and each checked. A round through one intermediary ends
 * when every block sent has its receipts, the intermediary says it is
 * done with them, or the wait is over; blocks still short go again
 * through the next intermediary, in a round that reads and seals the file
 * again (convergent: the same blocks, and Ed25519 is deterministic: the
 * same signatures) and sends only them. Receipts may come from storers
 * an intermediary made up, so the blocks are then fetched back through
 * another (remote_verify.c); an intermediary whose blocks are not found
 * is left, and its blocks put again. The URI is given only when every
 * block has receipts from enough distinct storers, and was found where
 * checked.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core/identity.h"
#include "intermediary/imdwire.h"
#include "lib/map.h"
#include "lib/time.h"
#include "storage/filesum.h"
#include "storage/manifest.h"
#include "storage/uri.h"

#define REMOTE_POLL_S     30 /* longest wait of one GET /v1/receipts */
/* Records of one POST /v1/blocks: a body ends at the first record
 * boundary past this, and the next continues, so that an upload stays
 * under the intermediary's MAX_REQUEST_BYTES (64 MiB by default). */
#define REMOTE_POST_BYTES (32u * 1024 * 1024)

/* A manifest node the builder finished, waiting to be sent. */
struct remote_node {
	struct remote_node *next;
	struct storage_ref ref;
	size_t len;
	uint8_t data[]; /* sealed */
};

struct remote_put {
	struct remote *rc;
	int fd;
	uint64_t size;
	struct timespec mtime;
	uint32_t chunk_size;
	uint64_t n_chunks;
	uint64_t expiry;
	struct map *blocks;        /* key -> struct remote_block */
	struct remote_block **all; /* the same, in the order first seen */
	size_t n_all, cap_all;
	bool known_all; /* a round read the whole file */
	struct storage_ref root;
	uint8_t xxh[FILESUM_LEN];
	uint64_t records_sent;
	uint64_t failed; /* bit i: cand[i] failed a round or a check */
	/* the round: the producer of records */
	size_t cand_i; /* the intermediary of the round */
	uint64_t next_chunk;
	bool finished;
	struct manifest_builder *mb;
	struct filesum *sum;
	struct remote_node *nodes, **nodes_tail;
	uint8_t *plain;
	uint8_t *rec; /* head and block of the record out */
	size_t rec_len, rec_off;
	uint64_t post_bytes; /* sent in this POST */
	uint64_t bytes_read;
	int error; /* the producer's */
	const char *why;
	struct remote_progress progress;
};

static void
remote_put_progress(struct remote_put *p, bool force)
{
	struct ferry_file_progress fp = { 0 };

	if (!remote_progress_due(&p->progress, force))
		return;
	fp.bytes_total = p->size;
	fp.bytes_done = p->bytes_read < p->size ? p->bytes_read : p->size;
	fp.blocks_total = p->n_all;
	for (size_t i = 0; i < p->n_all; i++)
		if (p->all[i]->n_storers >= p->rc->replication)
			fp.blocks_done++;
	fp.peers = 1;
	p->progress.fn(p->progress.cls, &fp);
}

/* storage_emit_fn: a finished node joins the queue of records. */
static int
remote_put_emit(void *arg, const uint8_t *sealed, size_t len,
    const struct storage_ref *ref)
{
	struct remote_put *p = arg;
	struct remote_node *n = malloc(sizeof(*n) + len);

	if (n == NULL)
		return -ENOMEM;
	n->next = NULL;
	n->ref = *ref;
	n->len = len;
	memcpy(n->data, sealed, len);
	*p->nodes_tail = n;
	p->nodes_tail = &n->next;
	return 0;
}

static void
remote_put_round_done(struct remote_put *p)
{
	struct remote_node *n;

	while ((n = p->nodes) != NULL) {
		p->nodes = n->next;
		sodium_memzero(&n->ref, sizeof(n->ref));
		free(n);
	}
	p->nodes_tail = &p->nodes;
	manifest_builder_free(p->mb);
	p->mb = NULL;
	filesum_free(p->sum);
	p->sum = NULL;
}

static int
remote_put_round_start(struct remote_put *p)
{
	remote_put_round_done(p);
	p->next_chunk = 0;
	p->finished = false;
	p->bytes_read = 0;
	p->rec_len = p->rec_off = 0;
	p->error = 0;
	for (size_t i = 0; i < p->n_all; i++)
		p->all[i]->sent = p->all[i]->relay_done = false;
	p->sum = filesum_new();
	if (p->sum == NULL)
		return -ENOMEM;
	return manifest_builder_new(p->rc->codec, p->chunk_size, p->chunk_size,
	    remote_put_emit, p, &p->mb);
}

static struct remote_block *
remote_put_block(struct remote_put *p, const struct dhtkey *key)
{
	struct remote_block *b = map_get(p->blocks, key->b, DHTKEY_LEN);
	struct remote_block **all;

	if (b != NULL)
		return b;
	if (p->n_all == p->cap_all) {
		size_t cap = p->cap_all ? 2 * p->cap_all : 64;

		all = realloc(p->all, cap * sizeof(*all));
		if (all == NULL)
			return NULL;
		p->all = all;
		p->cap_all = cap;
	}
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return NULL;
	/* The map keeps the key's pointer: it points into the block. */
	b->key = *key;
	if (map_put(p->blocks, b->key.b, DHTKEY_LEN, b) < 0) {
		free(b);
		return NULL;
	}
	p->all[p->n_all++] = b;
	return b;
}

/* The block at p->rec + IMDWIRE_PUT_HEAD (len bytes) becomes the
 * record out if this round is to send it: signed, its put_hash kept. 1
 * if it is to be sent, 0 if not, or -ENOMEM. */
static int
remote_put_offer(struct remote_put *p, const struct dhtkey *key, size_t len,
    bool node)
{
	struct dhtmsg_put put = { .replication = (uint8_t)p->rc->replication,
		.expiry = p->expiry,
		.block = p->rec + IMDWIRE_PUT_HEAD,
		.block_len = len };
	struct remote_block *b = remote_put_block(p, key);

	if (b == NULL)
		return -ENOMEM;
	b->node = node;
	if (b->sent || b->n_storers >= p->rc->replication)
		return 0;
	dhtmsg_put_sign(p->rc->key, key, &put);
	dhtmsg_put_hash(key, &put, b->put_hash);
	imdwire_put_head(&put, p->rec);
	p->rec_len = IMDWIRE_PUT_HEAD + len;
	p->rec_off = 0;
	b->sent = true;
	b->relayed |= UINT64_C(1) << p->cand_i;
	p->records_sent++;
	return 1;
}

/* Reads, seals and adds the next chunk. */
static int
remote_put_chunk(struct remote_put *p)
{
	uint64_t off = p->next_chunk * p->chunk_size;
	size_t len = p->size - off < p->chunk_size ? (size_t)(p->size - off)
	                                           : p->chunk_size;
	struct storage_ref ref;
	ssize_t n;
	int r;

	n = pread(p->fd, p->plain, len, (off_t)off);
	if (n < 0)
		return -errno;
	if ((size_t)n != len) {
		p->why = "the file shrank while it was being put";
		return -ESTALE;
	}
	r = storage_seal_pad(p->rc->codec, p->plain, len, p->chunk_size,
	    p->rec + IMDWIRE_PUT_HEAD, &ref);
	if (r < 0)
		return r;
	filesum_update(p->sum, p->plain, len);
	r = manifest_builder_add(p->mb, &ref);
	p->next_chunk++;
	p->bytes_read += len;
	if (r == 0)
		r = remote_put_offer(p, &ref.block,
		    storage_sealed_len(p->chunk_size), false);
	sodium_memzero(&ref, sizeof(ref));
	return r;
}

/* The file must be as it was at the start; then the last nodes. */
static int
remote_put_finish(struct remote_put *p)
{
	struct stat st;
	uint8_t one;

	if (pread(p->fd, &one, 1, (off_t)p->size) != 0 ||
	    fstat(p->fd, &st) < 0 || (uint64_t)st.st_size != p->size ||
	    st.st_mtim.tv_sec != p->mtime.tv_sec ||
	    st.st_mtim.tv_nsec != p->mtime.tv_nsec) {
		p->why = "the file changed while it was being put";
		return -ESTALE;
	}
	filesum_final(p->sum, p->xxh);
	p->finished = true;
	return manifest_builder_finish(p->mb, p->xxh, &p->root);
}

/* Makes the next record to send: 1, 0 at the round's end, or < 0. */
static int
remote_put_next(struct remote_put *p)
{
	struct remote_node *n;
	int r;

	for (;;) {
		if ((n = p->nodes) != NULL) {
			p->nodes = n->next;
			if (p->nodes == NULL)
				p->nodes_tail = &p->nodes;
			memcpy(p->rec + IMDWIRE_PUT_HEAD, n->data, n->len);
			r = remote_put_offer(p, &n->ref.block, n->len, true);
			sodium_memzero(&n->ref, sizeof(n->ref));
			free(n);
		} else if (p->next_chunk < p->n_chunks) {
			r = remote_put_chunk(p);
		} else if (!p->finished) {
			r = remote_put_finish(p);
		} else {
			p->known_all = true;
			return 0;
		}
		if (r != 0)
			return r;
	}
}

/* libcurl's read callback of the upload. */
static long
remote_put_read(void *cls, void *buf, size_t size)
{
	struct remote_put *p = cls;
	size_t n;
	int r;

	if (p->rec_off == p->rec_len) {
		if (p->post_bytes >= REMOTE_POST_BYTES)
			return 0;
		r = remote_put_next(p);
		if (r < 0) {
			p->error = r;
			return r;
		}
		if (r == 0)
			return 0;
		remote_put_progress(p, false);
	}
	n = p->rec_len - p->rec_off;
	n = n < size ? n : size;
	memcpy(buf, p->rec + p->rec_off, n);
	p->rec_off += n;
	p->post_bytes += n;
	return (long)n;
}

/* Reads POST /v1/blocks's answer: a refused record is not awaited. */
static int
remote_put_relays(struct remote_put *p, const struct remote_resp *resp)
{
	struct remote_relay *list;
	struct remote_block *b;
	size_t n, refused = 0;

	if (remote_json_relays((const char *)buf_head(&resp->body),
	        buf_size(&resp->body), &list, &n) < 0)
		return remote_fail(p->rc, -EBADMSG,
		    "%s: POST /v1/blocks: a malformed answer", p->rc->url);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].status, "relayed") == 0)
			continue;
		b = map_get(p->blocks, list[i].key, DHTKEY_LEN);
		if (b != NULL && b->sent) {
			b->sent = false;
			refused++;
		}
		remote_say(p->rc, false, "%s refused a block: %s", p->rc->url,
		    list[i].status);
	}
	free(list);
	if (refused > 0)
		remote_say(p->rc, true, "%s relayed all but %zu blocks",
		    p->rc->url, refused);
	return 0;
}

/* One POST /v1/blocks, from the record made ready on. */
static int
remote_put_post(struct remote_put *p)
{
	struct remote_req rq = { .method = "POST",
		.target = "/v1/blocks",
		.content_type = "application/x-ferry-puts",
		.read = remote_put_read,
		.read_cls = p };
	struct remote_resp resp;
	int r;

	p->post_bytes = 0;
	r = remote_request(p->rc, &rq, &resp);
	if (p->error < 0)
		r = p->error;
	else if (r == 0 && resp.status != 200)
		r = remote_fail_status(p->rc, "POST /v1/blocks", &resp);
	else if (r == 0)
		r = remote_put_relays(p, &resp);
	remote_resp_done(&resp);
	return r;
}

/* Uploads this round's records through the intermediary in use, in as
 * many POSTs as REMOTE_POST_BYTES asks. */
static int
remote_put_upload(struct remote_put *p)
{
	int r;

	r = remote_put_round_start(p);
	while (r == 0) {
		/* A POST only when there is a record to send. */
		r = remote_put_next(p);
		if (r < 0)
			p->error = r;
		if (r <= 0)
			break;
		r = remote_put_post(p);
	}
	if (p->error < 0 && p->why != NULL)
		return remote_fail(p->rc, p->error, "%s", p->why);
	if (p->error < 0)
		return remote_fail(p->rc, p->error, "cannot read the file: %s",
		    strerror(-p->error));
	return r;
}

/* Blocks sent this round still short of receipts and not given up. */
static size_t
remote_put_pending(const struct remote_put *p, bool count_done)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_all; i++) {
		const struct remote_block *b = p->all[i];

		if (b->sent && b->n_storers < p->rc->replication &&
		    (count_done || !b->relay_done))
			n++;
	}
	return n;
}

/* One entry of the queue. -EBADMSG for a forged receipt. */
static int
remote_put_entry(struct remote_put *p, const struct remote_entry *e)
{
	struct remote_block *b = map_get(p->blocks, e->key, DHTKEY_LEN);
	int v;

	if (b == NULL)
		return 0; /* another put's */
	if (e->done) {
		if (memcmp(e->put_hash, b->put_hash, DHTMSG_HASH_LEN) == 0)
			b->relay_done = true;
		return 0;
	}
	v = remote_receipt_check(b, e);
	if (v == -EBADMSG)
		return -EBADMSG;
	if (v == REMOTE_RECEIPT_NEW)
		b->vouched |= UINT64_C(1) << p->cand_i;
	return 0;
}

/* Awaits the receipts of this round's blocks. 0 when the wait ended
 * (some may be missing), -EBADMSG after a forged receipt, or another
 * request's error. */
static int
remote_put_await(struct remote_put *p)
{
	struct remote *rc = p->rc;
	uint64_t deadline = time_mono_us() + rc->receipt_wait_s * 1000000ull;
	uint64_t cursor = remote_dir_cursor(rc->dir, rc->imd_str), left;
	struct remote_entry *list = NULL;
	bool more = true, forged = false;
	size_t n;
	int r;

	while (!forged && (more || remote_put_pending(p, false) > 0)) {
		uint64_t now = time_mono_us();

		/* Rounded up: rounded down, the wait ended as much as a
		 * second before --receipt-timeout. */
		left = now < deadline ? (deadline - now + 999999) / 1000000 : 0;
		if (left == 0 && !more)
			break;
		/* What is queued already at once; then long polls. */
		r = remote_take(rc, &cursor,
		    more ? 0u
		         : (unsigned)(left < REMOTE_POLL_S ? left
		                                           : REMOTE_POLL_S),
		    0, &list, &n, &more);
		if (r < 0)
			return r;
		for (size_t i = 0; i < n; i++)
			if (remote_put_entry(p, &list[i]) == -EBADMSG)
				forged = true;
		free(list);
		list = NULL;
		/* What was read is acknowledged by the next take. */
		(void)remote_dir_set_cursor(rc->dir, rc->imd_str, cursor);
		remote_put_progress(p, false);
	}
	return forged ? -EBADMSG : 0;
}

/* One round through cand[i]. 0 when every block has its receipts. */
static int
remote_put_round(struct remote_put *p, size_t i)
{
	struct remote *rc = p->rc;
	size_t missing;
	int r, tries = 0;

	r = remote_use(rc, i);
	if (r < 0)
		return r;
	p->cand_i = i;
	do {
		r = remote_put_upload(p);
	} while (r == -EACCES && ++tries < 2); /* a stale clock, corrected */
	if (r < 0)
		return r;
	r = remote_put_await(p);
	if (r == -EBADMSG) {
		remote_mark_bad(rc, "it passed a forged receipt");
		return remote_fail(rc, -EBADMSG, "%s passed a forged receipt",
		    rc->url);
	}
	if (r < 0)
		return r;
	/* Acknowledged after the URI is out (remote_ack()): the put is
	 * done once its receipts are checked. */
	rc->ack_pending = true;
	missing = remote_put_pending(p, true);
	if (missing > 0 && remote_put_pending(p, false) > 0) {
		remote_mark_bad(rc, "receipts missing past the timeout");
		return remote_fail(rc, -ETIMEDOUT,
		    "%zu blocks without receipts after %u s through %s",
		    missing, rc->receipt_wait_s, rc->url);
	}
	if (missing > 0)
		return remote_fail(rc, -ETIMEDOUT,
		    "%zu blocks short of %u receipts through %s, which gave up on them",
		    missing, rc->replication, rc->url);
	return p->known_all ? 0 : -EAGAIN;
}

/* Every intermediary not failed yet in turn, each with the blocks still
 * short, until one round ends with all of them. */
static int
remote_put_rounds(struct remote_put *p)
{
	struct remote *rc = p->rc;
	bool reached = false, tried = false;
	int r, last = -EHOSTUNREACH;

	for (size_t i = 0; i < rc->n_cand; i++) {
		if (p->failed >> i & 1)
			continue;
		tried = true;
		r = remote_put_round(p, i);
		if (r == 0)
			return 0;
		if (r == -ENOMEM || r == -ESTALE || r == -EINVAL)
			return r;
		p->failed |= UINT64_C(1) << i;
		if (r != -EHOSTUNREACH)
			reached = true;
		last = r;
		if (i + 1 < rc->n_cand)
			remote_say(rc, true, "%s; trying the next intermediary",
			    rc->error);
	}
	if (!tried)
		return remote_fail(rc, -EHOSTUNREACH,
		    "no intermediary left to put the blocks through: name another with --intermediary");
	return reached && last == -EHOSTUNREACH ? -ETIMEDOUT : last;
}

static int
remote_put_open(struct remote_put *p, const char *path)
{
	struct stat st;

	p->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (p->fd < 0 || fstat(p->fd, &st) < 0)
		return remote_fail(p->rc, -errno, "%s: %s", path,
		    strerror(errno));
	if (!S_ISREG(st.st_mode))
		return remote_fail(p->rc, -EINVAL, "%s: not a regular file",
		    path);
	if ((uint64_t)st.st_size > MANIFEST_FILE_MAX)
		return remote_fail(p->rc, -EFBIG, "%s: too large", path);
	p->size = (uint64_t)st.st_size;
	p->mtime = st.st_mtim;
	p->chunk_size = STORAGE_CHUNK_SIZE_DEFAULT;
	p->n_chunks = (p->size + p->chunk_size - 1) / p->chunk_size;
	p->expiry = time_real_s() + p->rc->lifetime_s;
	p->blocks = map_new();
	p->plain = malloc(p->chunk_size);
	p->rec = malloc(IMDWIRE_PUT_HEAD + storage_sealed_len(p->chunk_size));
	p->nodes_tail = &p->nodes;
	if (p->blocks == NULL || p->plain == NULL || p->rec == NULL)
		return -ENOMEM;
	return 0;
}

static void
remote_put_free(struct remote_put *p)
{
	remote_put_round_done(p);
	for (size_t i = 0; i < p->n_all; i++)
		free(p->all[i]);
	free(p->all);
	map_free(p->blocks);
	if (p->plain != NULL)
		sodium_memzero(p->plain, p->chunk_size);
	free(p->plain);
	free(p->rec);
	sodium_memzero(&p->root, sizeof(p->root));
	if (p->fd >= 0)
		(void)close(p->fd);
}

int
remote_put(struct remote *rc, const char *path, uint32_t progress_ms,
    ferry_file_progress_fn *fn, void *cls, struct ferry_file_result *ret)
{
	struct remote_put p = { .rc = rc,
		.fd = -1,
		.progress = { .fn = fn, .cls = cls, .ms = progress_ms } };
	uint64_t blamed = 0;
	int r;

	rc->error[0] = '\0';
	r = remote_put_open(&p, path);
	if (r < 0)
		goto out;
	if (rc->n_cand == 0) {
		r = remote_fail(rc, -EHOSTUNREACH,
		    "no intermediary known: name one with --intermediary URL");
		goto out;
	}
	/* Rounds until every block has its receipts, then the check; an
	 * intermediary it blames is left, so this ends. */
	do {
		p.failed |= blamed;
		r = remote_put_rounds(&p);
		if (r == 0 && rc->verify != REMOTE_VERIFY_NONE)
			r = remote_verify_put(rc, p.blocks, p.all, p.n_all,
			    p.failed, &blamed);
	} while (r == -EAGAIN);
	if (r < 0)
		goto out;
	remote_put_progress(&p, true);
	memset(ret, 0, sizeof(*ret));
	ret->size = p.size;
	memcpy(ret->xxh128, p.xxh, sizeof(ret->xxh128));
	ret->blocks_sent = p.records_sent;
	ret->blocks_skipped = 0;
	r = storage_uri_format(&p.root, ret->uri, sizeof(ret->uri));
	if (r > 0)
		r = 0;
out:
	remote_put_free(&p);
	return r;
}
