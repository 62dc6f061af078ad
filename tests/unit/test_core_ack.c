/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Acknowledgements (src/core/ack.c). Receiver: the ranges of counters
 * seen (in order, gaps, holes filled by reordering, duplicates, more gaps
 * than ACK_MAX_RANGES, ACK_HISTORY), when an ACK is due (also as a
 * window update), and the ACK written and decoded back; every malformed ACK refused. Sender: frames
 * in flight settle as acknowledged or lost by the packet and time
 * thresholds, RTT samples, losing everything, and the ring growing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/ack.h"
#include "unit.h"

#define DELAY_US 5000

static struct acktrack at;

static void
test_setup(void)
{
	acktrack_init(&at);
}

/* Feeds counters (eliciting) at time 1000. */
static void
feed(const uint64_t *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		acktrack_on_frame(&at, c[i], true, 1000, DELAY_US);
}

/* Checks the ranges, newest first, given as lo,hi pairs. */
static void
ranges_are(const uint64_t *lohi, unsigned n)
{
	ck_assert_uint_eq(at.n, n);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_msg(at.lo[i] == lohi[2 * i] &&
		        at.hi[i] == lohi[2 * i + 1],
		    "range %u is [%llu, %llu], not [%llu, %llu]", i,
		    (unsigned long long)at.lo[i], (unsigned long long)at.hi[i],
		    (unsigned long long)lohi[2 * i],
		    (unsigned long long)lohi[2 * i + 1]);
	}
}

START_TEST(test_in_order)
{
	for (uint64_t c = 0; c < 10; c++)
		acktrack_on_frame(&at, c, true, 1000 + c, DELAY_US);
	ranges_are((const uint64_t[]){ 0, 9 }, 1);
	ck_assert(at.largest_at_us == 1009);
}
END_TEST

START_TEST(test_gaps_and_holes)
{
	feed((const uint64_t[]){ 0, 1, 2, 5, 6, 9 }, 6);
	ranges_are((const uint64_t[]){ 9, 9, 5, 6, 0, 2 }, 3);
	/* Holes filled by late frames join ranges. */
	feed((const uint64_t[]){ 4 }, 1);
	ranges_are((const uint64_t[]){ 9, 9, 4, 6, 0, 2 }, 3);
	feed((const uint64_t[]){ 3 }, 1);
	ranges_are((const uint64_t[]){ 9, 9, 0, 6 }, 2);
	feed((const uint64_t[]){ 8 }, 1);
	ranges_are((const uint64_t[]){ 8, 9, 0, 6 }, 2);
	feed((const uint64_t[]){ 7 }, 1);
	ranges_are((const uint64_t[]){ 0, 9 }, 1);
	/* Below everything, joining and not. */
	acktrack_init(&at);
	feed((const uint64_t[]){ 10, 20, 9, 7 }, 4);
	ranges_are((const uint64_t[]){ 20, 20, 9, 10, 7, 7 }, 3);
	/* A frame between two ranges, touching neither. */
	feed((const uint64_t[]){ 15 }, 1);
	ranges_are((const uint64_t[]){ 20, 20, 15, 15, 9, 10, 7, 7 }, 4);
	/* Touching the older one only. */
	feed((const uint64_t[]){ 11 }, 1);
	ranges_are((const uint64_t[]){ 20, 20, 15, 15, 9, 11, 7, 7 }, 4);
	/* Touching the newer one only. */
	feed((const uint64_t[]){ 19 }, 1);
	ranges_are((const uint64_t[]){ 19, 20, 15, 15, 9, 11, 7, 7 }, 4);
}
END_TEST

START_TEST(test_duplicates)
{
	feed((const uint64_t[]){ 0, 1, 2, 5, 6, 9 }, 6);
	at.deadline_us = 0;
	at.unacked = 0;
	at.out_of_order = false;
	/* Nothing changes and no ACK is scheduled for a duplicate. */
	feed((const uint64_t[]){ 0, 1, 2, 5, 6, 9 }, 6);
	ranges_are((const uint64_t[]){ 9, 9, 5, 6, 0, 2 }, 3);
	ck_assert(!acktrack_pending(&at));
	ck_assert_uint_eq(at.unacked, 0);
}
END_TEST

