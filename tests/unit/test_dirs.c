/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Default directories (src/lib/dirs.c): systemd's variables first, then
 * root's FHS paths, then the XDG variables and $HOME for other users.
 * As root, the user rules are tested with the effective uid switched to
 * nobody for the duration of a call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "lib/dirs.h"
#include "unit.h"

#define NOBODY 65534

static const char *const test_vars[] = { "STATE_DIRECTORY", "RUNTIME_DIRECTORY",
	"XDG_STATE_HOME", "XDG_RUNTIME_DIR", "HOME", "FERRY_SOCKET" };
#define N_VARS (sizeof(test_vars) / sizeof(test_vars[0]))
static char *test_saved[N_VARS];

static void
test_setup(void)
{
	for (size_t i = 0; i < N_VARS; i++) {
		const char *v = getenv(test_vars[i]);

		test_saved[i] = v != NULL ? strdup(v) : NULL;
		(void)unsetenv(test_vars[i]);
	}
	ck_assert_int_eq(setenv("HOME", "/home/tester", 1), 0);
}

static void
test_teardown(void)
{
	for (size_t i = 0; i < N_VARS; i++) {
		if (test_saved[i] != NULL)
			(void)setenv(test_vars[i], test_saved[i], 1);
		else
			(void)unsetenv(test_vars[i]);
		free(test_saved[i]);
		test_saved[i] = NULL;
	}
}

typedef int dirs_fn(char *buf, size_t size);

/* Calls fn as an unprivileged user: as root, with euid nobody. */
static int
test_as_user(dirs_fn *fn, char *buf, size_t size)
{
	int r;

	if (getuid() != 0)
		return fn(buf, size);
	ck_assert_int_eq(seteuid(NOBODY), 0);
	r = fn(buf, size);
	ck_assert_int_eq(seteuid(0), 0);
	return r;
}

