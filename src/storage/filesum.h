/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The whole-file checksum, storage layer (issue 13, seed 003): XXH128 of
 * the plaintext over libxxhash, in the canonical byte order, so that
 * xxh128sum(1) on any machine prints the same hex as ferry.
 */
#ifndef FERRY_STORAGE_FILESUM_H
#define FERRY_STORAGE_FILESUM_H

#include <stddef.h>
#include <stdint.h>

#define FILESUM_LEN     16                /* bytes of an XXH128 */
#define FILESUM_HEX_LEN (2 * FILESUM_LEN) /* without the NUL */

/* A running XXH128: feed the file in order, in pieces of any size. */
struct filesum;

/* A new running sum. NULL on OOM. */
struct filesum *filesum_new(void);
/* Starts over, as if new. */
void filesum_reset(struct filesum *s);
/* Adds len bytes. */
void filesum_update(struct filesum *s, const void *data, size_t len);
/* The sum of everything added so far, canonical bytes (the state is kept:
 * more may be added). */
void filesum_final(const struct filesum *s, uint8_t out[FILESUM_LEN]);
/* Frees. NULL is allowed. */
void filesum_free(struct filesum *s);

/* XXH128 of len bytes at once. */
void filesum_of(const void *data, size_t len, uint8_t out[FILESUM_LEN]);
/* Lowercase hex, as xxh128sum prints it, and a NUL. */
void filesum_hex(const uint8_t sum[FILESUM_LEN], char buf[FILESUM_HEX_LEN + 1]);

#endif /* FERRY_STORAGE_FILESUM_H */
