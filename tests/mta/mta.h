/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The C side of the SMTP tests' MTA fixture (tests/mta/setup-mta.sh), for
 * tests/unit/test_smtp.c and tests/integration/test_smtp_daemons.c: runs
 * the script once, makes test users whose filter line carries this run's
 * tag (mail deferred in an earlier run then never reaches the inbox),
 * injects mail with Postfix's sendmail, and counts what an inbox holds.
 *
 * Without root or a way to install Postfix the script exits 77 and the
 * tests skip, saying so, unless FERRY_REQUIRE_MTA=1 (CI), which makes
 * that a failure. Header-only: included by one test file each.
 */
#ifndef FERRY_TESTS_MTA_H
#define FERRY_TESTS_MTA_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#define MTA_SKIP     77                       /* the script cannot run here */
#define MTA_LOG      "/var/log/ferry-mta.log" /* Postfix's log */
#define MTA_SENDMAIL "/usr/sbin/sendmail"

/* A test user of the fixture. */
struct mta_user {
	char name[33];    /* login */
	char mail[64];    /* name@localhost */
	char filter[128]; /* "X-Ferry-Test: <run tag>-<name>" */
	char inbox[256];  /* its Maildir or FIFO */
	bool fifo;        /* FIFO rather than Maildir */
	char home[256];   /* its home: Mailbox, procmail.log */
	char kept[272];   /* a Maildir with a copy of each mail for the
			   * inbox (mta_user_kept), else "" */
};

/* Runs argv (argv[0] a path), feeding it in (NULL: nothing) and keeping
 * up to size - 1 bytes of its standard output in out (may be NULL).
 * Returns the exit status, or -1 if it could not run. */
