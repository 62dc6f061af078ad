/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The manifest (src/storage/manifest_build.c, manifest_read.c): files of
 * 0 and 1 bytes, a chunk less one, a chunk, a chunk and one, trees of 3
 * and 4 levels and up to a million chunks are built, sealed, opened and read
 * back byte for byte with their XXH128, the same way twice; the builder
 * refuses chunks of the wrong length; and the reader names every kind of
 * malformed node it is fed (truncated, a loop or a level not stepping
 * down, absurd sizes and counts, sizes not adding up, a chunk of the
 * wrong length, a wrong root record) and stays failed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "lib/map.h"
#include "lib/wire.h"
#include "storage/chunk.h"
#include "storage/filesum.h"
#include "storage/manifest.h"
#include "storage/manifest_int.h"
#include "unit.h"

#define CS 1024u /* chunk and node size of the small trees */

/* Sealed blocks by key: what the DHT would hold. */
struct blk {
	struct dhtkey key;
	size_t len;
	uint8_t data[];
};

struct store {
	struct map *map;
	size_t nodes;   /* emitted by the builder */
	size_t dups;    /* emitted again (the same node twice) */
	bool keep_data; /* false: data chunks are not sealed at all */
};

static struct storage_codec *codec;

static void
test_setup(void)
{
	uint8_t secret[STORAGE_SECRET_LEN];

	memset(secret, 0x5a, sizeof(secret));
	ck_assert_int_eq(storage_codec_new(secret, 1, true, &codec), 0);
}

static void
test_teardown(void)
{
	storage_codec_free(codec);
}

static void
store_put(struct store *s, const uint8_t *sealed, size_t len,
    const struct dhtkey *key)
{
	struct blk *b;

	if (map_get(s->map, key->b, DHTKEY_LEN) != NULL) {
		s->dups++;
		return;
	}
	b = malloc(sizeof(*b) + len);
	ck_assert_ptr_nonnull(b);
	b->key = *key;
	b->len = len;
	memcpy(b->data, sealed, len);
	ck_assert_int_eq(map_put(s->map, b->key.b, DHTKEY_LEN, b), 0);
}

static int
emit(void *arg, const uint8_t *sealed, size_t len,
    const struct storage_ref *ref)
{
	struct store *s = arg;

	s->nodes++;
	store_put(s, sealed, len, &ref->block);
	return 0;
}

static bool
free_blk(void *cls, const void *key, size_t len, void *value)
{
	(void)cls;
	(void)key;
	(void)len;
	free(value);
	return true;
}

static void
store_free(struct store *s)
{
	map_foreach(s->map, free_blk, NULL);
	map_free(s->map);
}

/* A file of size bytes from seed. */
static uint8_t *
file_make(size_t size, uint64_t seed)
{
	uint8_t *f = malloc(size + 1);

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < size; i++)
		f[i] = (uint8_t)(unit_rand(&seed) >> 24);
	return f;
}

/* Chunks, seals and stores file, builds its manifest; root receives the
 * root's ref. */
static void
put_file(struct store *s, const uint8_t *file, size_t size, uint32_t chunk,
    size_t node_size, struct storage_ref *root)
{
	struct manifest_builder *b = NULL;
	uint8_t *sealed = malloc(storage_sealed_len(chunk));
	uint8_t sum[FILESUM_LEN];

	ck_assert_ptr_nonnull(sealed);
	ck_assert_int_eq(manifest_builder_new(codec, node_size, chunk, emit, s,
	                     &b),
	    0);
	for (size_t off = 0; off < size; off += chunk) {
		size_t len = size - off < chunk ? size - off : chunk;
		struct storage_ref ref;

		/* As ferry seals: the last chunk padded to a whole one. */
		ck_assert_int_eq(storage_seal_pad(codec, file + off, len, chunk,
		                     sealed, &ref),
		    0);
		store_put(s, sealed, storage_sealed_len(chunk), &ref.block);
		ck_assert_int_eq(manifest_builder_add(b, &ref), 0);
	}
	filesum_of(file, size, sum);
	ck_assert_int_eq(manifest_builder_finish(b, sum, root), 0);
	ck_assert_uint_eq(root->len, size);
	manifest_builder_free(b);
	free(sealed);
}

