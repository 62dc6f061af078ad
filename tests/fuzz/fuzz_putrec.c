/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the upload records of POST /v1/blocks
 * (src/intermediary/imdwire.c, the codec the intermediary and the thin
 * client share): the input is a body, read as the server reads it, record
 * after record by imdwire_put_size() and imdwire_put_decode(), with a
 * MAX_BLOCK of 4 KiB. Checked: a size is judged from four bytes alone,
 * within its bounds; what decodes encodes back (imdwire_put_head() and
 * the block, as the client writes it) to the same bytes, and leaves
 * origin_pk alone; the walk ends. Seeds: tests/fuzz/corpus/putrec
 * (gen_imd_corpus.py).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dht/dhtmsg.h"
#include "intermediary/imdwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_BLOCK 4096

/* A record that decoded, written again as the client writes one. */
static void
fuzz_again(const uint8_t *rec, size_t total, const struct dhtmsg_put *put)
{
	static uint8_t again[IMDWIRE_PUT_HEAD + FUZZ_MAX_BLOCK];
	static const uint8_t pk[FERRY_PUBKEY_LEN] = { 0x5a };

	if (put->block_len != total - IMDWIRE_PUT_HEAD ||
	    put->block != rec + IMDWIRE_PUT_HEAD ||
	    memcmp(put->origin_pk, pk, sizeof(pk)) != 0)
		abort();
	imdwire_put_head(put, again);
	memcpy(again + IMDWIRE_PUT_HEAD, put->block, put->block_len);
	if (memcmp(again, rec, total) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, total, first;
	struct dhtmsg_put put;
	int r;

	while (off < size) {
		r = imdwire_put_size(data + off, size - off, FUZZ_MAX_BLOCK,
		    &total);
		/* Four bytes decide, whatever follows them. */
		if (size - off >= 4 &&
		    (imdwire_put_size(data + off, 4, FUZZ_MAX_BLOCK, &first) !=
		            r ||
		        (r == 0 && first != total)))
			abort();
		if (r == -EAGAIN || (r == 0 && total > size - off))
			break; /* a body that ends inside a record */
		if (r < 0) {
			if (r != -EBADMSG && r != -EMSGSIZE)
				abort();
			break;
		}
		if (total < IMDWIRE_PUT_HEAD + 1 ||
		    total > IMDWIRE_PUT_HEAD + FUZZ_MAX_BLOCK)
			abort();
		memset(&put, 0, sizeof(put));
		put.origin_pk[0] = 0x5a;
		r = imdwire_put_decode(data + off, total, FUZZ_MAX_BLOCK, &put);
		if (r == 0)
			fuzz_again(data + off, total, &put);
		else if (r != -EBADMSG)
			abort();
		off += total;
	}
	return 0;
}
