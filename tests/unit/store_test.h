/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Helpers of the block store's suites (test_dht_store*.c): blocks whose
 * key is the hash of their bytes, made again from a seed to check them,
 * and puts and gets run to completion on a real event_base.
 */
#ifndef FERRY_TESTS_STORE_TEST_H
#define FERRY_TESTS_STORE_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/event.h>
#include <sodium.h>

#include "dht/store.h"
#include "unit.h"

/* A put's or a get's outcome, filled by the callbacks below. */
struct st_result {
	int calls;       /* times the callback ran: must end at 1 */
	int status;      /* its status */
	uint8_t *data;   /* get: a copy of the bytes (free it) */
	size_t len;      /* get: their length */
	uint64_t expiry; /* get: the block's expiry */
};

static inline void
st_on_done(void *cls, int status)
{
	struct st_result *res = cls;

	res->calls++;
	res->status = status;
}

static inline void
st_on_got(void *cls, int status, const uint8_t *data, size_t len,
    uint64_t expiry)
{
	struct st_result *res = cls;

	res->calls++;
	res->status = status;
	res->len = len;
	res->expiry = expiry;
	free(res->data);
	res->data = NULL;
	if (status == 0) {
		ck_assert_ptr_nonnull(data);
		res->data = malloc(len);
		ck_assert_ptr_nonnull(res->data);
		memcpy(res->data, data, len);
	} else {
		ck_assert_ptr_null(data);
	}
}

/* Runs base until *calls reaches n. */
static inline void
st_run_until(struct event_base *base, const int *calls, int n)
{
	while (*calls < n)
		ck_assert_int_ge(event_base_loop(base, EVLOOP_ONCE), 0);
}

/* Fills data with len bytes made from seed, and key with their hash. */
static inline void
st_block(uint64_t seed, uint8_t *data, size_t len, uint8_t key[STORE_KEY_LEN])
{
	uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < len; i++)
		data[i] = (uint8_t)(unit_rand(&state) >> 32);
	crypto_generichash(key, STORE_KEY_LEN, data, len, NULL, 0);
}

/* Puts and waits for the callback; returns its status. */
static inline int
st_put(struct event_base *base, struct store *st,
    const uint8_t key[STORE_KEY_LEN], const void *data, size_t len,
    uint64_t expiry)
{
	struct st_result res = { 0 };

	ck_assert_int_eq(store_put(st, key, data, len, expiry, st_on_done,
	                     &res),
	    0);
	ck_assert_int_eq(res.calls, 0);
	st_run_until(base, &res.calls, 1);
	ck_assert_int_eq(res.calls, 1);
	return res.status;
}

/* Gets and waits for the callback; res->data is the caller's to free. */
static inline void
st_get(struct event_base *base, struct store *st,
    const uint8_t key[STORE_KEY_LEN], struct st_result *res)
{
	memset(res, 0, sizeof(*res));
	ck_assert_int_eq(store_get(st, key, st_on_got, res), 0);
	ck_assert_int_eq(res->calls, 0);
	st_run_until(base, &res->calls, 1);
	ck_assert_int_eq(res->calls, 1);
}

/* True if the block made from seed, len bytes, is held intact. */
static inline bool
st_check_block(struct event_base *base, struct store *st, uint64_t seed,
    size_t len)
{
	uint8_t key[STORE_KEY_LEN];
	uint8_t *want = malloc(len);
	struct st_result res;
	bool ok;

	ck_assert_ptr_nonnull(want);
	st_block(seed, want, len, key);
	st_get(base, st, key, &res);
	ok = res.status == 0 && res.len == len &&
	    memcmp(res.data, want, len) == 0;
	free(res.data);
	free(want);
	return ok;
}

#endif /* FERRY_TESTS_STORE_TEST_H */
