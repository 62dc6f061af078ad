/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the pieces of an HTTP/1.1 request the
 * intermediary's server reads (src/intermediary/httpmsg.c): the first
 * byte chooses the parser (request line, header field, chunk size,
 * Content-Length), the rest is the line as httpd.c cuts it. Checked:
 * what is accepted has the form the parser promises (an upper-case
 * method, an origin-form target of visible ASCII, a token field name
 * within the line, a value without surrounding blanks or line breaks).
 * Seeds: tests/fuzz/corpus/httpmsg (gen_imd_corpus.py).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "intermediary/httpmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_reqline(const char *s, size_t len)
{
	struct httpmsg_reqline rl;

	if (httpmsg_request_line(s, len, &rl) < 0)
		return;
	if (rl.method[0] == '\0' || rl.target[0] != '/' || rl.minor > 1)
		abort();
	for (const char *p = rl.method; *p != '\0'; p++)
		if (*p < 'A' || *p > 'Z')
			abort();
	for (const char *p = rl.target; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			abort();
}

static void
fuzz_field(const char *s, size_t len)
{
	struct httpmsg_field f;

	if (httpmsg_field(s, len, &f) < 0)
		return;
	if (f.name != s || f.name_len == 0 || f.name_len >= len ||
	    f.value < s + f.name_len + 1 || f.value + f.value_len > s + len)
		abort();
	if (memchr(f.value, '\r', f.value_len) != NULL ||
	    memchr(f.value, '\n', f.value_len) != NULL ||
	    (f.value_len > 0 &&
	        (f.value[0] == ' ' || f.value[f.value_len - 1] == ' ')))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data + 1;
	uint64_t n;

	if (size == 0)
		return 0;
	switch (data[0] % 4) {
	case 0:
		fuzz_reqline(s, size - 1);
		break;
	case 1:
		fuzz_field(s, size - 1);
		break;
	case 2:
		if (httpmsg_chunk_size(s, size - 1, &n) == 0 && n >> 48 != 0)
			abort();
		break;
	default:
		if (httpmsg_content_length(s, size - 1, &n) == 0 &&
		    n > (1ull << 53) + 9)
			abort();
		break;
	}
	return 0;
}
