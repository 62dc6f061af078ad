/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The manifest builder (see manifest.h), storage layer. One open node per
 * level: a chunk goes into level 0; a level's node is sealed when it is
 * full and another entry comes, and its ref goes one level up. At the
 * end, the lowest level that never sealed a node and whose entries fit in
 * a root is the root; every level below it is sealed and passed up first.
 * So the tree is as shallow as the root's smaller capacity allows, every
 * node but the last of each level is full, and the same chunks always
 * give the same nodes (convergence holds for the manifest too).
 */
#include "storage/manifest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/wire.h"
#include "storage/manifest_int.h"

struct manifest_level {
	uint8_t *buf;    /* entries from MANIFEST_ROOT_LEN, header before */
	size_t count;    /* entries in the open node */
	uint64_t bytes;  /* file bytes under them */
	uint64_t sealed; /* nodes this level has sealed so far */
};

struct manifest_builder {
	const struct storage_codec *codec;
	storage_emit_fn *emit;
	void *arg;
	size_t node_size;
	size_t fanout; /* entries below the root */
	size_t root_fanout;
	uint32_t chunk_size;
	uint64_t total;  /* file bytes added */
	bool short_seen; /* a chunk shorter than chunk_size came */
	int err;         /* sticky failure */
	uint8_t *sealed; /* storage_sealed_len(node_size) bytes */
	size_t buf_size;
	struct manifest_level level[MANIFEST_LEVEL_MAX + 1];
};

int
manifest_builder_new(const struct storage_codec *c, size_t node_size,
    uint32_t chunk_size, storage_emit_fn *emit, void *arg,
    struct manifest_builder **ret)
{
	struct manifest_builder *b;

	if (c == NULL || emit == NULL || ret == NULL ||
	    node_size < STORAGE_CHUNK_MIN || node_size > STORAGE_CHUNK_MAX ||
	    chunk_size < STORAGE_CHUNK_MIN || chunk_size > STORAGE_CHUNK_MAX ||
	    node_size > chunk_size)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return -ENOMEM;
	b->codec = c;
	b->emit = emit;
	b->arg = arg;
	b->node_size = node_size;
	b->fanout = manifest_fanout(node_size, false);
	b->root_fanout = manifest_fanout(node_size, true);
	b->chunk_size = chunk_size;
	b->buf_size = MANIFEST_ROOT_LEN + b->fanout * MANIFEST_ENTRY_LEN;
	b->sealed = malloc(storage_sealed_len(node_size));
	if (b->sealed == NULL) {
		free(b);
		return -ENOMEM;
	}
	*ret = b;
	return 0;
}

void
manifest_builder_free(struct manifest_builder *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i <= MANIFEST_LEVEL_MAX; i++) {
		if (b->level[i].buf != NULL)
			sodium_memzero(b->level[i].buf, b->buf_size);
		free(b->level[i].buf);
	}
	free(b->sealed);
	free(b);
}

/* Seals level lvl's open node (as the root if root) and emits it; ref
 * receives its ref. The level is empty after. */
static int
manifest_seal(struct manifest_builder *b, unsigned lvl, bool root,
    const uint8_t *xxh128, struct storage_ref *ref)
{
	struct manifest_level *l = &b->level[lvl];
	size_t hdr = root ? MANIFEST_ROOT_LEN : MANIFEST_HDR_LEN;
	uint8_t *node;
	size_t len;
	int r;

	if (l->buf == NULL) { /* the empty file's root */
		l->buf = calloc(1, b->buf_size);
		if (l->buf == NULL)
			return -ENOMEM;
	}
	node = l->buf + MANIFEST_ROOT_LEN - hdr;
	len = hdr + l->count * MANIFEST_ENTRY_LEN;
	node[MANIFEST_OFF_VERSION] = MANIFEST_VERSION;
	node[MANIFEST_OFF_LEVEL] = (uint8_t)lvl;
	node[MANIFEST_OFF_FLAGS] = root ? MANIFEST_FLAG_ROOT : 0;
	node[MANIFEST_OFF_ZERO] = 0;
	wire_put32(node + MANIFEST_OFF_COUNT, (uint32_t)l->count);
	if (root) {
		wire_put64(node + MANIFEST_OFF_SIZE, b->total);
		wire_put32(node + MANIFEST_OFF_CHUNK, b->chunk_size);
		memcpy(node + MANIFEST_OFF_XXH, xxh128, MANIFEST_XXH_LEN);
	}
	r = storage_seal(b->codec, STORAGE_KIND_NODE, node, len, b->sealed,
	    ref);
	if (r < 0)
		return r;
	ref->len = l->bytes; /* a node's ref counts the file bytes under it */
	r = b->emit(b->arg, b->sealed, storage_sealed_len(len), ref);
	if (r < 0)
		return r;
	sodium_memzero(l->buf, b->buf_size);
	l->count = 0;
	l->bytes = 0;
	l->sealed++;
	return 0;
}