/* Reads the file rooted at root from s into a new buffer, checking
 * offsets are in order; *depth receives the tree's levels. */
static uint8_t *
get_file(struct store *s, const struct storage_ref *root, size_t max_node,
    unsigned *depth)
{
	struct manifest_reader *r = NULL;
	uint8_t *out = malloc(root->len + 1), *plain = malloc(max_node);
	uint64_t next_off = 0, offset;
	struct storage_ref ref;
	uint8_t sum[FILESUM_LEN];
	int step;

	ck_assert(out != NULL && plain != NULL);
	ck_assert_int_eq(manifest_reader_new(root, max_node, &r), 0);
	while (
	    (step = manifest_reader_next(r, &ref, &offset)) != MANIFEST_DONE) {
		struct blk *b;
		size_t got;

		ck_assert_msg(step >= 0, "reader: %s",
		    manifest_reader_error(r));
		b = map_get(s->map, ref.block.b, DHTKEY_LEN);
		ck_assert_ptr_nonnull(b);
		if (step == MANIFEST_NEED_NODE) {
			ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_NODE,
			                     b->data, b->len, plain, max_node,
			                     &got),
			    0);
			ck_assert_int_eq(manifest_reader_feed(r, plain, got),
			    0);
			continue;
		}
		ck_assert_int_eq(step, MANIFEST_CHUNK);
		ck_assert_uint_eq(offset, next_off);
		ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_DATA, b->data,
		                     b->len, out + offset, root->len - offset,
		                     &got),
		    0);
		next_off += got;
	}
	ck_assert_uint_eq(next_off, root->len);
	ck_assert_uint_eq(manifest_reader_size(r), root->len);
	filesum_of(out, root->len, sum);
	ck_assert_mem_eq(manifest_reader_xxh128(r), sum, FILESUM_LEN);
	/* DONE stays DONE. */
	ck_assert_int_eq(manifest_reader_next(r, &ref, &offset), MANIFEST_DONE);
	*depth = manifest_reader_depth(r);
	manifest_reader_free(r);
	free(plain);
	return out;
}

/* Levels the builder makes for n chunks with fanout f below the root and
 * rf in it. */
static unsigned
expected_depth(uint64_t n, uint64_t f, uint64_t rf)
{
	unsigned d = 1;

	while (n > rf) {
		n = (n + f - 1) / f;
		d++;
	}
	return d;
}

static void
round_trip(size_t size, uint32_t chunk, size_t node_size, unsigned depth)
{
	struct store s = { map_new(), 0, 0, true };
	struct storage_ref root, again;
	uint8_t *file = file_make(size, size * 31 + 1), *got;
	unsigned d;
	size_t nodes;

	ck_assert_ptr_nonnull(s.map);
	put_file(&s, file, size, chunk, node_size, &root);
	got = get_file(&s, &root, node_size, &d);
	ck_assert_mem_eq(got, file, size);
	ck_assert_uint_eq(d, depth);
	ck_assert_uint_eq(d,
	    expected_depth((size + chunk - 1) / chunk,
	        manifest_fanout(node_size, false),
	        manifest_fanout(node_size, true)));
	free(got);
	/* The same file again: the same root, and no new block. */
	nodes = map_size(s.map);
	put_file(&s, file, size, chunk, node_size, &again);
	ck_assert_mem_eq(&again, &root, sizeof(root));
	ck_assert_uint_eq(map_size(s.map), nodes);
	free(file);
	store_free(&s);
}

