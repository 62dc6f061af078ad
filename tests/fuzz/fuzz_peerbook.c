/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the peer book file (src/core/peerbook.c): the
 * input as the image of peers.dat, parsed by peerbook_parse with a
 * callback that counts records, checks each lies inside the image after
 * the previous one, and decodes the HELO in it as the loader would.
 * Checked: the count returned is the number of callbacks.
 * Seeds: tests/fuzz/corpus/peerbook.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/wire.h"
#include "core/helo.h"
#include "core/peerbook.h"

#define FUZZ_NOW_S 1700000000ull

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_ctx {
	const uint8_t *data;
	size_t size;
	const uint8_t *next; /* where the next record's HELO may start */
	int count;
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	return 0;
}

static int
fuzz_record(void *cls, uint64_t valid_until_s, const uint8_t *helo, size_t len)
{
	struct fuzz_ctx *ctx = cls;
	struct helo h;

	/* A 10-byte record header precedes each HELO. */
	if (helo != ctx->next + 10 || helo + len > ctx->data + ctx->size ||
	    wire_get64(helo - 10) != valid_until_s ||
	    wire_get16(helo - 2) != len)
		abort();
	ctx->next = helo + len;
	ctx->count++;
	if (helo_decode(helo, len, &h) == 0)
		(void)helo_verify(&h, FUZZ_NOW_S);
	/* A refusal from the callback does not stop the parse. */
	return ctx->count % 2 ? -EINVAL : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_ctx ctx = { data, size, data + (size < 8 ? size : 8), 0 };
	int r;

	r = peerbook_parse(data, size, fuzz_record, &ctx);
	if (r >= 0 && (r != ctx.count || ctx.next != data + size))
		abort();
	if (r < 0 && r != -EBADMSG)
		abort();
	return 0;
}
