/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ACK ranges, frames in flight and loss detection (see ack.h). */
#include "core/ack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ferry/proto.h>

#include "lib/wire.h"

void
acktrack_init(struct acktrack *a)
{
	memset(a, 0, sizeof(*a));
}

static void
acktrack_insert_at(struct acktrack *a, unsigned i, uint64_t c)
{
	if (a->n == ACK_MAX_RANGES)
		a->n--; /* the oldest range falls off */
	memmove(&a->lo[i + 1], &a->lo[i], (a->n - i) * sizeof(a->lo[0]));
	memmove(&a->hi[i + 1], &a->hi[i], (a->n - i) * sizeof(a->hi[0]));
	a->lo[i] = a->hi[i] = c;
	a->n++;
}

static void
acktrack_remove_at(struct acktrack *a, unsigned i)
{
	memmove(&a->lo[i], &a->lo[i + 1], (a->n - i - 1) * sizeof(a->lo[0]));
	memmove(&a->hi[i], &a->hi[i + 1], (a->n - i - 1) * sizeof(a->hi[0]));
	a->n--;
}

/* Adds c to the ranges; returns false if it was there already. */
static bool
acktrack_add(struct acktrack *a, uint64_t c)
{
	unsigned i;

	for (i = 0; i < a->n; i++) {
		if (c > a->hi[i]) {
			if (c == a->hi[i] + 1) {
				a->hi[i] = c;
				/* Joining the newer neighbour closes a gap. */
				if (i > 0 && a->lo[i - 1] == c + 1) {
					a->lo[i - 1] = a->lo[i];
					acktrack_remove_at(a, i);
				}
			} else if (i > 0 && a->lo[i - 1] == c + 1) {
				a->lo[i - 1] = c;
			} else {
				acktrack_insert_at(a, i, c);
			}
			return true;
		}
		if (c >= a->lo[i])
			return false;
	}
	if (a->n > 0 && a->lo[a->n - 1] == c + 1)
		a->lo[a->n - 1] = c;
	else if (a->n < ACK_MAX_RANGES)
		acktrack_insert_at(a, a->n, c);
	else
		return false; /* older than anything we still track */
	return true;
}

void
acktrack_on_frame(struct acktrack *a, uint64_t counter, bool eliciting,
    uint64_t now_us, uint64_t max_delay_us)
{
	uint64_t largest = a->n > 0 ? a->hi[0] : 0;
	bool had = a->n > 0;

	if (!acktrack_add(a, counter))
		return;
	if (!had || counter > largest) {
		a->largest_at_us = now_us;
		if (had && counter > largest + 1)
			a->out_of_order = true;
	} else {
		a->out_of_order = true;
	}
	while (a->n > 1 && a->hi[0] - a->hi[a->n - 1] > ACK_HISTORY)
		a->n--;
	if (!eliciting)
		return;
	a->unacked++;
	if (a->unacked >= ACK_EVERY || a->out_of_order)
		a->deadline_us = now_us;
	else if (a->deadline_us == 0)
		a->deadline_us = now_us + max_delay_us;
}

void
acktrack_force(struct acktrack *a, uint64_t now_us)
{
	if (a->n > 0)
		a->deadline_us = now_us;
}

size_t
acktrack_write(struct acktrack *a, uint8_t *out, size_t max, uint32_t rwnd,
    uint64_t now_us)
{
	size_t size;
	uint64_t delay;

	if (a->n == 0 || a->deadline_us == 0)
		return 0;
	size = ACK_FIXED + 8 * (size_t)(a->n - 1);
	if (size > max)
		return 0;
	delay = now_us > a->largest_at_us ? now_us - a->largest_at_us : 0;
	wire_put_hdr(out, (uint16_t)size, FERRY_MSG_ACK);
	wire_put32(out + 4, rwnd);
	wire_put32(out + 8, delay > UINT32_MAX ? UINT32_MAX : (uint32_t)delay);
	wire_put64(out + 12, a->hi[0]);
	wire_put32(out + 20, (uint32_t)(a->hi[0] - a->lo[0] + 1));
	wire_put16(out + 24, (uint16_t)(a->n - 1));
	wire_put16(out + 26, 0);
	for (unsigned i = 1; i < a->n; i++) {
		uint8_t *r = out + ACK_FIXED + 8 * (i - 1);

		wire_put32(r, (uint32_t)(a->lo[i - 1] - a->hi[i] - 1));
		wire_put32(r + 4, (uint32_t)(a->hi[i] - a->lo[i] + 1));
	}
	a->unacked = 0;
	a->out_of_order = false;
	a->deadline_us = 0;
	return size;
}

