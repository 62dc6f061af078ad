/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the routing table's file form (src/dht/rtable.c,
 * rtable_decode): the input as the image of the table file. The node's
 * own id is taken from the image where the header has it, so that inputs
 * get past the "another node's table" check. Checked: a refused image
 * adds nothing; an accepted one leaves every bucket within k, encodes
 * again, and decodes again into the same number of entries.
 * Seeds: tests/fuzz/corpus/rtable.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dht/rtable.h"

#define FUZZ_K       4
#define FUZZ_PER_NET 2
#define FUZZ_SELF_AT 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_count(void *cls, const struct rtable_entry *e)
{
	size_t *n = cls;

	if (e->helo_len > RTABLE_HELO_MAX)
		abort();
	(*n)++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rtable_stats st, st2;
	struct dhtkey self;
	struct rtable *rt, *rt2;
	struct buf out;
	size_t seen = 0;
	int r;

	memset(&self, 0, sizeof(self));
	if (size >= FUZZ_SELF_AT + DHTKEY_LEN)
		memcpy(self.b, data + FUZZ_SELF_AT, DHTKEY_LEN);
	rt = rtable_new(&self, FUZZ_K, FUZZ_PER_NET);
	if (rt == NULL)
		return 0;
	r = rtable_decode(rt, data, size, 1);
	rtable_get_stats(rt, &st);
	if (r < 0 && r != -ENOMEM && st.entries + st.cached != 0)
		abort();
	rtable_foreach(rt, fuzz_count, &seen);
	if (seen != st.entries || st.entries > (size_t)FUZZ_K * DHTKEY_BITS)
		abort();
	buf_init(&out);
	if (r == 0 && rtable_encode(rt, &out) == 0) {
		rt2 = rtable_new(&self, FUZZ_K, FUZZ_PER_NET);
		if (rt2 != NULL &&
		    rtable_decode(rt2, buf_head(&out), buf_size(&out), 2) == 0) {
			rtable_get_stats(rt2, &st2);
			if (st2.entries != st.entries)
				abort();
		}
		rtable_free(rt2);
	}
	buf_done(&out);
	rtable_free(rt);
	return 0;
}