START_TEST(test_too_many_gaps)
{
	uint64_t want[2 * ACK_MAX_RANGES];

	/* Counters 0, 2, 4, ...: every one a range of its own. */
	for (uint64_t k = 0; k <= 40; k++)
		feed(&(uint64_t){ 2 * k }, 1);
	for (unsigned i = 0; i < ACK_MAX_RANGES; i++)
		want[2 * i] = want[2 * i + 1] = 80 - 2 * i;
	ranges_are(want, ACK_MAX_RANGES);
	/* A new gap in the middle pushes out the oldest range. */
	feed((const uint64_t[]){ 81, 83 }, 2);
	ck_assert_uint_eq(at.n, ACK_MAX_RANGES);
	ck_assert(at.lo[0] == 83 && at.hi[1] == 81 && at.lo[1] == 80);
	ck_assert(at.lo[ACK_MAX_RANGES - 1] == 20);
	/* A frame older than all we keep is not tracked. */
	feed((const uint64_t[]){ 1 }, 1);
	ck_assert_uint_eq(at.n, ACK_MAX_RANGES);
	ck_assert(at.lo[ACK_MAX_RANGES - 1] == 20);
	/* Filling a hole frees a slot, keeping the newest ranges. */
	feed((const uint64_t[]){ 82 }, 1);
	ck_assert_uint_eq(at.n, ACK_MAX_RANGES - 1);
	ck_assert(at.lo[0] == 80 && at.hi[0] == 83);
}
END_TEST

START_TEST(test_history)
{
	feed((const uint64_t[]){ 0, 1 }, 2);
	feed(&(uint64_t){ 1 + ACK_HISTORY }, 1);
	ranges_are((const uint64_t[]){ 1 + ACK_HISTORY, 1 + ACK_HISTORY, 0, 1 },
	    2);
	/* One more and [0, 1] is further back than ACK_HISTORY. */
	feed(&(uint64_t){ 2 + ACK_HISTORY }, 1);
	ranges_are((const uint64_t[]){ 1 + ACK_HISTORY, 2 + ACK_HISTORY }, 1);
	/* A big jump forgets everything before. */
	feed(&(uint64_t){ 1000000 }, 1);
	ranges_are((const uint64_t[]){ 1000000, 1000000 }, 1);
}
END_TEST

/*
 * Counters are the peer's choice (any value the replay window accepts,
 * up to UINT64_MAX - 1). A range less than ACK_HISTORY behind the
 * largest must stay, wherever the counters lie; "hi + ACK_HISTORY" must
 * not wrap around and drop it (fuzz_ack found this).
 */
START_TEST(test_history_near_top)
{
	const uint64_t top = UINT64_MAX - 1;

	feed(&(uint64_t){ top - 7739 }, 1);
	feed(&(uint64_t){ top }, 1);
	ck_assert_msg(at.n == 2,
	    "a counter %d behind the largest was "
	    "forgotten (ranges: %u)",
	    7739, at.n);
	ranges_are((const uint64_t[]){ top, top, top - 7739, top - 7739 }, 2);
	/* Further back than ACK_HISTORY it goes, as anywhere else. */
	acktrack_init(&at);
	feed(&(uint64_t){ top - ACK_HISTORY - 1 }, 1);
	feed(&(uint64_t){ top }, 1);
	ranges_are((const uint64_t[]){ top, top }, 1);
}
END_TEST

