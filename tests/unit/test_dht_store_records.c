/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The records a storing peer keeps (src/dht/store_records.c) in the real
 * block store: a real SQLite file in a scratch directory, a real
 * event_base and worker thread. Checked: one record per signer, the
 * highest seq; an older or a rival of the same seq refused as stale; the
 * bound per topic and in all, by the keeping rule; expired records
 * neither listed nor counted; and all of it still there after the store
 * is closed and opened again.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/event.h>

#include "core/identity.h"
#include "dht/dhtrec.h"
#include "dht/store.h"
#include "dht/store_records.h"
#include "store_test.h"
#include "unit.h"

#define T_NOW 1800000000ull

static char dir[256];
static struct event_base *base;
static struct identity *ids[6];

/* A list's outcome, values copied. */
struct listed {
	int calls, status;
	size_t n;
	struct dhtrec recs[8];
	uint8_t values[8][DHTREC_VALUE_MAX];
};

static void
on_listed(void *cls, int status, const struct dhtrec *recs, size_t n)
{
	struct listed *l = cls;

	l->calls++;
	l->status = status;
	l->n = n;
	ck_assert_uint_le(n, 8);
	for (size_t i = 0; i < n; i++) {
		l->recs[i] = recs[i];
		memcpy(l->values[i], recs[i].value, recs[i].value_len);
		l->recs[i].value = l->values[i];
		ck_assert_int_eq(dhtrec_verify(&l->recs[i]), 0);
	}
}

static void
test_setup(void)
{
	uint8_t seed[32];

	unit_tmpdir(dir, sizeof(dir));
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	for (int i = 0; i < 6; i++) {
		memset(seed, 0x30 + i, sizeof(seed));
		ck_assert_int_eq(identity_from_seed(seed, &ids[i]), 0);
	}
}

static void
test_teardown(void)
{
	for (int i = 0; i < 6; i++)
		identity_free(ids[i]);
	event_base_free(base);
	unit_rmtree(dir);
}

static struct store *
t_open(void)
{
	uint8_t own[STORE_KEY_LEN] = { 0 };
	struct store *st = NULL;

	ck_assert_int_eq(store_open(base, dir, own, 1u << 20, &st), 0);
	return st;
}

/* A record of signer i at topic t (one byte, repeated). */
static void
t_rec(struct dhtrec *r, uint8_t t, int i, uint64_t seq, uint64_t expiry,
    const char *value)
{
	memset(r, 0, sizeof(*r));
	memset(r->topic.b, t, DHTKEY_LEN);
	r->seq = seq;
	r->expiry = expiry;
	r->value = (const uint8_t *)value;
	r->value_len = strlen(value);
	dhtrec_sign(ids[i], r);
}

/* Puts r with the bounds; the callback's status. */
static int
t_put(struct store *st, const struct dhtrec *r, uint64_t now,
    uint64_t per_topic, uint64_t total)
{
	struct st_result res = { 0 };

	ck_assert_int_eq(store_record_put(st, r, now, per_topic, total,
	                     st_on_done, &res),
	    0);
	ck_assert_int_eq(res.calls, 0);
	st_run_until(base, &res.calls, 1);
	return res.status;
}

static void
t_list(struct store *st, uint8_t t, uint64_t now, struct listed *l)
{
	struct dhtkey topic;

	memset(l, 0, sizeof(*l));
	memset(topic.b, t, DHTKEY_LEN);
	ck_assert_int_eq(store_record_list(st, &topic, now, 8, on_listed, l),
	    0);
	st_run_until(base, &l->calls, 1);
	ck_assert_int_eq(l->status, 0);
}

static bool
t_has(const struct listed *l, int i, const char *value)
{
	for (size_t j = 0; j < l->n; j++)
		if (memcmp(l->recs[j].signer, ids[i]->pk, FERRY_PUBKEY_LEN) ==
		        0 &&
		    l->recs[j].value_len == strlen(value) &&
		    memcmp(l->recs[j].value, value, strlen(value)) == 0)
			return true;
	return false;
}