START_TEST(test_sizes)
{
	round_trip(0, CS, CS, 1);
	round_trip(1, CS, CS, 1);
	round_trip(CS - 1, CS, CS, 1);
	round_trip(CS, CS, CS, 1);
	round_trip(CS + 1, CS, CS, 1);
	/* 13 chunks fit in a 1 KiB root, 14 do not. */
	round_trip(13 * CS, CS, CS, 1);
	round_trip(13 * CS + 1, CS, CS, 2);
	round_trip(14 * CS * 13, CS, CS, 2);
	/* Nodes smaller than chunks: 1 KiB nodes over 4 KiB chunks. */
	round_trip(14 * 13 * 4096 + 1, 4096, CS, 3);
}
END_TEST

/* 183 chunks: 14 level-0 nodes do not fit in a root of 13, so three
 * levels; 14 * 14 * 13 + 1 chunks, four. */
START_TEST(test_deep)
{
	round_trip(14 * 13 * CS + 1, CS, CS, 3);
	round_trip(14 * 14 * 13 * CS + 1, CS, CS, 4);
}
END_TEST

/* A million chunks without their data: the refs are made up, named by
 * their index, and must come back in order. */
static void
fake_ref(uint64_t i, uint32_t len, struct storage_ref *ref)
{
	memset(ref, 0, sizeof(*ref));
	wire_put64(ref->block.b, i);
	wire_put64(ref->key, ~i);
	ref->len = len;
}

/* Builds the manifest of n made-up chunks of chunk bytes (the last 7
 * bytes short) into s; root receives its root. */
static void
build_fake(struct store *s, uint64_t n, uint32_t chunk, size_t node_size,
    const uint8_t sum[MANIFEST_XXH_LEN], struct storage_ref *root)
{
	struct manifest_builder *b = NULL;
	struct storage_ref ref;

	ck_assert_int_eq(manifest_builder_new(codec, node_size, chunk, emit, s,
	                     &b),
	    0);
	/* No ck_assert per chunk: in fork mode each one is a write(2). */
	for (uint64_t i = 0; i < n; i++) {
		fake_ref(i, i + 1 < n ? chunk : chunk - 7, &ref);
		if (manifest_builder_add(b, &ref) != 0)
			ck_abort_msg("add of chunk %llu failed",
			    (unsigned long long)i);
	}
	ck_assert_int_eq(manifest_builder_finish(b, sum, root), 0);
	manifest_builder_free(b);
	ck_assert_uint_eq(root->len, n * chunk - 7);
}

static void
many(uint64_t n, uint32_t chunk, size_t node_size)
{
	struct store s = { map_new(), 0, 0, false };
	struct manifest_reader *r = NULL;
	uint64_t seen = 0, offset;
	struct storage_ref ref, root, want;
	uint8_t sum[MANIFEST_XXH_LEN] = { 1, 2, 3 };
	uint8_t *plain = malloc(node_size);
	int step;

	ck_assert(plain != NULL && s.map != NULL);
	build_fake(&s, n, chunk, node_size, sum, &root);
	ck_assert_int_eq(manifest_reader_new(&root, node_size, &r), 0);
	while (
	    (step = manifest_reader_next(r, &ref, &offset)) != MANIFEST_DONE) {
		struct blk *blk;
		size_t got;

		if (step < 0)
			ck_abort_msg("%s", manifest_reader_error(r));
		if (step == MANIFEST_CHUNK) {
			fake_ref(seen, seen + 1 < n ? chunk : chunk - 7, &want);
			if (memcmp(&ref, &want, sizeof(ref)) != 0 ||
			    offset != seen * chunk)
				ck_abort_msg("chunk %llu wrong",
				    (unsigned long long)seen);
			seen++;
			continue;
		}
		blk = map_get(s.map, ref.block.b, DHTKEY_LEN);
		ck_assert_ptr_nonnull(blk);
		ck_assert_int_eq(storage_open(&ref, STORAGE_KIND_NODE,
		                     blk->data, blk->len, plain, node_size,
		                     &got),
		    0);
		ck_assert_int_eq(manifest_reader_feed(r, plain, got), 0);
	}
	ck_assert_uint_eq(seen, n);
	ck_assert_mem_eq(manifest_reader_xxh128(r), sum, sizeof(sum));
	ck_assert_uint_eq(manifest_reader_chunk_size(r), chunk);
	ck_assert_uint_eq(manifest_reader_depth(r),
	    expected_depth(n, manifest_fanout(node_size, false),
	        manifest_fanout(node_size, true)));
	/* Every node is distinct (the refs are), and was emitted once. */
	ck_assert_uint_eq(s.dups, 0);
	manifest_reader_free(r);
	free(plain);
	store_free(&s);
}

