/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The whole-file XXH128 over libxxhash (see filesum.h), storage layer. */
#include "storage/filesum.h"

#include <stdlib.h>

#include <xxhash.h>

struct filesum {
	XXH3_state_t *state;
};

struct filesum *
filesum_new(void)
{
	struct filesum *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->state = XXH3_createState();
	if (s->state == NULL) {
		free(s);
		return NULL;
	}
	filesum_reset(s);
	return s;
}

void
filesum_reset(struct filesum *s)
{
	/* Fails only for a NULL state, which filesum_new() excludes. */
	(void)XXH3_128bits_reset(s->state);
}

void
filesum_update(struct filesum *s, const void *data, size_t len)
{
	if (len > 0)
		(void)XXH3_128bits_update(s->state, data, len);
}

void
filesum_final(const struct filesum *s, uint8_t out[FILESUM_LEN])
{
	XXH128_canonical_t c;

	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(s->state));
	for (size_t i = 0; i < FILESUM_LEN; i++)
		out[i] = c.digest[i];
}

void
filesum_free(struct filesum *s)
{
	if (s == NULL)
		return;
	(void)XXH3_freeState(s->state);
	free(s);
}

void
filesum_of(const void *data, size_t len, uint8_t out[FILESUM_LEN])
{
	XXH128_canonical_t c;

	XXH128_canonicalFromHash(&c, XXH3_128bits(len > 0 ? data : "", len));
	for (size_t i = 0; i < FILESUM_LEN; i++)
		out[i] = c.digest[i];
}

void
filesum_hex(const uint8_t sum[FILESUM_LEN], char buf[FILESUM_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < FILESUM_LEN; i++) {
		buf[2 * i] = digits[sum[i] >> 4];
		buf[2 * i + 1] = digits[sum[i] & 15];
	}
	buf[FILESUM_HEX_LEN] = '\0';
}
