/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for HELOs (src/core/helo.c): the input as one HELO
 * message (helo_decode, helo_verify), and as a string for the ferry://
 * URI parser (helo_uri_decode). What decodes must hold together: fields
 * inside the input, every HELO of a URI well-formed and of the URI's
 * peer, and a decoded URI must encode and decode to the same HELOs.
 * Seeds: tests/fuzz/corpus/helo (HELOs and URIs of fixed identities).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/helo.h"
#include "core/identity.h"

#define FUZZ_NOW_S 1700000000ull

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	return 0;
}

static void
fuzz_message(const uint8_t *data, size_t size)
{
	struct ferry_peer_id id;
	struct helo h;

	if (helo_decode(data, size, &h) < 0)
		return;
	if (h.raw != data || h.raw_len != size || h.addr_len == 0 ||
	    h.addr_len > FERRY_ADDR_MAX || h.addr != data + 52 ||
	    FERRY_HELO_FIXED + (size_t)h.addr_len != size)
		abort();
	peer_id_of(h.pk, &id);
	if (peer_id_cmp(&id, &h.id) != 0)
		abort();
	(void)helo_verify(&h, FUZZ_NOW_S);
}

/* Every HELO in helos (len bytes) decodes and belongs to id. */
static void
fuzz_check_helos(const uint8_t *helos, size_t len, struct ferry_peer_id *id,
    bool have_id)
{
	size_t off = 0;

	while (off < len) {
		size_t size;
		struct helo h;

		if (len - off < FERRY_HDR_SIZE)
			abort();
		size = wire_get16(helos + off);
		if (size > len - off || helo_decode(helos + off, size, &h) < 0)
			abort();
		if (have_id && peer_id_cmp(&h.id, id) != 0)
			abort();
		*id = h.id;
		have_id = true;
		(void)helo_verify(&h, FUZZ_NOW_S);
		off += size;
	}
}

static void
fuzz_uri(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *again = NULL;
	uint8_t *helos = NULL, *helos2 = NULL;
	size_t len = 0, len2 = 0;
	struct ferry_peer_id id;

	if (s == NULL)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	if (helo_uri_decode(s, &helos, &len) < 0)
		goto out;
	if (helos == NULL || len == 0)
		abort();
	fuzz_check_helos(helos, len, &id, false);
	/* The canonical form decodes to the same HELOs. */
	if (helo_uri_encode(&id, helos, len, &again) < 0)
		abort();
	if (helo_uri_decode(again, &helos2, &len2) < 0 || len2 != len ||
	    memcmp(helos, helos2, len) != 0)
		abort();
out:
	free(again);
	free(helos2);
	free(helos);
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_message(data, size);
	fuzz_uri(data, size);
	return 0;
}
