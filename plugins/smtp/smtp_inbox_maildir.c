/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A Maildir inbox for the SMTP transport: the robust alternative to the
 * paper's FIFO. Mail waits in new/ while ferryd is down and is read at
 * start; inotify reports new mail, and a full read of new/ every
 * RESCAN_INTERVAL (and after an inotify queue overflow) catches whatever
 * it missed.
 *
 * Watched events: IN_CREATE and IN_MOVED_TO. A Maildir writer completes a
 * mail in tmp/ and then links (procmail, qmail: IN_CREATE) or renames
 * (Postfix, Dovecot: IN_MOVED_TO) it into new/, so a file that appears in
 * new/ is complete; IN_CLOSE_WRITE only ever comes from writers that skip
 * tmp/, and by then IN_CREATE has already announced the file.
 *
 * What happens to a file: mail carrying one of our filter lines (ferry
 * mail, good or broken) is deleted: it was addressed to ferryd alone, the
 * unit is handed on, and kept copies would fill the disk. The file goes
 * before the unit reaches the core, so a mail that crashed ferryd cannot
 * crash it again at every start. Mail without our filter line (INBOX may
 * be a user's own Maildir) and mail too large to read are moved to cur/,
 * untouched and still unread for a mail reader, and never looked at
 * again. Work per loop round is bounded in files and bytes.
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/time.h"

#define SMTP_MAILDIR_FILES	64		 /* files per loop round */
#define SMTP_MAILDIR_BYTES	(16 * 1024 * 1024) /* bytes per round */
#define SMTP_MAILDIR_EVBUF	4096		 /* inotify read buffer */

struct smtp_maildir {
	struct smtp *s;		 /* owner */
	char *path;		 /* the Maildir */
	int new_fd;		 /* new/, owned by scan */
	int cur_fd;		 /* cur/ */
	DIR *scan;		 /* reads new/ */
	bool scanning;		 /* a pass over new/ is under way */
	bool again;		 /* and another is wanted after it */
	int ino_fd;		 /* inotify */
	struct event *ino_ev;	 /* inotify readable */
	struct event *work_ev;	 /* runs the next step of a pass */
	struct event *rescan_ev; /* RESCAN_INTERVAL */
};

/* Starts a pass over new/, or asks for one after the current one. */
static void
smtp_maildir_want_pass(struct smtp_maildir *md)
{
	if (md->scanning) {
		md->again = true;
		return;
	}
	rewinddir(md->scan);
	md->scanning = true;
	event_active(md->work_ev, 0, 0);
}

/* Moves a file we do not consume to cur/ with an empty info part, as a
 * mail reader would once it has seen it. */
static void
smtp_maildir_keep(struct smtp_maildir *md, const char *name)
{
	char to[NAME_MAX + 8];

	if (strchr(name, ':') != NULL)
		(void)snprintf(to, sizeof(to), "%s", name);
	else
		(void)snprintf(to, sizeof(to), "%s:2,", name);
	if (renameat(md->new_fd, name, md->cur_fd, to) < 0 && errno != ENOENT) {
		(*md->s->st.inbox_errors)++;
		(void)plog_errno(&md->s->log, FERRY_LOG_WARNING, -errno,
		    "cannot move %s/new/%s to cur/", md->path, name);
	}
}

static void
smtp_maildir_remove(struct smtp_maildir *md, const char *name)
{
	if (unlinkat(md->new_fd, name, 0) < 0 && errno != ENOENT) {
		(*md->s->st.inbox_errors)++;
		(void)plog_errno(&md->s->log, FERRY_LOG_WARNING, -errno,
		    "cannot delete %s/new/%s", md->path, name);
	}
}

/* Reads all of fd (size bytes by fstat) into a new buffer. 0, *ret and
 * *ret_len, or a negative errno. */
static int
smtp_maildir_slurp(int fd, size_t size, char **ret, size_t *ret_len)
{
	char *buf = malloc(size > 0 ? size : 1);
	size_t got = 0;
	ssize_t n;

	if (buf == NULL)
		return -ENOMEM;
	while (got < size) {
		n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			free(buf);
			return (int)n;
		}
		if (n == 0)
			break; /* shrank under us: take what is there */
		got += (size_t)n;
	}
	*ret = buf;
	*ret_len = got;
	return 0;
}

/* Handles the file new/name. Returns the bytes it read. */
static size_t
smtp_maildir_file(struct smtp_maildir *md, const char *name)
{
	struct smtp *s = md->s;
	struct smtp_inbox_rx rx;
	enum smtp_mime_verdict v;
	struct stat st;
	char *mail = NULL;
	size_t len = 0;
	int fd, r;

	fd = openat(md->new_fd, name,
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT) { /* gone: handled in an earlier step */
			(*s->st.inbox_errors)++;
			(void)plog_errno(&s->log, FERRY_LOG_WARNING, -errno,
			    "cannot open %s/new/%s", md->path, name);
		}
		return 0;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		(void)close(fd);
		return 0; /* not a mail; leave it alone */
	}
	if ((uint64_t)st.st_size > smtp_inbox_mail_max(s)) {
		(void)close(fd);
		smtp_inbox_oversize(s, (size_t)st.st_size);
		smtp_maildir_keep(md, name);
		return 0;
	}
	r = smtp_maildir_slurp(fd, (size_t)st.st_size, &mail, &len);
	(void)close(fd);
	if (r < 0) {
		(*s->st.inbox_errors)++;
		(void)plog_errno(&s->log, FERRY_LOG_WARNING, r, "cannot read %s/new/%s",
		    md->path, name);
		return 0;
	}
	v = smtp_inbox_parse(s, mail, len, &rx);
	free(mail);
	if (v == SMTP_MIME_FOREIGN)
		smtp_maildir_keep(md, name);
	else
		smtp_maildir_remove(md, name);
	if (v == SMTP_MIME_OK)
		smtp_inbox_deliver(s, &rx);
	return len;
}

