/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Persistence of validated HELOs (see peerbook.h), core layer. */
#define LOG_TAG "core"
#include "core/peerbook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "core/peer.h"
#include "core/validate.h"
#include "lib/buf.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/wire.h"

#define PEERBOOK_MAGIC "FERRYPB1"
#define PEERBOOK_MAGIC_LEN 8

int
peerbook_parse(const uint8_t *buf, size_t len, peerbook_record_fn *fn,
    void *cls)
{
	size_t off = PEERBOOK_MAGIC_LEN;
	int n = 0;

	if (len < PEERBOOK_MAGIC_LEN ||
	    memcmp(buf, PEERBOOK_MAGIC, PEERBOOK_MAGIC_LEN) != 0)
		return -EBADMSG;
	while (off < len) {
		uint64_t until;
		size_t hlen;

		if (len - off < 10)
			return -EBADMSG;
		until = wire_get64(buf + off);
		hlen = wire_get16(buf + off + 8);
		off += 10;
		if (hlen > len - off)
			return -EBADMSG;
		(void)fn(cls, until, buf + off, hlen);
		off += hlen;
		n++;
	}
	return n;
}

static int
peerbook_restore_one(void *cls, uint64_t valid_until_s, const uint8_t *helo,
    size_t len)
{
	int r = validate_restore(cls, helo, len, valid_until_s);

	if (r < 0)
		log_debug_errno(r, "peer book: an address was not restored");
	return r;
}

int
peerbook_load(struct core *core)
{
	char path[PATH_MAX], bad[PATH_MAX + 16];
	uint8_t *data;
	size_t len;
	int r;

	if (fs_path_join(path, sizeof(path), core->state_dir, PEERBOOK_FILE) <
	    0)
		return 0;
	r = fs_read_file(path, PEERBOOK_MAX_SIZE, &data, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		log_warn_errno(r, "cannot read the peer book %s", path);
		return 0;
	}
	r = peerbook_parse(data, len, peerbook_restore_one, core);
	free(data);
	if (r < 0) {
		/* Keep the evidence, start afresh. */
		(void)snprintf(bad, sizeof(bad), "%s.damaged", path);
		(void)rename(path, bad);
		log_warn("peer book %s is damaged; moved it to %s", path, bad);
		return 0;
	}
	log_info("peer book: %d addresses on record", r);
	return r;
}

struct peerbook_ctx {
	struct buf out;
	int err;
};

static bool
peerbook_collect(void *cls, const void *key, size_t klen, void *value)
{
	struct peerbook_ctx *ctx = cls;
	struct peer *p = value;
	struct addr *a;
	uint8_t rec[10];

	(void)key;
	(void)klen;
	TAILQ_FOREACH(a, &p->addrs, link) {
		if (a->state != ADDR_VALID)
			continue;
		wire_put64(rec, a->valid_until_s);
		wire_put16(rec + 8, (uint16_t)a->helo_len);
		if (buf_append(&ctx->out, rec, sizeof(rec)) < 0 ||
		    buf_append(&ctx->out, a->helo, a->helo_len) < 0) {
			ctx->err = -ENOMEM;
			return false;
		}
	}
	return true;
}

int
peerbook_save(struct core *core)
{
	struct peerbook_ctx ctx;
	char path[PATH_MAX];
	int r;

	memset(&ctx, 0, sizeof(ctx));
	buf_init(&ctx.out);
	r = fs_path_join(path, sizeof(path), core->state_dir, PEERBOOK_FILE);
	if (r < 0)
		goto out;
	r = buf_append(&ctx.out, PEERBOOK_MAGIC, PEERBOOK_MAGIC_LEN);
	if (r < 0)
		goto out;
	map_foreach(core->peers, peerbook_collect, &ctx);
	r = ctx.err;
	if (r < 0)
		goto out;
	r = fs_write_atomic(path, buf_head(&ctx.out), buf_size(&ctx.out),
	    0600);
	if (r < 0)
		log_warn_errno(r, "cannot write the peer book %s", path);
	else
		core->book_dirty = false;
out:
	buf_done(&ctx.out);
	return r;
}
