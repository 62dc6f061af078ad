/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The file URI (src/storage/uri.c): round trips at the edges of size,
 * either case; every single mistyped character, every swap of neighbours
 * and every dropped or added character is refused with a reason, as are
 * peer URIs, other kinds and versions, and malformed sizes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "storage/manifest.h"
#include "storage/uri.h"
#include "unit.h"

static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

static void
make_ref(struct storage_ref *ref, uint64_t size, uint64_t seed)
{
	for (size_t i = 0; i < DHTKEY_LEN; i++)
		ref->block.b[i] = (uint8_t)unit_rand(&seed);
	for (size_t i = 0; i < STORAGE_KEY_LEN; i++)
		ref->key[i] = (uint8_t)unit_rand(&seed);
	ref->len = size;
}

static void
expect_bad(const char *uri, const char *what)
{
	struct storage_ref ref;
	const char *why = NULL;

	memset(&ref, 0xee, sizeof(ref));
	ck_assert_int_eq(storage_uri_parse(uri, &ref, &why), -EINVAL);
	ck_assert_ptr_nonnull(why);
	ck_assert_msg(strstr(why, what) != NULL, "%s: \"%s\" lacks \"%s\"", uri,
	    why, what);
	/* Not written on failure. */
	for (size_t i = 0; i < sizeof(ref); i++)
		ck_assert_uint_eq(((uint8_t *)&ref)[i], 0xee);
}

START_TEST(test_round_trip)
{
	static const uint64_t sizes[] = { 0, 1, 1023, 1024, 1025,
		UINT64_C(1) << 32, MANIFEST_FILE_MAX };
	char buf[STORAGE_URI_MAX], lower[STORAGE_URI_MAX];

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct storage_ref ref, got;
		int n;

		make_ref(&ref, sizes[k], k + 1);
		n = storage_uri_format(&ref, buf, sizeof(buf));
		ck_assert_int_gt(n, 0);
		ck_assert_uint_eq(strlen(buf), (size_t)n);
		ck_assert_int_lt(n, STORAGE_URI_MAX);
		ck_assert(strncmp(buf, "ferry:f1.", 9) == 0);
		ck_assert_int_eq(storage_uri_parse(buf, &got, NULL), 0);
		ck_assert_mem_eq(&got, &ref, sizeof(ref));
		/* Either case reads the same. */
		for (int i = 0; i <= n; i++)
			lower[i] = (char)((buf[i] >= 'A' && buf[i] <= 'Z')
			        ? buf[i] - 'A' + 'a'
			        : buf[i]);
		memset(&got, 0, sizeof(got));
		ck_assert_int_eq(storage_uri_parse(lower, &got, NULL), 0);
		ck_assert_mem_eq(&got, &ref, sizeof(ref));
	}
}
END_TEST

