/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Logging (src/lib/log.c): levels, the sink, the errno helper, both
 * output styles on stderr, FERRY_BUG and fatal(). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#define LOG_TAG "testtag"
#include "lib/log.h"
#include "unit.h"

static struct unit_log test_log;
static int test_saved_level;

static void
test_setup(void)
{
	test_saved_level = log_max_level;
}

static void
test_teardown(void)
{
	unit_log_release();
	log_set_level(test_saved_level);
	(void)unsetenv("JOURNAL_STREAM");
}

START_TEST(test_sink_gets_lines)
{
	unit_log_capture(&test_log, FERRY_LOG_DEBUG);
	log_notice("hello %s %d", "world", 42);
	log_debug("debug line");
	ck_assert_uint_eq(test_log.n, 2);
	ck_assert_int_eq(test_log.level[0], FERRY_LOG_NOTICE);
	ck_assert_str_eq(test_log.tag[0], "testtag");
	ck_assert_str_eq(test_log.line[0], "hello world 42");
	ck_assert_int_eq(test_log.level[1], FERRY_LOG_DEBUG);
}
END_TEST

START_TEST(test_levels_filter)
{
	unit_log_capture(&test_log, FERRY_LOG_WARNING);
	log_err("e");
	log_warn("w");
	log_notice("n");
	log_info("i");
	log_debug("d");
	log_msg(FERRY_LOG_INFO, "x", "direct info");
	ck_assert_uint_eq(test_log.n, 2);
	ck_assert_str_eq(test_log.line[0], "e");
	ck_assert_str_eq(test_log.line[1], "w");
	log_set_level(FERRY_LOG_INFO);
	log_info("now");
	ck_assert_uint_eq(test_log.n, 3);
	ck_assert_int_eq(log_max_level, FERRY_LOG_INFO);
}
END_TEST

START_TEST(test_levels_clamped)
{
	unit_log_capture(&test_log, FERRY_LOG_DEBUG);
	log_msg(42, "x", "too high");
	log_msg(-3, "x", "too low");
	ck_assert_uint_eq(test_log.n, 2);
	ck_assert_int_eq(test_log.level[0], FERRY_LOG_DEBUG);
	ck_assert_int_eq(test_log.level[1], 0);
}
END_TEST

START_TEST(test_errno_helper)
{
	int r;

	unit_log_capture(&test_log, FERRY_LOG_DEBUG);
	r = log_err_errno(-ENOENT, "cannot open %s", "x.conf");
	ck_assert_int_eq(r, -ENOENT);
	ck_assert_uint_eq(test_log.n, 1);
	ck_assert_int_eq(test_log.level[0], FERRY_LOG_ERR);
	ck_assert_str_eq(test_log.line[0],
	    "cannot open x.conf: No such file or directory");
	/* Filtered lines are not formatted but still return r. */
	log_set_level(FERRY_LOG_ERR);
	ck_assert_int_eq(log_info_errno(-EPERM, "quiet"), -EPERM);
	ck_assert_uint_eq(test_log.n, 1);
}
END_TEST

START_TEST(test_errno_preserved)
{
	unit_log_capture(&test_log, FERRY_LOG_DEBUG);
	errno = EAGAIN;
	log_notice("x");
	ck_assert_int_eq(errno, EAGAIN);
}
END_TEST

START_TEST(test_bug_macro)
{
	int hits = 0;

	unit_log_capture(&test_log, FERRY_LOG_DEBUG);
	if (FERRY_BUG(1 + 1 == 3))
		hits++;
	ck_assert_uint_eq(test_log.n, 0);
	if (FERRY_BUG(hits == 0))
		hits++;
	ck_assert_int_eq(hits, 1);
	ck_assert_uint_eq(test_log.n, 1);
	ck_assert_int_eq(test_log.level[0], FERRY_LOG_ERR);
	ck_assert_ptr_nonnull(strstr(test_log.line[0], "BUG at "));
	ck_assert_ptr_nonnull(strstr(test_log.line[0], "test_log.c:"));
	ck_assert_ptr_nonnull(strstr(test_log.line[0], "hits == 0"));
}
END_TEST

/* Runs fn in a child with stderr in a file; returns what it wrote. */
static void
test_stderr_of(void (*fn)(void), int *ret_status, char *out, size_t size)
{
	char path[] = "/tmp/ferry-log.XXXXXX";
	int fd = mkstemp(path);
	pid_t pid;
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	(void)unlink(path);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		(void)dup2(fd, STDERR_FILENO);
		fn();
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, ret_status, 0), pid);
	n = pread(fd, out, size - 1, 0);
	ck_assert_int_ge(n, 0);
	out[n] = '\0';
	(void)close(fd);
}

static void
test_plain_child(void)
{
	(void)unsetenv("JOURNAL_STREAM");
	log_init("ferrytest", FERRY_LOG_INFO);
	log_notice("plain %d", 1);
	log_debug("hidden");
}

static void
test_journal_child(void)
{
	(void)setenv("JOURNAL_STREAM", "8:12345", 1);
	log_init("ferrytest", FERRY_LOG_INFO);
	log_warn("to the journal");
	log_info("info too");
}

static void
test_fatal_child(void)
{
	log_init("ferrytest", FERRY_LOG_ERR);
	log_set_level(-1); /* fatal() is never filtered */
	fatal("cannot go on: %s", "reason");
}

START_TEST(test_stderr_plain)
{
	char out[1024];
	int status;

	test_stderr_of(test_plain_child, &status, out, sizeof(out));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* "HH:MM:SS.mmm ferrytest NOTICE testtag: plain 1\n" */
	ck_assert_ptr_nonnull(
	    strstr(out, " ferrytest NOTICE testtag: plain 1\n"));
	ck_assert_int_eq(out[2], ':');
	ck_assert_int_eq(out[8], '.');
	ck_assert_ptr_null(strstr(out, "hidden"));
	ck_assert_ptr_null(strchr(out, '<'));
}
END_TEST

START_TEST(test_stderr_journal)
{
	char out[1024];
	int status;

	test_stderr_of(test_journal_child, &status, out, sizeof(out));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_str_eq(out,
	    "<4>testtag: to the journal\n<6>testtag: info too\n");
}
END_TEST

START_TEST(test_fatal_exits)
{
	char out[1024];
	int status;

	test_stderr_of(test_fatal_child, &status, out, sizeof(out));
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 1);
	ck_assert_ptr_nonnull(strstr(out, "fatal: cannot go on: reason\n"));
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_sink_gets_lines);
	tcase_add_test(tc, test_levels_filter);
	tcase_add_test(tc, test_levels_clamped);
	tcase_add_test(tc, test_errno_helper);
	tcase_add_test(tc, test_errno_preserved);
	tcase_add_test(tc, test_bug_macro);
	tcase_add_test(tc, test_stderr_plain);
	tcase_add_test(tc, test_stderr_journal);
	tcase_add_test(tc, test_fatal_exits);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