START_TEST(test_ack_scheduling)
{
	/* One eliciting frame: an ACK within the delay. */
	acktrack_on_frame(&at, 0, true, 1000, DELAY_US);
	ck_assert(acktrack_pending(&at));
	ck_assert(at.deadline_us == 1000 + DELAY_US);
	/* The second one: at once (ACK_EVERY). */
	acktrack_on_frame(&at, 1, true, 1200, DELAY_US);
	ck_assert(at.deadline_us == 1200);
	ck_assert_uint_gt(acktrack_write(&at, (uint8_t[ACK_MAX_SIZE]){ 0 },
	                      ACK_MAX_SIZE, 0, 1300),
	    0);
	ck_assert(!acktrack_pending(&at));
	/* Non-eliciting frames are tracked but ask for nothing. */
	acktrack_on_frame(&at, 2, false, 1400, DELAY_US);
	ck_assert(!acktrack_pending(&at));
	ranges_are((const uint64_t[]){ 0, 2 }, 1);
	/* A gap: at once. */
	acktrack_on_frame(&at, 5, true, 1500, DELAY_US);
	ck_assert(at.deadline_us == 1500);
	ck_assert_uint_gt(acktrack_write(&at, (uint8_t[ACK_MAX_SIZE]){ 0 },
	                      ACK_MAX_SIZE, 0, 1500),
	    0);
	/* A late frame filling a hole: at once as well. */
	acktrack_on_frame(&at, 3, true, 1600, DELAY_US);
	ck_assert(at.deadline_us == 1600);
	ck_assert(at.largest_at_us == 1500); /* 3 is not the largest */
}
END_TEST

/* A window update: an ACK owed although nothing new came, repeating the
 * ranges with the window of now; nothing before the first frame. */
START_TEST(test_force)
{
	uint8_t buf[ACK_MAX_SIZE];
	struct ack_msg a;
	size_t n;

	acktrack_force(&at, 900);
	ck_assert(!acktrack_pending(&at));
	feed((const uint64_t[]){ 0, 1 }, 2);
	ck_assert_uint_gt(acktrack_write(&at, buf, sizeof(buf), 100, 1000), 0);
	ck_assert(!acktrack_pending(&at));
	acktrack_force(&at, 2000);
	ck_assert(acktrack_pending(&at));
	ck_assert(at.deadline_us == 2000);
	n = acktrack_write(&at, buf, sizeof(buf), 4096, 2000);
	ck_assert_int_eq(ack_decode(buf, n, &a), 0);
	ck_assert_uint_eq(a.rwnd, 4096);
	ck_assert(a.n == 1 && a.lo[0] == 0 && a.hi[0] == 1);
	ck_assert(!acktrack_pending(&at));
}
END_TEST

START_TEST(test_write_decode)
{
	uint8_t buf[ACK_MAX_SIZE];
	struct ack_msg a;
	size_t n;

	ck_assert_uint_eq(acktrack_write(&at, buf, sizeof(buf), 1, 1), 0);
	feed((const uint64_t[]){ 0, 1, 2, 5, 6, 9, 100, 101 }, 8);
	at.largest_at_us = 1000;
	/* No room: nothing written, the ACK is still owed. */
	ck_assert_uint_eq(acktrack_write(&at, buf, ACK_FIXED + 8 * 3 - 1, 0,
	                      2000),
	    0);
	ck_assert(acktrack_pending(&at));
	n = acktrack_write(&at, buf, sizeof(buf), 0x12345678, 3500);
	ck_assert_uint_eq(n, ACK_FIXED + 8 * 3);
	ck_assert(!acktrack_pending(&at));
	ck_assert_uint_eq(wire_get16(buf), n);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_MSG_ACK);
	ck_assert_int_eq(ack_decode(buf, n, &a), 0);
	ck_assert_uint_eq(a.rwnd, 0x12345678);
	ck_assert_uint_eq(a.delay_us, 2500);
	ck_assert_uint_eq(a.n, 4);
	for (unsigned i = 0; i < 4; i++)
		ck_assert(a.lo[i] == at.lo[i] && a.hi[i] == at.hi[i]);
	ck_assert(
	    a.lo[0] == 100 && a.hi[0] == 101 && a.lo[3] == 0 && a.hi[3] == 2);
	/* The ranges stay for the next ACK (ACKs are not reliable). */
	feed((const uint64_t[]){ 102, 103 }, 2);
	n = acktrack_write(&at, buf, sizeof(buf), 0, 3500);
	ck_assert_int_eq(ack_decode(buf, n, &a), 0);
	ck_assert(a.lo[0] == 100 && a.hi[0] == 103 && a.n == 4);
}
END_TEST

