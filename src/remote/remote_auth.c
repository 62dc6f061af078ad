/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The Authorization header of a thin client's request, remote client
 * (ferry-intermediary(7) AUTHENTICATION): the client key's signature
 * binds one intermediary, one method and target, one moment and one
 * nonce, so that it cannot be replayed elsewhere or later.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/identity.h"
#include "lib/base32.h"
#include "lib/wire.h"

int
remote_auth_header(const struct identity *key, const uint8_t imd[32],
    const char *method, const char *target, uint64_t time,
    const uint8_t nonce[REMOTE_NONCE_LEN], char *buf, size_t size)
{
	size_t mlen = strlen(method), tlen = strlen(target);
	size_t len = 32 + mlen + 1 + tlen + 1 + 8 + REMOTE_NONCE_LEN;
	char client[BASE32_LEN(32) + 1], n32[BASE32_LEN(REMOTE_NONCE_LEN) + 1];
	char s32[BASE32_LEN(FERRY_SIG_LEN) + 1];
	uint8_t sig[FERRY_SIG_LEN], *data, *p;
	int n;

	if (mlen == 0 || tlen == 0)
		return -EINVAL;
	data = malloc(len);
	if (data == NULL)
		return -ENOMEM;
	/* intermediary[32] || method || NUL || target || NUL || u64 time ||
	 * nonce[16]; identity_sign() puts the prefix and its NUL first. */
	p = data;
	memcpy(p, imd, 32);
	p += 32;
	memcpy(p, method, mlen + 1);
	p += mlen + 1;
	memcpy(p, target, tlen + 1);
	p += tlen + 1;
	wire_put64(p, time);
	memcpy(p + 8, nonce, REMOTE_NONCE_LEN);
	identity_sign(key, REMOTE_AUTH_PREFIX, data, len, sig);
	free(data);
	base32_encode(key->pk, FERRY_PUBKEY_LEN, client);
	base32_encode(nonce, REMOTE_NONCE_LEN, n32);
	base32_encode(sig, sizeof(sig), s32);
	n = snprintf(buf, size, "Authorization: Ferry %s:%" PRIu64 ":%s:%s",
	    client, time, n32, s32);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}
