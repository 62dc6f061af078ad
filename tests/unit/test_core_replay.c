/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The replay window (src/core/replay.c) at its edges - REPLAY_WINDOW
 * behind the highest is accepted, one more is not (replay.h: "counters
 * more than REPLAY_WINDOW behind the highest seen ... are refused") -
 * duplicates, large jumps, the counter UINT64_MAX, and a randomised
 * comparison with a plain reference model over a million operations.
 */
/* ctest: TIMEOUT=300 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/replay.h"
#include "unit.h"

static struct replay rp;

static void
test_setup(void)
{
	replay_init(&rp);
}

/* Accepts c, checking that check and update agree. */
static bool
test_take(uint64_t c)
{
	bool chk = replay_check(&rp, c);
	bool upd = replay_update(&rp, c);

	ck_assert_msg(chk == upd, "check %d but update %d for %llu", chk, upd,
	    (unsigned long long)c);
	return upd;
}

START_TEST(test_first_and_in_order)
{
	ck_assert(replay_check(&rp, 0));
	ck_assert(test_take(0));
	ck_assert(!test_take(0));
	for (uint64_t c = 1; c < 1000; c++)
		ck_assert(test_take(c));
	for (uint64_t c = 0; c < 1000; c++)
		ck_assert(!replay_check(&rp, c));
}
END_TEST

START_TEST(test_first_counter_large)
{
	/* A window may start anywhere: the first frame of a key set can
	 * carry a high counter (counters continue across rekeys). */
	ck_assert(test_take(1000000));
	ck_assert(test_take(1000000 - 5));
	ck_assert(!test_take(1000000 - 5));
	ck_assert(test_take(1000000 - REPLAY_WINDOW + 1));
	ck_assert(!test_take(1000000 - REPLAY_WINDOW - 1));
	ck_assert(!test_take(1000000 - 3 * REPLAY_WINDOW));
}
END_TEST

START_TEST(test_window_edge)
{
	const uint64_t top = 100000;

	/* For every alignment of the highest counter within a word. */
	for (uint64_t h = top; h < top + 130; h++) {
		replay_init(&rp);
		ck_assert(test_take(h));
		ck_assert_msg(!replay_check(&rp, h - REPLAY_WINDOW - 1),
		    "%llu accepted, %d behind %llu",
		    (unsigned long long)(h - REPLAY_WINDOW - 1),
		    REPLAY_WINDOW + 1, (unsigned long long)h);
		ck_assert_msg(replay_check(&rp, h - REPLAY_WINDOW),
		    "counter %llu refused: exactly REPLAY_WINDOW (%d) behind "
		    "the highest %llu",
		    (unsigned long long)(h - REPLAY_WINDOW), REPLAY_WINDOW,
		    (unsigned long long)h);
		ck_assert(test_take(h - REPLAY_WINDOW));
		ck_assert(!test_take(h - REPLAY_WINDOW));
		ck_assert(!test_take(h - REPLAY_WINDOW - 1));
		ck_assert(test_take(h - REPLAY_WINDOW + 1));
		ck_assert(test_take(h - 1));
	}
}
END_TEST

START_TEST(test_window_fills_completely)
{
	const uint64_t h = 50000;

	/* Every counter of the window, in reverse, exactly once. */
	ck_assert(test_take(h));
	for (uint64_t c = h - 1; c >= h - REPLAY_WINDOW + 1; c--)
		ck_assert_msg(test_take(c), "%llu refused",
		    (unsigned long long)c);
	for (uint64_t c = h - REPLAY_WINDOW + 1; c <= h; c++)
		ck_assert(!test_take(c));
}
END_TEST

START_TEST(test_duplicates)
{
	static const uint64_t seq[] = { 5, 3, 9, 4, 100, 64, 63, 65, 128 };

	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		ck_assert(test_take(seq[i]));
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		ck_assert_msg(!test_take(seq[i]), "duplicate %llu accepted",
		    (unsigned long long)seq[i]);
	/* Unseen neighbours are still fine. */
	ck_assert(test_take(6));
	ck_assert(test_take(99));
	ck_assert(test_take(0));
}
END_TEST

START_TEST(test_large_jumps)
{
	uint64_t c = 10;

	ck_assert(test_take(c));
	/* Jumps of less than, exactly and more than the whole ring. */
	static const uint64_t jumps[] = { 1, 63, 64, 65, REPLAY_WINDOW - 1,
		REPLAY_WINDOW, REPLAY_WINDOW + 1, REPLAY_WORDS * 64 - 1,
		REPLAY_WORDS * 64, REPLAY_WORDS * 64 + 1, 1000000, 1ull << 40 };

	for (size_t i = 0; i < sizeof(jumps) / sizeof(jumps[0]); i++) {
		uint64_t prev = c;

		c += jumps[i];
		ck_assert(test_take(c));
		ck_assert(!test_take(c));
		/* What was seen before stays refused, inside or outside. */
		ck_assert(!replay_check(&rp, prev));
		/* Unseen counters inside the new window are accepted, and
		 * no stale bit from before the jump survives. */
		if (jumps[i] > 2) {
			ck_assert(test_take(c - 1));
			if (c - prev - 1 > 1 && c - (prev + 1) < REPLAY_WINDOW)
				ck_assert(test_take(prev + 1));
		}
	}
	/* A slide past a word boundary clears the bits the ring reuses. */
	replay_init(&rp);
	for (uint64_t k = 0; k < 64; k++)
		ck_assert(test_take(k));
	ck_assert(test_take(REPLAY_WORDS * 64));
	/* Word 0 is reused now; counter 64 * REPLAY_WORDS + 5 is unseen. */
	ck_assert(test_take(REPLAY_WORDS * 64 + 5));
	ck_assert(!test_take(5));
}
END_TEST

START_TEST(test_uint64_max)
{
	/* UINT64_MAX would make the window's top wrap: never accepted. */
	ck_assert(!replay_check(&rp, UINT64_MAX));
	ck_assert(!test_take(UINT64_MAX));
	ck_assert(test_take(UINT64_MAX - 1));
	ck_assert(!test_take(UINT64_MAX - 1));
	ck_assert(!test_take(UINT64_MAX));
	ck_assert(test_take(UINT64_MAX - 2));
	ck_assert(test_take(UINT64_MAX - REPLAY_WINDOW));
	ck_assert(!test_take(UINT64_MAX - 2 - REPLAY_WINDOW));
	ck_assert(!test_take(0));
}
END_TEST

/* The reference: the highest counter seen and the set of seen ones. */
struct model {
	bool any;
	uint64_t highest;
	uint64_t *slots; /* open addressing; 0 is free, values stored + 1 */
	size_t cap;
};

static bool
model_seen(const struct model *m, uint64_t c, bool insert)
{
	size_t i = (size_t)((c * 0x9e3779b97f4a7c15ull) >> 40) & (m->cap - 1);

	while (m->slots[i] != 0) {
		if (m->slots[i] == c + 1)
			return true;
		i = (i + 1) & (m->cap - 1);
	}
	if (insert)
		m->slots[i] = c + 1;
	return false;
}

static bool
model_accepts(const struct model *m, uint64_t c)
{
	if (c == UINT64_MAX)
		return false;
	if (!m->any || c > m->highest)
		return true;
	return m->highest - c <= REPLAY_WINDOW && !model_seen(m, c, false);
}

START_TEST(test_against_model)
{
	const unsigned ops = 1000000;
	struct model m = { false, 0, NULL, 1u << 21 };
	uint64_t seed = 0x5eed0f5eedull, recent[64];
	unsigned n_recent = 0, accepted = 0, mismatches = 0;
	char first[160] = "";

	m.slots = calloc(m.cap, sizeof(*m.slots));
	ck_assert_ptr_nonnull(m.slots);
	for (unsigned i = 0; i < ops; i++) {
		uint64_t r = unit_rand(&seed), c, h = m.highest;
		unsigned kind = (unsigned)(r % 100);
		bool want, got_check, got;

		r = unit_rand(&seed);
		if (kind < 40)
			c = h + 1 + r % 4; /* in order, small gaps */
		else if (kind < 70)        /* behind, around the edge too */
			c = h - r % (REPLAY_WINDOW + 64);
		else if (kind < 80) /* near the edge exactly */
			c = h - REPLAY_WINDOW + 2 - r % 5;
		else if (kind < 90 && n_recent > 0) /* a replay */
			c = recent[r % n_recent];
		else if (kind < 98)
			c = h + r % (3 * REPLAY_WINDOW); /* a jump */
		else
			c = h + (r % (REPLAY_WORDS * 64 * 4));
		if (c > h + (1ull << 40)) /* keep the walk going */
			c = h + 1;
		want = model_accepts(&m, c);
		got_check = replay_check(&rp, c);
		got = replay_update(&rp, c);
		if (want != got || got != got_check) {
			if (mismatches++ == 0)
				(void)snprintf(first, sizeof(first),
				    "op %u: counter %llu, highest %llu "
				    "(%lld behind): model %d, check %d, "
				    "update %d",
				    i, (unsigned long long)c,
				    (unsigned long long)h, (long long)(h - c),
				    want, got_check, got);
		}
		if (want) {
			/* Follow the model, whatever the window did. */
			(void)model_seen(&m, c, true);
			if (!m.any || c > m.highest)
				m.highest = c;
			m.any = true;
			accepted++;
			recent[n_recent < 64 ? n_recent++ : r % 64] = c;
		}
		if (accepted > (m.cap / 2)) /* the set is near full */
			ck_abort_msg("model set full");
	}
	free(m.slots);
	ck_assert_msg(mismatches == 0, "%u of %u operations differ; first: %s",
	    mismatches, ops, first);
	ck_assert_uint_gt(accepted, ops / 3);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_replay");
	TCase *tc = tcase_create("window");

	tcase_add_checked_fixture(tc, test_setup, NULL);
	tcase_add_test(tc, test_first_and_in_order);
	tcase_add_test(tc, test_first_counter_large);
	tcase_add_test(tc, test_window_edge);
	tcase_add_test(tc, test_window_fills_completely);
	tcase_add_test(tc, test_duplicates);
	tcase_add_test(tc, test_large_jumps);
	tcase_add_test(tc, test_uint64_max);
	suite_add_tcase(s, tc);
	tc = tcase_create("model");
	tcase_add_checked_fixture(tc, test_setup, NULL);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_against_model);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