START_TEST(test_large_count)
{
	many(300000, CS, CS); /* five levels */
	many(1000000, 256 * 1024, 256 * 1024);
}
END_TEST

START_TEST(test_builder_refuses)
{
	struct store s = { map_new(), 0, 0, false };
	struct manifest_builder *b = NULL;
	struct storage_ref ref, root;
	uint8_t sum[MANIFEST_XXH_LEN] = { 0 };

	ck_assert_int_eq(manifest_builder_new(codec, CS, STORAGE_CHUNK_MIN - 1,
	                     emit, &s, &b),
	    -EINVAL);
	ck_assert_int_eq(manifest_builder_new(codec, STORAGE_CHUNK_MAX + 1, CS,
	                     emit, &s, &b),
	    -EINVAL);
	ck_assert_int_eq(manifest_builder_new(codec, CS, CS, NULL, &s, &b),
	    -EINVAL);
	/* A node larger than a chunk. */
	ck_assert_int_eq(manifest_builder_new(codec, 2 * CS, CS, emit, &s, &b),
	    -EINVAL);
	ck_assert_int_eq(manifest_builder_new(codec, CS, CS, emit, &s, &b), 0);
	fake_ref(0, CS + 1, &ref);
	ck_assert_int_eq(manifest_builder_add(b, &ref), -EINVAL);
	fake_ref(0, 0, &ref);
	ck_assert_int_eq(manifest_builder_add(b, &ref), -EINVAL);
	fake_ref(0, CS, &ref);
	ck_assert_int_eq(manifest_builder_add(b, &ref), 0);
	fake_ref(1, 10, &ref);
	ck_assert_int_eq(manifest_builder_add(b, &ref), 0);
	/* Nothing after a short chunk. */
	fake_ref(2, CS, &ref);
	ck_assert_int_eq(manifest_builder_add(b, &ref), -EINVAL);
	ck_assert_int_eq(manifest_builder_finish(b, sum, &root), 0);
	ck_assert_uint_eq(root.len, CS + 10);
	/* Finished: no more. */
	ck_assert_int_eq(manifest_builder_add(b, &ref), -EALREADY);
	manifest_builder_free(b);
	manifest_builder_free(NULL);
	store_free(&s);
}
END_TEST

/* An emit that fails stops the builder with its error. */
static int
emit_fail(void *arg, const uint8_t *sealed, size_t len,
    const struct storage_ref *ref)
{
	(void)arg;
	(void)sealed;
	(void)len;
	(void)ref;
	return -ENOSPC;
}

START_TEST(test_builder_emit_fails)
{
	struct manifest_builder *b = NULL;
	struct storage_ref ref, root;
	uint8_t sum[MANIFEST_XXH_LEN] = { 0 };
	int r = 0;

	ck_assert_int_eq(manifest_builder_new(codec, CS, CS, emit_fail, NULL,
	                     &b),
	    0);
	for (uint64_t i = 0; i < 100 && r == 0; i++) {
		fake_ref(i, CS, &ref);
		r = manifest_builder_add(b, &ref);
	}
	ck_assert_int_eq(r, -ENOSPC);
	ck_assert_int_eq(manifest_builder_add(b, &ref), -ENOSPC);
	ck_assert_int_eq(manifest_builder_finish(b, sum, &root), -ENOSPC);
	manifest_builder_free(b);
}
END_TEST