START_TEST(test_keep_and_reopen)
{
	struct store *st = t_open();
	struct dhtrec r;
	struct listed l;

	t_rec(&r, 1, 0, 10, T_NOW + 100, "a1");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 4, 100), 0);
	/* The same again: held, nothing to write. */
	ck_assert_int_eq(t_put(st, &r, T_NOW, 4, 100), 0);
	t_rec(&r, 1, 0, 11, T_NOW + 100, "a2");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 4, 100), 0);
	t_rec(&r, 1, 0, 9, T_NOW + 900, "a0");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 4, 100), -ESTALE);
	/* Another record under seq 11: the first stays. */
	t_rec(&r, 1, 0, 11, T_NOW + 900, "a2'");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 4, 100), -ESTALE);
	t_rec(&r, 1, 1, 1, T_NOW + 200, "b");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 4, 100), 0);
	t_rec(&r, 2, 2, 1, T_NOW + 5, "other topic, soon gone");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 4, 100), 0);
	t_list(st, 1, T_NOW, &l);
	ck_assert_uint_eq(l.n, 2);
	ck_assert(t_has(&l, 0, "a2"));
	ck_assert(t_has(&l, 1, "b"));
	/* Latest expiring first. */
	ck_assert_uint_eq(l.recs[0].expiry, T_NOW + 200);
	store_free(st);

	st = t_open();
	t_list(st, 1, T_NOW, &l);
	ck_assert_uint_eq(l.n, 2);
	ck_assert(t_has(&l, 0, "a2"));
	ck_assert(t_has(&l, 1, "b"));
	t_list(st, 2, T_NOW, &l);
	ck_assert_uint_eq(l.n, 1);
	t_list(st, 2, T_NOW + 5, &l);
	ck_assert_uint_eq(l.n, 0);
	/* Expired at now: listed no more, and gone from the counts. */
	t_list(st, 1, T_NOW + 150, &l);
	ck_assert_uint_eq(l.n, 1);
	ck_assert(t_has(&l, 1, "b"));
	store_free(st);
}
END_TEST

START_TEST(test_bounds)
{
	struct store *st = t_open();
	struct dhtrec r;
	struct listed l;

	/* Topic 3 holds 2: a third evicts the earliest expiring, if it
	 * outlives it; else it is refused. */
	t_rec(&r, 3, 0, 1, T_NOW + 300, "0");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 2, 4), 0);
	t_rec(&r, 3, 1, 1, T_NOW + 100, "1");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 2, 4), 0);
	t_rec(&r, 3, 2, 1, T_NOW + 50, "2");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 2, 4), -ENOSPC);
	t_rec(&r, 3, 3, 1, T_NOW + 200, "3");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 2, 4), 0);
	t_list(st, 3, T_NOW, &l);
	ck_assert_uint_eq(l.n, 2);
	ck_assert(t_has(&l, 0, "0"));
	ck_assert(t_has(&l, 3, "3"));
	/* 4 in all: topic 4's two fill it, a fifth elsewhere takes the
	 * place of the store's earliest (topic 3's "3"). */
	t_rec(&r, 4, 4, 1, T_NOW + 400, "4");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 2, 4), 0);
	t_rec(&r, 4, 5, 1, T_NOW + 400, "5");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 2, 4), 0);
	t_rec(&r, 5, 1, 1, T_NOW + 150, "early");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 2, 4), -ENOSPC);
	t_rec(&r, 5, 1, 2, T_NOW + 500, "late");
	ck_assert_int_eq(t_put(st, &r, T_NOW, 2, 4), 0);
	t_list(st, 3, T_NOW, &l);
	ck_assert_uint_eq(l.n, 1);
	ck_assert(t_has(&l, 0, "0"));
	t_list(st, 5, T_NOW, &l);
	ck_assert(t_has(&l, 1, "late"));
	store_free(st);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_store_records");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_keep_and_reopen);
	tcase_add_test(tc, test_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
