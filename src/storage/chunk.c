/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Convergent sealing (see chunk.h), storage layer: SHA-512 and PBKDF2 from
 * OpenSSL, the AEAD of core/aead.h, the block key of dht/dhtkey.h. The
 * layout is documented in ferry-storage(7) with test vectors.
 */
#include "storage/chunk.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <openssl/evp.h>
#include <sodium.h>

#include "core/aead.h"

/* The first part of the PBKDF2 salt: names the scheme and its version,
 * so that no other use of the same secret derives the same keys. */
#define CHUNK_DOMAIN     "ferry-storage-v1"
#define CHUNK_DOMAIN_LEN (sizeof(CHUNK_DOMAIN) - 1)
#define CHUNK_SALT_LEN   (CHUNK_DOMAIN_LEN + 2 + STORAGE_SECRET_LEN)
#define CHUNK_AD_LEN     2 /* cipher byte, kind */

struct storage_codec {
	uint8_t secret[STORAGE_SECRET_LEN];
	unsigned iterations;
	uint8_t cipher; /* STORAGE_CIPHER_* */
	EVP_MD *sha512; /* fetched once: EVP_sha512() fetches per call */
};

int
storage_codec_new(const uint8_t secret[STORAGE_SECRET_LEN], unsigned iterations,
    bool aesgcm, struct storage_codec **ret)
{
	struct storage_codec *c;

	if (secret == NULL || ret == NULL ||
	    iterations < STORAGE_ITERATIONS_MIN ||
	    iterations > STORAGE_ITERATIONS_MAX)
		return -EINVAL;
	if (sodium_init() < 0)
		return -ENOMEM;
	/* Guarded, locked memory: it holds the secret. */
	c = sodium_malloc(sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	memcpy(c->secret, secret, STORAGE_SECRET_LEN);
	c->iterations = iterations;
	c->cipher = aesgcm ? STORAGE_CIPHER_AESGCM : STORAGE_CIPHER_CHACHA20;
	c->sha512 = EVP_MD_fetch(NULL, "SHA512", NULL);
	if (c->sha512 == NULL) {
		storage_codec_free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

void
storage_codec_free(struct storage_codec *c)
{
	if (c == NULL)
		return;
	EVP_MD_free(c->sha512);
	sodium_free(c); /* wipes */
}

uint8_t
storage_codec_cipher(const struct storage_codec *c)
{
	return c->cipher;
}

size_t
storage_sealed_len(size_t plain_len)
{
	return plain_len + STORAGE_SEAL_OVERHEAD;
}

static bool
chunk_kind_ok(enum storage_kind kind)
{
	return kind == STORAGE_KIND_DATA || kind == STORAGE_KIND_NODE;
}

int
storage_derive_key(const struct storage_codec *c, enum storage_kind kind,
    const void *plain, size_t len, uint8_t key[STORAGE_KEY_LEN])
{
	uint8_t hash[64], salt[CHUNK_SALT_LEN];
	unsigned hlen = 0;
	int r = 0;

	if (!chunk_kind_ok(kind) || len > INT_MAX)
		return -EINVAL;
	/* The salt binds kind and cipher: the same bytes sealed as a node
	 * and as a chunk, or under both ciphers, never share a key (a
	 * fixed nonce under one key twice would undo GCM's tag). */
	memcpy(salt, CHUNK_DOMAIN, CHUNK_DOMAIN_LEN);
	salt[CHUNK_DOMAIN_LEN] = (uint8_t)kind;
	salt[CHUNK_DOMAIN_LEN + 1] = c->cipher;
	memcpy(salt + CHUNK_DOMAIN_LEN + 2, c->secret, STORAGE_SECRET_LEN);
	if (EVP_Digest(plain, len, hash, &hlen, c->sha512, NULL) != 1 ||
	    hlen != sizeof(hash) ||
	    PKCS5_PBKDF2_HMAC((const char *)hash, sizeof(hash), salt,
	        sizeof(salt), (int)c->iterations, c->sha512, STORAGE_KEY_LEN,
	        key) != 1)
		r = -EIO;
	sodium_memzero(hash, sizeof(hash));
	sodium_memzero(salt, sizeof(salt));
	return r;
}

int
storage_seal(const struct storage_codec *c, enum storage_kind kind,
    const void *plain, size_t len, uint8_t *out, struct storage_ref *ref)
{
	uint8_t key[STORAGE_KEY_LEN], ad[CHUNK_AD_LEN], none = 0;
	struct aead *a = NULL;
	int r;

	if (c == NULL || out == NULL || ref == NULL ||
	    (plain == NULL && len > 0))
		return -EINVAL;
	if (plain == NULL)
		plain = &none; /* OpenSSL is not given a NULL buffer */
	r = storage_derive_key(c, kind, plain, len, key);
	if (r < 0)
		goto out;
	a = aead_new(c->cipher == STORAGE_CIPHER_AESGCM, key, true);
	if (a == NULL) {
		r = -ENOMEM;
		goto out;
	}
	ad[0] = c->cipher;
	ad[1] = (uint8_t)kind;
	out[0] = c->cipher;
	/* Nonce 0: each key seals exactly one plaintext (see the salt). */
	r = aead_seal(a, 0, ad, sizeof(ad), plain, len,
	    out + STORAGE_SEAL_HEADER);
	if (r < 0)
		goto out;
	dhtkey_of_block(out, storage_sealed_len(len), &ref->block);
	memcpy(ref->key, key, STORAGE_KEY_LEN);
	ref->len = len;
out:
	aead_free(a);
	sodium_memzero(key, sizeof(key));
	return r;
}

int
storage_seal_pad(const struct storage_codec *c, const void *plain, size_t len,
    size_t padded_len, uint8_t *out, struct storage_ref *ref)
{
	uint8_t *buf;
	int r;

	if (padded_len < len || (plain == NULL && len > 0))
		return -EINVAL;
	if (padded_len == len)
		return storage_seal(c, STORAGE_KIND_DATA, plain, len, out, ref);
	buf = calloc(1, padded_len);
	if (buf == NULL)
		return -ENOMEM;
	if (len > 0)
		memcpy(buf, plain, len);
	r = storage_seal(c, STORAGE_KIND_DATA, buf, padded_len, out, ref);
	if (r == 0)
		ref->len = len;
	sodium_memzero(buf, padded_len);
	free(buf);
	return r;
}

/* Opens a DATA block of padded bytes whose first ref->len are the chunk:
 * into plain if it has room for all, else through a buffer of padded
 * bytes (bounded by the block, which the caller holds). */
static int
chunk_open_data(struct aead *a, const uint8_t ad[CHUNK_AD_LEN],
    const uint8_t *sealed, size_t sealed_len, uint64_t want, uint8_t *plain,
    size_t plain_size)
{
	size_t padded = sealed_len - STORAGE_SEAL_OVERHEAD;
	uint8_t *buf = plain_size >= padded ? plain : malloc(padded);
	int r;

	if (buf == NULL)
		return -ENOMEM;
	r = aead_open(a, 0, ad, CHUNK_AD_LEN, sealed + STORAGE_SEAL_HEADER,
	    sealed_len - STORAGE_SEAL_HEADER, buf);
	for (size_t i = (size_t)want; r == 0 && i < padded; i++)
		if (buf[i] != 0)
			r = -EBADMSG;
	if (buf != plain) {
		if (r == 0)
			memcpy(plain, buf, (size_t)want);
		sodium_memzero(buf, padded);
		free(buf);
	}
	return r;
}

static int
chunk_open(const struct storage_ref *ref, enum storage_kind kind,
    const uint8_t *sealed, size_t sealed_len, uint8_t *plain, size_t plain_size,
    size_t *plain_len, bool check_hash)
{
	uint8_t ad[CHUNK_AD_LEN], none;
	struct dhtkey got;
	struct aead *a;
	size_t len;
	int r;

	if (ref == NULL || sealed == NULL || !chunk_kind_ok(kind) ||
	    (plain == NULL && plain_size > 0))
		return -EINVAL;
	if (sealed_len < STORAGE_SEAL_OVERHEAD || sealed_len > INT_MAX)
		return -EBADMSG;
	if (check_hash) {
		dhtkey_of_block(sealed, sealed_len, &got);
		if (!dhtkey_equal(&got, &ref->block))
			return -EBADMSG;
	}
	if (sealed[0] != STORAGE_CIPHER_AESGCM &&
	    sealed[0] != STORAGE_CIPHER_CHACHA20)
		return -EPROTO;
	len = sealed_len - STORAGE_SEAL_OVERHEAD;
	if (kind == STORAGE_KIND_DATA) {
		if (len < ref->len)
			return -EBADMSG;
		len = (size_t)ref->len; /* the rest must be padding */
	}
	if (len > plain_size)
		return -EMSGSIZE;
	a = aead_new(sealed[0] == STORAGE_CIPHER_AESGCM, ref->key, false);
	if (a == NULL)
		return -ENOMEM;
	if (plain == NULL)
		plain = &none; /* an empty plaintext: OpenSSL wants a buffer */
	ad[0] = sealed[0];
	ad[1] = (uint8_t)kind;
	if (kind == STORAGE_KIND_DATA)
		r = chunk_open_data(a, ad, sealed, sealed_len, ref->len, plain,
		    plain == &none ? 0 : plain_size);
	else
		r = aead_open(a, 0, ad, sizeof(ad),
		    sealed + STORAGE_SEAL_HEADER,
		    sealed_len - STORAGE_SEAL_HEADER, plain);
	aead_free(a);
	if (r < 0)
		return r == -EINVAL ? -EIO : r;
	if (plain_len != NULL)
		*plain_len = len;
	return 0;
}

int
storage_open(const struct storage_ref *ref, enum storage_kind kind,
    const uint8_t *sealed, size_t sealed_len, uint8_t *plain, size_t plain_size,
    size_t *plain_len)
{
	return chunk_open(ref, kind, sealed, sealed_len, plain, plain_size,
	    plain_len, true);
}

int
storage_open_hashed(const struct storage_ref *ref, enum storage_kind kind,
    const uint8_t *sealed, size_t sealed_len, uint8_t *plain, size_t plain_size,
    size_t *plain_len)
{
	return chunk_open(ref, kind, sealed, sealed_len, plain, plain_size,
	    plain_len, false);
}
