/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's FIFO stream splitter (see smtp_mbox.h): a line
 * state machine over one buffer that holds the current mail from its
 * "From " line on. Every byte is scanned once.
 */
#include "smtp_mbox.h"

#include <errno.h>
#include <string.h>

/* A buffer this large is freed once it is empty, so that one big mail
 * does not pin its size for the rest of the run. */
#define MBOX_KEEP	(64 * 1024)

void
smtp_mbox_init(struct smtp_mbox *m, size_t max)
{
	memset(m, 0, sizeof(*m));
	buf_init(&m->in);
	m->max = max;
	m->state = SMTP_MBOX_SEEK;
}

void
smtp_mbox_done(struct smtp_mbox *m)
{
	buf_done(&m->in);
	m->scan = 0;
	m->state = SMTP_MBOX_SEEK;
	m->cut = false;
}

void
smtp_mbox_set_max(struct smtp_mbox *m, size_t max)
{
	m->max = max;
}

size_t
smtp_mbox_pending(const struct smtp_mbox *m)
{
	if (m->state != SMTP_MBOX_HEAD && m->state != SMTP_MBOX_BODY)
		return 0;
	return buf_size(&m->in);
}

/* Drops the first n bytes of the buffer; scanning goes on after them. */
static void
mbox_drop(struct smtp_mbox *m, size_t n)
{
	buf_consume(&m->in, n);
	m->scan -= n;
}

static void
mbox_start_mail(struct smtp_mbox *m)
{
	m->state = SMTP_MBOX_HEAD;
	m->boundary_len = 0;
}

/* The header section ended at offset end: remember the boundary. */
static void
mbox_head_done(struct smtp_mbox *m, size_t end)
{
	size_t len;

	if (smtp_mime_boundary((const char *)buf_head(&m->in), end,
	    m->boundary, sizeof(m->boundary), &len) == 0)
		m->boundary_len = len;
	else
		m->boundary_len = 0;
	m->state = SMTP_MBOX_BODY;
}

/* One complete line [start, m->scan) of p (len characters without the
 * line break) in the body of the current mail. */
static void
mbox_body_line(struct smtp_mbox *m, size_t start, const char *p, size_t len,
    bool from, smtp_mbox_fn *fn, void *cls)
{
	const char *mail = (const char *)buf_head(&m->in);

	if (from && m->blank) {
		/* the next mail begins: the current one is everything before
		 * (within the bound, or an earlier line would have said so) */
		fn(cls, mail, start, false);
		mbox_drop(m, start);
		mbox_start_mail(m);
		return;
	}
	if (m->scan <= m->max && m->boundary_len > 0 &&
	    smtp_mime_delimiter(p, len, m->boundary, m->boundary_len) == 2) {
		fn(cls, mail, m->scan, false);
		mbox_drop(m, m->scan);
		m->state = SMTP_MBOX_SEEK;
	}
}

/* Handles the line [start, next) of the buffer; next is past its LF. */
static void
mbox_line(struct smtp_mbox *m, size_t start, size_t next, smtp_mbox_fn *fn,
    void *cls)
{
	const char *p = (const char *)buf_head(&m->in) + start;
	size_t len = next - start - 1;
	bool empty, from;

	if (len > 0 && p[len - 1] == '\r')
		len--;
	empty = len == 0;
	from = len >= 5 && memcmp(p, "From ", 5) == 0;
	m->scan = next;
	switch (m->state) {
	case SMTP_MBOX_SEEK:
	case SMTP_MBOX_SKIP:
		/* Nothing before this line is kept in these states. */
		if (from && (m->state == SMTP_MBOX_SEEK || m->blank))
			mbox_start_mail(m);
		else
			mbox_drop(m, next);
		break;
	case SMTP_MBOX_HEAD:
		if (empty)
			mbox_head_done(m, next);
		break;
	case SMTP_MBOX_BODY:
		mbox_body_line(m, start, p, len, from, fn, cls);
		break;
	}
	m->blank = empty;
	if ((m->state == SMTP_MBOX_HEAD || m->state == SMTP_MBOX_BODY) &&
	    m->scan > m->max) {
		fn(cls, NULL, m->scan, true);
		mbox_drop(m, m->scan);
		m->state = SMTP_MBOX_SKIP;
	}
}

