/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The federation's announcement and inner messages (fedmsg.h),
 * intermediary layer; ferry-protocol(7) "INTERMEDIARY MESSAGES". */
#include "intermediary/fedmsg.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

#include <ferry/proto.h>

#include "lib/wire.h"

void
fedmsg_topic(uint8_t ret[32])
{
	(void)crypto_generichash(ret, 32, (const uint8_t *)FEDMSG_TOPIC_NAME,
	    strlen(FEDMSG_TOPIC_NAME), NULL, 0);
}

/* What a URL or target may hold: it goes into JSON and logs as it is. */
static bool
fedmsg_printable(const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* The length of the whole HELOs at the start of p that fit in max. */
static size_t
fedmsg_helos_fit(const uint8_t *p, size_t len, size_t max)
{
	size_t off = 0;

	while (len - off >= 4) {
		size_t one = wire_get16(p + off);

		if (one < 4 || one > len - off || off + one > max)
			break;
		off += one;
	}
	return off;
}

int
fedmsg_announce_encode(const char *url, const uint8_t *helos, size_t helos_len,
    uint8_t *buf, size_t size)
{
	size_t ul = strlen(url), hl;

	if (ul == 0 || ul > FEDMSG_URL_MAX)
		return -EINVAL;
	if (size < 2 + ul)
		return -EMSGSIZE;
	buf[0] = FEDMSG_VERSION;
	buf[1] = (uint8_t)ul;
	memcpy(buf + 2, url, ul);
	hl = helos_len > 0 ? fedmsg_helos_fit(helos, helos_len, size - 2 - ul)
	                   : 0;
	if (hl > 0)
		memcpy(buf + 2 + ul, helos, hl);
	return (int)(2 + ul + hl);
}

int
fedmsg_announce_decode(const uint8_t *p, size_t len,
    struct fedmsg_announce *ret)
{
	size_t ul, hl;

	if (len < 3 || p[0] != FEDMSG_VERSION || p[1] == 0 ||
	    (size_t)p[1] > len - 2)
		return -EBADMSG;
	ul = p[1];
	if (!fedmsg_printable(p + 2, ul))
		return -EBADMSG;
	hl = len - 2 - ul;
	/* The HELOs fill the rest exactly. */
	if (fedmsg_helos_fit(p + 2 + ul, hl, hl) != hl)
		return -EBADMSG;
	memcpy(ret->url, p + 2, ul);
	ret->url[ul] = '\0';
	ret->helos = hl > 0 ? p + 2 + ul : NULL;
	ret->helos_len = hl;
	return 0;
}

size_t
fedmsg_here_encode(const struct fedmsg_here *h, uint8_t *p)
{
	size_t tl = strlen(h->target);

	p[0] = FEDMSG_VERSION;
	p[1] = 0;
	wire_put16(p + 2, (uint16_t)tl);
	memcpy(p + 4, h->auth.client, IMDWIRE_KEY_LEN);
	wire_put64(p + 36, h->auth.time);
	memcpy(p + 44, h->auth.nonce, IMDWIRE_NONCE_LEN);
	memcpy(p + 60, h->auth.sig, IMDWIRE_SIG_LEN);
	memcpy(p + FEDMSG_HERE_FIXED, h->target, tl);
	return FEDMSG_HERE_FIXED + tl;
}

int
fedmsg_here_decode(const uint8_t *p, size_t len, struct fedmsg_here *ret)
{
	size_t tl;

	if (len < FEDMSG_HERE_FIXED || p[0] != FEDMSG_VERSION || p[1] != 0)
		return -EBADMSG;
	tl = wire_get16(p + 2);
	if (tl == 0 || tl > FEDMSG_TARGET_MAX || len != FEDMSG_HERE_FIXED + tl)
		return -EBADMSG;
	if (!fedmsg_printable(p + FEDMSG_HERE_FIXED, tl) ||
	    tl < strlen("/v1/receipts") ||
	    memcmp(p + FEDMSG_HERE_FIXED, "/v1/receipts", 12) != 0 ||
	    (tl > 12 && p[FEDMSG_HERE_FIXED + 12] != '?'))
		return -EBADMSG;
	memcpy(ret->auth.client, p + 4, IMDWIRE_KEY_LEN);
	ret->auth.time = wire_get64(p + 36);
	memcpy(ret->auth.nonce, p + 44, IMDWIRE_NONCE_LEN);
	memcpy(ret->auth.sig, p + 60, IMDWIRE_SIG_LEN);
	memcpy(ret->target, p + FEDMSG_HERE_FIXED, tl);
	ret->target[tl] = '\0';
	return 0;
}

static void
fedmsg_entry_encode(const struct rqueue_entry *e, uint8_t *p)
{
	wire_put64(p, e->cursor);
	memcpy(p + 8, e->key.b, DHTKEY_LEN);
	memcpy(p + 40, e->put_hash, DHTMSG_HASH_LEN);
	memcpy(p + 72, e->receipt.storer_pk, FERRY_PUBKEY_LEN);
	wire_put64(p + 104, e->receipt.expiry);
	memcpy(p + 112, e->receipt.sig, FERRY_SIG_LEN);
}

size_t
fedmsg_entries_encode(const uint8_t client[IMDWIRE_KEY_LEN],
    const struct rqueue_entry *e, size_t n, uint8_t *p)
{
	p[0] = FEDMSG_VERSION;
	p[1] = 0;
	wire_put16(p + 2, (uint16_t)n);
	memcpy(p + 4, client, IMDWIRE_KEY_LEN);
	for (size_t i = 0; i < n; i++)
		fedmsg_entry_encode(&e[i],
		    p + FEDMSG_ENTRIES_HEAD + i * FEDMSG_ENTRY_LEN);
	return FEDMSG_ENTRIES_HEAD + n * FEDMSG_ENTRY_LEN;
}

/* One entry at p; false if malformed. */
static bool
fedmsg_entry_decode(const uint8_t *p, struct rqueue_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->cursor = wire_get64(p);
	e->type = RQUEUE_RECEIPT;
	memcpy(e->key.b, p + 8, DHTKEY_LEN);
	memcpy(e->put_hash, p + 40, DHTMSG_HASH_LEN);
	memcpy(e->receipt.put_hash, e->put_hash, DHTMSG_HASH_LEN);
	memcpy(e->receipt.storer_pk, p + 72, FERRY_PUBKEY_LEN);
	e->receipt.expiry = wire_get64(p + 104);
	memcpy(e->receipt.sig, p + 112, FERRY_SIG_LEN);
	return e->cursor != 0 && e->cursor <= INT64_MAX;
}

int
fedmsg_entries_decode(const uint8_t *p, size_t len,
    uint8_t ret_client[IMDWIRE_KEY_LEN], struct rqueue_entry *ret,
    size_t *ret_n)
{
	size_t n;

	if (len < FEDMSG_ENTRIES_HEAD || p[0] != FEDMSG_VERSION || p[1] != 0)
		return -EBADMSG;
	n = wire_get16(p + 2);
	if (n == 0 || n > FEDMSG_ENTRIES_MAX ||
	    len != FEDMSG_ENTRIES_HEAD + n * FEDMSG_ENTRY_LEN)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (!fedmsg_entry_decode(p + FEDMSG_ENTRIES_HEAD +
		            i * FEDMSG_ENTRY_LEN,
		        &ret[i]))
			return -EBADMSG;
		if (i > 0 && ret[i].cursor <= ret[i - 1].cursor)
			return -EBADMSG;
	}
	memcpy(ret_client, p + 4, IMDWIRE_KEY_LEN);
	*ret_n = n;
	return 0;
}

void
fedmsg_ack_encode(const struct fedmsg_ack *a, uint8_t p[FEDMSG_ACK_LEN])
{
	p[0] = FEDMSG_VERSION;
	p[1] = (uint8_t)a->status;
	wire_put16(p + 2, 0);
	memcpy(p + 4, a->client, IMDWIRE_KEY_LEN);
	wire_put64(p + 36, a->cursor);
}

int
fedmsg_ack_decode(const uint8_t *p, size_t len, struct fedmsg_ack *ret)
{
	if (len != FEDMSG_ACK_LEN || p[0] != FEDMSG_VERSION ||
	    p[1] > FEDMSG_ACK_STATUS_MAX || wire_get16(p + 2) != 0 ||
	    wire_get64(p + 36) > INT64_MAX)
		return -EBADMSG;
	ret->status = (enum fedmsg_ack_status)p[1];
	memcpy(ret->client, p + 4, IMDWIRE_KEY_LEN);
	ret->cursor = wire_get64(p + 36);
	return 0;
}
