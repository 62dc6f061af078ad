/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for acknowledgements (src/core/ack.c).
 *  - The whole input as an ACK (ack_decode): ranges must come out
 *    ordered and disjoint, and applying it to frames in flight
 *    (inflight_on_ack) settles each frame at most once, acknowledged ones
 *    inside a range, lost ones below the largest acknowledged.
 *  - The input as a script for the receiver: 3-byte operations feed
 *    counters to acktrack_on_frame (next, reordered, jumps, near the top)
 *    or write an ACK (acktrack_write) that must decode (ack_decode) to
 *    exactly the ranges tracked; it is then applied to a ring of fake
 *    frames. A counter fed stays covered until it is more than
 *    ACK_HISTORY behind the largest or a full table pushes it out.
 * Seeds: tests/fuzz/corpus/ack.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ack.h"

#define FUZZ_FRAMES   300
#define FUZZ_REMEMBER 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_fl {
	struct inflight f;
	bool settled[FUZZ_FRAMES];
	const struct ack_msg *ack; /* being applied */
	uint64_t largest;          /* largest acknowledged so far */
};

static bool
fuzz_in_ack(const struct ack_msg *a, uint64_t c)
{
	for (unsigned i = 0; i < a->n; i++)
		if (c >= a->lo[i] && c <= a->hi[i])
			return true;
	return false;
}

static void
fuzz_settle(void *cls, struct sent_frame *sf, bool acked)
{
	struct fuzz_fl *fl = cls;

	if (sf->counter >= FUZZ_FRAMES || fl->settled[sf->counter] || !sf->done)
		abort();
	fl->settled[sf->counter] = true;
	if (acked && (fl->ack == NULL || !fuzz_in_ack(fl->ack, sf->counter)))
		abort();
	if (!acked && fl->ack != NULL && sf->counter >= fl->largest)
		abort();
}

static void
fuzz_fl_init(struct fuzz_fl *fl, const uint8_t *data, size_t size)
{
	memset(fl, 0, sizeof(*fl));
	inflight_init(&fl->f);
	for (uint64_t c = 0; c < FUZZ_FRAMES; c++) {
		struct sent_frame sf;

		memset(&sf, 0, sizeof(sf));
		sf.counter = c;
		sf.sent_us = c;
		sf.bytes = 100 + (uint32_t)c;
		sf.eliciting = size == 0 || (data[c % size] & 1) || c % 3;
		if (inflight_add(&fl->f, &sf) < 0)
			abort();
	}
}

/* The books of frames not yet settled must add up. */
static void
fuzz_fl_check(struct fuzz_fl *fl)
{
	uint64_t bytes = 0;
	unsigned elic = 0;

	for (size_t i = 0; i < fl->f.n; i++) {
		const struct sent_frame *sf =
		    &fl->f.ring[(fl->f.head + i) % fl->f.cap];

		if (i > 0 &&
		    sf->counter <=
		        fl->f.ring[(fl->f.head + i - 1) % fl->f.cap].counter)
			abort();
		if (sf->done != fl->settled[sf->counter])
			abort();
		if (!sf->done) {
			bytes += sf->bytes;
			elic += sf->eliciting;
		}
	}
	if (bytes != fl->f.bytes || elic != fl->f.eliciting)
		abort();
}

static void
fuzz_fl_ack(struct fuzz_fl *fl, const struct ack_msg *a, uint64_t now)
{
	uint64_t rtt;

	if (!fl->f.have_largest || a->hi[0] > fl->largest)
		fl->largest = a->hi[0];
	fl->ack = a;
	inflight_on_ack(&fl->f, a, now, 5000, fuzz_settle, fl, &rtt);
	if (rtt != 0 && (a->hi[0] >= FUZZ_FRAMES || rtt != now - a->hi[0]))
		abort();
	fl->ack = NULL;
	fuzz_fl_check(fl);
	(void)inflight_detect(&fl->f, now + 3000, 5000, fuzz_settle, fl);
	fuzz_fl_check(fl);
}

