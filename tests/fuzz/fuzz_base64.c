/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the SMTP transport's base64 codec
 * (plugins/smtp/smtp_base64.c). The input is decoded as text: what is
 * accepted must encode back to text that decodes to the same bytes, and
 * the decoder must never write past the exact-size buffer. The input is
 * also encoded as bytes, streaming in two pieces (cut where its first
 * byte says) and at once: both must agree, be MIME-shaped, and decode to
 * the input.
 */
/* fuzz-sources: plugins/smtp/smtp_base64.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/smtp/smtp_base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lines of at most 76 characters, each ending in CRLF. */
static void
fuzz_check_lines(const char *t, size_t n)
{
	size_t col = 0;

	for (size_t i = 0; i < n; i++) {
		if (t[i] == '\r') {
			if (i + 1 >= n || t[i + 1] != '\n' || col == 0)
				abort();
			i++;
			col = 0;
		} else if (++col > SMTP_B64_LINE) {
			abort();
		}
	}
	if (col != 0)
		abort();
}

static void
fuzz_decode(const uint8_t *data, size_t size)
{
	size_t max = smtp_base64_decoded_max(size), len, len2, tlen;
	uint8_t *out = malloc(max > 0 ? max : 1), *back;
	char *text;

	if (out == NULL)
		abort();
	if (smtp_base64_decode((const char *)data, size, out, max, &len) < 0) {
		free(out);
		return;
	}
	if (len > max)
		abort();
	text = malloc(smtp_base64_encoded_size(len) + 1);
	back = malloc(len > 0 ? len : 1);
	if (text == NULL || back == NULL)
		abort();
	tlen = smtp_base64_encode(out, len, text);
	if (smtp_base64_decode(text, tlen, back, len, &len2) < 0 ||
	    len2 != len || memcmp(back, out, len) != 0)
		abort();
	free(back);
	free(text);
	free(out);
}

static void
fuzz_encode(const uint8_t *data, size_t size)
{
	size_t need = smtp_base64_encoded_size(size), cut, w, len;
	char *one = malloc(need + 1), *two = malloc(need + 8);
	uint8_t *back = malloc(size > 0 ? size : 1);
	struct smtp_b64_enc e;

	if (one == NULL || two == NULL || back == NULL)
		abort();
	cut = size > 0 ? data[0] % (size + 1) : 0;
	if (smtp_base64_encode(data, size, one) != need)
		abort();
	smtp_base64_enc_init(&e);
	w = smtp_base64_enc_update(&e, data, cut, two);
	w += smtp_base64_enc_update(&e, data + cut, size - cut, two + w);
	w += smtp_base64_enc_final(&e, two + w);
	if (w != need || memcmp(one, two, need) != 0)
		abort();
	fuzz_check_lines(one, need);
	if (smtp_base64_decode(one, need, back, size, &len) < 0 ||
	    len != size || memcmp(back, data, size) != 0)
		abort();
	free(back);
	free(two);
	free(one);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size);
	fuzz_encode(data, size);
	return 0;
}
