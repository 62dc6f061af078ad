/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the Authorization header of the intermediary's
 * requests (src/intermediary/auth.c): the input is the header's value.
 * Checked: what parses formats back, in canonical base32, to a value
 * that parses to the same fields; a signature check of it, against a
 * fixed intermediary and request, ends without harm. Seeds:
 * tests/fuzz/corpus/auth (gen_imd_corpus.py).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "intermediary/auth.h"
#include "lib/base32.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t id[AUTH_ID_LEN] = { 1, 2, 3 };
	char c[BASE32_LEN(32) + 1], n[BASE32_LEN(16) + 1];
	char s[BASE32_LEN(64) + 1], text[256];
	struct auth a, b;
	int len;

	if (sodium_init() < 0)
		abort();
	if (auth_parse((const char *)data, size, &a) < 0)
		return 0;
	base32_encode(a.client, sizeof(a.client), c);
	base32_encode(a.nonce, sizeof(a.nonce), n);
	base32_encode(a.sig, sizeof(a.sig), s);
	len = snprintf(text, sizeof(text), "Ferry %s:%llu:%s:%s", c,
	    (unsigned long long)a.time, n, s);
	if (len < 0 || (size_t)len >= sizeof(text) ||
	    auth_parse(text, (size_t)len, &b) < 0 ||
	    memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	(void)auth_verify(&a, id, "GET", "/v1/receipts?after=0");
	return 0;
}
