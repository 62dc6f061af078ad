/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the thin client's parsers of an intermediary's
 * JSON bodies (src/remote/remote_json.c): the first input byte picks the
 * body (0 GET /v1/intermediaries, 1 GET /v1/receipts, 2 POST /v1/blocks,
 * 3 an error), the rest is the body. Checked: what parses keeps the
 * page's rules (HTTPS URLs for others, cursors growing and the page's
 * cursor the last one's, status strings bounded), and nothing crashes.
 * Seeds: tests/fuzz/corpus/remote_json (gen_remote_corpus.py).
 */
/* fuzz-link: ferry_remote */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote/remote_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_imds(const char *body, size_t len)
{
	struct remote_imd self, *list;
	size_t n;

	if (remote_json_imds(body, len, &self, &list, &n) < 0)
		return;
	if (!self.self || strlen(self.peer) != REMOTE_PEER_STRLEN)
		abort();
	for (size_t i = 0; i < n; i++)
		if (strncmp(list[i].url, "https://", 8) != 0 || list[i].self)
			abort();
	free(list);
}

static void
fuzz_receipts(const char *body, size_t len)
{
	struct remote_entry *list;
	uint64_t cursor, prev = 0;
	bool more;
	size_t n;

	if (remote_json_receipts(body, len, &cursor, &more, &list, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (list[i].cursor <= prev ||
		    memchr(list[i].status, '\0', sizeof(list[i].status)) ==
		        NULL)
			abort();
		prev = list[i].cursor;
	}
	if (n > 0 && cursor != prev)
		abort();
	free(list);
}

static void
fuzz_relays(const char *body, size_t len)
{
	struct remote_relay *list;
	size_t n;

	if (remote_json_relays(body, len, &list, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (memchr(list[i].status, '\0', sizeof(list[i].status)) ==
		    NULL)
			abort();
	free(list);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char token[16];
	const char *body = (const char *)data + 1;

	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		fuzz_imds(body, size - 1);
		break;
	case 1:
		fuzz_receipts(body, size - 1);
		break;
	case 2:
		fuzz_relays(body, size - 1);
		break;
	default:
		remote_json_error(body, size - 1, token, sizeof(token));
		if (memchr(token, '\0', sizeof(token)) == NULL)
			abort();
		break;
	}
	return 0;
}
