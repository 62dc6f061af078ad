/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The thin client's config directory (src/remote/remote_dir.c and
 * remote_open()): made 0700 with a 0600 key and secret, the same key on
 * every open, looser modes refused; its lists and cursors.
 */
/* unit-link: ferry_remote */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "core/identity.h"
#include "lib/log.h"
#include "remote/remote_int.h"
#include "unit.h"

static char tmp[256], dir[512];
static struct unit_log test_log;

static void
setup(void)
{
	unit_tmpdir(tmp, sizeof(tmp));
	(void)snprintf(dir, sizeof(dir), "%s/cfg/ferry/remote", tmp);
	unit_log_capture(&test_log, FERRY_LOG_DEBUG);
}

static void
teardown(void)
{
	unit_log_release();
	unit_rmtree(tmp);
}

static mode_t
mode_of(const char *name)
{
	char path[1024];
	struct stat st;

	(void)snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static int
open_at(const char *d, struct remote **ret)
{
	struct remote_opts o = { .dir = d };

	return remote_open(&o, ret);
}

START_TEST(test_created_private)
{
	struct remote *a = NULL, *b = NULL;
	char path[1024];
	struct stat st;

	ck_assert_int_eq(open_at(dir, &a), 0);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_uint_eq(mode_of(REMOTE_KEY_FILE), 0600);
	ck_assert_uint_eq(mode_of(REMOTE_SECRET_FILE), 0600);
	ck_assert_int_eq(open_at(dir, &b), 0);
	ck_assert_mem_eq(a->key->pk, b->key->pk, 32);
	remote_free(a);
	remote_free(b);
	/* The default is under $XDG_CONFIG_HOME. */
	(void)snprintf(path, sizeof(path), "%s/cfg", tmp);
	ck_assert_int_eq(setenv("XDG_CONFIG_HOME", path, 1), 0);
	ck_assert_int_eq(open_at(NULL, &a), 0);
	ck_assert_str_eq(a->dir, dir);
	remote_free(a);
	remote_free(NULL);
}
END_TEST

START_TEST(test_loose_modes_refused)
{
	static const char *const files[] = { REMOTE_KEY_FILE,
		REMOTE_SECRET_FILE };
	struct remote *rc = NULL;
	char path[1024];

	ck_assert_int_eq(open_at(dir, &rc), 0);
	remote_free(rc);
	rc = NULL;
	ck_assert_int_eq(chmod(dir, 0750), 0);
	ck_assert_int_eq(open_at(dir, &rc), -EPERM);
	ck_assert_ptr_null(rc);
	ck_assert_ptr_nonnull(strstr(remote_open_error(), "mode 0700"));
	ck_assert_int_eq(chmod(dir, 0700), 0);
	for (size_t i = 0; i < 2; i++) {
		(void)snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		ck_assert_int_eq(chmod(path, 0640), 0);
		ck_assert_int_eq(open_at(dir, &rc), -EPERM);
		ck_assert_ptr_null(rc);
		ck_assert(unit_log_has(&test_log, "0640"));
		ck_assert_int_eq(chmod(path, 0600), 0);
	}
	ck_assert_int_eq(open_at(dir, &rc), 0);
	remote_free(rc);
}
END_TEST

START_TEST(test_not_a_directory)
{
	struct remote *rc = NULL;
	char path[1024];

	(void)snprintf(path, sizeof(path), "%s/file", tmp);
	unit_write_str(tmp, "file", "x");
	ck_assert_int_lt(open_at(path, &rc), 0);
	ck_assert_ptr_null(rc);
}
END_TEST

START_TEST(test_lists_and_cursors)
{
	char *lines[] = { "https://a:1", "https://b:2" }, **got;
	char path[512], why[256];
	size_t n;

	ck_assert_int_eq(remote_dir_open(dir, path, sizeof(path), why,
	                     sizeof(why)),
	    0);
	ck_assert_str_eq(path, dir);
	ck_assert_int_eq(remote_dir_lines(dir, "x", 10, &got, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(remote_dir_write_lines(dir, "x", lines, 2), 0);
	ck_assert_uint_eq(mode_of("x"), 0600);
	ck_assert_int_eq(remote_dir_lines(dir, "x", 10, &got, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(got[1], "https://b:2");
	remote_dir_lines_free(got, n);
	ck_assert_int_eq(remote_dir_lines(dir, "x", 1, &got, &n), 0);
	ck_assert_uint_eq(n, 1);
	remote_dir_lines_free(got, n);
	ck_assert_uint_eq(remote_dir_cursor(dir, "PEERA"), 0);
	ck_assert_int_eq(remote_dir_set_cursor(dir, "PEERA", 17), 0);
	ck_assert_int_eq(remote_dir_set_cursor(dir, "PEERB", 5), 0);
	ck_assert_int_eq(remote_dir_set_cursor(dir, "PEERA", 40), 0);
	ck_assert_uint_eq(remote_dir_cursor(dir, "PEERA"), 40);
	ck_assert_uint_eq(remote_dir_cursor(dir, "PEERB"), 5);
	ck_assert_uint_eq(remote_dir_cursor(dir, "PEER"), 0);
	ck_assert_int_eq(remote_dir_lines(dir, REMOTE_CURSOR_FILE, 10, &got,
	                     &n),
	    0);
	ck_assert_uint_eq(n, 2);
	remote_dir_lines_free(got, n);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("remote_dir");
	TCase *tc = tcase_create("dir");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_created_private);
	tcase_add_test(tc, test_loose_modes_refused);
	tcase_add_test(tc, test_not_a_directory);
	tcase_add_test(tc, test_lists_and_cursors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
