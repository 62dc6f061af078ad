/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The DHT's key space (see dhtkey.h), dht layer. */
#include "dht/dhtkey.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

#include "core/identity.h"

void
dhtkey_of_block(const void *data, size_t len, struct dhtkey *ret)
{
	(void)crypto_generichash(ret->b, sizeof(ret->b), data, len, NULL, 0);
}

void
dhtkey_from_peer(const struct ferry_peer_id *id, struct dhtkey *ret)
{
	memcpy(ret->b, id->bytes, DHTKEY_LEN);
}

void
dhtkey_to_peer(const struct dhtkey *k, struct ferry_peer_id *ret)
{
	memcpy(ret->bytes, k->b, DHTKEY_LEN);
}

void
dhtkey_distance(const struct dhtkey *a, const struct dhtkey *b,
    struct dhtkey *ret)
{
	for (size_t i = 0; i < DHTKEY_LEN; i++)
		ret->b[i] = a->b[i] ^ b->b[i];
}

int
dhtkey_closer(const struct dhtkey *target, const struct dhtkey *a,
    const struct dhtkey *b)
{
	/* The first byte where a and b differ decides, as in memcmp of the
	 * two distances, without building them. */
	for (size_t i = 0; i < DHTKEY_LEN; i++) {
		uint8_t da = a->b[i] ^ target->b[i];
		uint8_t db = b->b[i] ^ target->b[i];

		if (da != db)
			return da < db ? -1 : 1;
	}
	return 0;
}

unsigned
dhtkey_common_prefix(const struct dhtkey *a, const struct dhtkey *b)
{
	for (size_t i = 0; i < DHTKEY_LEN; i++) {
		uint8_t x = a->b[i] ^ b->b[i];

		if (x != 0)
			return (unsigned)(i * 8) +
			    (unsigned)__builtin_clz((unsigned)x) - 24;
	}
	return DHTKEY_BITS;
}

bool
dhtkey_equal(const struct dhtkey *a, const struct dhtkey *b)
{
	return memcmp(a->b, b->b, DHTKEY_LEN) == 0;
}

void
dhtkey_random_in_bucket(const struct dhtkey *self, unsigned prefix,
    struct dhtkey *ret)
{
	size_t byte = prefix / 8;
	uint8_t bit = (uint8_t)(0x80u >> (prefix % 8));
	uint8_t keep = (uint8_t)~(0xffu >> (prefix % 8)); /* bits above */

	randombytes_buf(ret->b, sizeof(ret->b));
	memcpy(ret->b, self->b, byte);
	/* Same bits above the prefix's end, the opposite one at it, random
	 * below. */
	ret->b[byte] = (uint8_t)((self->b[byte] & keep) |
	    ((self->b[byte] ^ bit) & bit) | (ret->b[byte] & ~keep & ~bit));
}

void
dhtkey_hex(const struct dhtkey *k, char buf[2 * DHTKEY_LEN + 1])
{
	(void)sodium_bin2hex(buf, 2 * DHTKEY_LEN + 1, k->b, DHTKEY_LEN);
}

int
dhtkey_parse(const char *s, struct dhtkey *ret)
{
	struct ferry_peer_id id;
	uint8_t b[DHTKEY_LEN];
	size_t len;

	if (strlen(s) == 2 * DHTKEY_LEN) {
		if (sodium_hex2bin(b, sizeof(b), s, 2 * DHTKEY_LEN, NULL, &len,
		        NULL) != 0 ||
		    len != DHTKEY_LEN)
			return -EINVAL;
		memcpy(ret->b, b, DHTKEY_LEN);
		return 0;
	}
	if (peer_id_parse(s, &id) < 0)
		return -EINVAL;
	dhtkey_from_peer(&id, ret);
	return 0;
}
