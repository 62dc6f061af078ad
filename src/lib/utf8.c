/* SPDX-License-Identifier: GPL-3.0-or-later */
/* UTF-8 sequences (see utf8.h). */
#include "lib/utf8.h"

size_t
utf8_seq(const unsigned char *s, size_t left, uint32_t *cp)
{
	/* The second byte's range depends on the first (RFC 3629's table):
	 * that is what rules out overlongs, surrogates and > U+10FFFF. */
	unsigned lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (left < n)
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	*cp = s[0] & (0xff >> (n + 1));
	for (size_t i = 1; i < n; i++)
		*cp = (*cp << 6) | (s[i] & 0x3f);
	return n;
}
