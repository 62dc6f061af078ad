/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * AEAD contexts over OpenSSL EVP (see aead.h), core layer. The key is set
 * once per context; each message only sets the nonce, which keeps the
 * per-frame cost at about a microsecond for a 1400-byte frame.
 */
#include "core/aead.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <sodium.h>

#include "lib/wire.h"

struct aead {
	EVP_CIPHER_CTX *ctx;
	bool encrypt;
};

bool
aead_aes_fast(void)
{
	return crypto_aead_aes256gcm_is_available() != 0;
}

struct aead *
aead_new(bool aesgcm, const uint8_t key[AEAD_KEY_LEN], bool encrypt)
{
	const EVP_CIPHER *cipher =
	    aesgcm ? EVP_aes_256_gcm() : EVP_chacha20_poly1305();
	struct aead *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->encrypt = encrypt;
	a->ctx = EVP_CIPHER_CTX_new();
	if (a->ctx == NULL ||
	    EVP_CipherInit_ex(a->ctx, cipher, NULL, key, NULL,
		encrypt ? 1 : 0) != 1) {
		aead_free(a);
		return NULL;
	}
	return a;
}

void
aead_free(struct aead *a)
{
	if (a == NULL)
		return;
	/* EVP_CIPHER_CTX_free cleanses the key schedule. */
	EVP_CIPHER_CTX_free(a->ctx);
	free(a);
}

static void
aead_nonce(uint64_t counter, uint8_t nonce[12])
{
	wire_put32(nonce, 0);
	wire_put64(nonce + 4, counter);
}

int
aead_sealv(struct aead *a, uint64_t counter, const void *ad, size_t adlen,
    const struct iovec *iov, int iovcnt, uint8_t *ct)
{
	uint8_t nonce[12];
	size_t off = 0;
	int n;

	if (!a->encrypt || adlen > INT_MAX)
		return -EINVAL;
	aead_nonce(counter, nonce);
	if (EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, 1) != 1 ||
	    EVP_CipherUpdate(a->ctx, NULL, &n, ad, (int)adlen) != 1)
		return -EIO;
	/* GCM and ChaCha20-Poly1305 are stream modes: pieces of any length
	 * give the same output as the whole. */
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > INT_MAX ||
		    EVP_CipherUpdate(a->ctx, ct + off, &n, iov[i].iov_base,
			(int)iov[i].iov_len) != 1)
			return -EIO;
		off += (size_t)n;
	}
	if (EVP_CipherFinal_ex(a->ctx, ct + off, &n) != 1 ||
	    EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_GET_TAG, AEAD_TAG_LEN,
		ct + off + (size_t)n) != 1)
		return -EIO;
	return 0;
}

int
aead_seal(struct aead *a, uint64_t counter, const void *ad, size_t adlen,
    const void *pt, size_t len, uint8_t *ct)
{
	struct iovec iov = { (void *)(uintptr_t)pt, len };

	return aead_sealv(a, counter, ad, adlen, &iov, 1, ct);
}

int
aead_open(struct aead *a, uint64_t counter, const void *ad, size_t adlen,
    const uint8_t *ct, size_t len, uint8_t *pt)
{
	uint8_t nonce[12], tag[AEAD_TAG_LEN];
	size_t plen;
	int n;

	if (a->encrypt || len < AEAD_TAG_LEN || len > INT_MAX ||
	    adlen > INT_MAX)
		return -EINVAL;
	plen = len - AEAD_TAG_LEN;
	/* The tag is copied out first: pt may overwrite ct in place. */
	memcpy(tag, ct + plen, AEAD_TAG_LEN);
	aead_nonce(counter, nonce);
	if (EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, 0) != 1 ||
	    EVP_CipherUpdate(a->ctx, NULL, &n, ad, (int)adlen) != 1 ||
	    EVP_CipherUpdate(a->ctx, pt, &n, ct, (int)plen) != 1 ||
	    EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_SET_TAG, AEAD_TAG_LEN,
		tag) != 1)
		return -EIO;
	if (EVP_CipherFinal_ex(a->ctx, pt + n, &n) != 1)
		return -EBADMSG;
	return 0;
}
