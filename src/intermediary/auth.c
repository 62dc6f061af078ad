/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Authorization header of a client's request (auth.h), intermediary
 * layer. */
#include "intermediary/auth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/identity.h"
#include "intermediary/httpmsg.h"
#include "lib/base32.h"
#include "lib/wire.h"

/* The next ':'-separated field of [*p, end) into ret_s/ret_len. */
static int
auth_field(const char **p, const char *end, const char **ret_s, size_t *ret_len,
    int last)
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
auth_time(const char *s, size_t len, uint64_t *ret)
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
auth_parse(const char *value, size_t len, struct auth *ret)
{
	const char *p = value, *end = value + len, *s[4];
	size_t n[4];
	struct auth a;

	if (len < 6 || !httpmsg_value_is(value, 6, "Ferry "))
		return -EBADMSG;
	p += 6;
	for (int i = 0; i < 4; i++)
		if (auth_field(&p, end, &s[i], &n[i], i == 3) < 0)
			return -EBADMSG;
	if (base32_decode(s[0], n[0], a.client, sizeof(a.client)) < 0 ||
	    auth_time(s[1], n[1], &a.time) < 0 ||
	    base32_decode(s[2], n[2], a.nonce, sizeof(a.nonce)) < 0 ||
	    base32_decode(s[3], n[3], a.sig, sizeof(a.sig)) < 0)
		return -EBADMSG;
	*ret = a;
	return 0;
}

int
auth_verify(const struct auth *a, const uint8_t id[AUTH_ID_LEN],
    const char *method, const char *target)
{
	size_t ml = strlen(method) + 1, tl = strlen(target) + 1;
	size_t len = AUTH_ID_LEN + ml + tl + 8 + AUTH_NONCE_LEN;
	uint8_t *m = malloc(len), *p;
	int r;

	if (m == NULL)
		return -ENOMEM;
	p = m;
	memcpy(p, id, AUTH_ID_LEN);
	p += AUTH_ID_LEN;
	memcpy(p, method, ml);
	p += ml;
	memcpy(p, target, tl);
	p += tl;
	wire_put64(p, a->time);
	p += 8;
	memcpy(p, a->nonce, AUTH_NONCE_LEN);
	r = identity_verify(a->client, AUTH_PREFIX, m, len, a->sig);
	free(m);
	return r < 0 ? -EBADMSG : 0;
}
