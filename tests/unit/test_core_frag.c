/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Fragments and reassembly (src/core/frag.c): the FRAG codec and every
 * bound; reassembly in order, reversed, shuffled, with duplicates and
 * with overlapping pieces cut at other boundaries; inconsistent pieces;
 * per-peer and total memory budgets given back on completion, expiry and
 * clearing; timeouts; stragglers of completed messages; the range limit;
 * and message ids (0 included) completing in any order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/frag.h"
#include "unit.h"

#define TOTAL_LIMIT (1u << 20)
#define PEER_LIMIT  (256u * 1024)

static struct reasm_set rs;
static struct reasm_budget budget;
static uint8_t *msgbuf;

static void
test_setup(void)
{
	reasm_init(&rs);
	budget.used = 0;
	budget.limit = TOTAL_LIMIT;
	msgbuf = malloc(64 * 1024);
	ck_assert_ptr_nonnull(msgbuf);
	for (size_t i = 0; i < 64 * 1024; i++)
		msgbuf[i] = (uint8_t)(i * 31 + (i >> 9));
}

static void
test_teardown(void)
{
	reasm_clear(&rs, &budget);
	free(msgbuf);
	msgbuf = NULL;
}

static struct frag
piece(uint32_t id, uint32_t total, uint32_t off, uint32_t len, uint16_t type)
{
	struct frag f = { id, total, off, type, msgbuf + off, len };

	return f;
}

/* Adds a piece; returns reasm_add's result. On completion checks the
 * message against msgbuf and frees it. */
static int
add(uint32_t id, uint32_t total, uint32_t off, uint32_t len, uint64_t now)
{
	struct frag f = piece(id, total, off, len, 0x0400);
	uint8_t *out = NULL;
	size_t olen = 0;
	uint16_t type = 0;
	int r =
	    reasm_add(&rs, &budget, PEER_LIMIT, &f, now, &out, &olen, &type);

	if (r == 1) {
		ck_assert_uint_eq(olen, total);
		ck_assert_uint_eq(type, 0x0400);
		ck_assert_mem_eq(out, msgbuf, total);
		free(out);
	} else {
		ck_assert_ptr_null(out);
	}
	return r;
}

START_TEST(test_codec)
{
	uint8_t buf[FRAG_HDR + 100];
	struct frag f;
	size_t n = frag_write(buf, 0x01020304, 5000, 4900, 0x0456, msgbuf, 100);

	ck_assert_uint_eq(n, FRAG_HDR + 100);
	ck_assert_uint_eq(wire_get16(buf), n);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_MSG_FRAG);
	ck_assert_int_eq(frag_decode(buf, n, &f), 0);
	ck_assert_uint_eq(f.msg_id, 0x01020304);
	ck_assert_uint_eq(f.total, 5000);
	ck_assert_uint_eq(f.off, 4900);
	ck_assert_uint_eq(f.type, 0x0456);
	ck_assert_uint_eq(f.len, 100);
	ck_assert_ptr_eq(f.data, buf + FRAG_HDR);
	ck_assert_mem_eq(f.data, msgbuf, 100);
	ck_assert_uint_eq(wire_get16(buf + 18), 0);
}
END_TEST

static int
decode_with(uint32_t total, uint32_t off, size_t len, uint16_t reserved)
{
	static uint8_t buf[FRAG_HDR + 200];
	struct frag f;

	ck_assert_uint_le(len, 200);
	(void)frag_write(buf, 1, total, off, 0x0400, msgbuf, (uint32_t)len);
	wire_put16(buf + 18, reserved);
	return frag_decode(buf, FRAG_HDR + len, &f);
}

