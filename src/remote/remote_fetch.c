/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The record stream of POST /v1/fetch, remote client
 * (ferry-intermediary(7)): parsed as it arrives, in pieces of any size,
 * holding at most one record, so that a get's memory does not grow with
 * the blocks asked. These are an intermediary's bytes: every length and
 * status is checked before it is used.
 *    0 u32 len     33 + block_len
 *    4 u8  status  0 found, 1 not found, 2 timed out, 3 busy
 *    5 u8  key[32]
 *   37 u8  block[] only when found: 1..DHTMSG_BLOCK_MAX bytes
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dht/dhtkey.h"
#include "lib/wire.h"

void
remote_fetch_init(struct remote_fetch *f, remote_fetch_fn *fn, void *cls)
{
	memset(f, 0, sizeof(*f));
	f->fn = fn;
	f->cls = cls;
}

void
remote_fetch_done(struct remote_fetch *f)
{
	free(f->block);
	f->block = NULL;
}

/* The record's head is whole: check it and size its block. */
static int
remote_fetch_head(struct remote_fetch *f)
{
	uint32_t len = wire_get32(f->head);
	unsigned status = f->head[4];

	if (len < REMOTE_FETCH_HEAD - 4 ||
	    len > REMOTE_FETCH_HEAD - 4 + DHTMSG_BLOCK_MAX ||
	    status > REMOTE_FETCH_BUSY)
		return -EBADMSG;
	f->block_len = len - (REMOTE_FETCH_HEAD - 4);
	f->block_have = 0;
	/* A block comes with "found" and only with it. */
	if ((status == REMOTE_FETCH_FOUND) != (f->block_len > 0))
		return -EBADMSG;
	if (f->block_len == 0)
		return 0;
	f->block = malloc(f->block_len);
	return f->block == NULL ? -ENOMEM : 0;
}

static int
remote_fetch_emit(struct remote_fetch *f)
{
	struct dhtkey key;
	int r;

	memcpy(key.b, f->head + 5, DHTKEY_LEN);
	r = f->fn(f->cls, f->head[4], &key, f->block, f->block_len);
	free(f->block);
	f->block = NULL;
	f->head_have = 0;
	f->block_len = 0;
	f->block_have = 0;
	f->records++;
	return r;
}

int
remote_fetch_feed(struct remote_fetch *f, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t n;
	int r;

	if (f->error < 0)
		return f->error;
	while (len > 0) {
		if (f->head_have < REMOTE_FETCH_HEAD) {
			n = REMOTE_FETCH_HEAD - f->head_have;
			n = n < len ? n : len;
			memcpy(f->head + f->head_have, p, n);
			f->head_have += n;
			p += n;
			len -= n;
			if (f->head_have < REMOTE_FETCH_HEAD)
				break;
			r = remote_fetch_head(f);
			if (r < 0)
				return f->error = r;
		} else {
			n = f->block_len - f->block_have;
			n = n < len ? n : len;
			memcpy(f->block + f->block_have, p, n);
			f->block_have += n;
			p += n;
			len -= n;
		}
		if (f->head_have == REMOTE_FETCH_HEAD &&
		    f->block_have == f->block_len) {
			r = remote_fetch_emit(f);
			if (r < 0)
				return f->error = r;
		}
	}
	return 0;
}

int
remote_fetch_end(const struct remote_fetch *f)
{
	if (f->error < 0)
		return f->error;
	return f->head_have == 0 ? 0 : -EBADMSG;
}

/* remote_fetch_keys()'s own stage between the parser and the caller's
 * callback: the check of every block against its key. */
struct remote_fetch_keys {
	remote_fetch_fn *fn;
	void *cls;
	bool wrong;  /* a record not asked, or a block not its key's */
	bool failed; /* fn stopped the stream, its sentence said */
};

static int
remote_fetch_keys_record(void *cls, unsigned status, const struct dhtkey *key,
    const uint8_t *block, size_t len)
{
	struct remote_fetch_keys *k = cls;
	struct dhtkey actual;
	int r;

	if (status == REMOTE_FETCH_FOUND) {
		dhtkey_of_block(block, len, &actual);
		if (!dhtkey_equal(&actual, key)) {
			k->wrong = true;
			return 0;
		}
	}
	r = k->fn(k->cls, status, key, block, len);
	if (r == REMOTE_FETCH_UNASKED) {
		k->wrong = true;
		return 0;
	}
	k->failed = r < 0;
	return r;
}

static int
remote_fetch_keys_write(void *cls, const void *data, size_t len)
{
	return remote_fetch_feed(cls, data, len);
}

int
remote_fetch_keys(struct remote *rc, const uint8_t *keys, size_t n,
    remote_fetch_fn *fn, void *cls)
{
	struct remote_fetch_keys k = { .fn = fn, .cls = cls };
	struct remote_req rq = { .method = "POST",
		.target = "/v1/fetch",
		.content_type = "application/x-ferry-keys",
		.body = keys,
		.body_len = n * DHTKEY_LEN };
	struct remote_fetch f;
	struct remote_resp resp;
	int r;

	remote_fetch_init(&f, remote_fetch_keys_record, &k);
	rq.write = remote_fetch_keys_write;
	rq.write_cls = &f;
	r = remote_request(rc, &rq, &resp);
	if (r == 0 && resp.status != 200)
		r = remote_fail_status(rc, "POST /v1/fetch", &resp);
	if (r == 0 && remote_fetch_end(&f) < 0)
		r = -EBADMSG;
	/* fn's own failures said why themselves; the stream's did not. */
	if (r == -EBADMSG && !k.failed)
		(void)remote_fail(rc, r,
		    "%s: POST /v1/fetch: a malformed answer", rc->url);
	if (r == 0 && k.wrong)
		r = remote_fail(rc, -EBADMSG,
		    "%s sent a block that is not the one asked", rc->url);
	remote_fetch_done(&f);
	remote_resp_done(&resp);
	return r;
}
