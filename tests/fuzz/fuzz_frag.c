/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for fragments (src/core/frag.c): frag_decode on the
 * whole input, then the input as a frame's worth of {u16 size, u16 type}
 * messages fed to a reassembly set with small budgets, with time moving
 * on. A message of type FUZZ_T_EXPIRE runs reasm_expire. Checked: what
 * decodes lies inside its message; budgets are never exceeded; a
 * completed message has its total length and type; memory held matches
 * the messages held; reasm_clear gives everything back.
 * Seeds: tests/fuzz/corpus/frag (real fragment sequences from the
 * batcher, overlapping, duplicated, inconsistent).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/frag.h"
#include "core/rx.h"

#define FUZZ_PER_PEER   (64u * 1024)
#define FUZZ_TOTAL      (96u * 1024)
#define FUZZ_TIMEOUT_US 5000000ull
#define FUZZ_T_EXPIRE   0x00ff

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_decode_ok(const uint8_t *msg, size_t size, const struct frag *f)
{
	if (f->data != msg + FRAG_HDR || f->len != size - FRAG_HDR ||
	    f->len == 0 || f->total == 0 || f->total > FERRY_APP_MSG_MAX ||
	    f->off >= f->total || f->len > f->total - f->off)
		abort();
}

/* Bytes held by the set must be the sum of its messages' totals. */
static void
fuzz_accounting(const struct reasm_set *rs, const struct reasm_budget *b,
    uint64_t other)
{
	const struct reasm *m;
	uint64_t sum = 0;

	TAILQ_FOREACH(m, &rs->list, link) {
		if (m->got > m->total || m->n_ranges > REASM_MAX_RANGES)
			abort();
		for (unsigned i = 0; i < m->n_ranges; i++)
			if (m->ranges[i][0] >= m->ranges[i][1] ||
			    m->ranges[i][1] > m->total ||
			    (i > 0 && m->ranges[i - 1][1] >= m->ranges[i][0]))
				abort();
		sum += m->total;
	}
	if (sum != rs->bytes || rs->bytes > FUZZ_PER_PEER ||
	    b->used != rs->bytes + other || b->used > b->limit)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reasm_budget b = { 0, FUZZ_TOTAL };
	struct reasm_set rs;
	struct frag f;
	const uint8_t *msg;
	size_t off = 0, msize;
	uint16_t type;
	uint64_t now = 1000000;
	/* Another peer's share of the total budget. */
	const uint64_t other = 16 * 1024;

	if (frag_decode(data, size, &f) == 0)
		fuzz_decode_ok(data, size, &f);
	reasm_init(&rs);
	b.used = other;
	while (rx_next(data, size, &off, &type, &msg, &msize) > 0) {
		uint8_t *out = NULL;
		size_t olen = 0;
		uint16_t otype = 0;
		int r;

		now += 1000000;
		if (type == FUZZ_T_EXPIRE) {
			(void)reasm_expire(&rs, &b, now, FUZZ_TIMEOUT_US);
			fuzz_accounting(&rs, &b, other);
			continue;
		}
		if (frag_decode(msg, msize, &f) < 0)
			continue;
		fuzz_decode_ok(msg, msize, &f);
		r = reasm_add(&rs, &b, FUZZ_PER_PEER, &f, now, &out, &olen,
		    &otype);
		if (r == 1) {
			if (out == NULL || olen != f.total || otype != f.type)
				abort();
			/* The last piece is in place. */
			if (memcmp(out + f.off, f.data, f.len) != 0)
				abort();
			free(out);
		} else if (r != 0 && r != -ENOSPC && r != -EBADMSG &&
		    r != -ENOMEM) {
			abort();
		} else if (out != NULL) {
			abort();
		}
		fuzz_accounting(&rs, &b, other);
	}
	reasm_clear(&rs, &b);
	if (rs.bytes != 0 || b.used != other || !TAILQ_EMPTY(&rs.list))
		abort();
	return 0;
}