START_TEST(test_decode_bounds)
{
	uint8_t buf[FRAG_HDR + 10];
	struct frag f;

	ck_assert_int_eq(decode_with(100, 0, 100, 0), 0);
	ck_assert_int_eq(decode_with(100, 99, 1, 0), 0);
	ck_assert_int_eq(decode_with(100, 100, 1, 0), -EBADMSG); /* off >= */
	ck_assert_int_eq(decode_with(100, 0xffffffff, 1, 0), -EBADMSG);
	ck_assert_int_eq(decode_with(100, 50, 51, 0), -EBADMSG); /* len > */
	ck_assert_int_eq(decode_with(100, 0, 101, 0), -EBADMSG);
	ck_assert_int_eq(decode_with(0, 0, 1, 0), -EBADMSG); /* total 0 */
	ck_assert_int_eq(decode_with(FERRY_APP_MSG_MAX, FERRY_APP_MSG_MAX - 1,
	                     1, 0),
	    0);
	ck_assert_int_eq(decode_with(FERRY_APP_MSG_MAX + 1, 0, 1, 0), -EBADMSG);
	ck_assert_int_eq(decode_with(0xffffffff, 0xfffffff0, 15, 0), -EBADMSG);
	ck_assert_int_eq(decode_with(100, 0, 10, 1), -EBADMSG); /* reserved */
	ck_assert_int_eq(decode_with(100, 0, 10, 0x8000), -EBADMSG);
	/* No data at all, short headers, size and type disagreeing. */
	(void)frag_write(buf, 1, 100, 0, 0x0400, msgbuf, 10);
	for (size_t len = 0; len <= FRAG_HDR; len++) {
		wire_put16(buf, (uint16_t)len);
		ck_assert_int_eq(frag_decode(buf, len, &f), -EBADMSG);
	}
	wire_put16(buf, FRAG_HDR + 10);
	ck_assert_int_eq(frag_decode(buf, FRAG_HDR + 9, &f), -EBADMSG);
	wire_put16(buf + 2, FERRY_MSG_ACK);
	ck_assert_int_eq(frag_decode(buf, FRAG_HDR + 10, &f), -EBADMSG);
}
END_TEST

START_TEST(test_in_order_and_reverse)
{
	const uint32_t total = 10000, step = 1000;

	for (uint32_t off = 0; off < total; off += step)
		ck_assert_int_eq(add(1, total, off, step, 1),
		    off + step == total ? 1 : 0);
	for (uint32_t off = total; off > 0; off -= step)
		ck_assert_int_eq(add(2, total, off - step, step, 1),
		    off == step ? 1 : 0);
	/* A message of one piece. */
	ck_assert_int_eq(add(3, 7, 0, 7, 1), 1);
	ck_assert(rs.bytes == 0 && budget.used == 0);
	ck_assert(TAILQ_EMPTY(&rs.list));
}
END_TEST

/* Feeds random pieces of a total-byte message, cut at several sets of
 * boundaries and duplicated, until complete; checks that it completes
 * exactly when the last byte arrives. */
static void
random_run(uint32_t id, uint32_t total, uint64_t *seed)
{
	enum { MAXP = 4096 };
	static uint32_t offs[MAXP], lens[MAXP];
	uint8_t *have = calloc(total, 1);
	uint32_t have_n = 0;
	unsigned n = 0;
	static const uint32_t cuts[] = { 700, 1100, 333 };

	ck_assert_ptr_nonnull(have);
	for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++)
		for (uint32_t off = 0; off < total; off += cuts[k]) {
			ck_assert_uint_lt(n, MAXP);
			offs[n] = off;
			lens[n] =
			    off + cuts[k] <= total ? cuts[k] : total - off;
			n++;
		}
	for (;;) {
		unsigned i = (unsigned)(unit_rand(seed) % n);
		int r, want;

		for (uint32_t b = offs[i]; b < offs[i] + lens[i]; b++)
			if (!have[b]) {
				have[b] = 1;
				have_n++;
			}
		want = have_n == total ? 1 : 0;
		r = add(id, total, offs[i], lens[i], 1);
		ck_assert_msg(r == want, "piece [%u, +%u): %d, %u of %u bytes",
		    offs[i], lens[i], r, have_n, total);
		if (r == 1)
			break;
	}
	free(have);
}

START_TEST(test_random_overlapping)
{
	uint64_t seed = 7;

	for (uint32_t id = 10; id < 40; id++)
		random_run(id, 1 + (uint32_t)(unit_rand(&seed) % 30000), &seed);
	ck_assert(rs.bytes == 0 && budget.used == 0);
}
END_TEST

START_TEST(test_overlaps_exact_accounting)
{
	/* Pieces that overlap the held ranges in every way. */
	ck_assert_int_eq(add(5, 100, 10, 10, 1), 0); /* [10,20) */
	ck_assert_int_eq(add(5, 100, 30, 10, 1), 0); /* [30,40) */
	ck_assert_int_eq(add(5, 100, 15, 20, 1), 0); /* bridges both */
	ck_assert_int_eq(add(5, 100, 10, 30, 1), 0); /* exactly covered */
	ck_assert_int_eq(add(5, 100, 0, 50, 1), 0);  /* covers it */
	ck_assert_int_eq(add(5, 100, 60, 10, 1), 0);
	ck_assert_int_eq(add(5, 100, 50, 10, 1), 0); /* touches both */
	ck_assert_int_eq(add(5, 100, 70, 29, 1), 0); /* one byte missing */
	ck_assert_int_eq(add(5, 100, 95, 4, 1), 0);
	ck_assert_int_eq(add(5, 100, 90, 10, 1), 1);
}
END_TEST

