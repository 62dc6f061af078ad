/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Crockford base32 (see base32.h), layer 0. */
#include "lib/base32.h"

#include <errno.h>
#include <stdint.h>

static const char base32_alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

void
base32_encode(const void *data, size_t len, char *out)
{
	const uint8_t *in = data;
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			out[o++] = base32_alphabet[(acc >> bits) & 31];
		}
	}
	if (bits > 0)
		out[o++] = base32_alphabet[(acc << (5 - bits)) & 31];
	out[o] = '\0';
}

static int
base32_value(char c)
{
	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	if (c == 'O')
		return 0;
	if (c == 'I' || c == 'L')
		return 1;
	for (int i = 0; i < 32; i++)
		if (base32_alphabet[i] == c)
			return i;
	return -1;
}

int
base32_decode(const char *s, size_t slen, void *out, size_t len)
{
	uint8_t *dst = out;
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t i, o = 0;
	int v;

	if (slen != BASE32_LEN(len))
		return -EINVAL;
	for (i = 0; i < slen; i++) {
		v = base32_value(s[i]);
		if (v < 0)
			return -EINVAL;
		acc = (acc << 5) | (uint32_t)v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			dst[o++] = (uint8_t)(acc >> bits);
		}
		acc &= (1u << bits) - 1;
	}
	/* Leftover bits must be zero, so each id has exactly one spelling
	 * up to case and the O/I/L aliases. */
	if (acc != 0 || o != len)
		return -EINVAL;
	return 0;
}
