/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the file URI parser (src/storage/uri.c): the input
 * is the URI's text. Checked: a refusal gives a reason; what parses
 * formats back to a URI that parses to the same ref and equals the input
 * but for case and base32's aliases (O for 0, I and L for 1).
 * Seeds: tests/fuzz/corpus/uri.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/uri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The character base32 and the scheme read c as. */
static char
fuzz_canon(char c)
{
	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	if (c == 'O')
		return '0';
	if (c == 'I' || c == 'L')
		return '1';
	return c;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct storage_ref ref, again;
	char *s, out[STORAGE_URI_MAX];
	const char *why = NULL;
	int n;

	s = malloc(size + 1);
	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	size = strlen(s); /* the parser sees up to the first NUL */
	if (storage_uri_parse(s, &ref, &why) < 0) {
		if (why == NULL || why[0] == '\0')
			abort();
		free(s);
		return 0;
	}
	n = storage_uri_format(&ref, out, sizeof(out));
	if (n < 0 || (size_t)n != size ||
	    storage_uri_parse(out, &again, NULL) != 0 ||
	    memcmp(&ref, &again, sizeof(ref)) != 0)
		abort();
	for (size_t i = 0; i < size; i++)
		if (fuzz_canon(s[i]) != fuzz_canon(out[i]))
			abort();
	free(s);
	return 0;
}
