/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the manifest reader (src/storage/manifest_read.c):
 * feeds it nodes as a getter would after opening them. Input: u8 m (the
 * reader's max_node is 1024 * (1 + m % 4)), u64 the file size the URI
 * states, then nodes, each u16 length and its bytes, handed over in turn
 * as the reader asks. Checked: chunks come in file order without gaps or
 * overlaps, none longer than the root's chunk size; DONE comes only when
 * they add up to the file size; a failure names its cause and sticks.
 * Seeds: tests/fuzz/corpus/manifest (tests/fuzz/gen_manifest.py).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/wire.h"
#include "storage/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The failure must name its cause and stay. */
static void
fuzz_failed(struct manifest_reader *r, int err)
{
	struct storage_ref ref;
	uint64_t off;

	if (err >= 0 || manifest_reader_error(r)[0] == '\0' ||
	    manifest_reader_next(r, &ref, &off) != err)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manifest_reader *r = NULL;
	struct storage_ref root, ref;
	uint64_t expect = 0, off;
	size_t pos = 9;
	int step;

	if (size < 9)
		return 0;
	memset(&root, 0, sizeof(root));
	root.len = wire_get64(data + 1);
	if (manifest_reader_new(&root, 1024 * (1 + (size_t)data[0] % 4), &r) !=
	    0)
		abort();
	for (;;) {
		size_t len;
		int err;

		step = manifest_reader_next(r, &ref, &off);
		if (step < 0) {
			fuzz_failed(r, step);
			break;
		}
		if (step == MANIFEST_DONE) {
			if (expect != root.len ||
			    manifest_reader_size(r) != root.len)
				abort();
			break;
		}
		if (step == MANIFEST_CHUNK) {
			if (off != expect || ref.len == 0 ||
			    ref.len > manifest_reader_chunk_size(r))
				abort();
			expect += ref.len;
			continue;
		}
		if (size - pos < 2)
			break;
		len = wire_get16(data + pos);
		pos += 2;
		if (len > size - pos)
			len = size - pos;
		err = manifest_reader_feed(r, data + pos, len);
		pos += len;
		if (err < 0) {
			fuzz_failed(r, err);
			break;
		}
	}
	manifest_reader_free(r);
	return 0;
}
