/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's file requests (ferry-client(7), "Files"): FILE_PUT and
 * FILE_GET with the file as a descriptor beside the frame, their
 * progress and their end; TRANSFERS and CANCEL.
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/time.h"
#include "lib/wire.h"

/* Progress is asked for at least this often, so that a long transfer
 * shows the daemon alive within the client's timeout. */
#define LF_FILE_KEEPALIVE_MS 1000

struct lf_file {
	ferry_file_progress_fn *fn;
	void *cls;
	uint32_t every_ms; /* the caller's progress_ms, 0 none */
	uint64_t last_ms;  /* when fn was last called */
	struct ferry_file_result *ret;
	bool done; /* FILE_DONE came */
};

/* FILE_PROGRESS: 4 req_id  8 id  16 bytes_done  24 bytes_total
 * 32 blocks_done  40 blocks_total  48 rate  56 in_flight  60 window
 * 64 peers  68 reserved */
static int
lf_file_progress(struct lf_file *lf, const struct lf_frame *f)
{
	struct ferry_file_progress p;
	uint64_t now = time_mono_us() / 1000;

	if (f->size != FERRY_C_FILE_PROGRESS_SIZE)
		return -EPROTO;
	if (lf->fn == NULL || lf->every_ms == 0 ||
	    (lf->last_ms != 0 && now - lf->last_ms < lf->every_ms))
		return 0;
	lf->last_ms = now;
	p.id = wire_get64(f->p + 8);
	p.bytes_done = wire_get64(f->p + 16);
	p.bytes_total = wire_get64(f->p + 24);
	p.blocks_done = wire_get64(f->p + 32);
	p.blocks_total = wire_get64(f->p + 40);
	p.rate = wire_get64(f->p + 48);
	p.in_flight = wire_get32(f->p + 56);
	p.window = wire_get32(f->p + 60);
	p.peers = wire_get32(f->p + 64);
	lf->fn(lf->cls, &p);
	return 0;
}

/* FILE_DONE: 4 req_id  8 id  16 size  24 blocks_sent  32 blocks_skipped
 * 40 xxh128[16]  56 uri[] */
static int
lf_file_done(struct lf_file *lf, const struct lf_frame *f)
{
	struct ferry_file_result *r = lf->ret;
	size_t len;

	if (f->size < FERRY_C_FILE_DONE_FIXED || lf->done)
		return -EPROTO;
	len = (size_t)f->size - FERRY_C_FILE_DONE_FIXED;
	if (len >= sizeof(r->uri))
		return -EPROTO;
	r->id = wire_get64(f->p + 8);
	r->size = wire_get64(f->p + 16);
	r->blocks_sent = wire_get64(f->p + 24);
	r->blocks_skipped = wire_get64(f->p + 32);
	memcpy(r->xxh128, f->p + 40, sizeof(r->xxh128));
	memcpy(r->uri, f->p + FERRY_C_FILE_DONE_FIXED, len);
	r->uri[len] = '\0';
	lf->done = true;
	return 0;
}

static int
lf_file_reply(void *ctx, const struct lf_frame *f)
{
	struct lf_file *lf = ctx;

	if (f->type == FERRY_C_FILE_PROGRESS)
		return lf_file_progress(lf, f);
	if (f->type == FERRY_C_FILE_DONE)
		return lf_file_done(lf, f);
	return -EPROTO;
}

/* Waits for the end of a file request; the deadline moves on with each
 * of its frames. */
static int
lf_file_wait(struct ferry_client *c, uint32_t req_id, struct lf_file *lf)
{
	int64_t deadline = lf_deadline(c, 0);
	struct lf_frame f;
	int r, status = 0;

	for (;;) {
		r = lf_next_frame(c, &f);
		if (r == 0) {
			r = lf_wait(c, false, deadline);
			if (r < 0)
				break;
			continue;
		}
		if (r < 0)
			break;
		if (f.size >= 8 && wire_get32(f.p + 4) == req_id)
			deadline = lf_deadline(c, 0);
		r = lf_reply(c, &f, req_id, lf_file_reply, lf, &status);
		lf_consume(c, &f);
		if (r < 0)
			break;
		if (r > 0) {
			if (status == 0 && !lf->done)
				return lf_fail(c, -EPROTO);
			return status;
		}
	}
	if (r == -EPROTO)
		return lf_fail(c, r);
	return r;
}

static uint32_t
lf_file_progress_ms(const struct ferry_client *c, uint32_t progress_ms)
{
	uint32_t keep = LF_FILE_KEEPALIVE_MS;

	if (c->timeout_ms > 0 && (uint32_t)c->timeout_ms / 2 < keep)
		keep = (uint32_t)c->timeout_ms / 2 > 0
		    ? (uint32_t)c->timeout_ms / 2
		    : 1;
	return progress_ms > 0 && progress_ms < keep ? progress_ms : keep;
}

static int
lf_file_request(struct ferry_client *c, uint8_t *frame, size_t size, int fd,
    uint32_t req_id, struct lf_file *lf)
{
	int r;

	c->why[0] = '\0';
	r = lf_write_fd(c, frame, size, fd, lf_deadline(c, 0));
	free(frame);
	if (r < 0)
		return r;
	return lf_file_wait(c, req_id, lf);
}

