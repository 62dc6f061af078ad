/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The upload records and the Authorization header of
 * ferry-intermediary(7) (imdwire.h), in ferry_codec for both ends. */
#include "intermediary/imdwire.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/identity.h"
#include "dht/dhtmsg.h"
#include "lib/base32.h"
#include "lib/wire.h"

int
imdwire_put_size(const uint8_t *data, size_t len, size_t max_block,
    size_t *ret_total)
{
	uint32_t n;

	if (len < 4)
		return -EAGAIN;
	n = wire_get32(data);
	if (n < IMDWIRE_PUT_HEAD - 4 + 1)
		return -EBADMSG;
	if ((uint64_t)n > IMDWIRE_PUT_HEAD - 4 + (uint64_t)max_block)
		return -EMSGSIZE;
	*ret_total = 4 + (size_t)n;
	return 0;
}

int
imdwire_put_decode(const uint8_t *data, size_t len, size_t max_block,
    struct dhtmsg_put *put)
{
	size_t total;
	int r = imdwire_put_size(data, len, max_block, &total);

	if (r == -EAGAIN || (r == 0 && total != len))
		return -EBADMSG;
	if (r < 0)
		return r;
	if (data[4] != IMDWIRE_PUT_VERSION)
		return -EBADMSG;
	put->replication = data[5];
	put->expiry = wire_get64(data + 6);
	memcpy(put->sig, data + 14, FERRY_SIG_LEN);
	put->block = data + IMDWIRE_PUT_HEAD;
	put->block_len = len - IMDWIRE_PUT_HEAD;
	return 0;
}

void
imdwire_put_head(const struct dhtmsg_put *put, uint8_t out[IMDWIRE_PUT_HEAD])
{
	wire_put32(out, (uint32_t)(IMDWIRE_PUT_HEAD - 4 + put->block_len));
	out[4] = IMDWIRE_PUT_VERSION;
	out[5] = put->replication;
	wire_put64(out + 6, put->expiry);
	memcpy(out + 14, put->sig, FERRY_SIG_LEN);
}

/* The next ':'-separated field of [*p, end) into ret_s/ret_len. */
static int
imdwire_field(const char **p, const char *end, const char **ret_s,
    size_t *ret_len, int last)
{
	const char *colon = memchr(*p, ':', (size_t)(end - *p));

	if (last != (colon == NULL))
		return -EBADMSG;
	if (colon == NULL)
		colon = end;
	*ret_s = *p;
	*ret_len = (size_t)(colon - *p);
	*p = colon < end ? colon + 1 : end;
	return 0;
}

static int
imdwire_time(const char *s, size_t len, uint64_t *ret)
{
	uint64_t t = 0;

	if (len == 0 || len > 19)
		return -EBADMSG;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		t = t * 10 + (uint64_t)(s[i] - '0');
	}
	*ret = t;
	return 0;
}

int
imdwire_auth_parse(const char *value, size_t len, struct imdwire_auth *ret)
{
	const char *p = value, *end = value + len, *s[4];
	size_t n[4];
	struct imdwire_auth a;

	/* The scheme is case-insensitive, as HTTP's are. */
	if (len < 6 || strncasecmp(value, "Ferry ", 6) != 0)
		return -EBADMSG;
	p += 6;
	for (int i = 0; i < 4; i++)
		if (imdwire_field(&p, end, &s[i], &n[i], i == 3) < 0)
			return -EBADMSG;
	if (base32_decode(s[0], n[0], a.client, sizeof(a.client)) < 0 ||
	    imdwire_time(s[1], n[1], &a.time) < 0 ||
	    base32_decode(s[2], n[2], a.nonce, sizeof(a.nonce)) < 0 ||
	    base32_decode(s[3], n[3], a.sig, sizeof(a.sig)) < 0)
		return -EBADMSG;
	*ret = a;
	return 0;
}

int
imdwire_auth_format(const struct imdwire_auth *a, char *buf, size_t size)
{
	char c[BASE32_LEN(IMDWIRE_KEY_LEN) + 1];
	char n[BASE32_LEN(IMDWIRE_NONCE_LEN) + 1];
	char s[BASE32_LEN(IMDWIRE_SIG_LEN) + 1];
	int len;

	base32_encode(a->client, sizeof(a->client), c);
	base32_encode(a->nonce, sizeof(a->nonce), n);
	base32_encode(a->sig, sizeof(a->sig), s);
	len =
	    snprintf(buf, size, "Ferry %s:%" PRIu64 ":%s:%s", c, a->time, n, s);
	return len < 0 || (size_t)len >= size ? -ENOSPC : 0;
}

/* The signing input after the prefix, malloc'd, into *ret and
 * *ret_len: the one both the client's signature and the server's check
 * are made over. */
static int
imdwire_auth_input(const uint8_t id[IMDWIRE_ID_LEN], const char *method,
    const char *target, uint64_t time, const uint8_t nonce[IMDWIRE_NONCE_LEN],
    uint8_t **ret, size_t *ret_len)
{
	size_t ml = strlen(method) + 1, tl = strlen(target) + 1;
	size_t len = IMDWIRE_ID_LEN + ml + tl + 8 + IMDWIRE_NONCE_LEN;
	uint8_t *m = malloc(len), *p;

	if (m == NULL)
		return -ENOMEM;
	/* intermediary[32] || method || NUL || target || NUL || u64 time ||
	 * nonce[16]; identity_sign() puts the prefix and its NUL first. */
	p = m;
	memcpy(p, id, IMDWIRE_ID_LEN);
	p += IMDWIRE_ID_LEN;
	memcpy(p, method, ml);
	p += ml;
	memcpy(p, target, tl);
	p += tl;
	wire_put64(p, time);
	memcpy(p + 8, nonce, IMDWIRE_NONCE_LEN);
	*ret = m;
	*ret_len = len;
	return 0;
}

int
imdwire_auth_sign(const struct identity *key, const uint8_t id[IMDWIRE_ID_LEN],
    const char *method, const char *target, uint64_t time,
    const uint8_t nonce[IMDWIRE_NONCE_LEN], struct imdwire_auth *ret)
{
	uint8_t *m;
	size_t len;
	int r;

	if (method[0] == '\0' || target[0] == '\0')
		return -EINVAL;
	r = imdwire_auth_input(id, method, target, time, nonce, &m, &len);
	if (r < 0)
		return r;
	identity_sign(key, IMDWIRE_AUTH_PREFIX, m, len, ret->sig);
	free(m);
	memcpy(ret->client, key->pk, IMDWIRE_KEY_LEN);
	ret->time = time;
	memcpy(ret->nonce, nonce, IMDWIRE_NONCE_LEN);
	return 0;
}

int
imdwire_auth_verify(const struct imdwire_auth *a,
    const uint8_t id[IMDWIRE_ID_LEN], const char *method, const char *target)
{
	uint8_t *m;
	size_t len;
	int r;

	r = imdwire_auth_input(id, method, target, a->time, a->nonce, &m, &len);
	if (r < 0)
		return r;
	r = identity_verify(a->client, IMDWIRE_AUTH_PREFIX, m, len, a->sig);
	free(m);
	return r < 0 ? -EBADMSG : 0;
}
