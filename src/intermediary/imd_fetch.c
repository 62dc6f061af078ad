/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * POST /v1/fetch and GET /v1/blocks/KEY (ferry-intermediary(7)),
 * intermediary layer: blocks got from the DHT (which checks each against
 * its key) and sent as they come, IMD_FETCH_WINDOW GETs out at once and
 * none started while the client has not taken what was sent.
 */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "dht/dht.h"
#include "lib/base32.h"
#include "lib/wire.h"

#define IMD_FETCH_OUT_MAX (1024u * 1024) /* output waiting for the client */

enum imd_fetch_status {
	FETCH_FOUND,
	FETCH_NOT_FOUND,
	FETCH_TIMEOUT,
	FETCH_BUSY
};

struct imd_fetch {
	enum imd_job kind;     /* IMD_JOB_FETCH */
	struct imd *imd;       /* NULL once the intermediary is gone */
	struct httpd_req *req; /* NULL once the request is over */
	bool single;           /* GET /v1/blocks/KEY */
	struct dhtkey *keys;
	size_t n, next, out; /* keys, the next to ask, GETs out */
	TAILQ_ENTRY(imd_fetch) link;
};

static enum imd_fetch_status
imd_fetch_status_of(int status)
{
	if (status == 0)
		return FETCH_FOUND;
	if (status == -ENOENT || status == -EHOSTUNREACH)
		return FETCH_NOT_FOUND;
	if (status == -ETIMEDOUT)
		return FETCH_TIMEOUT;
	return FETCH_BUSY;
}

static void
imd_fetch_free(struct imd_fetch *f)
{
	if (f->imd != NULL)
		TAILQ_REMOVE(&f->imd->fetches, f, link);
	free(f->keys);
	free(f);
}

/* One record of the chunked answer. */
static void
imd_fetch_record(struct imd_fetch *f, enum imd_fetch_status st,
    const struct dhtkey *key, const uint8_t *block, size_t len)
{
	uint8_t head[4 + 1 + 32];

	wire_put32(head, (uint32_t)(33 + len));
	head[4] = (uint8_t)st;
	memcpy(head + 5, key->b, 32);
	httpd_reply_chunk(f->req, head, sizeof(head));
	if (len > 0)
		httpd_reply_chunk(f->req, block, len);
}

static void imd_fetch_more(struct imd_fetch *f);

static void
imd_fetch_got(void *cls, const struct dht_result *r)
{
	struct imd_fetch *f = cls;
	enum imd_fetch_status st = imd_fetch_status_of(r->status);
	char k[BASE32_LEN(32) + 1];

	f->out--;
	if (f->req == NULL || f->imd == NULL) {
		if (f->out == 0)
			imd_fetch_free(f);
		return;
	}
	if (st == FETCH_FOUND)
		(*f->imd->c.blocks_fetched)++;
	else
		(*f->imd->c.blocks_missing)++;
	if (!f->single) {
		imd_fetch_record(f, st, &r->key,
		    st == FETCH_FOUND ? r->block : NULL,
		    st == FETCH_FOUND ? r->block_len : 0);
		imd_fetch_more(f);
		return;
	}
	base32_encode(r->key.b, sizeof(r->key.b), k);
	if (st == FETCH_FOUND)
		httpd_reply(f->req, 200, "application/octet-stream", r->block,
		    r->block_len);
	else if (st == FETCH_NOT_FOUND)
		httpd_reply_error(f->req, 404, "not-found",
		    "the DHT has no holder of %s", k);
	else if (st == FETCH_TIMEOUT)
		httpd_reply_error(f->req, 504, "timeout",
		    "the DHT did not answer in time");
	else {
		(void)httpd_req_add_header(f->req, "Retry-After", "1");
		httpd_reply_error(f->req, 503, "busy",
		    "the DHT holds back more requests than it queues");
	}
}

/* Starts GETs while the window and the client's reading allow; ends the
 * answer after the last. */
