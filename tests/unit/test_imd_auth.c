/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Request authentication between a thin client and an intermediary
 * (src/intermediary/imdwire.c, the codec both share) and the server's
 * replay cache (nonces.c): the Authorization header of
 * ferry-intermediary(7) parsed strictly; a signature made by the page's
 * recipe, built here byte by byte independently of the codec, accepted
 * and any change to what it covers refused; the client's header, as the
 * codec signs and writes it, verifying over that recipe and binding the
 * intermediary, method, target, time and nonce; nonces refused again
 * within their time, forgotten after it, and a full cache refusing new
 * ones rather than forgetting old ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "intermediary/imdwire.h"
#include "intermediary/nonces.h"
#include "lib/base32.h"
#include "lib/wire.h"
#include "unit.h"

static struct identity *client;
static const uint8_t imd_id[IMDWIRE_ID_LEN] = { 7, 7, 7 };

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

/* The page's signing input, built here independently of the codec. */
static size_t
signing_input(uint8_t *out, const uint8_t id[32], const char *method,
    const char *target, uint64_t time, const uint8_t n[16])
{
	static const char prefix[] = "ferry intermediary request v1";
	size_t off = 0;

	memcpy(out, prefix, sizeof(prefix)); /* with its NUL */
	off += sizeof(prefix);
	memcpy(out + off, id, 32);
	off += 32;
	memcpy(out + off, method, strlen(method) + 1);
	off += strlen(method) + 1;
	memcpy(out + off, target, strlen(target) + 1);
	off += strlen(target) + 1;
	wire_put64(out + off, time);
	off += 8;
	memcpy(out + off, n, 16);
	return off + 16;
}

/* The header value of the page for method, target, time and nonce,
 * signed and written here without the codec. */
static void
make_header(const char *method, const char *target, uint64_t t,
    const uint8_t nonce[16], char *out, size_t size)
{
	uint8_t m[512], sig[64];
	size_t len = signing_input(m, imd_id, method, target, t, nonce);
	char c[BASE32_LEN(32) + 1], n[BASE32_LEN(16) + 1],
	    s[BASE32_LEN(64) + 1];

	crypto_sign_detached(sig, NULL, m, len, client->sk);
	base32_encode(client->pk, 32, c);
	base32_encode(nonce, 16, n);
	base32_encode(sig, 64, s);
	(void)snprintf(out, size, "Ferry %s:%llu:%s:%s", c,
	    (unsigned long long)t, n, s);
}

/* A header value's four fields, split and decoded without the codec. */
struct fields {
	uint8_t pk[32];
	uint64_t time;
	uint8_t nonce[16];
	uint8_t sig[64];
};

static void
parse(const char *h, struct fields *f)
{
	const char *pre = "Ferry ";
	char client_s[64], nonce_s[64], sig_s[128];

	ck_assert_int_eq(strncmp(h, pre, strlen(pre)), 0);
	ck_assert_int_eq(sscanf(h + strlen(pre),
	                     "%52[0-9A-Z]:%" SCNu64 ":%26[0-9A-Z]:%103[0-9A-Z]",
	                     client_s, &f->time, nonce_s, sig_s),
	    4);
	ck_assert_uint_eq(strlen(h),
	    strlen(pre) + 52 + 1 +
	        (size_t)snprintf(NULL, 0, "%" PRIu64, f->time) + 1 + 26 + 1 +
	        103);
	ck_assert_int_eq(base32_decode(client_s, 52, f->pk, 32), 0);
	ck_assert_int_eq(base32_decode(nonce_s, 26, f->nonce, 16), 0);
	ck_assert_int_eq(base32_decode(sig_s, 103, f->sig, 64), 0);
}

/* Whether f's signature is its key's over the page's signing input for
 * id, method, target, time and nonce. */
static bool
signs(const struct fields *f, const uint8_t id[32], const char *method,
    const char *target, uint64_t t, const uint8_t n[16])
{
	uint8_t m[512];
	size_t len = signing_input(m, id, method, target, t, n);

	return crypto_sign_verify_detached(f->sig, m, len, f->pk) == 0;
}

