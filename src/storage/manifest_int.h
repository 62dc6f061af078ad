/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The manifest node layout, version 1 (ferry-storage(7)), shared by the
 * builder, the reader and tests/unit. All integers big-endian.
 *
 *   every node   0 u8 version (1)  1 u8 level  2 u8 flags  3 u8 zero
 *                4 u32 count
 *   root only    8 u64 file size  16 u32 chunk size  20 u8 xxh128[16]
 *   entries      (from 8, or 36 in the root) count times:
 *                0 u8 block[32]  32 u8 key[32]  64 u64 len
 */
#ifndef FERRY_STORAGE_MANIFEST_INT_H
#define FERRY_STORAGE_MANIFEST_INT_H

#include "storage/manifest.h"

#define MANIFEST_HDR_LEN     8  /* every node */
#define MANIFEST_ROOT_LEN    36 /* the root's header with its records */
#define MANIFEST_ENTRY_LEN   72 /* block key, AEAD key, u64 length */
#define MANIFEST_FLAG_ROOT   0x01
/* Fields of the header and the root record. */
#define MANIFEST_OFF_VERSION 0
#define MANIFEST_OFF_LEVEL   1
#define MANIFEST_OFF_FLAGS   2
#define MANIFEST_OFF_ZERO    3
#define MANIFEST_OFF_COUNT   4
#define MANIFEST_OFF_SIZE    8
#define MANIFEST_OFF_CHUNK   16
#define MANIFEST_OFF_XXH     20

/* Entries a node of node_size bytes holds: below the root, and the root. */
static inline size_t
manifest_fanout(size_t node_size, bool root)
{
	size_t hdr = root ? MANIFEST_ROOT_LEN : MANIFEST_HDR_LEN;

	return node_size < hdr ? 0 : (node_size - hdr) / MANIFEST_ENTRY_LEN;
}

#endif /* FERRY_STORAGE_MANIFEST_INT_H */