static void
imd_fetch_more(struct imd_fetch *f)
{
	while (f->next < f->n && f->out < IMD_FETCH_WINDOW &&
	    httpd_req_queued(f->req) < IMD_FETCH_OUT_MAX) {
		const struct dhtkey *key = &f->keys[f->next++];
		int r = dht_get(f->imd->dht, key, imd_fetch_got, f);

		if (r == 0) {
			f->out++;
			continue;
		}
		(*f->imd->c.blocks_missing)++;
		imd_fetch_record(f, FETCH_BUSY, key, NULL, 0);
	}
	if (f->next == f->n && f->out == 0 && !f->single)
		httpd_reply_end(f->req);
}

static struct imd_fetch *
imd_fetch_new(struct imd *imd, struct httpd_req *req)
{
	struct imd_fetch *f = calloc(1, sizeof(*f));

	if (f == NULL) {
		httpd_reply_error(req, 503, "busy", "out of memory");
		return NULL;
	}
	f->kind = IMD_JOB_FETCH;
	f->imd = imd;
	f->req = req;
	TAILQ_INSERT_TAIL(&imd->fetches, f, link);
	httpd_req_set_data(req, f);
	return f;
}

void
imd_fetch_start(struct imd *imd, struct httpd_req *req)
{
	if (imd_fetch_new(imd, req) != NULL)
		httpd_req_read_body(req);
}

void
imd_fetch_body(struct imd *imd, struct httpd_req *req, struct evbuffer *body,
    bool fin)
{
	struct imd_fetch *f = httpd_req_data(req);
	size_t len = evbuffer_get_length(body);

	if (len > (size_t)IMD_FETCH_KEYS * DHTKEY_LEN) {
		(*imd->c.http.too_large)++;
		httpd_reply_error(req, 413, "too-large", "more than %u keys",
		    IMD_FETCH_KEYS);
		return;
	}
	if (!fin)
		return; /* the keys come whole, at most 128 KiB */
	if (len == 0 || len % DHTKEY_LEN != 0) {
		(*imd->c.http.malformed)++;
		imd_log_refusal(imd, req, "fetch body of %zu bytes", len);
		httpd_reply_error(req, 400, "malformed",
		    "the body is not 1 to %u keys of 32 bytes", IMD_FETCH_KEYS);
		return;
	}
	f->n = len / DHTKEY_LEN;
	f->keys = malloc(len);
	if (f->keys == NULL) {
		httpd_reply_error(req, 503, "busy", "out of memory");
		return;
	}
	(void)evbuffer_remove(body, f->keys, len);
	httpd_reply_start(req, 200, "application/x-ferry-blocks");
	imd_fetch_more(f);
}

void
imd_fetch_one(struct imd *imd, struct httpd_req *req, const char *key)
{
	struct imd_fetch *f;
	struct dhtkey k;
	int r;

	if (base32_decode(key, strlen(key), k.b, sizeof(k.b)) < 0) {
		(*imd->c.http.malformed)++;
		httpd_reply_error(req, 400, "malformed", "not a block key");
		return;
	}
	f = imd_fetch_new(imd, req);
	if (f == NULL)
		return;
	f->single = true;
	r = dht_get(imd->dht, &k, imd_fetch_got, f);
	if (r < 0) {
		(void)httpd_req_add_header(req, "Retry-After", "1");
		httpd_reply_error(req, 503, "busy",
		    "the DHT holds back more requests than it queues");
		return;
	}
	f->out++;
}

void
imd_fetch_drain(struct imd *imd, struct httpd_req *req)
{
	struct imd_fetch *f = httpd_req_data(req);

	(void)imd;
	if (f->keys != NULL)
		imd_fetch_more(f);
}

void
imd_fetch_done(struct imd *imd, struct httpd_req *req)
{
	struct imd_fetch *f = httpd_req_data(req);

	(void)imd;
	f->req = NULL;
	if (f->out == 0)
		imd_fetch_free(f);
}

void
imd_fetch_detach(struct imd *imd)
{
	struct imd_fetch *f;

	/* Those left have GETs out (the others went with their requests
	 * in httpd_free): they are freed when the DHT ends the GETs. */
	while ((f = TAILQ_FIRST(&imd->fetches)) != NULL) {
		TAILQ_REMOVE(&imd->fetches, f, link);
		f->imd = NULL;
	}
}
