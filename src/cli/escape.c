/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Printing text from elsewhere safely (see escape.h). */
#include "cli/escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/utf8.h"

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
		else if (*p < 0x80 || (n = utf8_seq(p, left, &cp)) == 0) {
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
