/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Identity key file and signatures (see identity.h), core layer. */
#define LOG_TAG "identity"
#include "core/identity.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/base32.h"
#include "lib/fsutil.h"
#include "lib/log.h"

/* File format: magic, then the 32-byte Ed25519 seed. */
#define IDENTITY_MAGIC "FERRYID1"
#define IDENTITY_MAGIC_LEN 8
#define IDENTITY_FILE_LEN (IDENTITY_MAGIC_LEN + 32)

void
peer_id_of(const uint8_t pk[FERRY_PUBKEY_LEN], struct ferry_peer_id *ret)
{
	(void)crypto_generichash(ret->bytes, sizeof(ret->bytes), pk,
	    FERRY_PUBKEY_LEN, NULL, 0);
}

void
peer_id_format(const struct ferry_peer_id *id, char *buf)
{
	base32_encode(id->bytes, sizeof(id->bytes), buf);
}

const char *
peer_id_short(const struct ferry_peer_id *id, char buf[PEER_SHORT_LEN + 1])
{
	char full[FERRY_PEER_ID_STRLEN + 1];

	peer_id_format(id, full);
	memcpy(buf, full, PEER_SHORT_LEN);
	buf[PEER_SHORT_LEN] = '\0';
	return buf;
}

int
peer_id_parse(const char *s, struct ferry_peer_id *ret)
{
	return base32_decode(s, strlen(s), ret->bytes, sizeof(ret->bytes));
}

int
peer_id_cmp(const struct ferry_peer_id *a, const struct ferry_peer_id *b)
{
	return memcmp(a->bytes, b->bytes, sizeof(a->bytes));
}

int
identity_from_seed(const uint8_t seed[32], struct identity **ret)
{
	struct identity *ident = calloc(1, sizeof(*ident));

	if (ident == NULL)
		return -ENOMEM;
	ident->sk = sodium_malloc(crypto_sign_SECRETKEYBYTES);
	if (ident->sk == NULL) {
		free(ident);
		return -ENOMEM;
	}
	(void)crypto_sign_seed_keypair(ident->pk, ident->sk, seed);
	peer_id_of(ident->pk, &ident->id);
	peer_id_format(&ident->id, ident->id_str);
	*ret = ident;
	return 0;
}

void
identity_free(struct identity *ident)
{
	if (ident == NULL)
		return;
	sodium_free(ident->sk);
	free(ident);
}

static int
identity_create(const char *path)
{
	uint8_t file[IDENTITY_FILE_LEN];
	int fd, r = 0;
	ssize_t n;

	memcpy(file, IDENTITY_MAGIC, IDENTITY_MAGIC_LEN);
	randombytes_buf(file + IDENTITY_MAGIC_LEN, 32);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = log_err_errno(-errno, "cannot create %s", path);
		goto out;
	}
	n = write(fd, file, sizeof(file));
	if (n != (ssize_t)sizeof(file) || fsync(fd) < 0) {
		r = log_err_errno(n < 0 ? -errno : -EIO, "cannot write %s",
		    path);
		(void)unlink(path);
	}
	(void)close(fd);
out:
	sodium_memzero(file, sizeof(file));
	return r;
}

/* Reads and checks the key file; seed receives the secret seed. */
static int
identity_read(const char *path, uint8_t seed[32])
{
	uint8_t file[IDENTITY_FILE_LEN + 1];
	char why[4096 + 160];
	ssize_t n;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	r = fs_check_private(fd, path, "the identity key", why, sizeof(why));
	if (r < 0) {
		log_err("%s", why);
		goto out;
	}
	n = read(fd, file, sizeof(file));
	if (n != IDENTITY_FILE_LEN ||
	    memcmp(file, IDENTITY_MAGIC, IDENTITY_MAGIC_LEN) != 0) {
		log_err("%s is not a ferry identity key", path);
		r = -EBADMSG;
		goto out;
	}
	memcpy(seed, file + IDENTITY_MAGIC_LEN, 32);
out:
	sodium_memzero(file, sizeof(file));
	(void)close(fd);
	return r;
}

int
identity_load_path(const char *path, struct identity **ret)
{
	uint8_t seed[32];
	int r;

	r = identity_read(path, seed);
	if (r == -ENOENT) {
		r = identity_create(path);
		if (r < 0)
			return r;
		r = identity_read(path, seed);
		if (r == 0)
			log_notice("created a new identity key in %s", path);
	} else if (r < 0 && r != -EPERM && r != -EBADMSG) {
		log_err_errno(r, "cannot open %s", path);
	}
	if (r < 0)
		goto out;
	r = identity_from_seed(seed, ret);
out:
	sodium_memzero(seed, sizeof(seed));
	return r;
}

int
identity_load(const char *state_dir, struct identity **ret)
{
	char path[4096];
	int r;

	r = fs_path_join(path, sizeof(path), state_dir, IDENTITY_FILE);
	if (r < 0)
		return log_err_errno(r, "state directory %s", state_dir);
	return identity_load_path(path, ret);
}

/* Signing input is prefix || NUL || data: prefixes are NUL-free ASCII,
 * so the NUL ends each unambiguously and no message of one kind can read
 * as a message of another, whatever prefixes are added later. */
void
identity_sign(const struct identity *ident, const char *prefix,
    const void *data, size_t len, uint8_t sig[FERRY_SIG_LEN])
{
	/* Pure Ed25519 needs one contiguous input; prefix and data are short
	 * (< 1 KiB), so copy them. */
	size_t plen = strlen(prefix) + 1;
	uint8_t stackbuf[1024];
	uint8_t *m = plen + len <= sizeof(stackbuf) ? stackbuf
						    : malloc(plen + len);

	if (m == NULL) {
		/* Without memory nothing can be signed; an all-zero signature
		 * never verifies, so the peer drops the message. */
		memset(sig, 0, FERRY_SIG_LEN);
		return;
	}
	memcpy(m, prefix, plen);
	memcpy(m + plen, data, len);
	(void)crypto_sign_detached(sig, NULL, m, plen + len, ident->sk);
	if (m != stackbuf)
		free(m);
}

int
identity_verify(const uint8_t pk[FERRY_PUBKEY_LEN], const char *prefix,
    const void *data, size_t len, const uint8_t sig[FERRY_SIG_LEN])
{
	size_t plen = strlen(prefix) + 1;
	uint8_t stackbuf[1024];
	uint8_t *m = plen + len <= sizeof(stackbuf) ? stackbuf
						    : malloc(plen + len);
	int r;

	if (m == NULL)
		return -ENOMEM;
	memcpy(m, prefix, plen);
	memcpy(m + plen, data, len);
	r = crypto_sign_verify_detached(sig, m, plen + len, pk) == 0
	    ? 0
	    : -EBADMSG;
	if (m != stackbuf)
		free(m);
	return r;
}
