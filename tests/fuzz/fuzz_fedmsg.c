/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the federation's formats (src/intermediary/
 * fedmsg.c; ferry-protocol(7) INTERMEDIARY MESSAGES): the first byte
 * picks the decoder (0 an announcement, 1 HERE, 2 ENTRIES, 3 ACK), the
 * rest is what a peer sent. Checked: a decoder either refuses with
 * -EBADMSG or accepts what encodes back to the same bytes; an
 * announcement's HELOs are within it. Seeds: tests/fuzz/corpus/fedmsg
 * (gen_imd_corpus.py).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "intermediary/fedmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_announce(const uint8_t *p, size_t len)
{
	static uint8_t again[4096];
	struct fedmsg_announce a;
	int r = fedmsg_announce_decode(p, len, &a);

	if (r == -EBADMSG)
		return;
	if (r != 0 || strlen(a.url) == 0 || strlen(a.url) > FEDMSG_URL_MAX ||
	    (a.helos_len > 0 &&
	        (a.helos < p || a.helos + a.helos_len != p + len)))
		abort();
	r = fedmsg_announce_encode(a.url, a.helos, a.helos_len, again,
	    sizeof(again));
	if (r < 0 || (size_t)r != len || memcmp(again, p, len) != 0)
		abort();
}

static void
fuzz_here(const uint8_t *p, size_t len)
{
	static uint8_t again[FEDMSG_HERE_FIXED + FEDMSG_TARGET_MAX];
	struct fedmsg_here h;
	int r = fedmsg_here_decode(p, len, &h);

	if (r == -EBADMSG)
		return;
	if (r != 0 || fedmsg_here_encode(&h, again) != len ||
	    memcmp(again, p, len) != 0)
		abort();
}

static void
fuzz_entries(const uint8_t *p, size_t len)
{
	static uint8_t again[FEDMSG_ENTRIES_SIZE_MAX];
	struct rqueue_entry e[FEDMSG_ENTRIES_MAX];
	uint8_t client[IMDWIRE_KEY_LEN];
	size_t n = 0;
	int r = fedmsg_entries_decode(p, len, client, e, &n);

	if (r == -EBADMSG)
		return;
	if (r != 0 || n == 0 || n > FEDMSG_ENTRIES_MAX ||
	    fedmsg_entries_encode(client, e, n, again) != len ||
	    memcmp(again, p, len) != 0)
		abort();
}

static void
fuzz_ack(const uint8_t *p, size_t len)
{
	uint8_t again[FEDMSG_ACK_LEN];
	struct fedmsg_ack a;
	int r = fedmsg_ack_decode(p, len, &a);

	if (r == -EBADMSG)
		return;
	if (r != 0 || len != FEDMSG_ACK_LEN)
		abort();
	fedmsg_ack_encode(&a, again);
	if (memcmp(again, p, len) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] & 3) {
	case 0:
		fuzz_announce(data + 1, size - 1);
		break;
	case 1:
		fuzz_here(data + 1, size - 1);
		break;
	case 2:
		fuzz_entries(data + 1, size - 1);
		break;
	default:
		fuzz_ack(data + 1, size - 1);
		break;
	}
	return 0;
}
