/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Signed records at a rendezvous key (see dhtrec.h), dht layer: their
 * entry, signature, hash and keeping rule.
 */
#include "dht/dhtrec.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

#include "core/identity.h"
#include "lib/wire.h"

#define DHTREC_PREFIX      "ferry dht record v1"
/* topic || signer || seq || expiry || value_len: what the signature
 * covers ahead of the value. */
#define DHTREC_SIGNED_HEAD (DHTKEY_LEN + FERRY_PUBKEY_LEN + 8 + 8 + 2)

size_t
dhtrec_size(const struct dhtrec *r)
{
	return DHTREC_FIXED + r->value_len;
}

int
dhtrec_decode(const struct dhtkey *topic, const uint8_t *p, size_t len,
    struct dhtrec *ret, size_t *ret_used)
{
	struct dhtrec r;

	if (len < DHTREC_FIXED)
		return -EBADMSG;
	memset(&r, 0, sizeof(r));
	r.topic = *topic;
	memcpy(r.signer, p, FERRY_PUBKEY_LEN);
	r.seq = wire_get64(p + 32);
	r.expiry = wire_get64(p + 40);
	r.value_len = wire_get16(p + 48);
	if (r.value_len > DHTREC_VALUE_MAX || len - DHTREC_FIXED < r.value_len)
		return -EBADMSG;
	r.value = r.value_len > 0 ? p + 50 : NULL;
	memcpy(r.sig, p + 50 + r.value_len, FERRY_SIG_LEN);
	*ret = r;
	*ret_used = DHTREC_FIXED + r.value_len;
	return 0;
}

void
dhtrec_encode(const struct dhtrec *r, uint8_t *p)
{
	memcpy(p, r->signer, FERRY_PUBKEY_LEN);
	wire_put64(p + 32, r->seq);
	wire_put64(p + 40, r->expiry);
	wire_put16(p + 48, (uint16_t)r->value_len);
	if (r->value_len > 0)
		memcpy(p + 50, r->value, r->value_len);
	memcpy(p + 50 + r->value_len, r->sig, FERRY_SIG_LEN);
}

/* The signed bytes: the fixed head, then the value, into out (at least
 * DHTREC_SIGNED_HEAD + DHTREC_VALUE_MAX); their length. */
static size_t
dhtrec_signed(const struct dhtrec *r, uint8_t *out)
{
	memcpy(out, r->topic.b, DHTKEY_LEN);
	memcpy(out + DHTKEY_LEN, r->signer, FERRY_PUBKEY_LEN);
	wire_put64(out + DHTKEY_LEN + FERRY_PUBKEY_LEN, r->seq);
	wire_put64(out + DHTKEY_LEN + FERRY_PUBKEY_LEN + 8, r->expiry);
	wire_put16(out + DHTKEY_LEN + FERRY_PUBKEY_LEN + 16,
	    (uint16_t)r->value_len);
	if (r->value_len > 0)
		memcpy(out + DHTREC_SIGNED_HEAD, r->value, r->value_len);
	return DHTREC_SIGNED_HEAD + r->value_len;
}

void
dhtrec_sign(const struct identity *ident, struct dhtrec *r)
{
	uint8_t data[DHTREC_SIGNED_HEAD + DHTREC_VALUE_MAX];
	size_t len;

	memcpy(r->signer, ident->pk, FERRY_PUBKEY_LEN);
	len = dhtrec_signed(r, data);
	identity_sign(ident, DHTREC_PREFIX, data, len, r->sig);
}

int
dhtrec_verify(const struct dhtrec *r)
{
	uint8_t data[DHTREC_SIGNED_HEAD + DHTREC_VALUE_MAX];
	size_t len;

	if (r->value_len > DHTREC_VALUE_MAX)
		return -EBADMSG;
	len = dhtrec_signed(r, data);
	return identity_verify(r->signer, DHTREC_PREFIX, data, len, r->sig);
}

void
dhtrec_hash(const struct dhtrec *r, uint8_t replication,
    uint8_t ret[DHTREC_HASH_LEN])
{
	uint8_t entry[DHTREC_SIZE_MAX];
	crypto_generichash_state st;

	dhtrec_encode(r, entry);
	(void)crypto_generichash_init(&st, NULL, 0, DHTREC_HASH_LEN);
	(void)crypto_generichash_update(&st, r->topic.b, DHTKEY_LEN);
	(void)crypto_generichash_update(&st, &replication, 1);
	(void)crypto_generichash_update(&st, entry, dhtrec_size(r));
	(void)crypto_generichash_final(&st, ret, DHTREC_HASH_LEN);
}

bool
dhtrec_same(const struct dhtrec *a, const struct dhtrec *b)
{
	return a->seq == b->seq &&
	    memcmp(a->signer, b->signer, FERRY_PUBKEY_LEN) == 0 &&
	    memcmp(a->sig, b->sig, FERRY_SIG_LEN) == 0;
}

enum dhtrec_verdict
dhtrec_admit(const struct dhtrec_room *room, const struct dhtrec *r,
    uint64_t per_topic, uint64_t total_max)
{
	if (room->has_signer) {
		if (room->signer_same)
			return DHTREC_HELD;
		/* A signer that signed two records with one seq: the first
		 * stays, as the older of two would. */
		return r->seq > room->signer_seq ? DHTREC_REPLACE
		                                 : DHTREC_STALE;
	}
	if (room->in_topic >= per_topic)
		return room->topic_first < r->expiry ? DHTREC_EVICT_TOPIC
		                                     : DHTREC_FULL;
	if (room->total >= total_max)
		return room->total_first < r->expiry ? DHTREC_EVICT_ANY
		                                     : DHTREC_FULL;
	return DHTREC_ADD;
}
