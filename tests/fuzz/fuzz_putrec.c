/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the upload records of POST /v1/blocks
 * (src/intermediary/putrec.c): the input is a body, read as the server
 * reads it, record after record by putrec_size() and putrec_decode(),
 * with a MAX_BLOCK of 4 KiB. Checked: a size is judged from four bytes
 * alone, within its bounds; what decodes encodes back to the same bytes;
 * the walk ends. Seeds: tests/fuzz/corpus/putrec (gen_imd_corpus.py).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "intermediary/putrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_BLOCK 4096

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t again[PUTREC_HEAD + FUZZ_MAX_BLOCK];
	size_t off = 0, total, first;
	struct putrec rec;
	int r;

	while (off < size) {
		r = putrec_size(data + off, size - off, FUZZ_MAX_BLOCK, &total);
		/* Four bytes decide, whatever follows them. */
		if (size - off >= 4 &&
		    (putrec_size(data + off, 4, FUZZ_MAX_BLOCK, &first) != r ||
		        (r == 0 && first != total)))
			abort();
		if (r == -EAGAIN || (r == 0 && total > size - off))
			break; /* a body that ends inside a record */
		if (r < 0) {
			if (r != -EBADMSG && r != -EMSGSIZE)
				abort();
			break;
		}
		if (total < PUTREC_HEAD + 1 ||
		    total > PUTREC_HEAD + FUZZ_MAX_BLOCK)
			abort();
		r = putrec_decode(data + off, total, FUZZ_MAX_BLOCK, &rec);
		if (r == 0) {
			if (rec.block_len != total - PUTREC_HEAD ||
			    rec.block != data + off + PUTREC_HEAD)
				abort();
			putrec_encode(rec.replication, rec.expiry, rec.sig,
			    rec.block, rec.block_len, again);
			if (memcmp(again, data + off, total) != 0)
				abort();
		} else if (r != -EBADMSG) {
			abort();
		}
		off += total;
	}
	return 0;
}