START_TEST(test_inconsistent)
{
	struct frag f;
	uint8_t *out = NULL;
	size_t olen;
	uint16_t type;

	ck_assert_int_eq(add(7, 1000, 0, 100, 1), 0);
	ck_assert(rs.bytes == 1000 && budget.used == 1000);
	/* Another total: the message is dropped. */
	ck_assert_int_eq(add(7, 2000, 100, 100, 1), -EBADMSG);
	ck_assert(rs.bytes == 0 && budget.used == 0);
	ck_assert(TAILQ_EMPTY(&rs.list));
	/* Another type. */
	ck_assert_int_eq(add(8, 1000, 0, 100, 1), 0);
	f = piece(8, 1000, 100, 100, 0x0401);
	ck_assert_int_eq(reasm_add(&rs, &budget, PEER_LIMIT, &f, 1, &out, &olen,
	                     &type),
	    -EBADMSG);
	ck_assert(rs.bytes == 0 && budget.used == 0);
	/* Dropped means gone: its remaining pieces start afresh and do
	 * not complete the message from the first piece. */
	for (uint32_t off = 100; off < 1000; off += 100)
		ck_assert_int_eq(add(7, 1000, off, 100, 1), 0);
	ck_assert_int_eq(add(7, 1000, 0, 100, 1), 1);
}
END_TEST

START_TEST(test_budgets)
{
	struct reasm_set rs2;
	struct frag f;
	uint8_t *out = NULL;
	size_t olen;
	uint16_t type;

	/* Per peer: 256 KiB. A message that alone is too big is refused. */
	ck_assert_int_eq(add(1, PEER_LIMIT + 1, 0, 100, 1), -ENOSPC);
	ck_assert(rs.bytes == 0 && budget.used == 0);
	ck_assert_int_eq(add(1, 60000, 0, 100, 1), 0);
	ck_assert_int_eq(add(2, 60000, 0, 100, 1), 0);
	ck_assert_int_eq(add(3, 60000, 0, 100, 1), 0);
	ck_assert_int_eq(add(4, 60000, 0, 100, 1), 0);
	ck_assert(rs.bytes == 240000 && budget.used == 240000);
	ck_assert_int_eq(add(5, 30000, 0, 100, 1), -ENOSPC);
	/* Completing one gives its memory back. */
	ck_assert_int_eq(add(1, 60000, 100, 59900, 1), 1);
	ck_assert(rs.bytes == 180000 && budget.used == 180000);
	ck_assert_int_eq(add(5, 30000, 0, 100, 1), 0);
	/* The total budget is shared with another peer's set. */
	reasm_init(&rs2);
	budget.limit = 350000;
	f = piece(9, 100000, 0, 100, 0x0400);
	ck_assert_int_eq(reasm_add(&rs2, &budget, PEER_LIMIT, &f, 1, &out,
	                     &olen, &type),
	    0);
	ck_assert(budget.used == 310000);
	f = piece(10, 50000, 0, 100, 0x0400);
	ck_assert_int_eq(reasm_add(&rs2, &budget, PEER_LIMIT, &f, 1, &out,
	                     &olen, &type),
	    -ENOSPC);
	ck_assert(rs2.bytes == 100000);
	/* Clearing a set returns all it held. */
	reasm_clear(&rs2, &budget);
	ck_assert(rs2.bytes == 0 && budget.used == 210000);
	ck_assert(TAILQ_EMPTY(&rs2.list));
	ck_assert_int_eq(reasm_add(&rs2, &budget, PEER_LIMIT, &f, 1, &out,
	                     &olen, &type),
	    0);
	reasm_clear(&rs2, &budget);
	reasm_clear(&rs, &budget);
	ck_assert(rs.bytes == 0 && budget.used == 0);
}
END_TEST

START_TEST(test_expire)
{
	ck_assert_int_eq(add(1, 1000, 0, 100, 1000), 0);
	ck_assert_int_eq(add(2, 1000, 0, 100, 5000), 0);
	ck_assert(budget.used == 2000);
	/* Idle exactly the timeout: kept; one more microsecond: dropped. */
	ck_assert_uint_eq(reasm_expire(&rs, &budget, 11000, 10000), 0);
	ck_assert_uint_eq(reasm_expire(&rs, &budget, 11001, 10000), 1);
	ck_assert(rs.bytes == 1000 && budget.used == 1000);
	/* Progress keeps a message alive; a duplicate is no progress. */
	ck_assert_int_eq(add(2, 1000, 100, 100, 14000), 0);
	ck_assert_int_eq(add(2, 1000, 100, 100, 20000), 0);
	ck_assert_uint_eq(reasm_expire(&rs, &budget, 24000, 10000), 0);
	ck_assert_uint_eq(reasm_expire(&rs, &budget, 24001, 10000), 1);
	ck_assert(rs.bytes == 0 && budget.used == 0);
	ck_assert(TAILQ_EMPTY(&rs.list));
	/* An expired message starts over. */
	ck_assert_int_eq(add(2, 1000, 200, 800, 30000), 0);
	ck_assert_int_eq(add(2, 1000, 0, 200, 30000), 1);
}
END_TEST