/* The client's header for method, target, time and nonce, as the codec
 * signs and writes it. */
static int
client_header(const uint8_t id[32], const char *method, const char *target,
    uint64_t t, const uint8_t nonce[16], char *out, size_t size)
{
	struct imdwire_auth a;
	int r = imdwire_auth_sign(client, id, method, target, t, nonce, &a);

	return r < 0 ? r : imdwire_auth_format(&a, out, size);
}

START_TEST(test_signed_request)
{
	uint8_t nonce[16] = { 1, 2, 3 };
	uint8_t other_id[IMDWIRE_ID_LEN] = { 8 };
	char h[512];
	struct imdwire_auth a;

	make_header("GET", "/v1/receipts?after=0&wait=30", 1764150000, nonce, h,
	    sizeof(h));
	ck_assert_int_eq(imdwire_auth_parse(h, strlen(h), &a), 0);
	ck_assert_uint_eq(a.time, 1764150000);
	ck_assert_mem_eq(a.client, client->pk, 32);
	ck_assert_mem_eq(a.nonce, nonce, 16);
	ck_assert_int_eq(imdwire_auth_verify(&a, imd_id, "GET",
	                     "/v1/receipts?after=0&wait=30"),
	    0);
	/* Each part it covers: another intermediary, method, target,
	 * time, nonce. */
	ck_assert_int_eq(imdwire_auth_verify(&a, other_id, "GET",
	                     "/v1/receipts?after=0&wait=30"),
	    -EBADMSG);
	ck_assert_int_eq(imdwire_auth_verify(&a, imd_id, "POST",
	                     "/v1/receipts?after=0&wait=30"),
	    -EBADMSG);
	ck_assert_int_eq(imdwire_auth_verify(&a, imd_id, "GET",
	                     "/v1/receipts?after=1&wait=30"),
	    -EBADMSG);
	a.time++;
	ck_assert_int_eq(imdwire_auth_verify(&a, imd_id, "GET",
	                     "/v1/receipts?after=0&wait=30"),
	    -EBADMSG);
	a.time--;
	a.nonce[15] ^= 1;
	ck_assert_int_eq(imdwire_auth_verify(&a, imd_id, "GET",
	                     "/v1/receipts?after=0&wait=30"),
	    -EBADMSG);
}
END_TEST

START_TEST(test_header_syntax)
{
	uint8_t nonce[16] = { 0 };
	char h[512], bad[600];
	struct imdwire_auth a;
	size_t n;

	make_header("POST", "/v1/blocks", 5, nonce, h, sizeof(h));
	n = strlen(h);
	ck_assert_int_eq(imdwire_auth_parse(h, n, &a), 0);
	/* The scheme is case-insensitive, as HTTP's are. */
	memcpy(bad, h, n + 1);
	memcpy(bad, "fErRy", 5);
	ck_assert_int_eq(imdwire_auth_parse(bad, n, &a), 0);
	ck_assert_int_eq(imdwire_auth_parse(h, n - 1, &a), -EBADMSG);
	(void)snprintf(bad, sizeof(bad), "%s:x", h);
	ck_assert_int_eq(imdwire_auth_parse(bad, strlen(bad), &a), -EBADMSG);
	(void)snprintf(bad, sizeof(bad), "Bearer%s", h + 5);
	ck_assert_int_eq(imdwire_auth_parse(bad, strlen(bad), &a), -EBADMSG);
	ck_assert_int_eq(imdwire_auth_parse("Ferry :::", 9, &a), -EBADMSG);
	ck_assert_int_eq(imdwire_auth_parse("Ferry", 5, &a), -EBADMSG);
	/* TIME: digits only, at most 19 of them. */
	memcpy(bad, h, n + 1);
	bad[6 + 52 + 1] = '-';
	ck_assert_int_eq(imdwire_auth_parse(bad, n, &a), -EBADMSG);
}
END_TEST

/* The client's header verifies over the page's recipe; the server's
 * parse and check take it. */
