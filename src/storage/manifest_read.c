/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The manifest reader (see manifest.h), storage layer: a depth-first walk
 * holding one node per level. Every node is checked whole when it is fed,
 * before anything in it is used, against what its parent promised: its
 * level (one below the parent's: a node can never lead back to itself or
 * an ancestor, so loops are impossible and the walk ends), the file bytes
 * under it, and where it starts in the file. A node's length is checked
 * against max_node before any memory is taken for it.
 *
 * States: WANT (a node was asked for: next repeats the ask, feed checks
 * it), WALK (next yields chunks or asks for the next node), DONE, FAILED
 * (sticky: err and why are kept).
 */
#include "storage/manifest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/wire.h"
#include "storage/manifest_int.h"

enum manifest_state { READ_WANT, READ_WALK, READ_DONE, READ_FAILED };

/* The node held at one level and how far the walk is through it. */
struct manifest_frame {
	uint8_t *buf;    /* the node's plaintext */
	size_t cap;      /* bytes allocated at buf */
	size_t first;    /* offset of the first entry */
	uint32_t count;  /* entries */
	uint32_t next;   /* the entry the walk takes next */
	uint64_t offset; /* file offset of entry next */
};

struct manifest_reader {
	enum manifest_state state;
	struct storage_ref root;
	size_t max_node;
	/* The node asked for: its ref, level, and file offset. */
	struct storage_ref want;
	unsigned want_level;
	uint64_t want_offset;
	bool have_root;
	unsigned top;  /* the root's level */
	unsigned cur;  /* the level the walk is at */
	uint64_t size; /* the root's records */
	uint32_t chunk_size;
	uint8_t xxh[MANIFEST_XXH_LEN];
	int err;
	char why[192];
	struct manifest_frame frame[MANIFEST_LEVEL_MAX + 1];
};

int
manifest_reader_new(const struct storage_ref *root, size_t max_node,
    struct manifest_reader **ret)
{
	struct manifest_reader *r;

	if (root == NULL || ret == NULL || max_node < STORAGE_CHUNK_MIN ||
	    max_node > STORAGE_CHUNK_MAX)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	memcpy(&r->root, root, sizeof(*root));
	memcpy(&r->want, root, sizeof(*root));
	r->max_node = max_node;
	r->state = READ_WANT;
	*ret = r;
	return 0;
}

void
manifest_reader_free(struct manifest_reader *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i <= MANIFEST_LEVEL_MAX; i++) {
		if (r->frame[i].buf != NULL)
			sodium_memzero(r->frame[i].buf, r->frame[i].cap);
		free(r->frame[i].buf);
	}
	sodium_memzero(r, sizeof(*r));
	free(r);
}

/* Fails the reader for good with err and a sentence; returns err. */
__attribute__((format(printf, 3, 4))) static int
manifest_fail(struct manifest_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->err = err;
	r->state = READ_FAILED;
	return err;
}

/* The header: version, level, flags, length for the count. */
static int
manifest_check_header(struct manifest_reader *r, const uint8_t *p, size_t len,
    size_t *ret_first)
{
	bool root = !r->have_root;
	unsigned level = p[MANIFEST_OFF_LEVEL], flags = p[MANIFEST_OFF_FLAGS];
	size_t first = root ? MANIFEST_ROOT_LEN : MANIFEST_HDR_LEN;
	uint64_t count = wire_get32(p + MANIFEST_OFF_COUNT);

	if (p[MANIFEST_OFF_VERSION] != MANIFEST_VERSION)
		return manifest_fail(r, -ENOTSUP,
		    "manifest version %u: this ferry reads version %u",
		    p[MANIFEST_OFF_VERSION], MANIFEST_VERSION);
	if ((flags & ~MANIFEST_FLAG_ROOT) != 0 || p[MANIFEST_OFF_ZERO] != 0)
		return manifest_fail(r, -EBADMSG,
		    "node with unknown flags 0x%02x%02x", flags,
		    p[MANIFEST_OFF_ZERO]);
	if (root && (flags & MANIFEST_FLAG_ROOT) == 0)
		return manifest_fail(r, -EBADMSG,
		    "the root node lacks its root flag");
	if (!root && (flags & MANIFEST_FLAG_ROOT) != 0)
		return manifest_fail(r, -EBADMSG,
		    "a node below the root (level %u) claims to be a root",
		    level);
	if (root && level > MANIFEST_LEVEL_MAX)
		return manifest_fail(r, -EBADMSG,
		    "root at level %u, deeper than the %u levels a manifest may have",
		    level, MANIFEST_LEVEL_MAX + 1);
	if (!root && level != r->want_level)
		return manifest_fail(r, -EBADMSG,
		    "node at level %u where level %u was due: levels must step down by one (a loop?)",
		    level, r->want_level);
	if (!root && len > r->chunk_size)
		return manifest_fail(r, -EBADMSG,
		    "node at level %u of %zu bytes, larger than the chunk size %" PRIu32,
		    level, len, r->chunk_size);
	if (len < first)
		return manifest_fail(r, -EBADMSG,
		    "%s truncated: %zu bytes, less than its %zu-byte header",
		    root ? "root node" : "node", len, first);
	if (len != first + count * MANIFEST_ENTRY_LEN)
		return manifest_fail(r, -EBADMSG,
		    "node at level %u of %zu bytes for %" PRIu64
		    " entries of %d bytes: %s",
		    level, len, count, MANIFEST_ENTRY_LEN,
		    len < first + count * MANIFEST_ENTRY_LEN
		        ? "truncated"
		        : "bytes left over");
	if (count == 0 && !(root && level == 0))
		return manifest_fail(r, -EBADMSG,
		    "an empty node at level %u: only the root of an empty file may be empty",
		    level);
	*ret_first = first;
	return 0;
}