START_TEST(test_write_decode_random)
{
	uint64_t seed = 42;
	uint8_t buf[ACK_MAX_SIZE];
	struct ack_msg a;

	for (int round = 0; round < 2000; round++) {
		uint64_t base = unit_rand(&seed) % 1000000;
		unsigned frames = 1 + (unsigned)(unit_rand(&seed) % 200);
		size_t n;

		acktrack_init(&at);
		for (unsigned i = 0; i < frames; i++)
			feed(&(uint64_t){ base + unit_rand(&seed) % 300 }, 1);
		n = acktrack_write(&at, buf, sizeof(buf), 7, 1000);
		ck_assert_uint_eq(n, ACK_FIXED + 8 * (at.n - 1));
		ck_assert_int_eq(ack_decode(buf, n, &a), 0);
		ck_assert_uint_eq(a.n, at.n);
		for (unsigned i = 0; i < a.n; i++) {
			ck_assert(a.lo[i] == at.lo[i] && a.hi[i] == at.hi[i]);
			ck_assert(a.lo[i] <= a.hi[i]);
			if (i > 0)
				ck_assert(a.hi[i] + 1 < a.lo[i - 1]);
		}
	}
}
END_TEST

/* An ACK with largest, first_len and the given gap/len pairs. */
static size_t
ack_make(uint8_t *buf, uint64_t largest, uint32_t first, unsigned more,
    const uint32_t *gaplen)
{
	size_t n = ACK_FIXED + 8 * (size_t)more;

	memset(buf, 0, n);
	wire_put_hdr(buf, (uint16_t)n, FERRY_MSG_ACK);
	wire_put32(buf + 4, 100);
	wire_put64(buf + 12, largest);
	wire_put32(buf + 20, first);
	wire_put16(buf + 24, (uint16_t)more);
	for (unsigned i = 0; i < more; i++) {
		wire_put32(buf + ACK_FIXED + 8 * i, gaplen[2 * i]);
		wire_put32(buf + ACK_FIXED + 8 * i + 4, gaplen[2 * i + 1]);
	}
	return n;
}

