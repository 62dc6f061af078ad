/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP inbox layout that ferry-smtp(7) and conf/procmailrc.example
 * give for ferryd under its systemd unit (issue 6, "The service"): real
 * procmail, run as the system's mail user (not in ferryd's group), files
 * mail with the example's own recipe into a Maildir (or FIFO) owned by
 * that account and the group ferry, setgid; ferryd, running as a user of
 * its own in a user namespace like the unit's PrivateUsers=yes, reads and
 * removes it through the group. The example's path /var/spool/ferry is
 * moved into the test's directory; nothing else of it changes. Without
 * the recipe's UMASK=007 ferryd could not read the mail, which a control
 * case shows. Needs root, procmail and a user "mail" (procmail needs
 * an account that exists); skips otherwise.
 */
/* ctest: TIMEOUT=300 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "asuser.h"
#include "harness.h"
#include "lib/fsutil.h"
#include "mesh.h"

#define FERRY_GID 4800 /* the unit's user and group ferry */
#define PROCMAIL  "/usr/bin/procmail"
#define FIFOWRITE "/usr/local/lib/ferry-mta/fifo-write"
#define SPOOL     "/var/spool/ferry/"
#define FILTER    "X-Loop-Check: 7f3a9c"

static struct harness *h;
static char spool[512]; /* the test's /var/spool/ferry, without the '/' */
static uid_t mail_uid;  /* the account procmail runs as */
static gid_t mail_gid;

static void
setup(void)
{
	ck_assert_int_eq(harness_new("inbox", &h), 0);
	ck_assert_int_lt(snprintf(spool, sizeof(spool), "%s/spool",
	                     harness_dir(h)),
	    (int)sizeof(spool));
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
	asuser_reset();
}

static bool
can_run(const char *what)
{
	struct passwd *pw;

	if (!asuser_root_or_skip(what))
		return false;
	if (access(PROCMAIL, X_OK) != 0) {
		fprintf(stderr, "SKIP: %s needs %s\n", what, PROCMAIL);
		return false;
	}
	pw = getpwnam("mail");
	if (pw == NULL || pw->pw_uid == 0 || pw->pw_gid == FERRY_GID) {
		fprintf(stderr, "SKIP: %s needs a user 'mail'\n", what);
		return false;
	}
	mail_uid = pw->pw_uid;
	mail_gid = pw->pw_gid;
	return true;
}

