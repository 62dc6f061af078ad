/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary's request authentication (src/intermediary/auth.c)
 * and replay cache (nonces.c): the Authorization header of
 * ferry-intermediary(7) parsed strictly, a signature made by the page's
 * recipe accepted and any change to what it covers refused; nonces
 * refused again within their time, forgotten after it, and a full cache
 * refusing new ones rather than forgetting old ones.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "intermediary/auth.h"
#include "intermediary/nonces.h"
#include "lib/base32.h"
#include "lib/wire.h"
#include "unit.h"

static struct identity *client;
static const uint8_t imd_id[AUTH_ID_LEN] = { 7, 7, 7 };

static void
setup(void)
{
	uint8_t seed[32];

	ck_assert_int_ge(sodium_init(), 0);
	memset(seed, 0x42, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &client), 0);
}

static void
teardown(void)
{
	identity_free(client);
}

/* The header of the page for method, target, time and nonce. */
static void
make_header(const char *method, const char *target, uint64_t t,
    const uint8_t nonce[16], char *out, size_t size)
{
	uint8_t m[512], sig[64], *p = m;
	char c[BASE32_LEN(32) + 1], n[BASE32_LEN(16) + 1],
	    s[BASE32_LEN(64) + 1];

	memcpy(p, imd_id, 32);
	p += 32;
	memcpy(p, method, strlen(method) + 1);
	p += strlen(method) + 1;
	memcpy(p, target, strlen(target) + 1);
	p += strlen(target) + 1;
	wire_put64(p, t);
	memcpy(p + 8, nonce, 16);
	p += 24;
	identity_sign(client, AUTH_PREFIX, m, (size_t)(p - m), sig);
	base32_encode(client->pk, 32, c);
	base32_encode(nonce, 16, n);
	base32_encode(sig, 64, s);
	(void)snprintf(out, size, "Ferry %s:%llu:%s:%s", c,
	    (unsigned long long)t, n, s);
}

START_TEST(test_signed_request)
{
	uint8_t nonce[16] = { 1, 2, 3 };
	uint8_t other_id[AUTH_ID_LEN] = { 8 };
	char h[512];
	struct auth a;

	make_header("GET", "/v1/receipts?after=0&wait=30", 1764150000, nonce, h,
	    sizeof(h));
	ck_assert_int_eq(auth_parse(h, strlen(h), &a), 0);
	ck_assert_uint_eq(a.time, 1764150000);
	ck_assert_mem_eq(a.client, client->pk, 32);
	ck_assert_mem_eq(a.nonce, nonce, 16);
	ck_assert_int_eq(auth_verify(&a, imd_id, "GET",
	                     "/v1/receipts?after=0&wait=30"),
	    0);
	/* Each part it covers: another intermediary, method, target,
	 * time, nonce. */
	ck_assert_int_eq(auth_verify(&a, other_id, "GET",
	                     "/v1/receipts?after=0&wait=30"),
	    -EBADMSG);
	ck_assert_int_eq(auth_verify(&a, imd_id, "POST",
	                     "/v1/receipts?after=0&wait=30"),
	    -EBADMSG);
	ck_assert_int_eq(auth_verify(&a, imd_id, "GET",
	                     "/v1/receipts?after=1&wait=30"),
	    -EBADMSG);
	a.time++;
	ck_assert_int_eq(auth_verify(&a, imd_id, "GET",
	                     "/v1/receipts?after=0&wait=30"),
	    -EBADMSG);
	a.time--;
	a.nonce[15] ^= 1;
	ck_assert_int_eq(auth_verify(&a, imd_id, "GET",
	                     "/v1/receipts?after=0&wait=30"),
	    -EBADMSG);
}
END_TEST

START_TEST(test_header_syntax)
{
	uint8_t nonce[16] = { 0 };
	char h[512], bad[600];
	struct auth a;
	size_t n;

	make_header("POST", "/v1/blocks", 5, nonce, h, sizeof(h));
	n = strlen(h);
	ck_assert_int_eq(auth_parse(h, n, &a), 0);
	/* The scheme is case-insensitive, as HTTP's are. */
	memcpy(bad, h, n + 1);
	memcpy(bad, "fErRy", 5);
	ck_assert_int_eq(auth_parse(bad, n, &a), 0);
	ck_assert_int_eq(auth_parse(h, n - 1, &a), -EBADMSG);
	(void)snprintf(bad, sizeof(bad), "%s:x", h);
	ck_assert_int_eq(auth_parse(bad, strlen(bad), &a), -EBADMSG);
	(void)snprintf(bad, sizeof(bad), "Bearer%s", h + 5);
	ck_assert_int_eq(auth_parse(bad, strlen(bad), &a), -EBADMSG);
	ck_assert_int_eq(auth_parse("Ferry :::", 9, &a), -EBADMSG);
	ck_assert_int_eq(auth_parse("Ferry", 5, &a), -EBADMSG);
	/* TIME: digits only, at most 19 of them. */
	memcpy(bad, h, n + 1);
	bad[6 + 52 + 1] = '-';
	ck_assert_int_eq(auth_parse(bad, n, &a), -EBADMSG);
}
END_TEST

START_TEST(test_nonces)
{
	struct nonces *n = nonces_new(3);
	uint8_t c1[32] = { 1 }, c2[32] = { 2 }, x[16] = { 9 }, y[16] = { 8 };

	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(nonces_add(n, c1, x, 1000, 100), 0);
	ck_assert_int_eq(nonces_add(n, c1, x, 1050, 100), -EALREADY);
	/* Another client's same nonce is its own. */
	ck_assert_int_eq(nonces_add(n, c2, x, 1050, 100), 0);
	ck_assert_int_eq(nonces_add(n, c1, y, 1060, 100), 0);
	/* Full of nonces in their time: refused, none forgotten. */
	ck_assert_int_eq(nonces_add(n, c2, y, 1070, 100), -ENOBUFS);
	ck_assert_int_eq(nonces_add(n, c1, x, 1099, 100), -EALREADY);
	ck_assert_uint_eq(nonces_count(n), 3);
	/* Past its time the first goes, and makes room. */
	ck_assert_int_eq(nonces_add(n, c2, y, 1100, 100), 0);
	ck_assert_int_eq(nonces_add(n, c1, x, 1101, 100), -ENOBUFS);
	ck_assert_int_eq(nonces_add(n, c1, x, 1151, 100), 0);
	ck_assert_uint_eq(nonces_count(n), 3);
	nonces_free(n);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("imd_auth");
	TCase *tc = tcase_create("auth");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_signed_request);
	tcase_add_test(tc, test_header_syntax);
	tcase_add_test(tc, test_nonces);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
