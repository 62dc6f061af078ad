/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One direction's AEAD key: AES-256-GCM where both peers have AES
 * instructions, ChaCha20-Poly1305 otherwise (measured on these machines:
 * OpenSSL's AES-256-GCM seals 1400-byte frames at 1.5 GB/s and 16 KiB
 * frames at 3.8 GB/s, libsodium's at 1.1 and 1.3; ChaCha20-Poly1305 is
 * 1.1 and 3.4 GB/s in OpenSSL). Nonces are 4 zero bytes and a 64-bit
 * counter. Core layer.
 */
#ifndef FERRY_CORE_AEAD_H
#define FERRY_CORE_AEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define AEAD_KEY_LEN 32
#define AEAD_TAG_LEN 16

struct aead;

/* True if this CPU has the instructions that make AES-GCM fast. */
bool aead_aes_fast(void);
/* A sealing (encrypt true) or opening context for key. NULL on OOM. */
struct aead *aead_new(bool aesgcm, const uint8_t key[AEAD_KEY_LEN],
    bool encrypt);
/* Wipes and frees. NULL is allowed. */
void aead_free(struct aead *a);
/* Encrypts len bytes of pt into ct and appends the tag (ct holds
 * len + AEAD_TAG_LEN bytes; ct may equal pt). 0 or -EIO. */
int aead_seal(struct aead *a, uint64_t counter, const void *ad, size_t adlen,
    const void *pt, size_t len, uint8_t *ct);
/* The same for plaintext in iovcnt pieces, sealed as one message (no
 * piece may overlap ct). */
int aead_sealv(struct aead *a, uint64_t counter, const void *ad, size_t adlen,
    const struct iovec *iov, int iovcnt, uint8_t *ct);
/* Decrypts ct (len bytes including the tag) into pt (len - tag bytes;
 * pt may equal ct). 0, or -EBADMSG if it does not authenticate. */
int aead_open(struct aead *a, uint64_t counter, const void *ad, size_t adlen,
    const uint8_t *ct, size_t len, uint8_t *pt);

#endif /* FERRY_CORE_AEAD_H */
