/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's address as a HELO carries it (seed 004, III-B: the
 * advertisement "does not only contain an e-mail address but also a
 * filter line" that senders add to their mails):
 *
 *   0 u8  mail_len       1..SMTP_ADDR_MAIL_MAX
 *   1 u8  mail[mail_len] e-mail address, local@domain
 *     u8  filter[]       the rest: the filter line, "Name: value"
 *
 * Both are ASCII without CR, LF or NUL. The address must be a plain
 * dot-atom local part (letters, digits and #%*+-=?^_~ between dots) and a
 * host name: the address goes into an SMTP RCPT command and a To header,
 * and nothing a peer writes may inject commands or headers or reach the
 * shell or file deliveries of old MTAs ('|', '/', quotes). The filter line
 * follows smtp_mime_filter_parse(). Pure functions.
 */
#ifndef FERRY_PLUGINS_SMTP_ADDR_H
#define FERRY_PLUGINS_SMTP_ADDR_H

#include <stdbool.h>
#include <stddef.h>

#include "smtp_mime.h"

#define SMTP_ADDR_MAIL_MAX	SMTP_MIME_RCPT_MAX
#define SMTP_ADDR_LOCAL_MAX	64  /* RFC 5321 */
#define SMTP_ADDR_LABEL_MAX	63  /* RFC 1035 */
/* Largest HELO form: within FERRY_ADDR_MAX. */
#define SMTP_ADDR_MAX		(1 + SMTP_ADDR_MAIL_MAX + SMTP_MIME_FILTER_MAX)

/* A decoded address, NUL-terminated copies. */
struct smtp_addr {
	char mail[SMTP_ADDR_MAIL_MAX + 1];     /* local@domain */
	size_t mail_len;
	char filter[SMTP_MIME_FILTER_MAX + 1]; /* "Name: value" */
	size_t filter_len;
};

/* Checks the form of an e-mail address (see above). 0 or -EINVAL. */
int smtp_addr_check_mail(const char *mail, size_t len);
/* Decodes and checks a HELO address. 0 and *ret, or -EINVAL. */
int smtp_addr_decode(const void *addr, size_t len, struct smtp_addr *ret);
/* Writes the HELO form of mail and filter (both checked). 0 and
 * *ret_len, -EINVAL, or -ENOSPC if max is too small. */
int smtp_addr_encode(const char *mail, size_t mail_len, const char *filter,
    size_t filter_len, void *out, size_t max, size_t *ret_len);
/* "mail [filter]" for humans. 0, -EINVAL (malformed) or -ENOSPC. */
int smtp_addr_format(const void *addr, size_t len, char *buf, size_t size);
/* Whether a BLACKLIST value (addresses and "@domain" entries, separated
 * by blanks or commas) names mail: an address entry matches it whole, a
 * domain entry its domain and every subdomain; case does not matter. */
bool smtp_addr_listed(const char *list, const char *mail, size_t len);
/* Checks a BLACKLIST value: every entry a valid address or "@" and a
 * host name. 0 or -EINVAL. */
int smtp_addr_check_list(const char *list);
/* The domain part of a checked address (after its '@'). */
const char *smtp_addr_domain(const char *mail, size_t len);
/* The key under which mail counts against the per-destination cap: lower
 * case and without a "+extension", so that the sub-addresses of one
 * mailbox share one budget. Writes len + 1 bytes at most (NUL included)
 * to out and returns the key's length. */
size_t smtp_addr_budget_key(const char *mail, size_t len, char *out);

#endif /* FERRY_PLUGINS_SMTP_ADDR_H */
