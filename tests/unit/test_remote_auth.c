/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The thin client's Authorization header (src/remote/remote_auth.c):
 * its signature verifies over ferry-intermediary(7)'s signing input as
 * this test builds it, byte by byte, and binds the intermediary, method,
 * target, time and nonce.
 */
/* unit-link: ferry_remote */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "lib/base32.h"
#include "lib/wire.h"
#include "remote/remote_int.h"
#include "unit.h"

static struct identity *client;
static uint8_t imd[32], nonce[REMOTE_NONCE_LEN];

static void
setup(void)
{
	uint8_t seed[32];

	memset(seed, 7, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &client), 0);
	memset(imd, 0xa5, sizeof(imd));
	for (size_t i = 0; i < sizeof(nonce); i++)
		nonce[i] = (uint8_t)i;
}

static void
teardown(void)
{
	identity_free(client);
}

/* The header's four fields, split and decoded. */
struct fields {
	uint8_t pk[32];
	uint64_t time;
	uint8_t nonce[REMOTE_NONCE_LEN];
	uint8_t sig[64];
};

static void
parse(const char *h, struct fields *f)
{
	const char *pre = "Authorization: Ferry ";
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

/* The page's signing input, built here independently of the client. */
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

START_TEST(test_header_verifies)
{
	const char *target = "/v1/receipts?after=0&wait=30";
	char h[REMOTE_AUTH_MAX];
	uint8_t m[512];
	struct fields f;
	size_t len;

	ck_assert_int_eq(remote_auth_header(client, imd, "GET", target,
	                     1764150000, nonce, h, sizeof(h)),
	    0);
	parse(h, &f);
	ck_assert_mem_eq(f.pk, client->pk, 32);
	ck_assert_uint_eq(f.time, 1764150000);
	ck_assert_mem_eq(f.nonce, nonce, 16);
	len = signing_input(m, imd, "GET", target, 1764150000, nonce);
	ck_assert_int_eq(crypto_sign_verify_detached(f.sig, m, len, f.pk), 0);
}
END_TEST

/* Each bound part changes what the signature verifies against. */
START_TEST(test_binds_each_part)
{
	char h[REMOTE_AUTH_MAX];
	uint8_t m[512], other[32], n2[16];
	struct fields f;
	size_t len;

	ck_assert_int_eq(remote_auth_header(client, imd, "POST", "/v1/blocks",
	                     42, nonce, h, sizeof(h)),
	    0);
	parse(h, &f);
	memcpy(other, imd, 32);
	other[31] ^= 1;
	len = signing_input(m, other, "POST", "/v1/blocks", 42, nonce);
	ck_assert_int_ne(crypto_sign_verify_detached(f.sig, m, len, f.pk), 0);
	len = signing_input(m, imd, "GET", "/v1/blocks", 42, nonce);
	ck_assert_int_ne(crypto_sign_verify_detached(f.sig, m, len, f.pk), 0);
	len = signing_input(m, imd, "POST", "/v1/fetch", 42, nonce);
	ck_assert_int_ne(crypto_sign_verify_detached(f.sig, m, len, f.pk), 0);
	len = signing_input(m, imd, "POST", "/v1/blocks", 43, nonce);
	ck_assert_int_ne(crypto_sign_verify_detached(f.sig, m, len, f.pk), 0);
	memcpy(n2, nonce, 16);
	n2[0] ^= 0x80;
	len = signing_input(m, imd, "POST", "/v1/blocks", 42, n2);
	ck_assert_int_ne(crypto_sign_verify_detached(f.sig, m, len, f.pk), 0);
	len = signing_input(m, imd, "POST", "/v1/blocks", 42, nonce);
	ck_assert_int_eq(crypto_sign_verify_detached(f.sig, m, len, f.pk), 0);
}
END_TEST

START_TEST(test_bounds)
{
	char h[REMOTE_AUTH_MAX];
	char small[100];
	char target[2048];

	ck_assert_int_eq(remote_auth_header(client, imd, "", "/v1/x", 1, nonce,
	                     h, sizeof(h)),
	    -EINVAL);
	ck_assert_int_eq(remote_auth_header(client, imd, "GET", "", 1, nonce, h,
	                     sizeof(h)),
	    -EINVAL);
	ck_assert_int_eq(remote_auth_header(client, imd, "GET", "/v1/x", 1,
	                     nonce, small, sizeof(small)),
	    -ENOSPC);
	/* The largest time fits REMOTE_AUTH_MAX; a long target signs too. */
	ck_assert_int_eq(remote_auth_header(client, imd, "GET", "/v1/x",
	                     UINT64_MAX, nonce, h, sizeof(h)),
	    0);
	memset(target, 'a', sizeof(target) - 1);
	target[0] = '/';
	target[sizeof(target) - 1] = '\0';
	ck_assert_int_eq(remote_auth_header(client, imd, "GET", target, 1,
	                     nonce, h, sizeof(h)),
	    0);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("remote_auth");
	TCase *tc = tcase_create("auth");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_header_verifies);
	tcase_add_test(tc, test_binds_each_part);
	tcase_add_test(tc, test_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
