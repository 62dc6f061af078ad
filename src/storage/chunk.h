/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Convergent sealing of one chunk or manifest node, storage layer (issue
 * 13, seed 001 section III: SHA-512 of the plaintext, a key derived from
 * it with PBKDF2, AEAD): the same plaintext and convergence secret always
 * give the same sealed block, stored in the DHT under its BLAKE2b-256.
 * The layout is in ferry-storage(7).
 */
#ifndef FERRY_STORAGE_CHUNK_H
#define FERRY_STORAGE_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dht/dhtkey.h"

#define STORAGE_KEY_LEN         32 /* AEAD key of a sealed block */
#define STORAGE_SECRET_LEN      32 /* convergence secret */
/* A sealed block: 1 cipher byte, the ciphertext, a 16-byte tag. */
#define STORAGE_SEAL_HEADER     1
#define STORAGE_SEAL_OVERHEAD   (STORAGE_SEAL_HEADER + 16)
/* The cipher byte (the first byte of every sealed block). */
#define STORAGE_CIPHER_AESGCM   0x01 /* AES-256-GCM */
#define STORAGE_CIPHER_CHACHA20 0x02 /* ChaCha20-Poly1305 (RFC 8439) */

/* Chunk sizes the manifest accepts: a sealed chunk must fit in one DHT
 * block (FERRY_DHT_BLOCK_MAX, 4 MiB), and a 1 KiB node still lists 14
 * entries, which lets tests build deep trees from small files. */
#define STORAGE_CHUNK_MIN          1024u
#define STORAGE_CHUNK_MAX          (4u * 1024 * 1024 - 64 * 1024)
/* Defaults chosen by tests/bench/bench_stages (see tests/bench/README):
 * the [storage] CHUNK_SIZE and ITERATIONS settings. */
#define STORAGE_CHUNK_SIZE_DEFAULT (256u * 1024)
#define STORAGE_ITERATIONS_DEFAULT 100u
/* PBKDF2 iterations accepted by storage_codec_new(). */
#define STORAGE_ITERATIONS_MIN     1u
#define STORAGE_ITERATIONS_MAX     1000000u

/* Names one sealed block and how to open it. */
struct storage_ref {
	struct dhtkey block;          /* DHT key = dhtkey_of_block(sealed) */
	uint8_t key[STORAGE_KEY_LEN]; /* AEAD key that opens it */
	uint64_t len; /* plaintext bytes under this ref: a chunk's length,
	                 or the file bytes under a manifest subtree */
};

/* What a sealed block holds: bound in the key derivation and the AEAD's
 * associated data, so a chunk never opens as a node or the reverse. */
enum storage_kind {
	STORAGE_KIND_DATA = 1, /* a chunk of file data */
	STORAGE_KIND_NODE = 2, /* a manifest node */
};

/* The convergence secret, PBKDF2 iterations and cipher. Immutable after
 * storage_codec_new(); safe to use from several threads at once. */
struct storage_codec;

/*
 * A codec sealing with the 32-byte secret (copied), iterations rounds of
 * PBKDF2 (STORAGE_ITERATIONS_MIN..MAX) and AES-256-GCM if aesgcm, else
 * ChaCha20-Poly1305 (pass aead_aes_fast(), as the link layer does; it
 * answers false until sodium_init() has run).
 * 0, -EINVAL (iterations out of range) or -ENOMEM.
 */
int storage_codec_new(const uint8_t secret[STORAGE_SECRET_LEN],
    unsigned iterations, bool aesgcm, struct storage_codec **ret);
/* Wipes the secret and frees. NULL is allowed. */
void storage_codec_free(struct storage_codec *c);
/* The cipher byte this codec seals with (STORAGE_CIPHER_*). */
uint8_t storage_codec_cipher(const struct storage_codec *c);

/* Bytes of the sealed block for plain_len bytes of plaintext. */
size_t storage_sealed_len(size_t plain_len);

/*
 * The block key of len bytes of plaintext: key = PBKDF2-HMAC-SHA512
 * (SHA-512(plain), salt = domain tag, kind, cipher byte, secret,
 * iterations), 32 bytes. The costly half of storage_seal(), exposed for
 * the benchmark; key receives STORAGE_KEY_LEN bytes. 0 or -EIO.
 */
int storage_derive_key(const struct storage_codec *c, enum storage_kind kind,
    const void *plain, size_t len, uint8_t key[STORAGE_KEY_LEN]);

/*
 * Seals len bytes of plain (len may be 0) as a block of the given kind
 * into out, which holds storage_sealed_len(len) bytes (out must not
 * overlap plain). The nonce is fixed: the key is unique to the content,
 * kind and cipher. Fills ref: block key, AEAD key, len. 0, -EINVAL (bad
 * kind, len over 2 GiB) or -EIO (OpenSSL failed).
 */
int storage_seal(const struct storage_codec *c, enum storage_kind kind,
    const void *plain, size_t len, uint8_t *out, struct storage_ref *ref);
/*
 * storage_seal() of a DATA chunk of len bytes padded with zero bytes to
 * padded_len (>= len; out holds storage_sealed_len(padded_len)), with
 * ref->len = len. Seal a file's last chunk so, padded to the chunk size:
 * then every data block of a file has the same size and the blocks tell
 * nothing of the file's size beyond their count. -EINVAL for NODE.
 */
int storage_seal_pad(const struct storage_codec *c, const void *plain,
    size_t len, size_t padded_len, uint8_t *out, struct storage_ref *ref);

/*
 * Checks that dhtkey_of_block(sealed) is ref->block and opens it into
 * plain, which holds plain_size bytes; *plain_len receives the plaintext
 * length. For DATA that is ref->len bytes: the block's plaintext must be
 * those, followed by nothing but zero bytes (storage_seal_pad()'s
 * padding, which is checked and dropped); for NODE (where ref->len counts
 * file bytes under the node) it is whatever the block holds. Needs no
 * codec: the cipher byte says how to open it.
 *   -EBADMSG  the hash or the AEAD tag does not match, or a DATA block is
 *             shorter than ref->len or padded with other than zeros
 *   -EPROTO   unknown cipher byte
 *   -EMSGSIZE plain_size is too small for the plaintext
 *   -EINVAL   bad kind; -ENOMEM, -EIO
 * On failure plain's contents are undefined (never use them).
 */
int storage_open(const struct storage_ref *ref, enum storage_kind kind,
    const uint8_t *sealed, size_t sealed_len, uint8_t *plain, size_t plain_size,
    size_t *plain_len);
/* storage_open() for bytes the caller has already found to hash to
 * ref->block (dht_get() checks every block against its key before its
 * callback): the same checks but that one, which is the costliest after
 * the AEAD (a BLAKE2b pass over the block, on every block of a get). */
int storage_open_hashed(const struct storage_ref *ref, enum storage_kind kind,
    const uint8_t *sealed, size_t sealed_len, uint8_t *plain, size_t plain_size,
    size_t *plain_len);

#endif /* FERRY_STORAGE_CHUNK_H */