/* --- malformed nodes, written by hand ------------------------------- */

struct node {
	uint8_t b[2048];
	size_t len;
};

/* A root: level, count entries of the given lengths. */
static void
node_root(struct node *n, unsigned level, uint64_t size, uint32_t chunk,
    const uint64_t *lens, uint32_t count)
{
	memset(n, 0, sizeof(*n));
	n->b[MANIFEST_OFF_VERSION] = MANIFEST_VERSION;
	n->b[MANIFEST_OFF_LEVEL] = (uint8_t)level;
	n->b[MANIFEST_OFF_FLAGS] = MANIFEST_FLAG_ROOT;
	wire_put32(n->b + MANIFEST_OFF_COUNT, count);
	wire_put64(n->b + MANIFEST_OFF_SIZE, size);
	wire_put32(n->b + MANIFEST_OFF_CHUNK, chunk);
	n->len = MANIFEST_ROOT_LEN;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *e = n->b + n->len;

		memset(e, (int)(i + 1), DHTKEY_LEN + STORAGE_KEY_LEN);
		wire_put64(e + DHTKEY_LEN + STORAGE_KEY_LEN, lens[i]);
		n->len += MANIFEST_ENTRY_LEN;
	}
}

/* A node below the root. */
static void
node_inner(struct node *n, unsigned level, const uint64_t *lens, uint32_t count)
{
	memset(n, 0, sizeof(*n));
	n->b[MANIFEST_OFF_VERSION] = MANIFEST_VERSION;
	n->b[MANIFEST_OFF_LEVEL] = (uint8_t)level;
	wire_put32(n->b + MANIFEST_OFF_COUNT, count);
	n->len = MANIFEST_HDR_LEN;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *e = n->b + n->len;

		memset(e, (int)(0x40 + i), DHTKEY_LEN + STORAGE_KEY_LEN);
		wire_put64(e + DHTKEY_LEN + STORAGE_KEY_LEN, lens[i]);
		n->len += MANIFEST_ENTRY_LEN;
	}
}

static struct manifest_reader *
reader_for(uint64_t size)
{
	struct manifest_reader *r = NULL;
	struct storage_ref root, ref;
	uint64_t off;

	memset(&root, 0x11, sizeof(root));
	root.len = size;
	ck_assert_int_eq(manifest_reader_new(&root, 2048, &r), 0);
	ck_assert_int_eq(manifest_reader_next(r, &ref, &off),
	    MANIFEST_NEED_NODE);
	ck_assert_mem_eq(&ref, &root, sizeof(root));
	return r;
}

/* Feeds n, expects err and a reason containing what; then the reader
 * stays failed. */
static void
expect_bad(struct manifest_reader *r, const struct node *n, int err,
    const char *what)
{
	struct storage_ref ref;
	uint64_t off;

	ck_assert_int_eq(manifest_reader_feed(r, n->b, n->len), err);
	ck_assert_msg(strstr(manifest_reader_error(r), what) != NULL,
	    "error \"%s\" does not name \"%s\"", manifest_reader_error(r),
	    what);
	ck_assert_int_eq(manifest_reader_next(r, &ref, &off), err);
	ck_assert_int_eq(manifest_reader_feed(r, n->b, n->len), err);
	manifest_reader_free(r);
}

/* Feeds a good root, then the next step must ask for a node. */
static struct manifest_reader *
reader_at_child(const struct node *root, uint64_t size)
{
	struct manifest_reader *r = reader_for(size);
	struct storage_ref ref;
	uint64_t off;

	ck_assert_int_eq(manifest_reader_feed(r, root->b, root->len), 0);
	ck_assert_int_eq(manifest_reader_next(r, &ref, &off),
	    MANIFEST_NEED_NODE);
	return r;
}