int
ferry_file_put(struct ferry_client *c, int fd, const char *label,
    unsigned replication, uint32_t progress_ms, ferry_file_progress_fn *fn,
    void *cls, struct ferry_file_result *ret)
{
	size_t llen = label != NULL ? strlen(label) : 0;
	struct lf_file lf = { fn, cls, progress_ms, 0, ret, false };
	uint32_t req_id;
	uint8_t *p;

	if (c == NULL || fd < 0 || ret == NULL ||
	    replication > FERRY_DHT_REPL_MAX)
		return -EINVAL;
	if (c->dead)
		return c->dead;
	/* Cut at a character boundary: the daemon wants UTF-8 or bytes,
	 * never half a sequence. */
	if (llen > FERRY_C_FILE_LABEL_MAX) {
		llen = FERRY_C_FILE_LABEL_MAX;
		while (llen > 0 && ((unsigned char)label[llen] & 0xc0) == 0x80)
			llen--;
	}
	memset(ret, 0, sizeof(*ret));
	p = malloc(FERRY_C_FILE_PUT_FIXED + llen);
	if (p == NULL)
		return -ENOMEM;
	req_id = lf_req_id_new(c);
	wire_put_hdr(p, (uint16_t)(FERRY_C_FILE_PUT_FIXED + llen),
	    FERRY_C_FILE_PUT);
	wire_put32(p + 4, req_id);
	p[8] = (uint8_t)replication;
	p[9] = 0;
	wire_put16(p + 10, 0);
	wire_put32(p + 12, lf_file_progress_ms(c, progress_ms));
	if (llen > 0)
		memcpy(p + FERRY_C_FILE_PUT_FIXED, label, llen);
	return lf_file_request(c, p, FERRY_C_FILE_PUT_FIXED + llen, fd, req_id,
	    &lf);
}

int
ferry_file_get(struct ferry_client *c, const char *uri, int fd,
    uint32_t progress_ms, ferry_file_progress_fn *fn, void *cls,
    struct ferry_file_result *ret)
{
	struct lf_file lf = { fn, cls, progress_ms, 0, ret, false };
	size_t ulen;
	uint32_t req_id;
	uint8_t *p;

	if (c == NULL || uri == NULL || fd < 0 || ret == NULL)
		return -EINVAL;
	ulen = strlen(uri);
	if (ulen == 0 || ulen > FERRY_C_FILE_URI_MAX)
		return -EINVAL;
	if (c->dead)
		return c->dead;
	memset(ret, 0, sizeof(*ret));
	p = malloc(FERRY_C_FILE_GET_FIXED + ulen);
	if (p == NULL)
		return -ENOMEM;
	req_id = lf_req_id_new(c);
	wire_put_hdr(p, (uint16_t)(FERRY_C_FILE_GET_FIXED + ulen),
	    FERRY_C_FILE_GET);
	wire_put32(p + 4, req_id);
	wire_put32(p + 8, lf_file_progress_ms(c, progress_ms));
	wire_put32(p + 12, 0);
	memcpy(p + FERRY_C_FILE_GET_FIXED, uri, ulen);
	return lf_file_request(c, p, FERRY_C_FILE_GET_FIXED + ulen, fd, req_id,
	    &lf);
}

struct lf_transfers {
	struct ferry_transfer *list;
	size_t n, cap;
};

/* TRANSFER: 4 req_id  8 id  16 kind  17 state  18 reserved  20 uid
 * 24 bytes_done  32 bytes_total  40 updated  48 label[] */
static int
lf_transfer_reply(void *ctx, const struct lf_frame *f)
{
	struct lf_transfers *l = ctx;
	struct ferry_transfer *t;

	if (f->type != FERRY_C_TRANSFER || f->size < FERRY_C_TRANSFER_FIXED)
		return -EPROTO;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;

		t = realloc(l->list, cap * sizeof(*t));
		if (t == NULL)
			return -ENOMEM;
		l->list = t;
		l->cap = cap;
	}
	t = &l->list[l->n];
	memset(t, 0, sizeof(*t));
	t->id = wire_get64(f->p + 8);
	t->kind = f->p[16];
	t->state = f->p[17];
	t->uid = wire_get32(f->p + 20);
	t->bytes_done = wire_get64(f->p + 24);
	t->bytes_total = wire_get64(f->p + 32);
	t->updated = wire_get64(f->p + 40);
	t->label = lf_strndup(f->p + FERRY_C_TRANSFER_FIXED,
	    (size_t)f->size - FERRY_C_TRANSFER_FIXED);
	if (t->label == NULL)
		return -ENOMEM;
	l->n++;
	return 0;
}

int
ferry_transfers(struct ferry_client *c, struct ferry_transfer **ret,
    size_t *ret_n)
{
	struct lf_transfers l = { NULL, 0, 0 };
	int r;

	if (c == NULL || ret == NULL || ret_n == NULL)
		return -EINVAL;
	r = lf_request_simple(c, FERRY_C_TRANSFERS_REQ, lf_transfer_reply, &l);
	if (r < 0) {
		ferry_transfers_free(l.list, l.n);
		return r;
	}
	*ret = l.list;
	*ret_n = l.n;
	return 0;
}

void
ferry_transfers_free(struct ferry_transfer *t, size_t n)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(t[i].label);
	free(t);
}

int
ferry_transfer_cancel(struct ferry_client *c, uint64_t id)
{
	uint32_t req_id;
	uint8_t *p;

	if (c == NULL)
		return -EINVAL;
	if (c->dead)
		return c->dead;
	p = lf_request_frame(c, FERRY_C_CANCEL, FERRY_C_CANCEL_SIZE, &req_id);
	if (p == NULL)
		return -ENOMEM;
	wire_put64(p + 8, id);
	return lf_request_wait(c, req_id, NULL, NULL, 0);
}
