/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Splits the byte stream procmail writes into the SMTP transport's FIFO
 * (seed 004, III-B) into mails. The stream is mbox-shaped: each mail
 * starts with a "From " line. A mail ends
 *  - just before a "From " line that follows an empty line (the next
 *    mail), or
 *  - at the end of the line closing its top-level multipart ("--B--"),
 *    so that a mail is handed on as soon as it is complete instead of
 *    when the next one arrives; lines after it, up to the next "From "
 *    line, are skipped.
 * Bytes before the first "From " line are skipped. A mail longer than the
 * bound is skipped up to the next mail and reported. The splitting does
 * not depend on how the stream is cut into pieces (a fuzz target checks
 * it), and the splitter holds at most twice the bound: a mail and the
 * start of a line that may begin the next. Pure: no I/O.
 */
#ifndef FERRY_PLUGINS_SMTP_MBOX_H
#define FERRY_PLUGINS_SMTP_MBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "smtp_mime.h"

/* Longest line kept while looking for a "From " line (a From line is
 * short; longer ones are dropped as they come). */
#define SMTP_MBOX_LINE_MAX	1024

/* A complete mail (oversize false), or a skipped one: mail NULL and len
 * the bytes it had when it passed the bound. Both are borrowed for the
 * call only; fn must not feed the splitter. */
typedef void smtp_mbox_fn(void *cls, const char *mail, size_t len,
    bool oversize);

enum smtp_mbox_state {
	SMTP_MBOX_SEEK, /* between mails: waiting for a "From " line */
	SMTP_MBOX_HEAD, /* in a mail's header section */
	SMTP_MBOX_BODY, /* in its body */
	SMTP_MBOX_SKIP, /* in an oversized mail */
};

struct smtp_mbox {
	struct buf in;		   /* the current mail, then unscanned bytes */
	size_t scan;		   /* bytes of in already split into lines */
	size_t max;		   /* largest mail handed on */
	enum smtp_mbox_state state;
	bool blank;		   /* the last line was empty */
	bool cut;		   /* dropping the rest of a long line */
	char boundary[SMTP_MIME_BOUNDARY_MAX + 1]; /* of the current mail */
	size_t boundary_len;	   /* 0: not multipart */
};

/* A splitter for mails of at most max bytes (From line included). */
void smtp_mbox_init(struct smtp_mbox *m, size_t max);
/* Frees its buffer; a partial mail is dropped. */
void smtp_mbox_done(struct smtp_mbox *m);
/* Changes the bound for mails that start from now on. */
void smtp_mbox_set_max(struct smtp_mbox *m, size_t max);
/* Takes len more bytes of the stream and calls fn for every mail they
 * complete. 0, or -ENOMEM: then the current mail is lost, as if oversized
 * (fn is told), and splitting goes on with the next one. */
int smtp_mbox_feed(struct smtp_mbox *m, const void *data, size_t len,
    smtp_mbox_fn *fn, void *cls);
/* Bytes held for a mail not yet complete (at most twice the bound). */
size_t smtp_mbox_pending(const struct smtp_mbox *m);

#endif /* FERRY_PLUGINS_SMTP_MBOX_H */