START_TEST(test_client_header_verifies)
{
	const char *target = "/v1/receipts?after=0&wait=30";
	uint8_t nonce[16];
	char h[IMDWIRE_AUTH_MAX];
	struct imdwire_auth a;
	struct fields f;

	for (size_t i = 0; i < sizeof(nonce); i++)
		nonce[i] = (uint8_t)i;
	ck_assert_int_eq(client_header(imd_id, "GET", target, 1764150000, nonce,
	                     h, sizeof(h)),
	    0);
	parse(h, &f);
	ck_assert_mem_eq(f.pk, client->pk, 32);
	ck_assert_uint_eq(f.time, 1764150000);
	ck_assert_mem_eq(f.nonce, nonce, 16);
	ck_assert(signs(&f, imd_id, "GET", target, 1764150000, nonce));
	ck_assert_int_eq(imdwire_auth_parse(h, strlen(h), &a), 0);
	ck_assert_int_eq(imdwire_auth_verify(&a, imd_id, "GET", target), 0);
}
END_TEST

/* Each bound part changes what the client's signature verifies against. */
START_TEST(test_client_binds_each_part)
{
	uint8_t nonce[16], other[32], n2[16];
	char h[IMDWIRE_AUTH_MAX];
	struct fields f;

	for (size_t i = 0; i < sizeof(nonce); i++)
		nonce[i] = (uint8_t)i;
	ck_assert_int_eq(client_header(imd_id, "POST", "/v1/blocks", 42, nonce,
	                     h, sizeof(h)),
	    0);
	parse(h, &f);
	memcpy(other, imd_id, 32);
	other[31] ^= 1;
	ck_assert(!signs(&f, other, "POST", "/v1/blocks", 42, nonce));
	ck_assert(!signs(&f, imd_id, "GET", "/v1/blocks", 42, nonce));
	ck_assert(!signs(&f, imd_id, "POST", "/v1/fetch", 42, nonce));
	ck_assert(!signs(&f, imd_id, "POST", "/v1/blocks", 43, nonce));
	memcpy(n2, nonce, 16);
	n2[0] ^= 0x80;
	ck_assert(!signs(&f, imd_id, "POST", "/v1/blocks", 42, n2));
	ck_assert(signs(&f, imd_id, "POST", "/v1/blocks", 42, nonce));
}
END_TEST

START_TEST(test_client_bounds)
{
	uint8_t nonce[16] = { 0 };
	char h[IMDWIRE_AUTH_MAX];
	char small[100];
	char target[2048];

	ck_assert_int_eq(client_header(imd_id, "", "/v1/x", 1, nonce, h,
	                     sizeof(h)),
	    -EINVAL);
	ck_assert_int_eq(client_header(imd_id, "GET", "", 1, nonce, h,
	                     sizeof(h)),
	    -EINVAL);
	ck_assert_int_eq(client_header(imd_id, "GET", "/v1/x", 1, nonce, small,
	                     sizeof(small)),
	    -ENOSPC);
	/* The largest time fits IMDWIRE_AUTH_MAX, and not a byte less; a
	 * long target signs too. */
	ck_assert_int_eq(client_header(imd_id, "GET", "/v1/x", UINT64_MAX,
	                     nonce, h, sizeof(h)),
	    0);
	ck_assert_uint_eq(strlen(h) + 1, IMDWIRE_AUTH_MAX);
	ck_assert_int_eq(client_header(imd_id, "GET", "/v1/x", UINT64_MAX,
	                     nonce, h, sizeof(h) - 1),
	    -ENOSPC);
	memset(target, 'a', sizeof(target) - 1);
	target[0] = '/';
	target[sizeof(target) - 1] = '\0';
	ck_assert_int_eq(client_header(imd_id, "GET", target, 1, nonce, h,
	                     sizeof(h)),
	    0);
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
	tcase_add_test(tc, test_client_header_verifies);
	tcase_add_test(tc, test_client_binds_each_part);
	tcase_add_test(tc, test_client_bounds);
	tcase_add_test(tc, test_nonces);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
