/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Other users for integration tests (see asuser.h): children that switch
 * identity before they run, and a ferryd started through setpriv(1) or in
 * a user namespace like the one systemd's PrivateUsers=yes makes.
 */
#include "asuser.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#define ASUSER_WRAPPER "ferryd-as"
#define ASUSER_ENV     "FERRY_TEST_SETPRIV" /* setpriv's options */
#define ASUSER_ENV_NS  "FERRY_TEST_USERNS"  /* "UID GID" */
#define ASUSER_HELPER  "--asuser-userns"

/* $FERRYD before asuser_daemon() changed it. */
static bool asuser_env_saved;
static char *asuser_env_orig; /* NULL: it was unset */

/* Writes "0 0 1" and "id id 1" into /proc/pid/<file>. */
static int
asuser_write_map(pid_t pid, const char *file, unsigned long id)
{
	char path[64], map[64];
	int fd, len, r = 0;

	(void)snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
	len = id == 0
	    ? snprintf(map, sizeof(map), "0 0 1\n")
	    : snprintf(map, sizeof(map), "0 0 1\n%lu %lu 1\n", id, id);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, map, (size_t)len) != len)
		r = -errno;
	(void)close(fd);
	return r;
}

/* Enters a new user namespace mapping only root and uid/gid (a process
 * of the old one, forked first, writes the maps: the namespace's own
 * process may not), becomes uid/gid in it and runs argv. */
static _Noreturn void
asuser_userns_exec(uid_t uid, gid_t gid, char **argv)
{
	pid_t self = getpid(), writer;
	int sync[2], status;
	char b;

	if (pipe2(sync, O_CLOEXEC) < 0)
		_exit(127);
	writer = fork();
	if (writer < 0)
		_exit(127);
	if (writer == 0) {
		if (read(sync[0], &b, 1) != 1 ||
		    asuser_write_map(self, "uid_map", uid) < 0 ||
		    asuser_write_map(self, "gid_map", gid) < 0)
			_exit(1);
		_exit(0);
	}
	if (unshare(CLONE_NEWUSER) < 0 || write(sync[1], "u", 1) != 1 ||
	    waitpid(writer, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "asuser: cannot set up a user namespace\n");
		_exit(127);
	}
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		fprintf(stderr, "asuser: cannot become %lu:%lu: %s\n",
		    (unsigned long)uid, (unsigned long)gid, strerror(errno));
		_exit(127);
	}
	/* The switch cleared what the harness set. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	execv(argv[0], argv);
	fprintf(stderr, "asuser: cannot run %s: %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

void
asuser_main(int argc, char **argv)
{
	unsigned long uid, gid;

	/* argv: self --asuser-userns UID GID -- program args... */
	if (argc < 6 || strcmp(argv[1], ASUSER_HELPER) != 0)
		return;
	if (sscanf(argv[2], "%lu", &uid) != 1 ||
	    sscanf(argv[3], "%lu", &gid) != 1 || strcmp(argv[4], "--") != 0)
		_exit(127);
	asuser_userns_exec((uid_t)uid, (gid_t)gid, argv + 5);
}

bool
asuser_root_or_skip(const char *what)
{
	const char *req = getenv("FERRY_REQUIRE_ROOT");

	if (geteuid() == 0)
		return true;
	ck_assert_msg(req == NULL || strcmp(req, "1") != 0,
	    "%s needs root (FERRY_REQUIRE_ROOT=1)", what);
	fprintf(stderr,
	    "SKIP: %s needs root; set FERRY_REQUIRE_ROOT=1 to make this a failure\n",
	    what);
	return false;
}

int
asuser_spawn(const struct asuser *u, asuser_fn *fn, void *cls, pid_t *ret_pid)
{
	pid_t pid;

	if (u->n_groups > ASUSER_GROUPS_MAX)
		return -EINVAL;
	(void)fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		*ret_pid = pid;
		return 0;
	}
	/* Groups first: afterwards we no longer may set them. */
	if (setgroups(u->n_groups, u->groups) < 0 ||
	    setresgid(u->gid, u->gid, u->gid) < 0 ||
	    setresuid(u->uid, u->uid, u->uid) < 0)
		_exit(ASUSER_FAILED);
	/* Set after the switch, which clears it. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	_exit(fn(cls) & 0x7f);
}

int
asuser_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int
asuser_run(const struct asuser *u, asuser_fn *fn, void *cls)
{
	pid_t pid = -1;
	int r = asuser_spawn(u, fn, cls, &pid);

	return r < 0 ? r : asuser_wait(pid);
}

int
asuser_open_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (chmod(path, (st.st_mode & 07777) | 0011) < 0)
		return -errno;
	return 0;
}

int
asuser_open_daemon(struct harness_daemon *d)
{
	int r = asuser_open_dir(harness_dir(d->h));

	return r < 0 ? r : asuser_open_dir(d->dir);
}

/* The wrapper: ferryd through setpriv, or through this program's
 * namespace helper, when the daemon's environment asks for it, else
 * ferryd itself. */