/* Appends ref to level lvl's open node, sealing it first if full. */
static int
manifest_push(struct manifest_builder *b, unsigned lvl,
    const struct storage_ref *ref)
{
	struct manifest_level *l = &b->level[lvl];
	struct storage_ref up;
	uint8_t *e;
	int r;

	if (lvl > MANIFEST_LEVEL_MAX)
		return -EFBIG;
	if (l->buf == NULL) {
		l->buf = calloc(1, b->buf_size);
		if (l->buf == NULL)
			return -ENOMEM;
	}
	if (l->count == b->fanout) {
		r = manifest_seal(b, lvl, false, NULL, &up);
		if (r == 0)
			r = manifest_push(b, lvl + 1, &up);
		sodium_memzero(&up, sizeof(up));
		if (r < 0)
			return r;
	}
	e = l->buf + MANIFEST_ROOT_LEN + l->count * MANIFEST_ENTRY_LEN;
	memcpy(e, ref->block.b, DHTKEY_LEN);
	memcpy(e + DHTKEY_LEN, ref->key, STORAGE_KEY_LEN);
	wire_put64(e + DHTKEY_LEN + STORAGE_KEY_LEN, ref->len);
	l->count++;
	l->bytes += ref->len;
	return 0;
}

int
manifest_builder_add(struct manifest_builder *b,
    const struct storage_ref *chunk)
{
	if (b == NULL || chunk == NULL)
		return -EINVAL;
	if (b->err < 0)
		return b->err;
	/* A wrong length is the caller's mistake, not the manifest's: it
	 * does not spoil the builder. */
	if (b->short_seen || chunk->len == 0 || chunk->len > b->chunk_size)
		return -EINVAL;
	if (chunk->len > MANIFEST_FILE_MAX - b->total)
		return -EFBIG;
	b->short_seen = chunk->len < b->chunk_size;
	b->total += chunk->len;
	b->err = manifest_push(b, 0, chunk);
	return b->err;
}

int
manifest_builder_finish(struct manifest_builder *b,
    const uint8_t xxh128[MANIFEST_XXH_LEN], struct storage_ref *root)
{
	struct storage_ref up;
	int r = 0;

	if (b == NULL || xxh128 == NULL || root == NULL)
		return -EINVAL;
	if (b->err < 0)
		return b->err;
	for (unsigned lvl = 0; lvl <= MANIFEST_LEVEL_MAX; lvl++) {
		struct manifest_level *l = &b->level[lvl];

		/* Nothing above a level that never sealed a node: if its
		 * entries fit in a root, this is the top. */
		if (l->sealed == 0 && l->count <= b->root_fanout) {
			r = manifest_seal(b, lvl, true, xxh128, root);
			goto out;
		}
		if (l->count == 0)
			continue;
		r = manifest_seal(b, lvl, false, NULL, &up);
		if (r == 0)
			r = manifest_push(b, lvl + 1, &up);
		sodium_memzero(&up, sizeof(up));
		if (r < 0)
			goto out;
	}
	r = -EFBIG;
out:
	b->err = r < 0 ? r : -EALREADY;
	return r;
}