/* The root's records: size as the URI says, chunk size in range. */
static int
manifest_check_root(struct manifest_reader *r, const uint8_t *p, size_t len)
{
	uint64_t size = wire_get64(p + MANIFEST_OFF_SIZE);
	uint32_t chunk = wire_get32(p + MANIFEST_OFF_CHUNK);

	if (size != r->root.len)
		return manifest_fail(r, -EBADMSG,
		    "the root records a file of %" PRIu64
		    " bytes, the URI says %" PRIu64,
		    size, r->root.len);
	if (size > MANIFEST_FILE_MAX)
		return manifest_fail(r, -EBADMSG,
		    "file size %" PRIu64 " over the 2^48-byte limit", size);
	if (chunk < STORAGE_CHUNK_MIN || chunk > STORAGE_CHUNK_MAX)
		return manifest_fail(r, -EBADMSG,
		    "chunk size %" PRIu32 " out of range (%u to %u)", chunk,
		    STORAGE_CHUNK_MIN, STORAGE_CHUNK_MAX);
	if (len > chunk)
		return manifest_fail(r, -EBADMSG,
		    "root node of %zu bytes, larger than the chunk size %" PRIu32,
		    len, chunk);
	r->size = size;
	r->chunk_size = chunk;
	memcpy(r->xxh, p + MANIFEST_OFF_XXH, MANIFEST_XXH_LEN);
	return 0;
}

/* The entries' lengths: each a whole number of chunks, or the file's
 * last bytes; for level 0, exactly one chunk (the last may be shorter);
 * together the bytes the parent promised. */
static int
manifest_check_entries(struct manifest_reader *r, const uint8_t *p,
    size_t first, uint32_t count, unsigned level)
{
	uint64_t off = r->want_offset, end = r->want_offset + r->want.len;

	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = p + first + (size_t)i * MANIFEST_ENTRY_LEN;
		uint64_t len = wire_get64(e + DHTKEY_LEN + STORAGE_KEY_LEN);
		bool last;

		if (len == 0 || len > end - off)
			return manifest_fail(r, -EBADMSG,
			    "entry %" PRIu32
			    " of a level-%u node at file offset %" PRIu64
			    " claims %" PRIu64 " bytes: %s",
			    i, level, off, len,
			    len == 0 ? "none"
			             : "past the bytes its parent holds");
		last = off + len == r->size;
		if (level == 0 && len != r->chunk_size &&
		    !(last && len < r->chunk_size))
			return manifest_fail(r, -EBADMSG,
			    "chunk at file offset %" PRIu64 " of %" PRIu64
			    " bytes, not the chunk size %" PRIu32
			    " (only the last may be shorter)",
			    off, len, r->chunk_size);
		if (level > 0 && !last && len % r->chunk_size != 0)
			return manifest_fail(r, -EBADMSG,
			    "subtree at file offset %" PRIu64 " of %" PRIu64
			    " bytes, not whole chunks of %" PRIu32,
			    off, len, r->chunk_size);
		off += len;
	}
	if (off != end)
		return manifest_fail(r, -EBADMSG,
		    "the entries of a level-%u node add up to %" PRIu64
		    " bytes, its parent says %" PRIu64,
		    level, off - r->want_offset, r->want.len);
	return 0;
}

