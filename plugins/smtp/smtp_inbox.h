/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The receiving side of the SMTP transport (seed 004, III-B), internal to
 * the plugin: smtp_inbox.c parses what an inbox yields and hands units to
 * the core; smtp_inbox_fifo.c and smtp_inbox_maildir.c are the two kinds
 * of inbox procmail can fill.
 */
#ifndef FERRY_PLUGINS_SMTP_INBOX_H
#define FERRY_PLUGINS_SMTP_INBOX_H

#include <stddef.h>
#include <stdint.h>

#include "smtp_mime.h"

struct smtp;
struct smtp_fifo;
struct smtp_maildir;

enum smtp_inbox_type {
	SMTP_INBOX_AUTO,    /* what the path turns out to be */
	SMTP_INBOX_FIFO,    /* a named pipe procmail writes mbox text to */
	SMTP_INBOX_MAILDIR, /* a Maildir procmail delivers into */
};

/* Opens the configured inbox (none if INBOX is empty). 0 or a negative
 * errno, logged. */
int smtp_inbox_start(struct smtp *s);
/* Closes the inbox without reading on (the core called and must not be
 * called back): mail stays in the Maildir, or with its FIFO writer. */
void smtp_inbox_stop(struct smtp *s);
/* Applies a new MAX_MAIL_SIZE to the open inbox. */
void smtp_inbox_reconfigure(struct smtp *s);
/* Largest mail the inbox reads: MAX_MAIL_SIZE and room for the headers
 * of the receiving side (From line, Received, Delivered-To). */
size_t smtp_inbox_mail_max(const struct smtp *s);

/* A received unit between parsing and delivery; owns its buffer. */
struct smtp_inbox_rx {
	uint8_t *buf;		    /* decoded ferry part */
	struct smtp_mime_unit unit; /* points into buf */
};

/* Parses one mail read from the inbox (len at most the mail max) and
 * counts the verdict; for SMTP_MIME_OK *rx holds the unit: pass it to
 * smtp_inbox_deliver. On ENOMEM the mail counts as an inbox error and
 * SMTP_MIME_BROKEN is returned. */
enum smtp_mime_verdict smtp_inbox_parse(struct smtp *s, const char *mail,
    size_t len, struct smtp_inbox_rx *rx);
/* Hands the unit to the core (receive, ts NULL) and frees rx. */
void smtp_inbox_deliver(struct smtp *s, struct smtp_inbox_rx *rx);
/* A mail the inbox could not hold (over the mail max). */
void smtp_inbox_oversize(struct smtp *s, size_t len);

/* 0 and *ret, or a negative errno (logged). */
int smtp_fifo_open(struct smtp *s, const char *path, struct smtp_fifo **ret);
/* Closes the FIFO. NULL-safe. */
void smtp_fifo_close(struct smtp_fifo *f);
void smtp_fifo_set_max(struct smtp_fifo *f, size_t max);

/* 0 and *ret, or a negative errno (logged). */
int smtp_maildir_open(struct smtp *s, const char *path,
    struct smtp_maildir **ret);
/* NULL-safe. */
void smtp_maildir_close(struct smtp_maildir *md);
void smtp_maildir_reconfigure(struct smtp_maildir *md);

#endif /* FERRY_PLUGINS_SMTP_INBOX_H */
