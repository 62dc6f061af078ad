/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The records of an upload, intermediary layer: the body of POST
 * /v1/blocks (ferry-intermediary(7), UPLOAD) is a sequence of
 *    0 u32 len       bytes after this field: 74 + block_len
 *    4 u8  version   PUTREC_VERSION
 *    5 u8  replication
 *    6 u64 expiry
 *   14 u8  sig[64]   the client's DHT PUT signature
 *   78 u8  block[block_len]
 * read as they arrive: putrec_size() judges a record from its first
 * four bytes, before the rest is waited for, so that a hostile length
 * never makes the server buffer it. Pure; fuzz target fuzz_putrec.
 */
#ifndef FERRY_INTERMEDIARY_PUTREC_H
#define FERRY_INTERMEDIARY_PUTREC_H

#include <stddef.h>
#include <stdint.h>

#define PUTREC_VERSION 1
#define PUTREC_HEAD    78 /* bytes before the block */
#define PUTREC_SIG_LEN 64

struct putrec {
	uint8_t replication; /* as sent; the caller checks its range */
	uint64_t expiry;
	uint8_t sig[PUTREC_SIG_LEN];
	const uint8_t *block; /* into the record */
	size_t block_len;     /* 1 to max_block */
};

/* The whole size (4 + len) of the record that starts data (len bytes
 * at hand) into *ret_total: 0; -EAGAIN when fewer than 4 bytes are at
 * hand; -EBADMSG for a len under 75; -EMSGSIZE for one over 74 +
 * max_block. */
int putrec_size(const uint8_t *data, size_t len, size_t max_block,
    size_t *ret_total);
/* Decodes the one whole record data is (len its total size), pointing
 * ret->block into it. 0; -EBADMSG for a version other than
 * PUTREC_VERSION or a size putrec_size() refuses; -EMSGSIZE as it. */
int putrec_decode(const uint8_t *data, size_t len, size_t max_block,
    struct putrec *ret);
/* Writes the record of block into out (PUTREC_HEAD + block_len bytes):
 * for tests and tools. */
void putrec_encode(uint8_t replication, uint64_t expiry,
    const uint8_t sig[PUTREC_SIG_LEN], const void *block, size_t block_len,
    uint8_t *out);

#endif /* FERRY_INTERMEDIARY_PUTREC_H */
