/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The convergence secret file (src/storage/secret.c): created with mode
 * 0600 and 32 random bytes, read back the same, left alone when absent
 * unless asked to create, and never replaced when it is wrong: loose
 * modes, wrong sizes, a directory or a symbolic link are each refused
 * with a log line naming the path and the fault.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "lib/log.h"
#include "storage/secret.h"
#include "unit.h"

static char dir[256];
static char path[320];
static struct unit_log test_log;
static mode_t saved_umask;

static void
test_setup(void)
{
	unit_tmpdir(dir, sizeof(dir));
	(void)snprintf(path, sizeof(path), "%s/%s", dir, STORAGE_SECRET_FILE);
	unit_log_capture(&test_log, FERRY_LOG_DEBUG);
	saved_umask = umask(0);
}

static void
test_teardown(void)
{
	(void)umask(saved_umask);
	unit_log_release();
	unit_rmtree(dir);
}

/* Nothing but the secret in dir: no temporary file was left. */
static void
assert_no_leftovers(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		ck_assert_msg(strcmp(e->d_name, ".") == 0 ||
		        strcmp(e->d_name, "..") == 0 ||
		        strcmp(e->d_name, STORAGE_SECRET_FILE) == 0,
		    "left over: %s", e->d_name);
	(void)closedir(d);
}

START_TEST(test_create_and_load)
{
	uint8_t a[STORAGE_SECRET_LEN], b[STORAGE_SECRET_LEN];
	static const uint8_t zero[STORAGE_SECRET_LEN];
	struct stat st;

	/* A umask of 0 must not loosen the mode. */
	ck_assert_int_eq(storage_secret_load(path, true, a), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq(st.st_size, STORAGE_SECRET_LEN);
	ck_assert_mem_ne(a, zero, sizeof(a));
	ck_assert(unit_log_has(&test_log, "created a new convergence secret"));
	assert_no_leftovers();
	memset(b, 0, sizeof(b));
	ck_assert_int_eq(storage_secret_load(path, false, b), 0);
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert_int_eq(storage_secret_load(path, true, b), 0);
	ck_assert_mem_eq(a, b, sizeof(a));
}
END_TEST

START_TEST(test_absent)
{
	uint8_t s[STORAGE_SECRET_LEN];

	ck_assert_int_eq(storage_secret_load(path, false, s), -ENOENT);
	ck_assert(unit_log_has(&test_log, "no convergence secret at"));
	ck_assert_int_eq(access(path, F_OK), -1);
	/* In a directory that does not exist: the creation fails. */
	(void)snprintf(path, sizeof(path), "%s/none/%s", dir,
	    STORAGE_SECRET_FILE);
	ck_assert_int_eq(storage_secret_load(path, true, s), -ENOENT);
}
END_TEST

START_TEST(test_bad_mode)
{
	uint8_t s[STORAGE_SECRET_LEN], keep[STORAGE_SECRET_LEN];

	memset(keep, 0x42, sizeof(keep));
	memset(s, 0, sizeof(s));
	(void)unit_write(dir, STORAGE_SECRET_FILE, keep, sizeof(keep));
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(storage_secret_load(path, true, s), -EPERM);
	ck_assert(unit_log_has(&test_log, "has mode 0644"));
	ck_assert(unit_log_has(&test_log, path));
	ck_assert_int_eq(chmod(path, 0640), 0);
	ck_assert_int_eq(storage_secret_load(path, true, s), -EPERM);
	/* Untouched, and s unwritten. */
	ck_assert_mem_ne(s, keep, sizeof(s));
	ck_assert_int_eq(chmod(path, 0400), 0);
	ck_assert_int_eq(storage_secret_load(path, true, s), 0);
	ck_assert_mem_eq(s, keep, sizeof(s));
}
END_TEST

START_TEST(test_bad_size)
{
	uint8_t s[STORAGE_SECRET_LEN], data[STORAGE_SECRET_LEN + 1];
	struct stat st;

	memset(data, 7, sizeof(data));
	(void)unit_write(dir, STORAGE_SECRET_FILE, data, 31);
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(storage_secret_load(path, true, s), -EBADMSG);
	ck_assert(unit_log_has(&test_log, "holds 31 bytes"));
	(void)unit_write(dir, STORAGE_SECRET_FILE, data, 33);
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(storage_secret_load(path, true, s), -EBADMSG);
	ck_assert(unit_log_has(&test_log, "holds more than 32 bytes"));
	(void)unit_write(dir, STORAGE_SECRET_FILE, data, 0);
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(storage_secret_load(path, true, s), -EBADMSG);
	/* Never replaced. */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_size, 0);
}
END_TEST

START_TEST(test_not_a_file)
{
	uint8_t s[STORAGE_SECRET_LEN];
	char target[400];

	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(storage_secret_load(path, true, s), -EBADMSG);
	ck_assert(unit_log_has(&test_log, "not a regular file"));
	ck_assert_int_eq(rmdir(path), 0);
	(void)snprintf(target, sizeof(target), "%s/elsewhere", dir);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(storage_secret_load(path, true, s), -ELOOP);
	ck_assert(unit_log_has(&test_log, "symbolic link"));
	ck_assert_int_eq(access(target, F_OK), -1);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("storage_secret");
	TCase *tc = tcase_create("secret");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_create_and_load);
	tcase_add_test(tc, test_absent);
	tcase_add_test(tc, test_bad_mode);
	tcase_add_test(tc, test_bad_size);
	tcase_add_test(tc, test_not_a_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