/* install -d -o owner -g group -m mode */
static void
make_dir(const char *path, uid_t owner, gid_t group, mode_t mode)
{
	ck_assert_msg(mkdir(path, 0700) == 0, "mkdir %s: %s", path,
	    strerror(errno));
	ck_assert_int_eq(chown(path, owner, group), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static char *
join(char *buf, size_t size, const char *a, const char *b)
{
	ck_assert_int_lt(snprintf(buf, size, "%s/%s", a, b), (int)size);
	return buf;
}

/* The layout of conf/procmailrc.example under spool. */
static void
make_spool(bool fifo)
{
	char p[640];

	make_dir(spool, 0, 0, 0755);
	if (fifo) {
		make_dir(join(p, sizeof(p), spool, "fifo"), mail_uid, FERRY_GID,
		    02770);
		ck_assert_int_eq(mkfifo(join(p, sizeof(p), spool,
		                            "fifo/inbox.fifo"),
		                     0660),
		    0);
		ck_assert_int_eq(chown(p, mail_uid, FERRY_GID), 0);
		ck_assert_int_eq(chmod(p, 0660), 0);
		return;
	}
	make_dir(join(p, sizeof(p), spool, "Maildir"), mail_uid, FERRY_GID,
	    02770);
	make_dir(join(p, sizeof(p), spool, "Maildir/tmp"), mail_uid, FERRY_GID,
	    02770);
	make_dir(join(p, sizeof(p), spool, "Maildir/new"), mail_uid, FERRY_GID,
	    02770);
	make_dir(join(p, sizeof(p), spool, "Maildir/cur"), mail_uid, FERRY_GID,
	    02770);
}

/*
 * The example recipe file with /var/spool/ferry/ moved under the test's
 * directory. fifo: its FIFO recipe instead of the Maildir one, as the
 * file tells (drop the live recipe, uncomment the "#:0"-style lines).
 * umask, if not NULL, replaces the UMASK line's value.
 */
static void
write_rc(const char *path, bool fifo, const char *umask)
{
	char *text = NULL, *save = NULL;
	uint8_t *data;
	size_t len;
	char src[4096];
	bool skipping = false;
	FILE *f;

	(void)snprintf(src, sizeof(src), "%s/conf/procmailrc.example",
	    FERRY_SOURCE_DIR);
	ck_assert_int_eq(fs_read_file(src, 1 << 20, &data, &len), 0);
	text = (char *)data;
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		char *at;

		if (fifo && strncmp(l, ":0", 2) == 0)
			skipping = true; /* the Maildir recipe */
		if (skipping) {
			skipping = l[0] != '/'; /* its last line */
			continue;
		}
		if (fifo && l[0] == '#' && l[1] != ' ' && l[1] != '\0')
			l++;
		if (umask != NULL && strncmp(l, "UMASK=", 6) == 0) {
			fprintf(f, "UMASK=%s\n", umask);
			continue;
		}
		at = strstr(l, SPOOL);
		if (at != NULL)
			fprintf(f, "%.*s%s/%s\n", (int)(at - l), l, spool,
			    at + strlen(SPOOL));
		else
			fprintf(f, "%s\n", l);
	}
	ck_assert_int_eq(fclose(f), 0);
	free(text);
}

struct delivery {
	const char *rc;
	const char *mail;
};

/* Runs as the mail account: procmail RC < MAIL, as the MTA would. */
static int
deliver_fn(void *cls)
{
	struct delivery *dl = cls;
	char *argv[] = { (char *)PROCMAIL, (char *)dl->rc, NULL };
	char *envp[] = { (char *)"HOME=/", (char *)"PATH=/usr/bin:/bin",
		(char *)"LOGNAME=mail", NULL };
	int fd = open(dl->mail, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
		return 100;
	execve(argv[0], argv, envp);
	return 101;
}

static int
deliver(const char *rc, const char *mail)
{
	struct asuser mailer = { .uid = mail_uid, .gid = mail_gid };
	struct delivery dl = { rc, mail };

	return asuser_run(&mailer, deliver_fn, &dl);
}

/* ferryd as the unit runs it, with the SMTP transport reading inbox. */
static struct harness_daemon *
start_ferryd(const char *inbox)
{
	struct asuser ferry = { .uid = FERRY_GID,
		.gid = FERRY_GID,
		.private_users = true };
	struct harness_daemon *d;

	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_transports(d, "smtp"), 0);
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[transport-smtp]\nFILTER = %s\nINBOX = %s\n",
	                     FILTER, inbox),
	    0);
	ck_assert_int_eq(asuser_daemon(d, &ferry), 0);
	if (harness_daemon_start_ready(d) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferryd did not start as the unit's user");
	}
	return d;
}

/* Files in dir, but for dot files. */
static size_t
count_files(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	(void)closedir(d);
	return n;
}

static void
wait_stat(struct harness_daemon *d, const char *name, uint64_t value)
{
	if (!mesh_wait_stat(d, name, value, 10000)) {
		harness_dump_logs(h);
		ck_abort_msg("%s did not reach %llu", name,
		    (unsigned long long)value);
	}
}