START_TEST(test_decode_rejects)
{
	uint8_t buf[ACK_MAX_SIZE + 64];
	uint32_t gl[2 * ACK_MAX_RANGES];
	struct ack_msg a;
	size_t n;

	memset(buf, 0, sizeof(buf));
	/* A good one to start from: [9,10] gap 2 [5,6]. */
	n = ack_make(buf, 10, 2, 1, (const uint32_t[]){ 2, 2 });
	ck_assert_int_eq(ack_decode(buf, n, &a), 0);
	ck_assert(a.n == 2 && a.lo[0] == 9 && a.hi[1] == 6 && a.lo[1] == 5);
	/* Sizes. */
	for (size_t len = 0; len < n; len++)
		ck_assert_int_eq(ack_decode(buf, len, &a), -EBADMSG);
	wire_put16(buf, (uint16_t)(n + 8));
	ck_assert_int_eq(ack_decode(buf, n + 8, &a), -EBADMSG);
	wire_put16(buf, (uint16_t)(n - 8));
	ck_assert_int_eq(ack_decode(buf, n - 8, &a), -EBADMSG);
	/* Type. */
	n = ack_make(buf, 10, 2, 0, NULL);
	wire_put16(buf + 2, FERRY_MSG_FRAG);
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	/* first_len 0; first_len reaching below counter 0. */
	n = ack_make(buf, 10, 0, 0, NULL);
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	n = ack_make(buf, 10, 12, 0, NULL);
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	n = ack_make(buf, 10, 11, 0, NULL); /* exactly down to 0 */
	ck_assert_int_eq(ack_decode(buf, n, &a), 0);
	ck_assert(a.lo[0] == 0);
	n = ack_make(buf, UINT64_MAX, UINT32_MAX, 0, NULL);
	ck_assert_int_eq(ack_decode(buf, n, &a), 0);
	/* gap 0 (ranges that should have been one), len 0. */
	n = ack_make(buf, 10, 2, 1, (const uint32_t[]){ 0, 2 });
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	n = ack_make(buf, 10, 2, 1, (const uint32_t[]){ 2, 0 });
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	/* A gap or a range running below 0. */
	n = ack_make(buf, 10, 2, 1, (const uint32_t[]){ 9, 1 });
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	n = ack_make(buf, 10, 2, 1, (const uint32_t[]){ 8, 1 }); /* [0,0] */
	ck_assert_int_eq(ack_decode(buf, n, &a), 0);
	ck_assert(a.lo[1] == 0 && a.hi[1] == 0);
	n = ack_make(buf, 10, 2, 1, (const uint32_t[]){ 2, 8 });
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	n = ack_make(buf, 10, 2, 1, (const uint32_t[]){ 2, 7 }); /* [0,6] */
	ck_assert_int_eq(ack_decode(buf, n, &a), 0);
	ck_assert(a.lo[1] == 0 && a.hi[1] == 6);
	n = ack_make(buf, 10, 2, 1,
	    (const uint32_t[]){ UINT32_MAX, UINT32_MAX });
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	/* The second of two ranges underflowing. */
	n = ack_make(buf, 100, 1, 2, (const uint32_t[]){ 1, 1, 200, 1 });
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	/* Too many ranges, even when the size agrees. */
	for (unsigned i = 0; i < ACK_MAX_RANGES; i++)
		gl[2 * i] = gl[2 * i + 1] = 1;
	n = ack_make(buf, 1000, 1, ACK_MAX_RANGES - 1, gl);
	ck_assert_int_eq(ack_decode(buf, n, &a), 0);
	ck_assert_uint_eq(a.n, ACK_MAX_RANGES);
	n = ack_make(buf, 1000, 1, ACK_MAX_RANGES, gl);
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	/* n_more disagreeing with the size. */
	n = ack_make(buf, 1000, 1, 2, gl);
	wire_put16(buf + 24, 1);
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
	wire_put16(buf + 24, 3);
	ck_assert_int_eq(ack_decode(buf, n, &a), -EBADMSG);
}
END_TEST

/* Sender side. */

struct settled {
	uint64_t counter[1024];
	bool acked[1024];
	unsigned n;
};

static struct settled st;

static void
on_settle(void *cls, struct sent_frame *sf, bool acked)
{
	struct settled *s = cls;

	ck_assert_uint_lt(s->n, 1024);
	ck_assert(sf->done);
	s->counter[s->n] = sf->counter;
	s->acked[s->n] = acked;
	s->n++;
}

static void
fl_add(struct inflight *f, uint64_t counter, uint64_t sent_us, bool elicit)
{
	struct sent_frame sf;

	memset(&sf, 0, sizeof(sf));
	sf.counter = counter;
	sf.sent_us = sent_us;
	sf.bytes = 1000;
	sf.eliciting = elicit;
	ck_assert_int_eq(inflight_add(f, &sf), 0);
}

static void
ack_of(struct ack_msg *a, const uint64_t *lohi, unsigned n)
{
	memset(a, 0, sizeof(*a));
	a->n = n;
	for (unsigned i = 0; i < n; i++) {
		a->lo[i] = lohi[2 * i];
		a->hi[i] = lohi[2 * i + 1];
	}
}

static bool
was_settled(uint64_t c, bool acked)
{
	for (unsigned i = 0; i < st.n; i++)
		if (st.counter[i] == c)
			return st.acked[i] == acked;
	return false;
}

