/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the Authorization header of the intermediary's
 * requests (src/intermediary/imdwire.c, the codec the intermediary and
 * the thin client share): the input is the header's value. Checked: what
 * parses formats back (imdwire_auth_format(), as the client writes it) in
 * canonical base32 within IMDWIRE_AUTH_MAX, to a value that parses to the
 * same fields; a signature check of it, against a fixed intermediary and
 * request, ends without harm. Seeds: tests/fuzz/corpus/auth
 * (gen_imd_corpus.py).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "intermediary/imdwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t id[IMDWIRE_ID_LEN] = { 1, 2, 3 };
	char text[IMDWIRE_AUTH_MAX];
	struct imdwire_auth a, b;

	if (sodium_init() < 0)
		abort();
	if (imdwire_auth_parse((const char *)data, size, &a) < 0)
		return 0;
	if (imdwire_auth_format(&a, text, sizeof(text)) < 0 ||
	    imdwire_auth_parse(text, strlen(text), &b) < 0 ||
	    memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	(void)imdwire_auth_verify(&a, id, "GET", "/v1/receipts?after=0");
	return 0;
}
