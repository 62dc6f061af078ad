/* SPDX-License-Identifier: GPL-3.0-or-later */
/* File system helpers (src/lib/fsutil.c): mkdir -p, atomic replacement,
 * bounded reads, path joining and the check of a private key file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "lib/fsutil.h"
#include "unit.h"

static char dir[256];
static char path[512];
static mode_t saved_umask;

static void
test_setup(void)
{
	unit_tmpdir(dir, sizeof(dir));
	saved_umask = umask(022);
}

static void
test_teardown(void)
{
	(void)umask(saved_umask);
	unit_rmtree(dir);
}

static const char *
test_path(const char *name)
{
	ck_assert_int_eq(fs_path_join(path, sizeof(path), dir, name), 0);
	return path;
}

static size_t
test_count_entries(const char *d)
{
	DIR *dh = opendir(d);
	struct dirent *de;
	size_t n = 0;

	ck_assert_ptr_nonnull(dh);
	while ((de = readdir(dh)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	(void)closedir(dh);
	return n;
}

START_TEST(test_path_join)
{
	char buf[8];

	ck_assert_int_eq(fs_path_join(buf, sizeof(buf), "a", "b"), 0);
	ck_assert_str_eq(buf, "a/b");
	ck_assert_int_eq(fs_path_join(buf, sizeof(buf), "abc", "def"), 0);
	ck_assert_str_eq(buf, "abc/def");
	ck_assert_int_eq(fs_path_join(buf, sizeof(buf), "abcd", "efg"),
	    -ENAMETOOLONG);
}
END_TEST

START_TEST(test_mkdir_p)
{
	struct stat st;

	ck_assert_int_eq(fs_mkdir_p(test_path("a/b/c"), 0700), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(fs_mkdir_p(path, 0700), 0); /* existing is fine */
	ck_assert_int_eq(fs_mkdir_p(test_path("a/b/c/"), 0700), 0);
	unit_write_str(dir, "file", "x");
	ck_assert_int_eq(fs_mkdir_p(test_path("file/sub"), 0700), -ENOTDIR);
	ck_assert_int_eq(fs_mkdir_p("", 0700), -ENAMETOOLONG);
}
END_TEST

/* A regular file where the directory should be is not "existing". */
START_TEST(test_mkdir_p_on_file)
{
	unit_write_str(dir, "file", "x");
	ck_assert_int_eq(fs_mkdir_p(test_path("file"), 0700), -ENOTDIR);
}
END_TEST

START_TEST(test_write_atomic_creates)
{
	struct stat st;
	uint8_t *data = NULL;
	size_t len = 0;

	ck_assert_int_eq(fs_write_atomic(test_path("f"), "first", 5, 0600), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(fs_read_file(path, 100, &data, &len), 0);
	ck_assert_uint_eq(len, 5);
	ck_assert_mem_eq(data, "first", 5);
	free(data);
	ck_assert_uint_eq(test_count_entries(dir), 1); /* no temporary left */
}
END_TEST

START_TEST(test_write_atomic_replaces)
{
	struct stat before, after;
	uint8_t *data = NULL;
	size_t len = 0;
	int fd;
	char old[4] = "";

	ck_assert_int_eq(fs_write_atomic(test_path("f"), "old!", 4, 0600), 0);
	ck_assert_int_eq(stat(path, &before), 0);
	/* A reader holding the old file keeps seeing the old bytes: the new
	 * file replaces it by rename, it is not rewritten in place. */
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fs_write_atomic(path, "brand new", 9, 0644), 0);
	ck_assert_int_eq(read(fd, old, sizeof(old)), 4);
	ck_assert_mem_eq(old, "old!", 4);
	(void)close(fd);
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_uint_ne(before.st_ino, after.st_ino);
	ck_assert_uint_eq(after.st_mode & 0777, 0644);
	ck_assert_int_eq(fs_read_file(path, 100, &data, &len), 0);
	ck_assert_uint_eq(len, 9);
	ck_assert_mem_eq(data, "brand new", 9);
	free(data);
	/* Empty content is a valid file too. */
	ck_assert_int_eq(fs_write_atomic(path, "", 0, 0600), 0);
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_int_eq(after.st_size, 0);
	ck_assert_uint_eq(test_count_entries(dir), 1);
}
END_TEST

START_TEST(test_write_atomic_failures)
{
	ck_assert_int_eq(fs_write_atomic(test_path("missing/f"), "x", 1, 0600),
	    -ENOENT);
	/* A directory in the way: the rename fails, the temporary goes. */
	ck_assert_int_eq(mkdir(test_path("d"), 0700), 0);
	ck_assert_int_lt(fs_write_atomic(path, "x", 1, 0600), 0);
	ck_assert_uint_eq(test_count_entries(dir), 1);
}
END_TEST