START_TEST(test_inflight_acked)
{
	struct inflight f;
	struct ack_msg a;
	uint64_t rtt = 99;

	memset(&st, 0, sizeof(st));
	inflight_init(&f);
	for (uint64_t c = 0; c < 10; c++)
		fl_add(&f, c, 1000 + 10 * c, true);
	ck_assert(f.bytes == 10000 && f.eliciting == 10);
	ack_of(&a, (const uint64_t[]){ 8, 9, 0, 2 }, 2);
	inflight_on_ack(&f, &a, 5000, 1000000, on_settle, &st, &rtt);
	/* 0-2 and 8-9 acked, in the order of the ranges; 3-6 lost, being
	 * LOSS_PACKET_THRESHOLD or more behind 9; 7 not yet. */
	ck_assert_uint_eq(st.n, 5 + 4);
	ck_assert(st.counter[0] == 8 && st.counter[1] == 9 &&
	    st.counter[2] == 0 && st.counter[4] == 2);
	for (uint64_t c = 0; c < 3; c++)
		ck_assert(was_settled(c, true));
	ck_assert(was_settled(8, true) && was_settled(9, true));
	for (uint64_t c = 3; c < 7; c++)
		ck_assert_msg(was_settled(c, false), "%d not lost", (int)c);
	ck_assert(!was_settled(7, true) && !was_settled(7, false));
	ck_assert(rtt == 5000 - 1090);
	ck_assert(f.bytes == 1000 && f.eliciting == 1);
	ck_assert(f.largest_acked == 9);
	/* The same ACK again settles nothing and gives no sample. */
	inflight_on_ack(&f, &a, 6000, 1000000, on_settle, &st, &rtt);
	ck_assert_uint_eq(st.n, 9);
	ck_assert(rtt == 0);
	inflight_done(&f, on_settle, &st);
	ck_assert_uint_eq(st.n, 10);
	ck_assert(was_settled(7, false));
}
END_TEST

START_TEST(test_inflight_packet_threshold)
{
	struct inflight f;
	struct ack_msg a;
	uint64_t rtt;

	memset(&st, 0, sizeof(st));
	inflight_init(&f);
	for (uint64_t c = 0; c < 8; c++)
		fl_add(&f, c, 1000, true);
	/* Largest 3: 0 is LOSS_PACKET_THRESHOLD behind, 1 and 2 not yet. */
	ack_of(&a, (const uint64_t[]){ 3, 3 }, 1);
	inflight_on_ack(&f, &a, 1100, 1000000, on_settle, &st, &rtt);
	ck_assert_uint_eq(st.n, 2);
	ck_assert(was_settled(3, true) && was_settled(0, false));
	ck_assert(rtt == 100);
	ack_of(&a, (const uint64_t[]){ 5, 5, 3, 3 }, 2);
	inflight_on_ack(&f, &a, 1200, 1000000, on_settle, &st, &rtt);
	ck_assert(was_settled(5, true) && was_settled(1, false) &&
	    was_settled(2, false));
	ck_assert(!was_settled(4, false) && !was_settled(4, true));
	ck_assert_uint_eq(st.n, 5);
	/* 4 is late, not lost: its own ACK still counts. */
	ack_of(&a, (const uint64_t[]){ 4, 5 }, 1);
	inflight_on_ack(&f, &a, 1300, 1000000, on_settle, &st, &rtt);
	ck_assert(was_settled(4, true));
	ck_assert(rtt == 0); /* largest 5 was not newly acknowledged */
	inflight_done(&f, on_settle, &st);
}
END_TEST

/* With no packet threshold (mail), being overtaken loses nothing: only
 * the time threshold does. */
START_TEST(test_inflight_time_only)
{
	struct inflight f;
	struct ack_msg a;
	uint64_t rtt;

	memset(&st, 0, sizeof(st));
	inflight_init(&f);
	f.packet_threshold = 0;
	for (uint64_t c = 0; c < 8; c++)
		fl_add(&f, c, 1000, true);
	ack_of(&a, (const uint64_t[]){ 7, 7 }, 1);
	inflight_on_ack(&f, &a, 1100, 500, on_settle, &st, &rtt);
	ck_assert_uint_eq(st.n, 1);
	ck_assert(was_settled(7, true));
	/* Past the time threshold, all before 7 are lost. */
	ck_assert(inflight_detect(&f, 1500, 500, on_settle, &st) == 0);
	ck_assert_uint_eq(st.n, 8);
	for (uint64_t c = 0; c < 7; c++)
		ck_assert(was_settled(c, false));
	inflight_done(&f, on_settle, &st);
}
END_TEST