static void
write_mail(const char *path, const char *body)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fprintf(f,
	    "From: MAILER-DAEMON@example.org\n"
	    "To: ferrymail@example.org\n"
	    "Subject: Undelivered Mail Returned to Sender\n"
	    "%s\n"
	    "\n"
	    "%s\n",
	    FILTER, body);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_maildir)
{
	struct harness_daemon *d;
	char rc[640], rc077[640], mail[640], new_dir[640], p[900];
	struct dirent *de;
	struct stat st;
	DIR *dir;

	if (!can_run("test_maildir"))
		return;
	ck_assert_int_eq(asuser_open_dir(harness_dir(h)), 0);
	make_spool(false);
	write_rc(join(rc, sizeof(rc), harness_dir(h), "procmailrc"), false,
	    NULL);
	write_rc(join(rc077, sizeof(rc077), harness_dir(h), "procmailrc.077"),
	    false, "077");
	write_mail(join(mail, sizeof(mail), harness_dir(h), "mail"),
	    "not a ferry unit");
	join(new_dir, sizeof(new_dir), spool, "Maildir/new");

	/* While ferryd is down the mail waits, group ferry's, 0660. */
	ck_assert_int_eq(deliver(rc, mail), 0);
	ck_assert_uint_eq(count_files(new_dir), 1);
	dir = opendir(new_dir);
	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir)) != NULL && de->d_name[0] == '.')
		;
	ck_assert_ptr_nonnull(de);
	ck_assert_int_eq(stat(join(p, sizeof(p), new_dir, de->d_name), &st), 0);
	(void)closedir(dir);
	ck_assert_uint_eq(st.st_uid, mail_uid);
	ck_assert_uint_eq(st.st_gid, FERRY_GID);
	ck_assert_uint_eq(st.st_mode & 0777, 0660);

	/* ferryd takes it at start: read (it is no ferry mail, so it is
	 * counted as broken) and removed. */
	(void)snprintf(p, sizeof(p), "%s/Maildir", spool);
	d = start_ferryd(p);
	wait_stat(d, "smtp.drop_broken", 1);
	ck_assert_uint_eq(mesh_stat(d, "smtp.inbox_errors"), 0);
	ck_assert_uint_eq(count_files(new_dir), 0);

	/* And one more while it runs. */
	ck_assert_int_eq(deliver(rc, mail), 0);
	wait_stat(d, "smtp.drop_broken", 2);
	ck_assert_uint_eq(count_files(new_dir), 0);

	/* Control: with procmail's default umask ferryd is locked out. */
	ck_assert_int_eq(deliver(rc077, mail), 0);
	wait_stat(d, "smtp.inbox_errors", 1);
	ck_assert_uint_eq(mesh_stat(d, "smtp.drop_broken"), 2);
	ck_assert_uint_eq(count_files(new_dir), 1);
}
END_TEST

START_TEST(test_fifo)
{
	struct harness_daemon *d;
	char rc[640], mail[640], p[640];

	if (!can_run("test_fifo"))
		return;
	if (access(FIFOWRITE, X_OK) != 0) {
		fprintf(stderr,
		    "SKIP: test_fifo needs %s (tests/mta/setup-mta.sh installs it)\n",
		    FIFOWRITE);
		return;
	}
	ck_assert_int_eq(asuser_open_dir(harness_dir(h)), 0);
	make_spool(true);
	write_rc(join(rc, sizeof(rc), harness_dir(h), "procmailrc"), true,
	    NULL);
	write_mail(join(mail, sizeof(mail), harness_dir(h), "mail"),
	    "not a ferry unit either");
	/* Nobody reads yet: the recipe makes the MTA try again later. */
	ck_assert_int_eq(deliver(rc, mail), 75);
	d = start_ferryd(join(p, sizeof(p), spool, "fifo/inbox.fifo"));
	/* Without a MIME structure a mail in the stream ends where the
	 * next one's "From " line begins: send two. */
	ck_assert_int_eq(deliver(rc, mail), 0);
	ck_assert_int_eq(deliver(rc, mail), 0);
	wait_stat(d, "smtp.drop_broken", 1);
	ck_assert_uint_eq(mesh_stat(d, "smtp.inbox_errors"), 0);
}
END_TEST

static Suite *
inbox_suite(void)
{
	Suite *s = suite_create("service_inbox");
	TCase *tc = tcase_create("service_inbox");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_maildir);
	tcase_add_test(tc, test_fifo);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	/* This program also starts ferryd in a user namespace. */
	asuser_main(argc, argv);
	sr = srunner_create(inbox_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
