/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Default directories (see dirs.h), layer 0. */
#include "lib/dirs.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* buf = a + b */
static int
dirs_print(char *buf, size_t size, const char *a, const char *b)
{
	int n = snprintf(buf, size, "%s%s", a, b);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* systemd passes a colon-separated list; ferry uses the first entry. */
static int
dirs_from_systemd(const char *var, char *buf, size_t size)
{
	const char *v = getenv(var);
	size_t len;

	if (v == NULL || *v == '\0')
		return -ENOENT;
	len = strcspn(v, ":");
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, v, len);
	buf[len] = '\0';
	return 0;
}

static const char *
dirs_home(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home != NULL && *home == '/')
		return home;
	pw = getpwuid(getuid());
	return pw != NULL ? pw->pw_dir : NULL;
}

int
dirs_state(char *buf, size_t size)
{
	const char *xdg, *home;
	int r;

	r = dirs_from_systemd("STATE_DIRECTORY", buf, size);
	if (r != -ENOENT)
		return r;
	if (geteuid() == 0)
		return dirs_print(buf, size, "/var/lib/ferry", "");
	xdg = getenv("XDG_STATE_HOME");
	if (xdg != NULL && *xdg == '/')
		return dirs_print(buf, size, xdg, "/ferry");
	home = dirs_home();
	if (home == NULL)
		return -ENOENT;
	return dirs_print(buf, size, home, "/.local/state/ferry");
}

int
dirs_runtime(char *buf, size_t size)
{
	const char *xdg;
	char uid[24];
	int r;

	r = dirs_from_systemd("RUNTIME_DIRECTORY", buf, size);
	if (r != -ENOENT)
		return r;
	if (geteuid() == 0)
		return dirs_print(buf, size, "/run/ferry", "");
	xdg = getenv("XDG_RUNTIME_DIR");
	if (xdg != NULL && *xdg == '/')
		return dirs_print(buf, size, xdg, "/ferry");
	(void)snprintf(uid, sizeof(uid), "%lu", (unsigned long)getuid());
	return dirs_print(buf, size, "/tmp/ferry-", uid);
}

int
dirs_socket(char *buf, size_t size)
{
	const char *env = getenv("FERRY_SOCKET");
	char rt[512];
	int r;

	if (env != NULL && *env != '\0')
		return dirs_print(buf, size, env, "");
	r = dirs_runtime(rt, sizeof(rt));
	if (r < 0)
		return r;
	return dirs_print(buf, size, rt, "/" DIRS_SOCKET_NAME);
}
