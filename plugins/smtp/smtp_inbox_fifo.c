/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The paper's inbox (seed 004, III-B): a named pipe procmail writes each
 * ferry mail into, mbox style. We open it O_RDWR | O_NONBLOCK: Linux lets
 * a FIFO be opened for both, the open never waits for a writer, and as we
 * hold a write end ourselves a procmail closing its end is no EOF, so the
 * stream never ends and no mail is missed while reopening. (With no
 * reader at all, the non-blocking writer of ferry-smtp(7) fails with
 * EX_TEMPFAIL and the MTA keeps the mail for later.) Reads are bounded
 * per wake-up; smtp_mbox.c splits the stream into mails.
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "smtp_mbox.h"

#define SMTP_FIFO_CHUNK		(64 * 1024)   /* one read() */
#define SMTP_FIFO_BUDGET	(1024 * 1024) /* bytes per wake-up */
#define SMTP_FIFO_PIPE_SIZE	(1024 * 1024) /* kernel buffer we ask for */

struct smtp_fifo {
	struct smtp *s;	      /* owner */
	int fd;		      /* the FIFO, read and write */
	struct event *ev;     /* readable */
	struct smtp_mbox mbox; /* the stream, split into mails */
	char *chunk;	      /* SMTP_FIFO_CHUNK bytes for read() */
};

static void
smtp_fifo_on_mail(void *cls, const char *mail, size_t len, bool oversize)
{
	struct smtp_fifo *f = cls;
	struct smtp_inbox_rx rx;

	if (oversize) {
		smtp_inbox_oversize(f->s, len);
		return;
	}
	if (smtp_inbox_parse(f->s, mail, len, &rx) == SMTP_MIME_OK)
		smtp_inbox_deliver(f->s, &rx);
}

/* Reads up to budget bytes. Returns false after an error that reading
 * again would only repeat. */
static bool
smtp_fifo_read(struct smtp_fifo *f, size_t budget)
{
	size_t total = 0;
	ssize_t n;

	while (total < budget) {
		n = read(f->fd, f->chunk, SMTP_FIFO_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0) {
			/* EOF cannot happen while we hold a write end */
			(*f->s->st.inbox_errors)++;
			(void)plog_errno(&f->s->log, FERRY_LOG_ERR,
			    n < 0 ? -errno : -EPIPE, "reading the FIFO inbox");
			return false;
		}
		total += (size_t)n;
		if (smtp_mbox_feed(&f->mbox, f->chunk, (size_t)n,
		    smtp_fifo_on_mail, f) < 0)
			(*f->s->st.inbox_errors)++;
	}
	return true;
}

static void
smtp_fifo_readable(evutil_socket_t fd, short what, void *arg)
{
	struct smtp_fifo *f = arg;

	(void)fd;
	(void)what;
	/* What is left is read on the next round: other events first. */
	if (!smtp_fifo_read(f, SMTP_FIFO_BUDGET))
		(void)event_del(f->ev);
}

int
smtp_fifo_open(struct smtp *s, const char *path, struct smtp_fifo **ret)
{
	struct smtp_fifo *f;
	struct stat st;
	int r;

	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->s = s;
	f->fd = -1;
	smtp_mbox_init(&f->mbox, smtp_inbox_mail_max(s));
	f->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (f->fd < 0) {
		r = plog_errno(&s->log, FERRY_LOG_ERR, -errno,
		    "cannot open the FIFO inbox %s", path);
		goto fail;
	}
	if (fstat(f->fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		plog(&s->log, FERRY_LOG_ERR, "INBOX %s is not a FIFO", path);
		r = -EINVAL;
		goto fail;
	}
	/* A larger pipe lets procmail finish a mail without waiting for us
	 * (capped by fs.pipe-max-size; the default 64 KiB works too). */
	(void)fcntl(f->fd, F_SETPIPE_SZ, SMTP_FIFO_PIPE_SIZE);
	f->chunk = malloc(SMTP_FIFO_CHUNK);
	f->ev = event_new(s->core->base, f->fd, EV_READ | EV_PERSIST,
	    smtp_fifo_readable, f);
	if (f->chunk == NULL || f->ev == NULL || event_add(f->ev, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = f;
	return 0;
fail:
	smtp_fifo_close(f);
	return r;
}

void
smtp_fifo_close(struct smtp_fifo *f)
{
	if (f == NULL)
		return;
	/* No last read: the core called us and must not be called back
	 * (transport.h). Bytes left in the pipe stay there while their
	 * writer holds it open, and ferry-smtp(7)'s writer does until we
	 * have read them, or it fails with EX_TEMPFAIL and the MTA retries. */
	if (f->ev != NULL)
		event_free(f->ev);
	if (f->fd >= 0)
		(void)close(f->fd);
	smtp_mbox_done(&f->mbox);
	free(f->chunk);
	free(f);
}

void
smtp_fifo_set_max(struct smtp_fifo *f, size_t max)
{
	smtp_mbox_set_max(&f->mbox, max);
}
