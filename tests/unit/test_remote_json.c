/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The JSON bodies of ferry-intermediary(7) as the thin client reads them
 * (src/remote/remote_json.c): the page's examples parse to what they say,
 * and a body that breaks the page in any member is refused whole.
 */
/* unit-link: ferry_remote */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "lib/base32.h"
#include "remote/remote_int.h"
#include "unit.h"

static char peer[53], other[53], key[53], ph[53], sig[104];

static void
setup(void)
{
	uint8_t b[64];

	memset(b, 1, 32);
	base32_encode(b, 32, peer);
	memset(b, 2, 32);
	base32_encode(b, 32, other);
	memset(b, 3, 32);
	base32_encode(b, 32, key);
	memset(b, 4, 32);
	base32_encode(b, 32, ph);
	memset(b, 5, 64);
	base32_encode(b, 64, sig);
}

static int
receipts(const char *body, uint64_t *cursor, struct remote_entry **list,
    size_t *n)
{
	bool more;

	return remote_json_receipts(body, strlen(body), cursor, &more, list, n);
}

START_TEST(test_receipts_page)
{
	char body[2048];
	struct remote_entry *list;
	uint64_t cursor;
	size_t n;

	(void)snprintf(body, sizeof(body),
	    "{\"cursor\": 8, \"more\": false, \"entries\": ["
	    "{\"cursor\": 7, \"type\": \"receipt\", \"key\": \"%s\", "
	    "\"put_hash\": \"%s\", \"storer\": \"%s\", \"expiry\": 1790000000, "
	    "\"sig\": \"%s\"},"
	    "{\"cursor\": 8, \"type\": \"done\", \"key\": \"%s\", "
	    "\"put_hash\": \"%s\", \"status\": \"partial\", \"receipts\": 2}]}",
	    key, ph, other, sig, key, ph);
	ck_assert_int_eq(receipts(body, &cursor, &list, &n), 0);
	ck_assert_uint_eq(cursor, 8);
	ck_assert_uint_eq(n, 2);
	ck_assert(!list[0].done);
	ck_assert_uint_eq(list[0].key[0], 3);
	ck_assert_uint_eq(list[0].put_hash[31], 4);
	ck_assert_uint_eq(list[0].storer_pk[5], 2);
	ck_assert_uint_eq(list[0].sig[63], 5);
	ck_assert_uint_eq(list[0].expiry, 1790000000);
	ck_assert(list[1].done);
	ck_assert_str_eq(list[1].status, "partial");
	ck_assert_uint_eq(list[1].receipts, 2);
	free(list);
	/* Cursors not growing, or the page's not the last one's. */
	(void)snprintf(body, sizeof(body),
	    "{\"cursor\": 9, \"more\": false, \"entries\": ["
	    "{\"cursor\": 9, \"type\": \"done\", \"key\": \"%s\", "
	    "\"put_hash\": \"%s\", \"status\": \"ok\", \"receipts\": 2}]}",
	    key, ph);
	ck_assert_int_eq(receipts(body, &cursor, &list, &n), 0);
	free(list);
	body[11] = '8';
	ck_assert_int_eq(receipts(body, &cursor, &list, &n), -EBADMSG);
}
END_TEST

START_TEST(test_receipts_refused)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{\"cursor\": -1, \"more\": false, \"entries\": []}",
		"{\"cursor\": 1, \"more\": 0, \"entries\": []}",
		"{\"cursor\": 1, \"more\": false}",
		"{\"cursor\": 1, \"more\": false, \"entries\": [1]}",
		"{\"cursor\": 1, \"more\": false, \"entries\": []} x",
		"{\"cursor\": 1, \"more\": false, \"entries\": []",
		"{\"cursor\": 1.5, \"more\": false, \"entries\": []}",
	};
	struct remote_entry *list;
	uint64_t cursor;
	char body[1024];
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(receipts(bad[i], &cursor, &list, &n) == -EBADMSG,
		    "accepted %s", bad[i]);
	/* A key one character short, an unknown type. */
	(void)snprintf(body, sizeof(body),
	    "{\"cursor\": 1, \"more\": false, \"entries\": [{\"cursor\": 1, "
	    "\"type\": \"done\", \"key\": \"%.51s\", \"put_hash\": \"%s\", "
	    "\"status\": \"ok\", \"receipts\": 1}]}",
	    key, ph);
	ck_assert_int_eq(receipts(body, &cursor, &list, &n), -EBADMSG);
	(void)snprintf(body, sizeof(body),
	    "{\"cursor\": 1, \"more\": false, \"entries\": [{\"cursor\": 1, "
	    "\"type\": \"gift\", \"key\": \"%s\", \"put_hash\": \"%s\"}]}",
	    key, ph);
	ck_assert_int_eq(receipts(body, &cursor, &list, &n), -EBADMSG);
	ck_assert_int_eq(receipts("{\"cursor\": 5, \"more\": true, "
	                          "\"entries\": []} \n",
	                     &cursor, &list, &n),
	    0);
	ck_assert_uint_eq(cursor, 5);
	free(list);
}
END_TEST

START_TEST(test_intermediaries)
{
	struct remote_imd self, *list;
	char body[1024];
	size_t n;

	(void)snprintf(body, sizeof(body),
	    "{\"self\": {\"peer\": \"%s\", \"url\": \"https://a:1\"}, "
	    "\"intermediaries\": [{\"peer\": \"%s\", \"url\": \"https://b:2\", "
	    "\"expires\": 99}]}",
	    peer, other);
	ck_assert_int_eq(remote_json_imds(body, strlen(body), &self, &list, &n),
	    0);
	ck_assert(self.self);
	ck_assert_str_eq(self.peer, peer);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(list[0].url, "https://b:2");
	ck_assert_uint_eq(list[0].expires, 99);
	free(list);
	/* Another intermediary is only ever reached over HTTPS. */
	(void)snprintf(body, sizeof(body),
	    "{\"self\": {\"peer\": \"%s\", \"url\": \"\"}, "
	    "\"intermediaries\": [{\"peer\": \"%s\", \"url\": \"http://b:2\", "
	    "\"expires\": 99}]}",
	    peer, other);
	ck_assert_int_eq(remote_json_imds(body, strlen(body), &self, &list, &n),
	    -EBADMSG);
}
END_TEST

START_TEST(test_relays_and_errors)
{
	struct remote_relay *list;
	char body[1024], token[16];
	size_t n;

	(void)snprintf(body, sizeof(body),
	    "{\"relayed\": 0, \"refused\": 1, \"records\": [{\"key\": \"%s\", "
	    "\"put_hash\": \"%s\", \"status\": \"bad-signature\"}]}",
	    key, ph);
	ck_assert_int_eq(remote_json_relays(body, strlen(body), &list, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(list[0].status, "bad-signature");
	free(list);
	remote_json_error("{\"error\": \"stale\", \"message\": \"x\"}", 35,
	    token, sizeof(token));
	ck_assert_str_eq(token, "stale");
	remote_json_error("<html>", 6, token, sizeof(token));
	ck_assert_str_eq(token, "");
	remote_json_error("{\"error\": \"aaaaaaaaaaaaaaaaaaaaaaaa\"}", 36,
	    token, sizeof(token));
	ck_assert_str_eq(token, "");
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("remote_json");
	TCase *tc = tcase_create("json");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_receipts_page);
	tcase_add_test(tc, test_receipts_refused);
	tcase_add_test(tc, test_intermediaries);
	tcase_add_test(tc, test_relays_and_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