START_TEST(test_read_limits)
{
	char big[1000];
	uint8_t *data = (uint8_t *)"untouched";
	size_t len = 12345;

	memset(big, 'q', sizeof(big));
	unit_write(dir, "big", big, sizeof(big));
	ck_assert_int_eq(fs_read_file(test_path("big"), 999, &data, &len),
	    -EFBIG);
	ck_assert_str_eq((char *)data, "untouched"); /* not written */
	ck_assert_uint_eq(len, 12345);
	ck_assert_int_eq(fs_read_file(path, 1000, &data, &len), 0);
	ck_assert_uint_eq(len, 1000);
	ck_assert_uint_eq(data[999], 'q');
	ck_assert_uint_eq(data[1000], '\0'); /* terminated for text users */
	free(data);
	unit_write(dir, "empty", "", 0);
	ck_assert_int_eq(fs_read_file(test_path("empty"), 0, &data, &len), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(data[0], '\0');
	free(data);
	ck_assert_int_eq(fs_read_file(test_path("nope"), 10, &data, &len),
	    -ENOENT);
	ck_assert_int_eq(fs_read_file(dir, 10, &data, &len), -EINVAL);
}
END_TEST

/* fs_read_file() must not block on a FIFO (an @INLINE@ of one would hang
 * ferryd). Runs in a child that is killed after 2 s. */
START_TEST(test_read_fifo_does_not_block)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pid_t pid;
	int status = 0;

	ck_assert_int_eq(mkfifo(test_path("fifo"), 0600), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		uint8_t *data;
		size_t len;

		_exit(fs_read_file(path, 10, &data, &len) == -EINVAL ? 0 : 1);
	}
	for (int i = 0; i < 200; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		(void)nanosleep(&ts, NULL);
	}
	if (waitpid(pid, &status, WNOHANG) == 0) {
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, &status, 0);
		ck_abort_msg("fs_read_file() blocked on a FIFO");
	}
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* fs_check_private() of name, opened for reading; its reason in why. */
static int
check_private(const char *name, char *why, size_t size)
{
	int fd = open(test_path(name), O_RDONLY | O_CLOEXEC), r;

	ck_assert_int_ge(fd, 0);
	why[0] = '\0';
	r = fs_check_private(fd, test_path(name), "the key", why, size);
	(void)close(fd);
	return r;
}

/* A key file: regular, 0600 or stricter, this user's; each fault is
 * refused with a reason naming the file and what it should be. */
START_TEST(test_check_private)
{
	char why[1024];

	(void)unit_write(dir, "k", "secret", 6);
	ck_assert_int_eq(chmod(test_path("k"), 0600), 0);
	ck_assert_int_eq(check_private("k", why, sizeof(why)), 0);
	ck_assert_int_eq(chmod(test_path("k"), 0400), 0);
	ck_assert_int_eq(check_private("k", why, sizeof(why)), 0);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(chmod(test_path("k"), 0640), 0);
	ck_assert_int_eq(check_private("k", why, sizeof(why)), -EPERM);
	ck_assert_ptr_nonnull(strstr(why, "k has mode 0640; the key must not"));
	ck_assert_int_eq(chmod(test_path("k"), 0604), 0);
	ck_assert_int_eq(check_private("k", why, sizeof(why)), -EPERM);
	ck_assert_int_eq(mkdir(test_path("d"), 0700), 0);
	ck_assert_int_eq(check_private("d", why, sizeof(why)), -EBADMSG);
	ck_assert_ptr_nonnull(
	    strstr(why, "d is not a regular file, so not the key"));
	if (geteuid() != 0)
		return; /* only root can give a file away */
	ck_assert_int_eq(chmod(test_path("k"), 0600), 0);
	ck_assert_int_eq(chown(test_path("k"), 65534, 65534), 0);
	ck_assert_int_eq(check_private("k", why, sizeof(why)), -EPERM);
	ck_assert_ptr_nonnull(strstr(why, "is owned by uid 65534"));
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("fsutil");
	TCase *tc = tcase_create("fsutil");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_path_join);
	tcase_add_test(tc, test_mkdir_p);
	tcase_add_test(tc, test_write_atomic_creates);
	tcase_add_test(tc, test_write_atomic_replaces);
	tcase_add_test(tc, test_write_atomic_failures);
	tcase_add_test(tc, test_read_limits);
	tcase_add_test(tc, test_mkdir_p_on_file);
	tcase_add_test(tc, test_read_fifo_does_not_block);
	tcase_add_test(tc, test_check_private);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