START_TEST(test_inflight_time_threshold)
{
	struct inflight f;
	struct ack_msg a;
	uint64_t rtt, next;

	memset(&st, 0, sizeof(st));
	inflight_init(&f);
	fl_add(&f, 0, 1000, true);
	fl_add(&f, 1, 2000, true);
	fl_add(&f, 2, 2100, true);
	/* Largest 2 at 2500 with a 1000 µs loss delay: 0 (sent 1000) is
	 * lost by time, 1 (sent 2000) will be at 3000. */
	ack_of(&a, (const uint64_t[]){ 2, 2 }, 1);
	inflight_on_ack(&f, &a, 2500, 1000, on_settle, &st, &rtt);
	ck_assert(was_settled(2, true));
	ck_assert(rtt == 400);
	ck_assert(was_settled(0, false)); /* 1000 + 1000 <= 2500 */
	ck_assert(!was_settled(1, false));
	next = inflight_detect(&f, 2999, 1000, on_settle, &st);
	ck_assert(next == 3000);
	ck_assert(!was_settled(1, false));
	next = inflight_detect(&f, 3000, 1000, on_settle, &st);
	ck_assert(was_settled(1, false));
	ck_assert(next == 0);
	ck_assert_uint_eq(f.n, 0);
	ck_assert(f.bytes == 0 && f.eliciting == 0);
	inflight_done(&f, on_settle, &st);
}
END_TEST

START_TEST(test_inflight_rtt_sample)
{
	struct inflight f;
	struct ack_msg a;
	uint64_t rtt = 1;

	memset(&st, 0, sizeof(st));
	inflight_init(&f);
	fl_add(&f, 0, 1000, true);
	fl_add(&f, 1, 1100, false); /* an ACK-only frame */
	fl_add(&f, 2, 1200, true);
	/* Largest acknowledged is not ack-eliciting: no sample. */
	ack_of(&a, (const uint64_t[]){ 0, 1 }, 1);
	inflight_on_ack(&f, &a, 2000, 1000000, on_settle, &st, &rtt);
	ck_assert(rtt == 0);
	/* Largest not in flight at all (never recorded): no sample, and
	 * frame 2 below it, newly acked, gives none either. */
	ack_of(&a, (const uint64_t[]){ 2, 7 }, 1);
	inflight_on_ack(&f, &a, 2500, 1000000, on_settle, &st, &rtt);
	ck_assert(rtt == 0);
	ck_assert(was_settled(2, true));
	/* A newly acknowledged eliciting largest gives now - sent. */
	fl_add(&f, 8, 3000, true);
	fl_add(&f, 9, 3100, true);
	ack_of(&a, (const uint64_t[]){ 9, 9 }, 1);
	inflight_on_ack(&f, &a, 3600, 1000000, on_settle, &st, &rtt);
	ck_assert(rtt == 500);
	inflight_done(&f, on_settle, &st);
}
END_TEST

