/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The erasure layout of a group of sealed blocks, storage layer (issue
 * 16, "Redundancy choice"): Reed-Solomon over GF(2^8) with Intel ISA-L,
 * k data blocks and m parity blocks, any k of the n = k + m rebuilding
 * the rest. Pure: no I/O, no global state; the transfer code calls it.
 *
 * The code. Block i of a group is a data block for i < k and parity
 * block i - k above. The generator is ISA-L's gf_gen_cauchy1_matrix():
 * the identity on the data rows, and 1 / (i xor j) in GF(2^8) (ISA-L's
 * field, polynomial 0x11d) at parity row i, data column j. Every square
 * submatrix of a Cauchy matrix is invertible, so any k rows of the
 * generator are: the code is MDS for every k and m here.
 *
 * Lengths. The blocks of a group need not be the same length (a manifest
 * node, a short last block). Each data block is coded as if padded with
 * zero bytes to the group's stripe, the length of its longest data block;
 * the padding is neither stored nor sent, and a parity block is exactly
 * one stripe long. A reader learns the true lengths from the group's
 * layout, and a data block of length 0 is known without being fetched (it
 * is all padding): a file's last group, short of data blocks, lists the
 * missing ones with length 0, which keeps k, m and the generator the same
 * for every group of a file.
 *
 * What the manifest will carry (a proposal; the manifest format is not
 * changed here). In the root: the scheme (0 replication, 1 this code,
 * "rs-cauchy-gf256-v1"), k and m; the data references are then cut into
 * groups of k in file order, the last one completed with length-0
 * blocks. Per group, after its k data references (which keep their
 * block key, AEAD key and plaintext length): the sealed length of each
 * data block (u32; today every data block of a file is
 * storage_sealed_len(chunk size), since the last chunk is padded, so a
 * version may derive it and store only the count of real blocks), and
 * the DHT key of each of the m parity blocks (32 bytes: the BLAKE2b-256
 * of its bytes, checked on fetch as any block is). The stripe is not
 * stored: it is the largest sealed length. Parity blocks are combinations
 * of ciphertext, so they need no key of their own and tell a store no
 * more than the sealed blocks do. A rebuilt data block is checked against
 * its reference's block key like a fetched one: a corrupt piece shows as
 * a block that fails its hash, and the reader tries another k.
 */
#ifndef FERRY_STORAGE_ERASURE_H
#define FERRY_STORAGE_ERASURE_H

#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

/* Bounds: n = k + m <= 64 lets a group's blocks be one 64-bit set, keeps
 * the decode matrix (k x k) and ISA-L's tables (32 bytes per coefficient,
 * at most 32 KiB) small, and is far inside the Cauchy generator's own
 * limit (n <= 256, where i xor j stays a distinct field element). */
#define ERASURE_K_MAX     32
#define ERASURE_M_MAX     32
#define ERASURE_N_MAX     (ERASURE_K_MAX + ERASURE_M_MAX)
/* Longest block, data or parity: one DHT block. */
#define ERASURE_BLOCK_MAX FERRY_DHT_BLOCK_MAX

/* A group's shape: what a reader needs to decode it. Filled by
 * erasure_layout_init(); plain data, may be copied and shared. */
struct erasure_layout {
	unsigned k;                  /* data blocks, 1..ERASURE_K_MAX */
	unsigned m;                  /* parity blocks, 0..ERASURE_M_MAX */
	uint32_t stripe;             /* coded length: the longest data block */
	uint32_t len[ERASURE_K_MAX]; /* each data block's true length */
};

/* One block of a group that the caller holds (for erasure_decode()). */
struct erasure_piece {
	unsigned index;     /* 0..k-1 data, k..k+m-1 parity */
	const uint8_t *buf; /* its bytes (borrowed for the call) */
	size_t len;         /* must be erasure_block_len() of index */
};

/* The generator and encode tables of one (k, m). Immutable once made:
 * any number of threads may use one at once. */
struct erasure;

/*
 * Fills l for k data blocks of lengths len[0..k-1] (each at most
 * ERASURE_BLOCK_MAX, 0 allowed) and m parity blocks. 0, or -EINVAL for k
 * or m out of bounds or a length too long (l is then untouched).
 */
int erasure_layout_init(struct erasure_layout *l, unsigned k, unsigned m,
    const size_t len[]);
/* Bytes of block index of the group: len[index] for data, the stripe for
 * parity; 0 for an index out of range. */
size_t erasure_block_len(const struct erasure_layout *l, unsigned index);

/*
 * Makes the code for k data and m parity blocks (bounds above).
 * 0, -EINVAL or -ENOMEM.
 */
int erasure_new(unsigned k, unsigned m, struct erasure **ret);
/* Frees. NULL is allowed. */
void erasure_free(struct erasure *e);

/*
 * Computes the m parity blocks of the group l from its k data blocks:
 * data[i] holds l->len[i] bytes (may be NULL when that is 0), parity[j]
 * receives l->stripe bytes (nothing may overlap). 0, or -EINVAL if l is
 * not a layout of e's k and m or a needed pointer is NULL.
 */
int erasure_encode(const struct erasure *e, const struct erasure_layout *l,
    const uint8_t *const data[], uint8_t *const parity[]);

/*
 * Rebuilds blocks of group l from the n_have pieces in have (any order):
 * for every index i with out[i] != NULL (out has k + m entries), writes
 * block i, erasure_block_len(l, i) bytes, into out[i]; missing data
 * blocks to read the file, missing parity blocks too for a repair. A data
 * block of length 0 counts as held whether or not it is in have.
 * Allocates its decode tables per call (about 35 KiB at most).
 *   -EIO     fewer than k distinct blocks held: the group cannot be
 *            rebuilt (out untouched)
 *   -EINVAL  l is not of e's k and m; a piece's index out of range, given
 *            twice, or of the wrong length, or its buf NULL; an out[]
 *            buffer for a block that is in have
 *   -ENOMEM
 * Nothing checks that the pieces are the blocks they claim to be: a
 * corrupt piece gives wrong blocks, which their hashes then refuse.
 */
int erasure_decode(const struct erasure *e, const struct erasure_layout *l,
    const struct erasure_piece *have, unsigned n_have, uint8_t *const out[]);

#endif /* FERRY_STORAGE_ERASURE_H */