START_TEST(test_format_limits)
{
	struct storage_ref ref;
	char buf[STORAGE_URI_MAX];
	int n;

	make_ref(&ref, 12345, 9);
	n = storage_uri_format(&ref, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(storage_uri_format(&ref, buf, (size_t)n), -ENOSPC);
	ck_assert_int_eq(storage_uri_format(&ref, buf, (size_t)n + 1), n);
	ref.len = MANIFEST_FILE_MAX + 1;
	ck_assert_int_eq(storage_uri_format(&ref, buf, sizeof(buf)), -EINVAL);
}
END_TEST

/* Every character of DATA replaced by every other value, every pair of
 * neighbours swapped, every digit of SIZE changed: all refused. */
START_TEST(test_typos)
{
	struct storage_ref ref;
	char uri[STORAGE_URI_MAX], bad[STORAGE_URI_MAX + 1];
	size_t n, data;

	make_ref(&ref, 987654321, 3);
	n = (size_t)storage_uri_format(&ref, uri, sizeof(uri));
	data = strrchr(uri, '.') - uri + 1;
	ck_assert_uint_eq(n - data, 109);
	for (size_t i = data; i < n; i++) {
		for (size_t a = 0; a < 32; a++) {
			if (alphabet[a] == uri[i])
				continue;
			memcpy(bad, uri, n + 1);
			bad[i] = alphabet[a];
			expect_bad(bad, i + 1 == n ? "" : "mistyped");
		}
	}
	for (size_t i = data; i + 1 < n; i++) {
		if (uri[i] == uri[i + 1])
			continue;
		memcpy(bad, uri, n + 1);
		bad[i] = uri[i + 1];
		bad[i + 1] = uri[i];
		expect_bad(bad, "");
	}
	for (size_t i = 9; i < data - 1; i++) {
		memcpy(bad, uri, n + 1);
		/* 9 becomes 1, not 0: a leading zero is another error. */
		bad[i] = bad[i] == '9' ? '1' : (char)(bad[i] + 1);
		expect_bad(bad, "mistyped");
	}
	/* A character dropped, added, or not base32. */
	memcpy(bad, uri, n + 1);
	bad[n - 1] = '\0';
	expect_bad(bad, "too short");
	memcpy(bad, uri, n + 1);
	memmove(bad + data + 1, bad + data + 2, n - data - 1);
	expect_bad(bad, "too short");
	memcpy(bad, uri, n + 1);
	bad[n] = '0';
	bad[n + 1] = '\0';
	expect_bad(bad, "too long");
	memcpy(bad, uri, n + 1);
	bad[data + 5] = 'U';
	expect_bad(bad, "base32 does not use");
	memcpy(bad, uri, n + 1);
	bad[data + 5] = ' ';
	expect_bad(bad, "base32 does not use");
}
END_TEST

START_TEST(test_not_ours)
{
	struct storage_ref ref;
	char uri[STORAGE_URI_MAX], bad[STORAGE_URI_MAX + 8];
	const char *data;

	make_ref(&ref, 42, 4);
	ck_assert_int_gt(storage_uri_format(&ref, uri, sizeof(uri)), 0);
	data = strrchr(uri, '.') + 1;
	expect_bad("", "must begin with ferry:");
	expect_bad("http://example.org/x", "must begin with ferry:");
	expect_bad("ferry://0123@udp:127.0.0.1:2086", "a peer URI");
	expect_bad("ferry:", "not a file URI");
	expect_bad("ferry:d1.42.XYZ", "not a file URI");
	(void)snprintf(bad, sizeof(bad), "ferry:f2.42.%s", data);
	expect_bad(bad, "version this ferry does not read");
	(void)snprintf(bad, sizeof(bad), "ferry:f99999999999999999999999.42.%s",
	    data);
	expect_bad(bad, "version this ferry does not read");
	(void)snprintf(bad, sizeof(bad), "ferry:f.42.%s", data);
	expect_bad(bad, "version number");
	(void)snprintf(bad, sizeof(bad), "ferry:f1.042.%s", data);
	expect_bad(bad, "malformed size");
	(void)snprintf(bad, sizeof(bad), "ferry:f1..%s", data);
	expect_bad(bad, "malformed size");
	(void)snprintf(bad, sizeof(bad), "ferry:f1.-42.%s", data);
	expect_bad(bad, "malformed size");
	(void)snprintf(bad, sizeof(bad), "ferry:f1.42%s", data);
	expect_bad(bad, "malformed size");
	(void)snprintf(bad, sizeof(bad), "ferry:f1.281474976710657.%s", data);
	expect_bad(bad, "larger than any ferry file");
	(void)snprintf(bad, sizeof(bad), "ferry:f1.99999999999999999999999.%s",
	    data);
	expect_bad(bad, "larger than any ferry file");
	(void)snprintf(bad, sizeof(bad), " %s", uri);
	expect_bad(bad, "must begin with ferry:");
	(void)snprintf(bad, sizeof(bad), "%s\n", uri);
	expect_bad(bad, "too long");
	ck_assert_int_eq(storage_uri_parse(NULL, &ref, NULL), -EINVAL);
	/* The scheme in capitals is the same scheme. */
	(void)snprintf(bad, sizeof(bad), "FERRY:F1.42.%s", data);
	ck_assert_int_eq(storage_uri_parse(bad, &ref, NULL), 0);
	ck_assert_uint_eq(ref.len, 42);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("storage_uri");
	TCase *tc = tcase_create("uri");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_format_limits);
	tcase_add_test(tc, test_typos);
	tcase_add_test(tc, test_not_ours);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