int
ack_decode(const void *msg, size_t len, struct ack_msg *ret)
{
	const uint8_t *p = msg;
	uint64_t largest, first;
	unsigned more;

	if (len < ACK_FIXED || wire_get16(p) != len ||
	    wire_get16(p + 2) != FERRY_MSG_ACK)
		return -EBADMSG;
	more = wire_get16(p + 24);
	if (more >= ACK_MAX_RANGES || len != ACK_FIXED + 8 * (size_t)more)
		return -EBADMSG;
	ret->rwnd = wire_get32(p + 4);
	ret->delay_us = wire_get32(p + 8);
	largest = wire_get64(p + 12);
	first = wire_get32(p + 20);
	if (first == 0 || first - 1 > largest)
		return -EBADMSG;
	ret->hi[0] = largest;
	ret->lo[0] = largest - (first - 1);
	for (unsigned i = 1; i <= more; i++) {
		const uint8_t *r = p + ACK_FIXED + 8 * (i - 1);
		uint64_t gap = wire_get32(r), n = wire_get32(r + 4);
		uint64_t prev_lo = ret->lo[i - 1];

		/* hi = prev_lo - gap - 1 and lo = hi - n + 1, both >= 0. */
		if (gap == 0 || n == 0 || prev_lo < gap + 1 ||
		    prev_lo - gap - 1 < n - 1)
			return -EBADMSG;
		ret->hi[i] = prev_lo - gap - 1;
		ret->lo[i] = ret->hi[i] - (n - 1);
	}
	ret->n = more + 1;
	return 0;
}

void
inflight_init(struct inflight *f)
{
	memset(f, 0, sizeof(*f));
	f->packet_threshold = LOSS_PACKET_THRESHOLD;
}

static struct sent_frame *
inflight_at(const struct inflight *f, size_t i)
{
	return &f->ring[(f->head + i) % f->cap];
}

static void
inflight_settle(struct inflight *f, struct sent_frame *sf, bool acked,
    inflight_fn *fn, void *cls)
{
	sf->done = true;
	f->bytes -= sf->bytes;
	if (sf->eliciting)
		f->eliciting--;
	fn(cls, sf, acked);
}

/* Drops settled frames from the front. */
static void
inflight_trim(struct inflight *f)
{
	while (f->n > 0 && inflight_at(f, 0)->done) {
		f->head = (f->head + 1) % f->cap;
		f->n--;
	}
}

void
inflight_done(struct inflight *f, inflight_fn *fn, void *cls)
{
	inflight_lose_all(f, fn, cls);
	free(f->ring);
	memset(f, 0, sizeof(*f));
}

int
inflight_add(struct inflight *f, const struct sent_frame *sf)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct sent_frame *ring = malloc(cap * sizeof(*ring));

		if (ring == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < f->n; i++)
			ring[i] = *inflight_at(f, i);
		free(f->ring);
		f->ring = ring;
		f->cap = cap;
		f->head = 0;
	}
	*inflight_at(f, f->n) = *sf;
	inflight_at(f, f->n)->done = false;
	f->n++;
	f->bytes += sf->bytes;
	if (sf->eliciting && f->eliciting++ == 0)
		f->pto_base_us = sf->sent_us;
	return 0;
}

/* Index of the first frame with counter >= c (f->n if none). */
static size_t
inflight_lower_bound(const struct inflight *f, uint64_t c)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (inflight_at(f, mid)->counter < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
inflight_on_ack(struct inflight *f, const struct ack_msg *a, uint64_t now_us,
    uint64_t loss_delay_us, inflight_fn *fn, void *cls, uint64_t *ret_rtt_us)
{
	*ret_rtt_us = 0;
	for (unsigned r = 0; r < a->n; r++) {
		for (size_t i = inflight_lower_bound(f, a->lo[r]); i < f->n;
		     i++) {
			struct sent_frame *sf = inflight_at(f, i);

			if (sf->counter > a->hi[r])
				break;
			if (sf->done)
				continue;
			if (r == 0 && sf->counter == a->hi[0] && sf->eliciting)
				*ret_rtt_us = now_us - sf->sent_us;
			inflight_settle(f, sf, true, fn, cls);
		}
	}
	if (!f->have_largest || a->hi[0] > f->largest_acked) {
		f->largest_acked = a->hi[0];
		f->have_largest = true;
	}
	(void)inflight_detect(f, now_us, loss_delay_us, fn, cls);
}

uint64_t
inflight_detect(struct inflight *f, uint64_t now_us, uint64_t loss_delay_us,
    inflight_fn *fn, void *cls)
{
	uint64_t earliest = 0;

	if (!f->have_largest)
		return 0;
	for (size_t i = 0; i < f->n; i++) {
		struct sent_frame *sf = inflight_at(f, i);

		if (sf->counter >= f->largest_acked)
			break;
		if (sf->done)
			continue;
		if ((f->packet_threshold > 0 &&
			f->largest_acked - sf->counter >= f->packet_threshold) ||
		    sf->sent_us + loss_delay_us <= now_us) {
			inflight_settle(f, sf, false, fn, cls);
		} else if (earliest == 0 ||
		    sf->sent_us + loss_delay_us < earliest) {
			earliest = sf->sent_us + loss_delay_us;
		}
	}
	inflight_trim(f);
	return earliest;
}

void
inflight_lose_all(struct inflight *f, inflight_fn *fn, void *cls)
{
	for (size_t i = 0; i < f->n; i++) {
		struct sent_frame *sf = inflight_at(f, i);

		if (!sf->done)
			inflight_settle(f, sf, false, fn, cls);
	}
	inflight_trim(f);
}