START_TEST(test_inflight_lose_all)
{
	struct inflight f;
	struct ack_msg a;
	uint64_t rtt;

	memset(&st, 0, sizeof(st));
	inflight_init(&f);
	for (uint64_t c = 0; c < 5; c++)
		fl_add(&f, c, 1000, c != 2);
	ack_of(&a, (const uint64_t[]){ 1, 1 }, 1);
	inflight_on_ack(&f, &a, 1100, 1000000, on_settle, &st, &rtt);
	ck_assert_uint_eq(st.n, 1);
	inflight_lose_all(&f, on_settle, &st);
	ck_assert_uint_eq(st.n, 5);
	for (uint64_t c = 0; c < 5; c++)
		ck_assert(was_settled(c, c == 1));
	ck_assert_uint_eq(f.n, 0);
	ck_assert(f.bytes == 0 && f.eliciting == 0);
	/* Still usable afterwards. */
	fl_add(&f, 5, 2000, true);
	ck_assert(f.bytes == 1000 && f.eliciting == 1);
	inflight_done(&f, on_settle, &st);
	ck_assert_uint_eq(st.n, 6);
	ck_assert(was_settled(5, false));
	ck_assert_ptr_null(f.ring);
}
END_TEST

START_TEST(test_inflight_ring_growth)
{
	struct inflight f;
	struct ack_msg a;
	uint64_t rtt, c = 0;

	memset(&st, 0, sizeof(st));
	inflight_init(&f);
	/* 50 frames, the first 40 settled: the ring's head moves on. */
	for (; c < 50; c++)
		fl_add(&f, c, 1000 + c, true);
	ack_of(&a, (const uint64_t[]){ 0, 39 }, 1);
	inflight_on_ack(&f, &a, 2000, 1000000, on_settle, &st, &rtt);
	ck_assert_uint_eq(st.n, 40);
	ck_assert_uint_eq(f.n, 10);
	ck_assert_uint_eq(f.cap, 64);
	/* 300 more: the ring wraps, then grows twice, keeping order. */
	for (; c < 350; c++)
		fl_add(&f, c, 1000 + c, true);
	ck_assert_uint_eq(f.n, 310);
	ck_assert_uint_ge(f.cap, 310);
	ck_assert(f.bytes == 310 * 1000ull && f.eliciting == 310);
	/* Acknowledge in ranges, newest first, over the whole span: every
	 * frame settles exactly once, in counter order within each range. */
	ack_of(&a, (const uint64_t[]){ 300, 349, 200, 298, 40, 199 }, 3);
	inflight_on_ack(&f, &a, 3000, 1000000, on_settle, &st, &rtt);
	ck_assert_uint_eq(st.n, 40 + 310);
	ck_assert(was_settled(299, false)); /* 50 behind the largest */
	for (unsigned i = 40; i < st.n; i++)
		if (i > 40 && st.acked[i] && st.acked[i - 1] &&
		    st.counter[i] != 40 && st.counter[i] != 200)
			ck_assert_msg(st.counter[i] == st.counter[i - 1] + 1,
			    "settled %llu after %llu",
			    (unsigned long long)st.counter[i],
			    (unsigned long long)st.counter[i - 1]);
	for (uint64_t k = 40; k < 350; k++)
		ck_assert(was_settled(k, k != 299));
	ck_assert_uint_eq(f.n, 0);
	ck_assert(f.bytes == 0);
	inflight_done(&f, on_settle, &st);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_ack");
	TCase *tc = tcase_create("acktrack");

	tcase_add_checked_fixture(tc, test_setup, NULL);
	tcase_add_test(tc, test_in_order);
	tcase_add_test(tc, test_gaps_and_holes);
	tcase_add_test(tc, test_duplicates);
	tcase_add_test(tc, test_too_many_gaps);
	tcase_add_test(tc, test_history);
	tcase_add_test(tc, test_force);
	tcase_add_test(tc, test_history_near_top);
	tcase_add_test(tc, test_ack_scheduling);
	tcase_add_test(tc, test_write_decode);
	tcase_add_test(tc, test_write_decode_random);
	tcase_add_test(tc, test_decode_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("inflight");
	tcase_add_test(tc, test_inflight_acked);
	tcase_add_test(tc, test_inflight_packet_threshold);
	tcase_add_test(tc, test_inflight_time_only);
	tcase_add_test(tc, test_inflight_time_threshold);
	tcase_add_test(tc, test_inflight_rtt_sample);
	tcase_add_test(tc, test_inflight_lose_all);
	tcase_add_test(tc, test_inflight_ring_growth);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