START_TEST(test_bad_root)
{
	static const uint64_t two[] = { CS, 100 };
	struct node n;

	/* Truncated: less than a header, less than a root's. */
	node_root(&n, 0, CS + 100, CS, two, 2);
	n.len = 5;
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "truncated");
	n.len = 20;
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "truncated");
	/* Entries cut short, or bytes after them. */
	node_root(&n, 0, CS + 100, CS, two, 2);
	n.len -= 1;
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "truncated");
	node_root(&n, 0, CS + 100, CS, two, 2);
	n.len += 3;
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "left over");
	/* An absurd count in a short node. */
	node_root(&n, 0, CS + 100, CS, two, 2);
	wire_put32(n.b + MANIFEST_OFF_COUNT, UINT32_MAX);
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "truncated");
	/* Over max_node. */
	node_root(&n, 0, CS + 100, CS, two, 2);
	n.len = sizeof(n.b);
	{
		struct manifest_reader *r = NULL;
		struct storage_ref root, ref;
		uint64_t off;

		memset(&root, 0, sizeof(root));
		root.len = CS + 100;
		ck_assert_int_eq(manifest_reader_new(&root, 1024, &r), 0);
		(void)manifest_reader_next(r, &ref, &off);
		expect_bad(r, &n, -EBADMSG, "over the 1024-byte limit");
	}
	/* A version from the future. */
	node_root(&n, 0, CS + 100, CS, two, 2);
	n.b[MANIFEST_OFF_VERSION] = 2;
	expect_bad(reader_for(CS + 100), &n, -ENOTSUP, "version 2");
	/* Flags and the zero byte. */
	node_root(&n, 0, CS + 100, CS, two, 2);
	n.b[MANIFEST_OFF_FLAGS] |= 0x80;
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "unknown flags");
	node_root(&n, 0, CS + 100, CS, two, 2);
	n.b[MANIFEST_OFF_ZERO] = 1;
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "unknown flags");
	node_root(&n, 0, CS + 100, CS, two, 2);
	n.b[MANIFEST_OFF_FLAGS] = 0;
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "lacks its root flag");
	/* Too deep. */
	node_root(&n, MANIFEST_LEVEL_MAX + 1, CS + 100, CS, two, 2);
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "deeper than");
}
END_TEST

START_TEST(test_bad_root_sizes)
{
	static const uint64_t two[] = { CS, 100 }, big[] = { UINT64_MAX };
	struct node n;

	/* Nodes larger than a chunk: a root of 14 entries (1044 bytes),
	 * and below a good root a level-0 node of 15 (1088). */
	{
		uint64_t lens[15], top[1] = { 15 * CS };
		struct manifest_reader *r;
		struct node child;

		for (size_t i = 0; i < 15; i++)
			lens[i] = CS;
		node_root(&n, 0, 14 * CS, CS, lens, 14);
		expect_bad(reader_for(14 * CS), &n, -EBADMSG,
		    "root node of 1044 bytes, larger than the chunk size 1024");
		node_root(&n, 1, 15 * CS, CS, top, 1);
		r = reader_at_child(&n, 15 * CS);
		node_inner(&child, 0, lens, 15);
		expect_bad(r, &child, -EBADMSG,
		    "of 1088 bytes, larger than the chunk size 1024");
	}
	/* Sizes: not the URI's, absurd, chunk size out of range. */
	node_root(&n, 0, CS + 101, CS, two, 2);
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "the URI says 1124");
	node_root(&n, 0, UINT64_MAX, CS, big, 1);
	expect_bad(reader_for(UINT64_MAX), &n, -EBADMSG, "over the 2^48");
	node_root(&n, 0, CS + 100, 512, two, 2);
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "chunk size 512");
	node_root(&n, 0, CS + 100, STORAGE_CHUNK_MAX + 1, two, 2);
	expect_bad(reader_for(CS + 100), &n, -EBADMSG, "out of range");
	/* An empty file's root must be a level-0 node without entries. */
	node_root(&n, 1, 0, CS, NULL, 0);
	expect_bad(reader_for(0), &n, -EBADMSG, "an empty node at level 1");
	/* Entries: empty, too long, short of the size, a chunk of the
	 * wrong length. */
	{
		static const uint64_t zero[] = { CS, 0, 100 };
		static const uint64_t over[] = { CS, 101 };
		static const uint64_t under[] = { CS, 99 };
		static const uint64_t shortfirst[] = { 100, CS };
		static const uint64_t longlast[] = { CS, CS + 1 };

		node_root(&n, 0, CS + 100, CS, zero, 3);
		expect_bad(reader_for(CS + 100), &n, -EBADMSG,
		    "claims 0 bytes: none");
		node_root(&n, 0, CS + 100, CS, over, 2);
		expect_bad(reader_for(CS + 100), &n, -EBADMSG,
		    "past the bytes its parent holds");
		node_root(&n, 0, CS + 100, CS, under, 2);
		expect_bad(reader_for(CS + 100), &n, -EBADMSG,
		    "offset 1024 of 99 bytes, not the chunk size");
		node_root(&n, 0, CS + 100, CS, shortfirst, 2);
		expect_bad(reader_for(CS + 100), &n, -EBADMSG,
		    "chunk at file offset 0 of 100 bytes");
		node_root(&n, 0, 2 * CS + 1, CS, longlast, 2);
		expect_bad(reader_for(2 * CS + 1), &n, -EBADMSG,
		    "only the last may be shorter");
	}
}
END_TEST