START_TEST(test_straggler)
{
	ck_assert_int_eq(add(42, 300, 0, 200, 1), 0);
	ck_assert_int_eq(add(42, 300, 100, 200, 1), 1);
	/* A retransmitted piece of the completed message: ignored. */
	ck_assert_int_eq(add(42, 300, 0, 200, 2), 0);
	ck_assert_int_eq(add(42, 300, 0, 300, 2), 0);
	ck_assert(TAILQ_EMPTY(&rs.list));
	ck_assert(rs.bytes == 0 && budget.used == 0);
}
END_TEST

START_TEST(test_range_limit)
{
	const uint32_t total = 2 * (REASM_MAX_RANGES + 2);

	/* One-byte pieces with a gap after each: REASM_MAX_RANGES fit. */
	for (uint32_t k = 0; k < REASM_MAX_RANGES; k++)
		ck_assert_int_eq(add(3, total, 2 * k, 1, 1), 0);
	ck_assert(rs.bytes == total);
	/* Filling a gap merges ranges: still fine at the limit. */
	ck_assert_int_eq(add(3, total, 1, 1, 1), 0);
	ck_assert_int_eq(add(3, total, 2 * (REASM_MAX_RANGES - 1) + 1, 1, 1),
	    0);
	ck_assert_int_eq(add(3, total, 2 * REASM_MAX_RANGES + 1, 1, 1), 0);
	/* Two disjoint ranges more: the second one is too many. */
	ck_assert_int_eq(add(3, total, 2 * REASM_MAX_RANGES + 3, 1, 1),
	    -ERANGE);
	ck_assert(rs.bytes == 0 && budget.used == 0);
	ck_assert(TAILQ_EMPTY(&rs.list));
}
END_TEST

/*
 * Message ids start at 0 (struct peer is zeroed, so next_msg_id is 0 for
 * the first fragmented message) and messages may complete out of order.
 * Message 0 must reassemble even when message 1 completed first.
 */
START_TEST(test_id_zero_after_other)
{
	ck_assert_int_eq(add(0, 2000, 0, 1000, 1), 0);
	ck_assert_int_eq(add(1, 500, 0, 500, 1), 1);
	ck_assert_msg(add(0, 2000, 1000, 1000, 1) == 1,
	    "message 0 did not complete after message 1 did");
	ck_assert(rs.bytes == 0 && budget.used == 0);
}
END_TEST

START_TEST(test_id_zero_first_piece_after_other)
{
	/* Message 0 not yet started when message 1 completes. */
	ck_assert_int_eq(add(1, 500, 0, 500, 1), 1);
	ck_assert_msg(add(0, 100, 0, 100, 1) == 1,
	    "a one-piece message 0 was taken for a straggler");
}
END_TEST

START_TEST(test_done_ring)
{
	/* Completed ids are remembered, at least the last REASM_DONE_RING. */
	for (uint32_t id = 100; id < 100 + REASM_DONE_RING; id++)
		ck_assert_int_eq(add(id, 10, 0, 10, 1), 1);
	for (uint32_t id = 100; id < 100 + REASM_DONE_RING; id++)
		ck_assert_int_eq(add(id, 10, 0, 10, 1), 0);
	/* Other ids are not. */
	ck_assert_int_eq(add(99, 10, 0, 10, 1), 1);
	ck_assert_int_eq(add(100 + REASM_DONE_RING, 10, 0, 10, 1), 1);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_frag");
	TCase *tc = tcase_create("codec");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_codec);
	tcase_add_test(tc, test_decode_bounds);
	suite_add_tcase(s, tc);
	tc = tcase_create("reassembly");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_in_order_and_reverse);
	tcase_add_test(tc, test_random_overlapping);
	tcase_add_test(tc, test_overlaps_exact_accounting);
	tcase_add_test(tc, test_inconsistent);
	tcase_add_test(tc, test_budgets);
	tcase_add_test(tc, test_expire);
	tcase_add_test(tc, test_straggler);
	tcase_add_test(tc, test_range_limit);
	tcase_add_test(tc, test_id_zero_after_other);
	tcase_add_test(tc, test_id_zero_first_piece_after_other);
	tcase_add_test(tc, test_done_ring);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
