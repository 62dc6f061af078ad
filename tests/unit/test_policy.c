/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The client socket's credential policy (src/service/policy.c): who is let
 * in and who may SHUTDOWN, the keys' parsing, and the user namespace rule
 * that ids a restricted namespace (systemd's PrivateUsers=) cannot tell
 * apart from unmapped ones are dropped. The sockets are in
 * tests/integration/test_service_policy.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "lib/cfg.h"
#include "lib/log.h"
#include "service/policy.h"
#include "unit.h"

/* A daemon user that is neither root nor the test's own uid. */
#define DAEMON_UID 4300
#define SOCK_GID   4400

static struct unit_log logs;

static void
setup(void)
{
	unit_log_capture(&logs, FERRY_LOG_DEBUG);
}

static void
teardown(void)
{
	unit_log_release();
}

static struct policy
base_policy(void)
{
	struct policy p;

	memset(&p, 0, sizeof(p));
	p.self_uid = DAEMON_UID;
	p.group_write = true;
	p.have_socket_gid = true;
	p.socket_gid = SOCK_GID;
	return p;
}

static struct policy_cred
cred(uid_t uid, gid_t gid, gid_t *groups, size_t n)
{
	struct policy_cred c = { 1234, uid, gid, groups, n };

	return c;
}

static void
ids_set(struct policy_ids *ids, uint32_t a, uint32_t b)
{
	ids->n = 2;
	ids->id[0] = a;
	ids->id[1] = b;
}

START_TEST(test_root_and_self_are_admin)
{
	struct policy p = base_policy();
	struct policy_cred root = cred(0, 0, NULL, 0);
	struct policy_cred self = cred(DAEMON_UID, 1, NULL, 0);
	struct policy_cred other = cred(1000, 1000, NULL, 0);

	ck_assert_int_eq(policy_check(&p, &root), POLICY_ADMIN);
	ck_assert_int_eq(policy_check(&p, &self), POLICY_ADMIN);
	ck_assert_int_eq(policy_check(&p, &other), POLICY_REFUSED);
}
END_TEST

START_TEST(test_socket_group)
{
	struct policy p = base_policy();
	gid_t supp[] = { 27, SOCK_GID };
	struct policy_cred primary = cred(1000, SOCK_GID, NULL, 0);
	struct policy_cred member = cred(1001, 1001, supp, 2);
	struct policy_cred stranger = cred(1002, 1002, supp, 1);

	ck_assert_int_eq(policy_check(&p, &primary), POLICY_CLIENT);
	ck_assert_int_eq(policy_check(&p, &member), POLICY_CLIENT);
	ck_assert_int_eq(policy_check(&p, &stranger), POLICY_REFUSED);
	/* A SOCKET_MODE without group write lets no member in by group. */
	p.group_write = false;
	ck_assert_int_eq(policy_check(&p, &member), POLICY_REFUSED);
	ck_assert_int_eq(policy_check(&p, &primary), POLICY_REFUSED);
	/* Nor does a socket group the namespace cannot tell apart. */
	p.group_write = true;
	p.have_socket_gid = false;
	ck_assert_int_eq(policy_check(&p, &member), POLICY_REFUSED);
}
END_TEST

START_TEST(test_allow_lists)
{
	struct policy p = base_policy();
	gid_t supp[] = { 5000 };
	struct policy_cred listed = cred(2000, 2000, NULL, 0);
	struct policy_cred in_group = cred(2001, 2001, supp, 1);
	struct policy_cred neither = cred(2002, 2002, NULL, 0);

	ck_assert_int_eq(policy_check(&p, &listed), POLICY_REFUSED);
	ids_set(&p.allow_users, 1999, 2000);
	ids_set(&p.allow_groups, 4999, 5000);
	ck_assert_int_eq(policy_check(&p, &listed), POLICY_CLIENT);
	ck_assert_int_eq(policy_check(&p, &in_group), POLICY_CLIENT);
	ck_assert_int_eq(policy_check(&p, &neither), POLICY_REFUSED);
}
END_TEST

START_TEST(test_admin_lists)
{
	struct policy p = base_policy();
	gid_t supp[] = { 6000 };
	struct policy_cred user = cred(3000, SOCK_GID, NULL, 0);
	struct policy_cred member = cred(3001, 3001, supp, 1);

	ck_assert_int_eq(policy_check(&p, &user), POLICY_CLIENT);
	ids_set(&p.admin_users, 3000, 3000);
	ck_assert_int_eq(policy_check(&p, &user), POLICY_ADMIN);
	/* An admin group lets its members in even without other rights. */
	ck_assert_int_eq(policy_check(&p, &member), POLICY_REFUSED);
	ids_set(&p.admin_groups, 6000, 6000);
	ck_assert_int_eq(policy_check(&p, &member), POLICY_ADMIN);
}
END_TEST

START_TEST(test_idmap_full)
{
	struct policy_idmap m;

	ck_assert_int_eq(
	    policy_idmap_parse("         0          0 4294967295\n", 65534, &m),
	    0);
	ck_assert_uint_eq(m.n, 1);
	ck_assert(policy_idmap_usable(&m, 0));
	ck_assert(policy_idmap_usable(&m, 1000));
	/* Nobody is nobody when every id is mapped. */
	ck_assert(policy_idmap_usable(&m, 65534));
	ck_assert(policy_idmap_usable(&m, 4294967294u));
}
END_TEST

/* What systemd's PrivateUsers=yes sets up for a service user 4300. */
START_TEST(test_idmap_private_users)
{
	struct policy_idmap m;
	struct policy_ids ids = { 4, { 0, 1000, 4300, 65534 } };

	ck_assert_int_eq(policy_idmap_parse("0 0 1\n4300 4300 1\n", 65534, &m),
	    0);
	ck_assert(policy_idmap_usable(&m, 0));
	ck_assert(policy_idmap_usable(&m, 4300));
	ck_assert(!policy_idmap_usable(&m, 1000));
	ck_assert(!policy_idmap_usable(&m, 4301));
	ck_assert(!policy_idmap_usable(&m, 65534));
	policy_ids_filter(&ids, &m, "ALLOW_USERS", false);
	ck_assert_uint_eq(ids.n, 2);
	ck_assert_uint_eq(ids.id[0], 0);
	ck_assert_uint_eq(ids.id[1], 4300);
	ck_assert(unit_log_has(&logs, "ALLOW_USERS: uid 1000"));
	ck_assert(unit_log_has(&logs, "ALLOW_USERS: uid 65534"));
	/* A namespace that maps nobody to itself still shows the unmapped
	 * as nobody: it cannot be trusted either. */
	ck_assert_int_eq(policy_idmap_parse("0 0 1\n65534 65534 1\n", 65534,
	                     &m),
	    0);
	ck_assert(!policy_idmap_usable(&m, 65534));
}
END_TEST

START_TEST(test_idmap_malformed)
{
	struct policy_idmap m;

	ck_assert_int_eq(policy_idmap_parse("0 0\n", 65534, &m), -EINVAL);
	ck_assert_int_eq(policy_idmap_parse("0 0 1 x\n", 65534, &m), -EINVAL);
	ck_assert_int_eq(policy_idmap_parse("a b c\n", 65534, &m), -EINVAL);
	ck_assert_int_eq(policy_idmap_parse("4294967295 0 2\n", 65534, &m),
	    -EINVAL);
	ck_assert_int_eq(policy_idmap_parse("0 0 99999999999\n", 65534, &m),
	    -EINVAL);
	/* An empty map (a namespace nobody set up) maps nothing. */
	ck_assert_int_eq(policy_idmap_parse("", 65534, &m), 0);
	ck_assert(!policy_idmap_usable(&m, 0));
}
END_TEST

static struct cfg *
load(const char *text)
{
	struct cfg *cfg = cfg_new();
	static const struct cfg_schema_key keys[] = {
		{ "service", "ALLOW_USERS", "", "" },
		{ "service", "ALLOW_GROUPS", "", "" },
		{ "service", "ADMIN_USERS", "", "" },
		{ "service", "ADMIN_GROUPS", "", "" },
		{ NULL, NULL, NULL, NULL },
	};

	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(cfg_add_schema(cfg, keys), 0);
	ck_assert_int_eq(cfg_load_buffer(cfg, "test.conf", text, strlen(text)),
	    0);
	return cfg;
}

START_TEST(test_parse)
{
	struct cfg *cfg = load("[service]\n"
	                       "ALLOW_USERS = root, 4711\n"
	                       "ALLOW_GROUPS = root 4712\n"
	                       "ADMIN_USERS = 4713\n");
	struct policy p;

	ck_assert_int_eq(policy_parse(cfg, 0660, &p), 0);
	ck_assert_uint_eq(p.self_uid, geteuid());
	ck_assert(p.group_write);
	ck_assert(!p.have_socket_gid);
	ck_assert_uint_eq(p.allow_users.n, 2);
	ck_assert_uint_eq(p.allow_users.id[0], 0);
	ck_assert_uint_eq(p.allow_users.id[1], 4711);
	ck_assert_uint_eq(p.allow_groups.n, 2);
	ck_assert_uint_eq(p.allow_groups.id[1], 4712);
	ck_assert_uint_eq(p.admin_users.n, 1);
	ck_assert_uint_eq(p.admin_groups.n, 0);
	cfg_free(cfg);
	cfg = load("");
	ck_assert_int_eq(policy_parse(cfg, 0600, &p), 0);
	ck_assert(!p.group_write);
	ck_assert_uint_eq(p.allow_users.n + p.allow_groups.n + p.admin_users.n +
	        p.admin_groups.n,
	    0);
	cfg_free(cfg);
}
END_TEST

START_TEST(test_parse_errors)
{
	static const char *const bad[] = {
		"[service]\nALLOW_USERS = no-such-user-ferry-test\n",
		"[service]\nADMIN_GROUPS = no-such-group-ferry-test\n",
		"[service]\nALLOW_USERS = 4294967295\n",
		"[service]\nALLOW_GROUPS = 12x\n",
	};
	struct policy p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cfg *cfg = load(bad[i]);

		ck_assert_int_eq(policy_parse(cfg, 0660, &p), -EINVAL);
		ck_assert_msg(strstr(cfg_error(cfg), "test.conf:2") != NULL,
		    "error without its line: %s", cfg_error(cfg));
		cfg_free(cfg);
	}
}
END_TEST

START_TEST(test_parse_too_many)
{
	char text[2048] = "[service]\nALLOW_USERS =";
	struct policy p;
	struct cfg *cfg;

	for (int i = 0; i <= POLICY_IDS_MAX; i++) {
		char word[16];

		(void)snprintf(word, sizeof(word), " %d", 10000 + i);
		(void)strcat(text, word);
	}
	(void)strcat(text, "\n");
	cfg = load(text);
	ck_assert_int_eq(policy_parse(cfg, 0660, &p), -EINVAL);
	ck_assert(strstr(cfg_error(cfg), "more than") != NULL);
	cfg_free(cfg);
}
END_TEST

static Suite *
policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("policy");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_root_and_self_are_admin);
	tcase_add_test(tc, test_socket_group);
	tcase_add_test(tc, test_allow_lists);
	tcase_add_test(tc, test_admin_lists);
	tcase_add_test(tc, test_idmap_full);
	tcase_add_test(tc, test_idmap_private_users);
	tcase_add_test(tc, test_idmap_malformed);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_parse_errors);
	tcase_add_test(tc, test_parse_too_many);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(policy_suite());
}