/* One step of a pass: a bounded number of files. */
static void
smtp_maildir_step(evutil_socket_t fd, short what, void *arg)
{
	struct smtp_maildir *md = arg;
	size_t files = 0, bytes = 0;
	struct dirent *de;

	(void)fd;
	(void)what;
	while (files < SMTP_MAILDIR_FILES && bytes < SMTP_MAILDIR_BYTES) {
		errno = 0;
		de = readdir(md->scan);
		if (de == NULL)
			break;
		if (de->d_name[0] == '.')
			continue;
		files++;
		bytes += smtp_maildir_file(md, de->d_name);
	}
	if (files < SMTP_MAILDIR_FILES && bytes < SMTP_MAILDIR_BYTES) {
		if (errno != 0) {
			(*md->s->st.inbox_errors)++;
			(void)plog_errno(&md->s->log, FERRY_LOG_WARNING, -errno,
			    "reading %s/new", md->path);
		}
		/* The pass is over. */
		md->scanning = false;
		if (!md->again)
			return;
		md->again = false;
		smtp_maildir_want_pass(md);
		return;
	}
	event_active(md->work_ev, 0, 0); /* more next round */
}

static void
smtp_maildir_notified(evutil_socket_t fd, short what, void *arg)
{
	struct smtp_maildir *md = arg;
	char buf[SMTP_MAILDIR_EVBUF]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	bool any = false;
	ssize_t n;

	(void)what;
	/* The names do not matter: a pass reads new/ in full. */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		any = true;
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		(*md->s->st.inbox_errors)++;
		(void)plog_errno(&md->s->log, FERRY_LOG_WARNING, -errno,
		    "reading inotify events");
	}
	if (any)
		smtp_maildir_want_pass(md);
}

static void
smtp_maildir_rescan(evutil_socket_t fd, short what, void *arg)
{
	struct smtp_maildir *md = arg;

	(void)fd;
	(void)what;
	(*md->s->st.inbox_rescans)++;
	smtp_maildir_want_pass(md);
}

/* Opens new/ and cur/ and the inotify watch on new/. */
static int
smtp_maildir_open_dirs(struct smtp_maildir *md)
{
	char sub[PATH_MAX];
	int dir_fd, r = 0;

	dir_fd = open(md->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		return -errno;
	md->new_fd = openat(dir_fd, "new", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (md->new_fd < 0)
		r = -errno;
	md->cur_fd = openat(dir_fd, "cur", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r == 0 && md->cur_fd < 0)
		r = -errno;
	(void)close(dir_fd);
	if (r < 0)
		return r;
	md->scan = fdopendir(md->new_fd);
	if (md->scan == NULL)
		return -errno;
	md->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (md->ino_fd < 0)
		return -errno;
	if ((size_t)snprintf(sub, sizeof(sub), "%s/new", md->path) >=
	    sizeof(sub))
		return -ENAMETOOLONG;
	if (inotify_add_watch(md->ino_fd, sub,
	    IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0)
		return -errno;
	return 0;
}

void
smtp_maildir_reconfigure(struct smtp_maildir *md)
{
	struct timeval tv;

	time_us_to_tv(md->s->set.rescan_us, &tv);
	(void)event_add(md->rescan_ev, &tv);
}

int
smtp_maildir_open(struct smtp *s, const char *path,
    struct smtp_maildir **ret)
{
	struct event_base *base = s->core->base;
	struct smtp_maildir *md;
	int r;

	md = calloc(1, sizeof(*md));
	if (md == NULL)
		return -ENOMEM;
	md->s = s;
	md->new_fd = md->cur_fd = md->ino_fd = -1;
	md->path = strdup(path);
	if (md->path == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	r = smtp_maildir_open_dirs(md);
	if (r < 0) {
		(void)plog_errno(&s->log, FERRY_LOG_ERR, r,
		    "cannot use %s as a Maildir (it needs new/ and cur/)",
		    path);
		goto fail;
	}
	md->ino_ev = event_new(base, md->ino_fd, EV_READ | EV_PERSIST,
	    smtp_maildir_notified, md);
	md->work_ev = event_new(base, -1, 0, smtp_maildir_step, md);
	md->rescan_ev = event_new(base, -1, EV_PERSIST, smtp_maildir_rescan,
	    md);
	if (md->ino_ev == NULL || md->work_ev == NULL ||
	    md->rescan_ev == NULL || event_add(md->ino_ev, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	smtp_maildir_reconfigure(md);
	/* Mail that came while we were away. */
	smtp_maildir_want_pass(md);
	*ret = md;
	return 0;
fail:
	smtp_maildir_close(md);
	return r;
}

void
smtp_maildir_close(struct smtp_maildir *md)
{
	if (md == NULL)
		return;
	if (md->ino_ev != NULL)
		event_free(md->ino_ev);
	if (md->work_ev != NULL)
		event_free(md->work_ev);
	if (md->rescan_ev != NULL)
		event_free(md->rescan_ev);
	if (md->ino_fd >= 0)
		(void)close(md->ino_fd);
	if (md->scan != NULL)
		(void)closedir(md->scan); /* closes new_fd */
	else if (md->new_fd >= 0)
		(void)close(md->new_fd);
	if (md->cur_fd >= 0)
		(void)close(md->cur_fd);
	free(md->path);
	free(md);
}