static inline int
mta_run(char *const argv[], const char *in, char *out, size_t size)
{
	int to[2], from[2], status;
	char sink[256];
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(to) < 0 || pipe(from) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		(void)dup2(to[0], 0);
		(void)dup2(from[1], 1);
		(void)close(to[1]);
		(void)close(from[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	(void)close(to[0]);
	(void)close(from[1]);
	/* a child that does not read its input must not kill us */
	(void)signal(SIGPIPE, SIG_IGN);
	if (in != NULL && write(to[1], in, strlen(in)) < 0)
		(void)0; /* the child's status tells */
	(void)close(to[1]);
	for (;;) {
		bool keep = out != NULL && got + 1 < size;

		n = read(from[0], keep ? out + got : sink,
		    keep ? size - 1 - got : sizeof(sink));
		if (n <= 0)
			break;
		if (keep)
			got += (size_t)n;
	}
	(void)close(from[0]);
	if (out != NULL)
		out[got] = '\0';
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline const char *
mta_script(void)
{
	static char path[512];

	(void)snprintf(path, sizeof(path), "%s/tests/mta/setup-mta.sh",
	    FERRY_SOURCE_DIR);
	return path;
}

static int mta_state = -1; /* -1 not tried, else setup-mta.sh's status */

/* Takes the fixture's lock for the rest of this process (its forked
 * tests share it): test programs of other build trees use the same users
 * and Postfix log, and ctest's RESOURCE_LOCK only orders one ctest run. */
static inline void
mta_lock(void)
{
	const char *dir = getenv("FERRY_MTA_DIR");
	char path[512];
	int fd;

	(void)snprintf(path, sizeof(path), "%s/.test-lock",
	    dir != NULL ? dir : "/var/tmp/ferry-mta");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return; /* the tests will say what is wrong */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "waiting for another test program using the MTA fixture\n");
		(void)flock(fd, LOCK_EX);
	}
	/* fd stays open: the lock lasts as long as the process */
}

/* Runs setup-mta.sh unless that was done, and takes the fixture's lock:
 * call it in main(), before Check forks the tests, so that this happens
 * once per program. */
static inline int
mta_prepare(void)
{
	char *argv[] = { (char *)mta_script(), (char *)"setup", NULL };

	if (mta_state < 0) {
		mta_state = mta_run(argv, NULL, NULL, 0);
		if (mta_state == 0)
			mta_lock();
	}
	return mta_state;
}

/* True if the tests can use the MTA; false (after saying why) if they
 * must skip. Fails the test if the fixture is broken, or cannot run
 * while FERRY_REQUIRE_MTA=1. */
static inline bool
mta_available(void)
{
	const char *req = getenv("FERRY_REQUIRE_MTA");
	int state = mta_prepare();

	if (state == MTA_SKIP && !(req != NULL && strcmp(req, "1") == 0)) {
		fprintf(stderr,
		    "SKIP: no test MTA here (setup-mta.sh needs root and Postfix or apt-get); set FERRY_REQUIRE_MTA=1 to make this a failure\n");
		return false;
	}
	ck_assert_msg(state == 0, "tests/mta/setup-mta.sh failed (status %d)",
	    state);
	return true;
}

/* This run's tag: different in every run of every test program. */
static inline const char *
mta_tag(void)
{
	static char tag[48];

	if (tag[0] == '\0')
		(void)snprintf(tag, sizeof(tag), "%ld-%ld", (long)getpid(),
		    (long)time(NULL));
	return tag;
}

static inline void mta_user_make(struct mta_user *u, const char *name,
    bool fifo, bool keep);

/* (Re)makes user name with an empty inbox of the given kind. */
static inline void
mta_user(struct mta_user *u, const char *name, bool fifo)
{
	mta_user_make(u, name, fifo, false);
}

/* The same with a Maildir inbox, and a copy of every mail for it kept in
 * u->kept, which ferry does not consume: all the mail the user got. */
static inline void
mta_user_kept(struct mta_user *u, const char *name)
{
	mta_user_make(u, name, false, true);
}

static inline void
mta_user_make(struct mta_user *u, const char *name, bool fifo, bool keep)
{
	char *argv[] = { (char *)mta_script(), (char *)"user", (char *)name,
		(char *)(fifo ? "fifo" : "maildir"), u->filter,
		(char *)(keep ? "keep" : NULL), NULL };
	char out[512], *slash;
	size_t len;

	memset(u, 0, sizeof(*u));
	(void)snprintf(u->name, sizeof(u->name), "%s", name);
	(void)snprintf(u->mail, sizeof(u->mail), "%s@localhost", name);
	(void)snprintf(u->filter, sizeof(u->filter), "X-Ferry-Test: %s-%s",
	    mta_tag(), name);
	u->fifo = fifo;
	ck_assert_msg(mta_run(argv, NULL, out, sizeof(out)) == 0,
	    "setup-mta.sh user %s failed", name);
	len = strcspn(out, "\n");
	ck_assert(len > 0 && len < sizeof(u->inbox));
	memcpy(u->inbox, out, len);
	u->inbox[len] = '\0';
	/* The inbox is $HOME/Maildir or $HOME/inbox.fifo. */
	memcpy(u->home, u->inbox, len + 1);
	slash = strrchr(u->home, '/');
	ck_assert_ptr_nonnull(slash);
	*slash = '\0';
	if (keep)
		(void)snprintf(u->kept, sizeof(u->kept), "%s/Kept", u->home);
}

/* Hands text (a whole mail, LF line ends) to Postfix for rcpt with an
 * empty envelope sender. */
static inline void
mta_inject(const char *rcpt, const char *text)
{
	char *argv[] = { (char *)MTA_SENDMAIL, (char *)"-i", (char *)"-f",
		(char *)"<>", (char *)rcpt, NULL };

	ck_assert_int_eq(mta_run(argv, text, NULL, 0), 0);
}

/* Files in dir/sub ("new" or "cur") of a Maildir. */
static inline size_t
mta_maildir_count(const char *maildir, const char *sub)
{
	char path[512];
	struct dirent *de;
	size_t n = 0;
	DIR *d;
	int len;

	len = snprintf(path, sizeof(path), "%s/%s", maildir, sub);
	ck_assert_msg(len > 0 && (size_t)len < sizeof(path),
	    "Maildir path too long: %s", maildir);
	d = opendir(path);
	ck_assert_msg(d != NULL, "opendir %s: %s", path, strerror(errno));
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	(void)closedir(d);
	return n;
}

/* Where Postfix's log ends now, for mta_log_count. */
static inline long
mta_log_mark(void)
{
	FILE *f = fopen(MTA_LOG, "r");
	long end = 0;

	if (f == NULL)
		return 0;
	if (fseek(f, 0, SEEK_END) == 0)
		end = ftell(f);
	(void)fclose(f);
	return end < 0 ? 0 : end;
}

/* Lines of Postfix's log after mark that contain both a and b (b may be
 * NULL). */
static inline size_t
mta_log_count(long mark, const char *a, const char *b)
{
	FILE *f = fopen(MTA_LOG, "r");
	char line[2048];
	size_t n = 0;

	if (f == NULL)
		return 0;
	if (fseek(f, mark, SEEK_SET) == 0) {
		while (fgets(line, sizeof(line), f) != NULL)
			n += strstr(line, a) != NULL &&
			    (b == NULL || strstr(line, b) != NULL);
	}
	(void)fclose(f);
	return n;
}

#endif /* FERRY_TESTS_MTA_H */