START_TEST(test_systemd_wins)
{
	char buf[256];

	ck_assert_int_eq(setenv("STATE_DIRECTORY", "/var/lib/one:/var/lib/two",
	                     1),
	    0);
	ck_assert_int_eq(setenv("RUNTIME_DIRECTORY", "/run/one", 1), 0);
	ck_assert_int_eq(setenv("XDG_STATE_HOME", "/xdg/state", 1), 0);
	ck_assert_int_eq(setenv("XDG_RUNTIME_DIR", "/xdg/run", 1), 0);
	ck_assert_int_eq(dirs_state(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/var/lib/one");
	ck_assert_int_eq(dirs_runtime(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/run/one");
	ck_assert_int_eq(test_as_user(dirs_state, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/var/lib/one");
	/* Set but empty means unset. */
	ck_assert_int_eq(setenv("STATE_DIRECTORY", "", 1), 0);
	ck_assert_int_eq(test_as_user(dirs_state, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/xdg/state/ferry");
}
END_TEST

START_TEST(test_root_defaults)
{
	char buf[256];

	if (geteuid() != 0)
		return; /* only root gets the FHS paths */
	ck_assert_int_eq(setenv("XDG_STATE_HOME", "/xdg/state", 1), 0);
	ck_assert_int_eq(setenv("XDG_RUNTIME_DIR", "/xdg/run", 1), 0);
	ck_assert_int_eq(dirs_state(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/var/lib/ferry");
	ck_assert_int_eq(dirs_runtime(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/run/ferry");
	ck_assert_int_eq(dirs_socket(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/run/ferry/ferryd.sock");
}
END_TEST

START_TEST(test_user_xdg)
{
	char buf[256];

	ck_assert_int_eq(setenv("XDG_STATE_HOME", "/xdg/state", 1), 0);
	ck_assert_int_eq(setenv("XDG_RUNTIME_DIR", "/xdg/run", 1), 0);
	ck_assert_int_eq(test_as_user(dirs_state, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/xdg/state/ferry");
	ck_assert_int_eq(test_as_user(dirs_runtime, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/xdg/run/ferry");
	ck_assert_int_eq(test_as_user(dirs_socket, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/xdg/run/ferry/ferryd.sock");
}
END_TEST

START_TEST(test_user_fallbacks)
{
	char buf[256], want[64];

	/* Relative XDG paths are ignored, as the XDG spec says. */
	ck_assert_int_eq(setenv("XDG_STATE_HOME", "relative", 1), 0);
	ck_assert_int_eq(setenv("XDG_RUNTIME_DIR", "relative", 1), 0);
	ck_assert_int_eq(test_as_user(dirs_state, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/home/tester/.local/state/ferry");
	ck_assert_int_eq(test_as_user(dirs_runtime, buf, sizeof(buf)), 0);
	(void)snprintf(want, sizeof(want), "/tmp/ferry-%lu",
	    (unsigned long)getuid());
	ck_assert_str_eq(buf, want);
	(void)unsetenv("XDG_STATE_HOME");
	ck_assert_int_eq(setenv("HOME", "/other", 1), 0);
	ck_assert_int_eq(test_as_user(dirs_state, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/other/.local/state/ferry");
	/* A relative $HOME is not trusted: the password database is. */
	ck_assert_int_eq(setenv("HOME", "nothome", 1), 0);
	ck_assert_int_eq(test_as_user(dirs_state, buf, sizeof(buf)), 0);
	ck_assert_ptr_null(strstr(buf, "nothome"));
	ck_assert_int_eq(buf[0], '/');
}
END_TEST

START_TEST(test_socket_override)
{
	char buf[256];

	ck_assert_int_eq(setenv("FERRY_SOCKET", "/somewhere/s.sock", 1), 0);
	ck_assert_int_eq(setenv("RUNTIME_DIRECTORY", "/run/x", 1), 0);
	ck_assert_int_eq(dirs_socket(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/somewhere/s.sock");
	ck_assert_int_eq(setenv("FERRY_SOCKET", "", 1), 0);
	ck_assert_int_eq(dirs_socket(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/run/x/ferryd.sock");
}
END_TEST

START_TEST(test_too_long)
{
	char buf[16];

	ck_assert_int_eq(setenv("XDG_STATE_HOME", "/a/very/long/xdg", 1), 0);
	ck_assert_int_eq(test_as_user(dirs_state, buf, sizeof(buf)),
	    -ENAMETOOLONG);
	ck_assert_int_eq(setenv("RUNTIME_DIRECTORY", "/run/abcdefgh", 1), 0);
	ck_assert_int_eq(dirs_runtime(buf, sizeof(buf)), 0);
	ck_assert_int_eq(dirs_socket(buf, sizeof(buf)), -ENAMETOOLONG);
	ck_assert_int_eq(setenv("FERRY_SOCKET", "/a/very/long/socket", 1), 0);
	ck_assert_int_eq(dirs_socket(buf, sizeof(buf)), -ENAMETOOLONG);
}
END_TEST

/* A $STATE_DIRECTORY or $RUNTIME_DIRECTORY that does not fit is an
 * error, not a reason to fall back to the next rule's directory. */
START_TEST(test_systemd_dir_too_long)
{
	char buf[16];

	ck_assert_int_eq(setenv("STATE_DIRECTORY", "/var/lib/private/ferry", 1),
	    0);
	ck_assert_int_eq(dirs_state(buf, sizeof(buf)), -ENAMETOOLONG);
	ck_assert_int_eq(setenv("RUNTIME_DIRECTORY", "/run/a/long/runtime", 1),
	    0);
	ck_assert_int_eq(dirs_runtime(buf, sizeof(buf)), -ENAMETOOLONG);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dirs");
	TCase *tc = tcase_create("dirs");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_systemd_wins);
	tcase_add_test(tc, test_root_defaults);
	tcase_add_test(tc, test_user_xdg);
	tcase_add_test(tc, test_user_fallbacks);
	tcase_add_test(tc, test_socket_override);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_systemd_dir_too_long);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