START_TEST(test_bad_inner)
{
	/* A level-2 root over two subtrees of 3 chunks and 1 byte. */
	static const uint64_t top[] = { 3 * CS, 1 };
	static const uint64_t three[] = { CS, 2 * CS };
	static const uint64_t chunks[] = { CS, CS, CS };
	const uint64_t size = 3 * CS + 1;
	struct node root, n;

	node_root(&root, 2, size, CS, top, 2);
	/* The same level as the parent (a node naming itself loops). */
	node_inner(&n, 2, three, 2);
	expect_bad(reader_at_child(&root, size), &n, -EBADMSG,
	    "level 2 where level 1 was due");
	/* Skipping a level. */
	node_inner(&n, 0, chunks, 3);
	expect_bad(reader_at_child(&root, size), &n, -EBADMSG,
	    "level 0 where level 1 was due");
	/* Going up. */
	node_inner(&n, 3, three, 2);
	expect_bad(reader_at_child(&root, size), &n, -EBADMSG,
	    "levels must step down by one");
	/* A root flag below the root. */
	node_inner(&n, 1, three, 2);
	n.b[MANIFEST_OFF_FLAGS] = MANIFEST_FLAG_ROOT;
	expect_bad(reader_at_child(&root, size), &n, -EBADMSG,
	    "claims to be a root");
	/* An empty node. */
	node_inner(&n, 1, NULL, 0);
	expect_bad(reader_at_child(&root, size), &n, -EBADMSG,
	    "an empty node at level 1");
	/* Truncated. */
	node_inner(&n, 1, three, 2);
	n.len -= MANIFEST_ENTRY_LEN;
	expect_bad(reader_at_child(&root, size), &n, -EBADMSG, "truncated");
}
END_TEST