static int
asuser_write_wrapper(const char *path, const char *ferryd)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *f;
	int r = 0;

	if (n <= 0 || memchr(self, '\'', (size_t)n) != NULL)
		return -EINVAL;
	self[n] = '\0';
	f = fopen(path, "w");
	if (f == NULL)
		return -errno;
	fprintf(f,
	    "#!/bin/sh\n"
	    "# Written by tests/lib/asuser.c.\n"
	    "if [ -n \"$%s\" ]; then\n"
	    "    exec setpriv --pdeathsig keep $%s -- '%s' \"$@\"\n"
	    "fi\n"
	    "if [ -n \"$%s\" ]; then\n"
	    "    exec '%s' %s $%s -- '%s' \"$@\"\n"
	    "fi\n"
	    "exec '%s' \"$@\"\n",
	    ASUSER_ENV, ASUSER_ENV, ferryd, ASUSER_ENV_NS, self, ASUSER_HELPER,
	    ASUSER_ENV_NS, ferryd, ferryd);
	if (ferror(f))
		r = -EIO;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && chmod(path, 0755) < 0)
		r = -errno;
	return r;
}

/* Whether u may search directory st (enter it), by its mode bits. */
static bool
asuser_may_search(const struct stat *st, const struct asuser *u)
{
	bool group = st->st_gid == u->gid;

	for (size_t i = 0; i < u->n_groups && i < ASUSER_GROUPS_MAX; i++)
		group = group || st->st_gid == u->groups[i];
	if (u->uid == 0 || st->st_uid == u->uid)
		return (st->st_mode & S_IXUSR) != 0;
	return (st->st_mode & (group ? S_IXGRP : S_IXOTH)) != 0;
}

/*
 * Every directory above path may be entered by u: a build tree in a
 * private home (a checkout under /root, mode 0700, as root makes on a
 * fresh machine) cannot be run by another user, and ferryd's exec would
 * fail with a bare "Permission denied". Says so, naming the directory.
 */
static int
asuser_reachable(const char *path, const struct asuser *u)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	while ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if (stat(dir[0] != '\0' ? dir : "/", &st) < 0)
			return -errno;
		if (!asuser_may_search(&st, u)) {
			fprintf(stderr,
			    "asuser: uid %lu cannot enter %s (mode %04o), above "
			    "%s: this test runs ferryd as another user, so the "
			    "build tree must be reachable by others (not under "
			    "a private home such as /root)\n",
			    (unsigned long)u->uid, dir[0] != '\0' ? dir : "/",
			    (unsigned)(st.st_mode & 07777), path);
			return -EACCES;
		}
	}
	return 0;
}

int
asuser_daemon(struct harness_daemon *d, const struct asuser *u)
{
	static char ferryd[PATH_MAX];
	char wrapper[PATH_MAX], opts[256];
	size_t o;
	int r;

	if (snprintf(wrapper, sizeof(wrapper), "%s/%s", harness_dir(d->h),
	        ASUSER_WRAPPER) >= (int)sizeof(wrapper))
		return -ENAMETOOLONG;
	/* The real ferryd, unless $FERRYD is already a wrapper of ours. */
	if (strstr(harness_ferryd_path(), "/" ASUSER_WRAPPER) == NULL)
		(void)snprintf(ferryd, sizeof(ferryd), "%s",
		    harness_ferryd_path());
	if (ferryd[0] == '\0' || strchr(ferryd, '\'') != NULL)
		return -EINVAL;
	r = asuser_reachable(ferryd, u);
	if (r < 0)
		return r;
	r = asuser_write_wrapper(wrapper, ferryd);
	if (r < 0)
		return r;
	if (u->private_users) {
		(void)snprintf(opts, sizeof(opts), "%lu %lu",
		    (unsigned long)u->uid, (unsigned long)u->gid);
		r = harness_daemon_setenv(d, ASUSER_ENV_NS, opts);
	} else {
		o = (size_t)snprintf(opts, sizeof(opts),
		    "--reuid=%lu --regid=%lu", (unsigned long)u->uid,
		    (unsigned long)u->gid);
		if (u->n_groups == 0)
			o += (size_t)snprintf(opts + o, sizeof(opts) - o,
			    " --clear-groups");
		for (size_t i = 0; i < u->n_groups && o < sizeof(opts); i++)
			o += (size_t)snprintf(opts + o, sizeof(opts) - o,
			    "%s%lu", i == 0 ? " --groups=" : ",",
			    (unsigned long)u->groups[i]);
		if (o >= sizeof(opts))
			return -ENAMETOOLONG;
		r = harness_daemon_setenv(d, ASUSER_ENV, opts);
	}
	if (r == 0 && chown(d->dir, u->uid, u->gid) < 0)
		r = -errno;
	if (r == 0)
		r = asuser_open_dir(harness_dir(d->h));
	if (r == 0 && !asuser_env_saved) {
		const char *v = getenv("FERRYD");

		asuser_env_orig = v != NULL ? strdup(v) : NULL;
		if (v != NULL && asuser_env_orig == NULL)
			return -ENOMEM;
		asuser_env_saved = true;
	}
	if (r == 0 && setenv("FERRYD", wrapper, 1) < 0)
		r = -errno;
	return r;
}

void
asuser_reset(void)
{
	if (!asuser_env_saved)
		return;
	if (asuser_env_orig != NULL)
		(void)setenv("FERRYD", asuser_env_orig, 1);
	else
		(void)unsetenv("FERRYD");
	free(asuser_env_orig);
	asuser_env_orig = NULL;
	asuser_env_saved = false;
}
