/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the thin client's parser of POST /v1/fetch's
 * record stream (src/remote/remote_fetch.c), an intermediary's bytes.
 * The first input byte picks the size of the pieces the rest is fed in;
 * checked: the parser's verdict and the records it yields are the same
 * whatever the pieces (fed whole, and in pieces), every record it yields
 * keeps the page's rules, and nothing crashes or leaks.
 * Seeds: tests/fuzz/corpus/remote_fetch (gen_remote_corpus.py).
 */
/* fuzz-link: ferry_remote */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote/remote_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_seen {
	unsigned n;
	uint64_t sum; /* of statuses, lengths and key bytes */
};

static int
fuzz_record(void *cls, unsigned status, const struct dhtkey *key,
    const uint8_t *block, size_t len)
{
	struct fuzz_seen *s = cls;

	if (status > REMOTE_FETCH_BUSY ||
	    (status == REMOTE_FETCH_FOUND) != (block != NULL && len > 0) ||
	    len > DHTMSG_BLOCK_MAX)
		abort();
	s->n++;
	s->sum = s->sum * 31 + status + len + key->b[0] + key->b[31] +
	    (len > 0 ? block[len - 1] : 0);
	return 0;
}

static int
fuzz_feed(const uint8_t *data, size_t size, size_t piece, struct fuzz_seen *s)
{
	struct remote_fetch f;
	int r = 0;

	remote_fetch_init(&f, fuzz_record, s);
	for (size_t off = 0; off < size && r == 0; off += piece)
		r = remote_fetch_feed(&f, data + off,
		    size - off < piece ? size - off : piece);
	if (r == 0)
		r = remote_fetch_end(&f);
	remote_fetch_done(&f);
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_seen whole = { 0 }, pieces = { 0 };
	size_t piece;
	int a, b;

	if (size < 1)
		return 0;
	piece = (size_t)data[0] + 1;
	data++;
	size--;
	a = fuzz_feed(data, size, size > 0 ? size : 1, &whole);
	b = fuzz_feed(data, size, piece, &pieces);
	if (a != b || whole.n != pieces.n || whole.sum != pieces.sum)
		abort();
	return 0;
}
