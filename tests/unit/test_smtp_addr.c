/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * HELO addresses of the SMTP transport, plugins/smtp/smtp_addr.c: the
 * form of e-mail addresses (nothing that could inject SMTP commands or
 * headers), the binary HELO form, the blacklist and the key of the
 * per-destination cap. Sources compiled in, as the plugin is not linked.
 */
#include <errno.h>
#include <string.h>

#include <check.h>

#include "unit.h"

#include "../../plugins/smtp/smtp_base64.c"
#include "../../plugins/smtp/smtp_mime.c"
#include "../../plugins/smtp/smtp_addr.c"

static int
check(const char *mail)
{
	return smtp_addr_check_mail(mail, strlen(mail));
}

START_TEST(mail_forms)
{
	static const char *const good[] = { "peer1@localhost", "a@b",
		"first.last@example.org", "x+tag@mail.example.co.uk",
		"a#%*=?^_~-b@x-y.example", "0@1.2.3.4" };
	static const char *const bad[] = { "", "@", "a@", "@b", "ab", "a@@b",
		"a@b@c", ".a@b", "a.@b", "a..b@c", "a b@c", "a@b c", "<a@b>",
		"a@b>", "a\r\n@b", "a@b\r\nRCPT TO:<v@x>", "|cmd@x",
		"/etc/passwd@x", "\"q\"@x", "a'b@x", "a`b@x", "a$b@x",
		"a@[127.0.0.1]", "a@-b.c", "a@b-.c", "a@b..c", "a@b.", "a@.b",
		"a@b_c", "\xc3\xa9@x", "a\0b@c" };
	char longlocal[80], longlabel[80], longmail[300];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(check(good[i]) == 0, "refused '%s'", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(check(bad[i]) == -EINVAL, "accepted '%s'",
		    bad[i]);
	ck_assert_int_eq(smtp_addr_check_mail("a\0b@c", 5), -EINVAL);
	memset(longlocal, 'l', 65);
	strcpy(longlocal + 65, "@x");
	ck_assert_int_eq(check(longlocal), -EINVAL);
	strcpy(longlocal + 64, "@x");
	ck_assert_int_eq(check(longlocal), 0);
	strcpy(longlabel, "a@");
	memset(longlabel + 2, 'd', 64);
	longlabel[66] = '\0';
	ck_assert_int_eq(check(longlabel), -EINVAL);
	longlabel[65] = '\0';
	ck_assert_int_eq(check(longlabel), 0);
	/* 255 characters in all is one too many */
	strcpy(longmail, "a@");
	for (size_t i = 2; i < 255; i += 2)
		memcpy(longmail + i, "d.", 2);
	longmail[254] = 'd';
	longmail[255] = '\0';
	ck_assert_int_eq(check(longmail), -EINVAL);
	longmail[254] = '\0';
	longmail[253] = 'd';
	ck_assert_int_eq(check(longmail), 0);
}
END_TEST

START_TEST(helo_form)
{
	uint8_t out[SMTP_ADDR_MAX];
	struct smtp_addr a;
	char text[600];
	size_t len;

	ck_assert_int_eq(smtp_addr_encode("peer1@localhost", 15, "X-Ferry: abc",
	                     12, out, sizeof(out), &len),
	    0);
	ck_assert_uint_eq(len, 1 + 15 + 12);
	ck_assert_uint_eq(out[0], 15);
	ck_assert_mem_eq(out + 1, "peer1@localhostX-Ferry: abc", 27);
	ck_assert_int_eq(smtp_addr_decode(out, len, &a), 0);
	ck_assert_str_eq(a.mail, "peer1@localhost");
	ck_assert_str_eq(a.filter, "X-Ferry: abc");
	ck_assert_int_eq(smtp_addr_format(out, len, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "peer1@localhost [X-Ferry: abc]");
	ck_assert_int_eq(smtp_addr_format(out, len, text, 10), -ENOSPC);
	/* too small, bad parts */
	ck_assert_int_eq(smtp_addr_encode("peer1@localhost", 15, "X-Ferry: abc",
	                     12, out, 27, &len),
	    -ENOSPC);
	ck_assert_int_eq(smtp_addr_encode("peer1@", 6, "X-Ferry: abc", 12, out,
	                     sizeof(out), &len),
	    -EINVAL);
	ck_assert_int_eq(smtp_addr_encode("p@x", 3, "From: me", 8, out,
	                     sizeof(out), &len),
	    -EINVAL);
	/* malformed HELO forms */
	ck_assert_int_eq(smtp_addr_decode(out, 0, &a), -EINVAL);
	ck_assert_int_eq(smtp_addr_decode("\x10"
	                                  "p@x",
	                     4, &a),
	    -EINVAL);
	ck_assert_int_eq(smtp_addr_decode("\x03"
	                                  "p@x",
	                     4, &a),
	    -EINVAL);
	ck_assert_int_eq(smtp_addr_decode("\x03"
	                                  "p@xX-A: b",
	                     10, &a),
	    0);
	ck_assert_int_eq(smtp_addr_decode("\x03"
	                                  "p@xX-A: b\n",
	                     11, &a),
	    -EINVAL);
	ck_assert_int_eq(smtp_addr_decode("\x00"
	                                  "X-A: b",
	                     7, &a),
	    -EINVAL);
	ck_assert_int_eq(smtp_addr_format("\x03"
	                                  "p@x",
	                     4, text, sizeof(text)),
	    -EINVAL);
}
END_TEST

START_TEST(blacklist)
{
	const char *list = "list@example.org, @example.net  @Bad.Example";

	ck_assert(smtp_addr_listed(list, "list@example.org", 16));
	ck_assert(smtp_addr_listed(list, "LIST@Example.ORG", 16));
	ck_assert(!smtp_addr_listed(list, "other@example.org", 17));
	ck_assert(smtp_addr_listed(list, "x@example.net", 13));
	ck_assert(smtp_addr_listed(list, "x@sub.example.net", 17));
	ck_assert(!smtp_addr_listed(list, "x@notexample.net", 16));
	ck_assert(smtp_addr_listed(list, "x@bad.example", 13));
	ck_assert(!smtp_addr_listed("", "x@bad.example", 13));
	ck_assert_int_eq(smtp_addr_check_list(list), 0);
	ck_assert_int_eq(smtp_addr_check_list(""), 0);
	ck_assert_int_eq(smtp_addr_check_list("@"), -EINVAL);
	ck_assert_int_eq(smtp_addr_check_list("a@b nope"), -EINVAL);
	ck_assert_int_eq(smtp_addr_check_list("@-x.org"), -EINVAL);
}
END_TEST

START_TEST(budget_key)
{
	char key[64];

	ck_assert_uint_eq(smtp_addr_budget_key("Peer1+tag@LocalHost", 19, key),
	    15);
	ck_assert_str_eq(key, "peer1@localhost");
	ck_assert_uint_eq(smtp_addr_budget_key("a+b+c@x", 7, key), 3);
	ck_assert_str_eq(key, "a@x");
	ck_assert_uint_eq(smtp_addr_budget_key("a@x+y", 5, key), 5);
	ck_assert_str_eq(key, "a@x+y");
	ck_assert_str_eq(smtp_addr_domain("a@x.org", 7), "x.org");
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("smtp_addr");
	TCase *tc = tcase_create("smtp_addr");

	tcase_add_test(tc, mail_forms);
	tcase_add_test(tc, helo_form);
	tcase_add_test(tc, blacklist);
	tcase_add_test(tc, budget_key);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