/* Whether an unfinished line of n characters may still become "From ". */
static bool
mbox_may_be_from(const char *p, size_t n)
{
	return memcmp(p, "From ", n < 5 ? n : 5) == 0;
}

/* After the complete lines: bounds what an unfinished line may hold, so
 * that the outcome never depends on where the stream was cut. */
static void
mbox_tail(struct smtp_mbox *m, smtp_mbox_fn *fn, void *cls)
{
	size_t held = buf_size(&m->in), part = held - m->scan;
	const char *head = (const char *)buf_head(&m->in);

	if (m->state == SMTP_MBOX_HEAD || m->state == SMTP_MBOX_BODY) {
		if (held <= m->max)
			return;
		if (m->state == SMTP_MBOX_BODY && m->blank &&
		    mbox_may_be_from(head + m->scan, part)) {
			/* Perhaps the next mail's From line: wait for its
			 * end, as long as that could fit a mail. */
			if (part <= m->max)
				return;
			fn(cls, head, m->scan, false);
			mbox_drop(m, m->scan);
			held = part;
		}
		fn(cls, NULL, held, true);
		m->state = SMTP_MBOX_SKIP;
		/* Keep the unfinished line for SKIP to judge at its end, as
		 * it would had the line come whole: only then is it known
		 * whether it is empty (a lone CR may be half of a CRLF), and
		 * so whether a "From " line after it starts the next mail.
		 * The line itself belongs to the refused mail and cannot
		 * start one, hence blank false. */
		mbox_drop(m, m->scan);
		m->blank = false;
		head = (const char *)buf_head(&m->in);
		held = part = buf_size(&m->in);
	}
	/* Between mails: nothing is kept but the unfinished line. */
	if (part <= SMTP_MBOX_LINE_MAX) {
		return;
	} else if (mbox_may_be_from(head, part) &&
	    (m->state == SMTP_MBOX_SEEK || m->blank)) {
		/* A long "From " line still starts a mail, as it would had it
		 * come whole: the rest of it is the mail's first line. */
		mbox_start_mail(m);
		if (held <= m->max)
			return;
		fn(cls, NULL, held, true);
		m->state = SMTP_MBOX_SKIP;
	}
	/* Too long for a "From " line, or part of an oversized mail: drop
	 * the rest of the line as it comes. */
	buf_reset(&m->in);
	m->scan = 0;
	m->cut = true;
	m->blank = false;
}

int
smtp_mbox_feed(struct smtp_mbox *m, const void *data, size_t len,
    smtp_mbox_fn *fn, void *cls)
{
	const char *p = data;
	const char *nl;

	if (m->cut) {
		nl = memchr(p, '\n', len);
		if (nl == NULL)
			return 0;
		len -= (size_t)(nl + 1 - p);
		p = nl + 1;
		m->cut = false;
	}
	if (buf_append(&m->in, p, len) < 0) {
		if (m->state == SMTP_MBOX_HEAD || m->state == SMTP_MBOX_BODY) {
			fn(cls, NULL, buf_size(&m->in) + len, true);
			m->state = SMTP_MBOX_SKIP;
		}
		buf_reset(&m->in);
		m->scan = 0;
		m->cut = true;
		m->blank = false;
		return -ENOMEM;
	}
	while (m->scan < buf_size(&m->in)) {
		const char *head = (const char *)buf_head(&m->in);
		size_t start = m->scan;

		nl = memchr(head + start, '\n', buf_size(&m->in) - start);
		if (nl == NULL)
			break;
		mbox_line(m, start, (size_t)(nl - head) + 1, fn, cls);
	}
	mbox_tail(m, fn, cls);
	if (buf_size(&m->in) == 0 && m->in.cap > MBOX_KEEP)
		buf_done(&m->in);
	return 0;
}
