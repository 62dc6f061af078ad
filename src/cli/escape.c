/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Printing text from elsewhere safely (see escape.h). */
#include "cli/escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (2 to 4 bytes), and its code
 * point in *cp; 0 if s does not start one (RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF). */
static size_t
escape_utf8(const unsigned char *s, size_t left, uint32_t *cp)
{
	unsigned lo = 0x80, hi = 0xbf;
	size_t n;

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

/* Code points a terminal takes as controls, or that make the text shown
 * differ from the bytes (invisible ones, line and paragraph separators,
 * bidirectional overrides and isolates). */
static bool
escape_hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) ||
	    cp == 0xfeff;
}

void
escape_print(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s), n;
	uint32_t cp;

	while (left > 0) {
		n = 1;
		if (*p == '\\')
			(void)fputs("\\\\", f);
		else if (*p == '\n')
			(void)fputs("\\n", f);
		else if (*p == '\t')
			(void)fputs("\\t", f);
		else if (*p == '\r')
			(void)fputs("\\r", f);
		else if (*p >= 0x20 && *p < 0x7f)
			(void)fputc(*p, f);
		else if (*p < 0x80 || (n = escape_utf8(p, left, &cp)) == 0) {
			n = 1;
			(void)fprintf(f, "\\x%02x", *p);
		} else if (escape_hidden(cp)) {
			for (size_t i = 0; i < n; i++)
				(void)fprintf(f, "\\x%02x", p[i]);
		} else {
			(void)fwrite(p, 1, n, f);
		}
		p += n;
		left -= n;
	}
}