static void
fuzz_ranges_sane(const uint64_t *lo, const uint64_t *hi, unsigned n)
{
	if (n == 0 || n > ACK_MAX_RANGES)
		abort();
	for (unsigned i = 0; i < n; i++) {
		if (lo[i] > hi[i])
			abort();
		if (i > 0 && (hi[i] >= lo[i - 1] || hi[i] + 1 == lo[i - 1]))
			abort();
	}
}

static void
fuzz_decode(const uint8_t *data, size_t size)
{
	struct fuzz_fl fl;
	struct ack_msg a;

	if (ack_decode(data, size, &a) < 0)
		return;
	if (size != ACK_FIXED + 8 * (size_t)(a.n - 1))
		abort();
	fuzz_ranges_sane(a.lo, a.hi, a.n);
	fuzz_fl_init(&fl, data, size);
	fuzz_fl_ack(&fl, &a, 1000000);
	inflight_lose_all(&fl.f, fuzz_settle, &fl);
	for (unsigned c = 0; c < FUZZ_FRAMES; c++)
		if (!fl.settled[c])
			abort();
	inflight_done(&fl.f, fuzz_settle, &fl);
}

static bool
fuzz_covered(const struct acktrack *at, uint64_t c)
{
	for (unsigned i = 0; i < at->n; i++)
		if (c >= at->lo[i] && c <= at->hi[i])
			return true;
	return false;
}

static void
fuzz_track(const uint8_t *data, size_t size)
{
	struct acktrack at;
	struct fuzz_fl fl;
	uint64_t cur = 0, now = 1000, seen[FUZZ_REMEMBER], floor = 0;
	unsigned n_seen = 0;
	uint8_t buf[ACK_MAX_SIZE];

	acktrack_init(&at);
	fuzz_fl_init(&fl, data, size);
	for (size_t i = 0; i + 3 <= size; i += 3) {
		unsigned op = data[i], kind = (op >> 1) & 3;
		uint64_t v = (uint64_t)data[i + 1] << 8 | data[i + 2], c;

		now += 100 + v;
		if (kind == 3 && (op & 0x80)) {
			struct ack_msg a;
			size_t n = acktrack_write(&at, buf, sizeof(buf),
			    (uint32_t)v, now);

			if (n == 0)
				continue;
			if (acktrack_pending(&at) ||
			    ack_decode(buf, n, &a) < 0 || a.n != at.n)
				abort();
			for (unsigned k = 0; k < a.n; k++)
				if (a.lo[k] != at.lo[k] || a.hi[k] != at.hi[k])
					abort();
			fuzz_fl_ack(&fl, &a, now);
			continue;
		}
		if (kind == 0)
			c = cur + 1 + (v & 0xff);
		else if (kind == 1)
			c = cur > v ? cur - v : 0;
		else if (kind == 2)
			c = cur + (v << ((op >> 3) & 15));
		else
			c = UINT64_MAX - 1 - v; /* an authenticated peer can */
		acktrack_on_frame(&at, c, op & 1, now, 5000);
		if (c > cur && kind != 3)
			cur = c;
		fuzz_ranges_sane(at.lo, at.hi, at.n);
		/* What was just fed is covered, unless it fell off the end. */
		if (!fuzz_covered(&at, c) && c >= at.lo[at.n - 1])
			abort();
		/* A full table may have dropped anything below its oldest. */
		if (at.n == ACK_MAX_RANGES && at.lo[at.n - 1] > floor)
			floor = at.lo[at.n - 1];
		seen[n_seen++ % FUZZ_REMEMBER] = c;
		/* Otherwise only what is more than ACK_HISTORY behind the
		 * largest may be forgotten. */
		for (unsigned k = 0; k < n_seen && k < FUZZ_REMEMBER; k++)
			if (!fuzz_covered(&at, seen[k]) && seen[k] >= floor &&
			    at.hi[0] - seen[k] <= ACK_HISTORY)
				abort();
		if (at.unacked > 0 && !acktrack_pending(&at))
			abort();
	}
	inflight_done(&fl.f, fuzz_settle, &fl);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size);
	fuzz_track(data, size);
	return 0;
}
