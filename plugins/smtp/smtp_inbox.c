/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's receiving side (seed 004, III-B): opens the inbox
 * procmail fills (smtp_inbox_fifo.c, smtp_inbox_maildir.c), and turns each
 * mail read from it into a unit for the core, or into a counted drop:
 * foreign mail, broken MIME, bad base64, a bad envelope, or oversize.
 * Mail has no reply path, so the core gets no session (ts NULL); the
 * claimed sender id is also the origin key of its per-source limits: the
 * envelope sender is empty by design and every header is the sender's to
 * write, so nothing more stable exists in a mail.
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "smtp_base64.h"

/* Headers the receiving MTA and procmail add on top of what the sender's
 * MAX_MAIL_SIZE allowed: the From line, Return-Path, Delivered-To, a few
 * Received lines. */
#define SMTP_INBOX_SLACK	(64 * 1024)

size_t
smtp_inbox_mail_max(const struct smtp *s)
{
	return (size_t)s->set.max_mail + SMTP_INBOX_SLACK;
}

void
smtp_inbox_oversize(struct smtp *s, size_t len)
{
	(*s->st.drop_oversize)++;
	plog_peer(&s->log, "oversized mail dropped (%zu bytes seen, limit %zu)",
	    len, smtp_inbox_mail_max(s));
}

/* The filter lines a ferry mail may carry: ours, and the one before the
 * last reload while mail sent to it may still arrive. */
static size_t
smtp_inbox_filters(const struct smtp *s, struct smtp_mime_filter f[2])
{
	size_t n = 0;

	if (s->set.filter[0] != '\0')
		f[n++] = s->set.filter_parts;
	if (s->prev_filter != NULL)
		f[n++] = s->prev_parts;
	return n;
}

enum smtp_mime_verdict
smtp_inbox_parse(struct smtp *s, const char *mail, size_t len,
    struct smtp_inbox_rx *rx)
{
	struct smtp_mime_filter f[2];
	size_t n_filters = smtp_inbox_filters(s, f);
	size_t max = smtp_base64_decoded_max(len);
	enum smtp_mime_verdict v;

	memset(rx, 0, sizeof(*rx));
	rx->buf = malloc(max > 0 ? max : 1);
	if (rx->buf == NULL) {
		(*s->st.inbox_errors)++;
		plog(&s->log, FERRY_LOG_WARNING,
		    "no memory for a mail of %zu bytes: dropped", len);
		return SMTP_MIME_BROKEN;
	}
	v = smtp_mime_parse(mail, len, f, n_filters, rx->buf, max, &rx->unit);
	switch (v) {
	case SMTP_MIME_OK:
		return v;
	case SMTP_MIME_FOREIGN:
		(*s->st.drop_foreign)++;
		plog(&s->log, FERRY_LOG_DEBUG,
		    "mail without our filter line ignored");
		break;
	case SMTP_MIME_BROKEN:
		(*s->st.drop_broken)++;
		plog_peer(&s->log, "mail with our filter line but no usable MIME structure dropped");
		break;
	case SMTP_MIME_BASE64:
		(*s->st.drop_base64)++;
		plog_peer(&s->log, "mail whose ferry part is not strict base64 dropped");
		break;
	case SMTP_MIME_ENVELOPE:
		(*s->st.drop_envelope)++;
		plog_peer(&s->log, "mail whose ferry part has a bad envelope dropped");
		break;
	}
	free(rx->buf);
	rx->buf = NULL;
	return v;
}

void
smtp_inbox_deliver(struct smtp *s, struct smtp_inbox_rx *rx)
{
	struct ferry_message_pack mp;

	memset(&mp, 0, sizeof(mp));
	mp.ts = NULL; /* mail is one-way: nothing to reply on */
	mp.sender = &rx->unit.sender;
	mp.msg = rx->unit.unit;
	mp.len = rx->unit.len;
	mp.is_encrypted = rx->unit.is_encrypted;
	mp.crc = rx->unit.crc;
	mp.src = rx->unit.sender.bytes;
	mp.src_len = sizeof(rx->unit.sender.bytes);
	(*s->st.rx_mails)++;
	*s->st.rx_bytes += rx->unit.len;
	s->core->receive(s->core->cls, &mp);
	free(rx->buf);
	rx->buf = NULL;
}

/* What kind of inbox path is, for INBOX_TYPE = auto. */
static int
smtp_inbox_detect(const struct smtp *s, const char *path,
    enum smtp_inbox_type *ret)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return plog_errno(&s->log, FERRY_LOG_ERR, -errno,
		    "[transport-smtp] INBOX %s", path);
	if (S_ISFIFO(st.st_mode)) {
		*ret = SMTP_INBOX_FIFO;
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		*ret = SMTP_INBOX_MAILDIR;
		return 0;
	}
	plog(&s->log, FERRY_LOG_ERR,
	    "[transport-smtp] INBOX %s is neither a FIFO nor a Maildir", path);
	return -EINVAL;
}

int
smtp_inbox_start(struct smtp *s)
{
	const char *path = s->set.inbox;
	enum smtp_inbox_type type = s->set.inbox_type;
	int r;

	if (path[0] == '\0')
		return 0;
	if (type == SMTP_INBOX_AUTO) {
		r = smtp_inbox_detect(s, path, &type);
		if (r < 0)
			return r;
	}
	if (type == SMTP_INBOX_FIFO)
		r = smtp_fifo_open(s, path, &s->fifo);
	else
		r = smtp_maildir_open(s, path, &s->maildir);
	if (r < 0)
		return r;
	s->inbox_open = type;
	plog(&s->log, FERRY_LOG_INFO, "reading mail from %s %s",
	    type == SMTP_INBOX_FIFO ? "FIFO" : "Maildir", path);
	return 0;
}

void
smtp_inbox_stop(struct smtp *s)
{
	smtp_fifo_close(s->fifo);
	s->fifo = NULL;
	smtp_maildir_close(s->maildir);
	s->maildir = NULL;
	s->inbox_open = SMTP_INBOX_AUTO;
}

void
smtp_inbox_reconfigure(struct smtp *s)
{
	if (s->fifo != NULL)
		smtp_fifo_set_max(s->fifo, smtp_inbox_mail_max(s));
	if (s->maildir != NULL)
		smtp_maildir_reconfigure(s->maildir);
}