int
manifest_reader_feed(struct manifest_reader *r, const uint8_t *plain,
    size_t len)
{
	struct manifest_frame *f;
	size_t first = 0;
	unsigned level;
	int err;

	if (r == NULL || (plain == NULL && len > 0))
		return -EINVAL;
	if (r->state == READ_FAILED)
		return r->err;
	if (r->state != READ_WANT)
		return -EINVAL;
	if (len > r->max_node)
		return manifest_fail(r, -EBADMSG,
		    "node of %zu bytes, over the %zu-byte limit", len,
		    r->max_node);
	if (len < MANIFEST_HDR_LEN)
		return manifest_fail(r, -EBADMSG,
		    "node truncated: %zu bytes, less than a header", len);
	err = manifest_check_header(r, plain, len, &first);
	if (err == 0 && !r->have_root)
		err = manifest_check_root(r, plain, len);
	level = plain[MANIFEST_OFF_LEVEL];
	if (err == 0)
		err = manifest_check_entries(r, plain, first,
		    wire_get32(plain + MANIFEST_OFF_COUNT), level);
	if (err < 0)
		return err;
	/* Checked: len <= max_node. */
	f = &r->frame[level];
	if (f->cap < len) {
		uint8_t *nb = malloc(len);

		if (nb == NULL)
			return manifest_fail(r, -ENOMEM, "out of memory");
		if (f->buf != NULL)
			sodium_memzero(f->buf, f->cap);
		free(f->buf);
		f->buf = nb;
		f->cap = len;
	}
	memcpy(f->buf, plain, len);
	f->first = first;
	f->count = wire_get32(plain + MANIFEST_OFF_COUNT);
	f->next = 0;
	f->offset = r->want_offset;
	if (!r->have_root) {
		r->have_root = true;
		r->top = level;
	}
	r->cur = level;
	r->state = READ_WALK;
	return 0;
}

/* Copies entry i of frame f into ref. */
static void
manifest_entry(const struct manifest_frame *f, uint32_t i,
    struct storage_ref *ref)
{
	const uint8_t *e = f->buf + f->first + (size_t)i * MANIFEST_ENTRY_LEN;

	memcpy(ref->block.b, e, DHTKEY_LEN);
	memcpy(ref->key, e + DHTKEY_LEN, STORAGE_KEY_LEN);
	ref->len = wire_get64(e + DHTKEY_LEN + STORAGE_KEY_LEN);
}

int
manifest_reader_next(struct manifest_reader *r, struct storage_ref *ref,
    uint64_t *offset)
{
	struct manifest_frame *f;

	if (r == NULL || ref == NULL || offset == NULL)
		return -EINVAL;
	switch (r->state) {
	case READ_FAILED:
		return r->err;
	case READ_DONE:
		return MANIFEST_DONE;
	case READ_WANT:
		memcpy(ref, &r->want, sizeof(*ref));
		*offset = r->want_offset;
		return MANIFEST_NEED_NODE;
	case READ_WALK:
		break;
	}
	/* Climb out of finished nodes; their sizes were checked at feed. */
	while (r->frame[r->cur].next == r->frame[r->cur].count) {
		if (r->cur == r->top) {
			r->state = READ_DONE;
			return MANIFEST_DONE;
		}
		r->cur++;
	}
	f = &r->frame[r->cur];
	manifest_entry(f, f->next, ref);
	*offset = f->offset;
	f->next++;
	f->offset += ref->len;
	if (r->cur == 0)
		return MANIFEST_CHUNK;
	memcpy(&r->want, ref, sizeof(*ref));
	r->want_level = r->cur - 1;
	r->want_offset = *offset;
	r->state = READ_WANT;
	return MANIFEST_NEED_NODE;
}

const char *
manifest_reader_error(const struct manifest_reader *r)
{
	return r->why;
}

uint64_t
manifest_reader_size(const struct manifest_reader *r)
{
	return r->have_root ? r->size : 0;
}

uint32_t
manifest_reader_chunk_size(const struct manifest_reader *r)
{
	return r->have_root ? r->chunk_size : 0;
}

const uint8_t *
manifest_reader_xxh128(const struct manifest_reader *r)
{
	return r->have_root ? r->xxh : NULL;
}

unsigned
manifest_reader_depth(const struct manifest_reader *r)
{
	return r->have_root ? r->top + 1 : 0;
}