/* The same root, children whose sizes are wrong. */
START_TEST(test_bad_inner_sizes)
{
	static const uint64_t top[] = { 3 * CS, 1 };
	static const uint64_t three[] = { CS, 2 * CS };
	static const uint64_t split[] = { CS + 10, 2 * CS - 10 };
	static const uint64_t chunks[] = { CS, CS, CS };
	const uint64_t size = 3 * CS + 1;
	struct node root, n;

	node_root(&root, 2, size, CS, top, 2);
	/* Sizes that do not add up to the parent's. */
	{
		static const uint64_t less[] = { CS, CS };

		node_inner(&n, 1, less, 2);
		expect_bad(reader_at_child(&root, size), &n, -EBADMSG,
		    "add up to 2048 bytes, its parent says 3072");
	}
	/* A subtree that is not whole chunks. */
	node_inner(&n, 1, split, 2);
	expect_bad(reader_at_child(&root, size), &n, -EBADMSG,
	    "not whole chunks");
	/* A good level 1, then a bad level 0: a chunk of the wrong length. */
	{
		static const uint64_t bad0[] = { CS - 1, CS + 1 };
		struct manifest_reader *r = reader_at_child(&root, size);
		struct storage_ref ref;
		uint64_t off;

		node_inner(&n, 1, three, 2);
		ck_assert_int_eq(manifest_reader_feed(r, n.b, n.len), 0);
		ck_assert_int_eq(manifest_reader_next(r, &ref, &off),
		    MANIFEST_NEED_NODE);
		ck_assert_uint_eq(ref.len, CS);
		ck_assert_uint_eq(off, 0);
		node_inner(&n, 0, chunks, 1);
		ck_assert_int_eq(manifest_reader_feed(r, n.b, n.len), 0);
		ck_assert_int_eq(manifest_reader_next(r, &ref, &off),
		    MANIFEST_CHUNK);
		ck_assert_int_eq(manifest_reader_next(r, &ref, &off),
		    MANIFEST_NEED_NODE);
		ck_assert_uint_eq(ref.len, 2 * CS);
		ck_assert_uint_eq(off, CS);
		node_inner(&n, 0, bad0, 2);
		expect_bad(r, &n, -EBADMSG,
		    "chunk at file offset 1024 of 1023 bytes");
	}
}
END_TEST

START_TEST(test_reader_misuse)
{
	struct manifest_reader *r = NULL;
	struct storage_ref root, ref;
	uint64_t off;
	static const uint64_t one[] = { 10 };
	struct node n;

	memset(&root, 0, sizeof(root));
	root.len = 10;
	ck_assert_int_eq(manifest_reader_new(&root, 100, &r), -EINVAL);
	ck_assert_int_eq(manifest_reader_new(&root, STORAGE_CHUNK_MAX + 1, &r),
	    -EINVAL);
	ck_assert_int_eq(manifest_reader_new(&root, CS, &r), 0);
	ck_assert_uint_eq(manifest_reader_size(r), 0);
	ck_assert_ptr_null(manifest_reader_xxh128(r));
	ck_assert_str_eq(manifest_reader_error(r), "");
	/* Asking twice repeats the ask. */
	ck_assert_int_eq(manifest_reader_next(r, &ref, &off),
	    MANIFEST_NEED_NODE);
	ck_assert_int_eq(manifest_reader_next(r, &ref, &off),
	    MANIFEST_NEED_NODE);
	node_root(&n, 0, 10, CS, one, 1);
	ck_assert_int_eq(manifest_reader_feed(r, n.b, n.len), 0);
	/* Fed without being asked. */
	ck_assert_int_eq(manifest_reader_feed(r, n.b, n.len), -EINVAL);
	ck_assert_int_eq(manifest_reader_next(r, &ref, &off), MANIFEST_CHUNK);
	ck_assert_uint_eq(ref.len, 10);
	ck_assert_int_eq(manifest_reader_next(r, &ref, &off), MANIFEST_DONE);
	ck_assert_uint_eq(manifest_reader_depth(r), 1);
	manifest_reader_free(r);
	manifest_reader_free(NULL);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("storage_manifest");
	TCase *tc = tcase_create("build_read");
	TCase *bad = tcase_create("malformed");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_deep);
	tcase_add_test(tc, test_large_count);
	tcase_add_test(tc, test_builder_refuses);
	tcase_add_test(tc, test_builder_emit_fails);
	suite_add_tcase(s, tc);
	tcase_add_test(bad, test_bad_root);
	tcase_add_test(bad, test_bad_root_sizes);
	tcase_add_test(bad, test_bad_inner);
	tcase_add_test(bad, test_bad_inner_sizes);
	tcase_add_test(bad, test_reader_misuse);
	suite_add_tcase(s, bad);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
