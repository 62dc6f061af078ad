/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The manifest, storage layer (issue 13): the list of a file's chunks as
 * a tree of sealed nodes, so that one root names a file of any size.
 * Level-0 nodes list data chunks in file order, level-n nodes list
 * level-(n-1) nodes; the root also records the file size, the XXH128 of
 * the whole plaintext and the chunk size. The node layout and the
 * reader's checks are in ferry-storage(7).
 */
#ifndef FERRY_STORAGE_MANIFEST_H
#define FERRY_STORAGE_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "storage/chunk.h"

#define MANIFEST_VERSION   1  /* the node format this code writes and reads */
#define MANIFEST_LEVEL_MAX 15 /* deepest root level (16 levels in all) */
/* Largest file a manifest may describe: 2^48 bytes (256 TiB). */
#define MANIFEST_FILE_MAX  (UINT64_C(1) << 48)
#define MANIFEST_XXH_LEN   16 /* XXH128, canonical (big-endian) bytes */

struct manifest_builder;
struct manifest_reader;

/* A finished node: sealed bytes (borrowed for the call) and its ref. A
 * negative return stops the builder, which returns it. */
typedef int storage_emit_fn(void *arg, const uint8_t *sealed, size_t len,
    const struct storage_ref *ref);

/*
 * A streaming builder sealing nodes of at most node_size plaintext bytes
 * with codec c (borrowed, must outlive the builder) for a file cut into
 * chunks of chunk_size bytes; each finished node goes to emit(arg, ...),
  * children before their parents, the root last. Memory: one node buffer
 * per level. Both sizes must be STORAGE_CHUNK_MIN..STORAGE_CHUNK_MAX, and
 * node_size at most chunk_size (the format's rule: a reader refuses a
 * node larger than a chunk; ferry passes the chunk size for both).
 * 0, -EINVAL or -ENOMEM.
 */
int manifest_builder_new(const struct storage_codec *c, size_t node_size,
    uint32_t chunk_size, storage_emit_fn *emit, void *arg,
    struct manifest_builder **ret);
/*
 * Appends the next data chunk of the file (chunk->len must be chunk_size,
 * except for the last chunk, which is 1..chunk_size). 0; -EINVAL for a
 * wrong length or a chunk after a short one; -EFBIG past
 * MANIFEST_FILE_MAX; or emit's error. After an error the builder only
 * fails.
 */
int manifest_builder_add(struct manifest_builder *b,
    const struct storage_ref *chunk);
/*
 * Seals and emits the nodes still open, the root last, recording xxh128
 * (the file's XXH128 in canonical bytes; see filesum.h) in it; root
 * receives the root's ref (its len is the file size). 0 or as above.
 */
int manifest_builder_finish(struct manifest_builder *b,
    const uint8_t xxh128[MANIFEST_XXH_LEN], struct storage_ref *root);
/* Frees (wiping the node buffers). NULL is allowed. */
void manifest_builder_free(struct manifest_builder *b);

/* What manifest_reader_next() asks for or yields. */
enum manifest_step {
	MANIFEST_NEED_NODE, /* fetch and open the node ref names, feed it */
	MANIFEST_CHUNK,     /* ref is the next data chunk, at *offset */
	MANIFEST_DONE,      /* every chunk was yielded, sizes all checked */
};

/*
  * A reader of the manifest rooted at root (copied; root->len is the file
 * size the URI states), accepting nodes of at most max_node plaintext
 * bytes (STORAGE_CHUNK_MIN..STORAGE_CHUNK_MAX; pass the largest chunk
 * size you accept), and none larger than the chunk size the root
 * records. Memory: at most one node per level, each at most that size.
 * 0, -EINVAL or -ENOMEM.
 */
int manifest_reader_new(const struct storage_ref *root, size_t max_node,
    struct manifest_reader **ret);
/*
 * The next step: >= 0 is an enum manifest_step: NEED_NODE fills ref with
 * the node to fetch (the root first); CHUNK fills ref and *offset with the
 * next data chunk in file order; DONE at the end. Asking again after
 * NEED_NODE without a feed repeats it. < 0: a negative errno, and
 * manifest_reader_error() names what was wrong; every later call fails
 * the same way:
 *   -EBADMSG  a malformed node (truncated, a level not stepping down by
 *             one, sizes or counts absurd or not adding up, a chunk of
 *             the wrong length, a bad root record)
 *   -ENOTSUP  a manifest version this code does not read
 */
int manifest_reader_next(struct manifest_reader *r, struct storage_ref *ref,
    uint64_t *offset);
/*
 * The opened plaintext (len bytes, copied) of the node the last NEED_NODE
 * asked for. It is checked at once: 0, -EBADMSG or -ENOTSUP (with
 * manifest_reader_error() set, as for next), or -EINVAL if no node was
 * asked for.
 */
int manifest_reader_feed(struct manifest_reader *r, const uint8_t *plain,
    size_t len);
/* A sentence naming what was wrong after a failure ("" before). */
const char *manifest_reader_error(const struct manifest_reader *r);
/* The root's records, valid once the root was fed (0 or NULL before). */
uint64_t manifest_reader_size(const struct manifest_reader *r);
uint32_t manifest_reader_chunk_size(const struct manifest_reader *r);
const uint8_t *manifest_reader_xxh128(const struct manifest_reader *r);
/* Levels in the tree (the root's level + 1); 0 before the root. */
unsigned manifest_reader_depth(const struct manifest_reader *r);
/* Frees (wiping the keys it holds). NULL is allowed. */
void manifest_reader_free(struct manifest_reader *r);

#endif /* FERRY_STORAGE_MANIFEST_H */
