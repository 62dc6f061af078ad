/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's mail format (seed 004, III-A and III-C), written by
 * smtp_mime_compose() and read back by smtp_mime_parse(). Pure functions.
 *
 * A ferry mail looks like a bounce, so that mailing-list software drops it
 * (III-C): the envelope sender is empty (the caller's job) and
 *
 *   Date: Sat, 22 Nov 2025 11:27:06 +0000
 *   From: Mail Delivery System <MAILER-DAEMON@DOMAIN>
 *   To: <RCPT>
 *   Subject: Undelivered Mail Returned to Sender
 *   Message-ID: <TOKEN@DOMAIN>
 *   MIME-Version: 1.0
 *   Auto-Submitted: auto-replied
 *   FILTER LINE OF THE RECEIVER        (III-B; what its procmail matches)
 *   Content-Type: multipart/report; report-type=delivery-status;
 *           boundary="TOKEN"
 *
 *   --TOKEN  text/plain notification
 *   --TOKEN  message/delivery-status report
 *   --TOKEN  application/octet-stream, base64: the envelope below
 *   --TOKEN--
 *
 * with CRLF line endings and base64 lines of 76 characters. The ferry
 * part carries what the paper's transport adds to the core's unit (III-A:
 * "a header that contains the node identity of the sender and the
 * meta-information provided in the parameters of send"), then the unit,
 * all inside the base64, so no fixed header text marks ferry mail:
 *
 *    0 u8  version      SMTP_MIME_ENV_VERSION
 *    1 u8  flags        bit 0: is_encrypted; the other bits zero
 *    2 u16 reserved     zero
 *    4 u32 crc          as passed to send()
 *    8 u32 unit_len     bytes of unit; exactly what is left
 *   12 u8  sender[32]   the sending peer's identity
 *   44 u8  unit[unit_len]
 *
 * The reader accepts LF or CRLF line endings, a leading mbox "From " line,
 * folded headers and any MTA-added headers, and identifies the ferry part
 * by its type and encoding, not by its position.
 */
#ifndef FERRY_PLUGINS_SMTP_MIME_H
#define FERRY_PLUGINS_SMTP_MIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

#define SMTP_MIME_ENV_VERSION	1
#define SMTP_MIME_ENV_LEN	44   /* envelope bytes before the unit */
#define SMTP_MIME_TOKEN_LEN	32   /* hex characters of a mail's token */
#define SMTP_MIME_RCPT_MAX	254  /* RFC 5321 path limit less "<>" */
#define SMTP_MIME_DOMAIN_MAX	253  /* RFC 1035 name limit */
#define SMTP_MIME_FILTER_MAX	200  /* filter line, "Name: value" */
#define SMTP_MIME_FILTER_NAME_MAX 64 /* its header name */
#define SMTP_MIME_BOUNDARY_MAX	70   /* RFC 2046 */
/* Our headers and the two report parts never exceed this (checked). */
#define SMTP_MIME_HEAD_MAX	4096
/* Room left in a mail for what MTAs add on the way: Received lines
 * (~250 bytes each), Return-Path, Delivered-To, and Postfix's envelope
 * records, which count against its message_size_limit. */
#define SMTP_MIME_MTA_RESERVE	12288

/* A filter line split into its parts (pointers into the line). */
struct smtp_mime_filter {
	const char *name;  /* header name, as given */
	size_t name_len;
	const char *value; /* value without surrounding blanks */
	size_t value_len;
};

/* What smtp_mime_compose() writes besides the unit. */
struct smtp_mime_meta {
	const char *rcpt;     /* receiver's address, checked by smtp_addr */
	const char *filter;   /* receiver's filter line, checked */
	const char *domain;   /* sender's mail domain: From, Message-ID */
	const char *token;    /* SMTP_MIME_TOKEN_LEN random hex characters */
	uint64_t date;	      /* seconds since the epoch, for Date */
	const struct ferry_peer_id *sender; /* our identity */
	bool is_encrypted;    /* send()'s flag */
	uint32_t crc;	      /* send()'s CRC */
};

/* Why smtp_mime_parse() refused a mail; each has its own counter. */
enum smtp_mime_verdict {
	SMTP_MIME_OK = 0,
	SMTP_MIME_FOREIGN,  /* none of our filter lines: not ferry mail */
	SMTP_MIME_BROKEN,   /* headers or MIME structure unusable, or no
			     * (or more than one) ferry part */
	SMTP_MIME_BASE64,   /* the ferry part is not strict base64 */
	SMTP_MIME_ENVELOPE, /* decoded, but not a ferry envelope */
};

/* A parsed ferry mail; unit points into the caller's buffer. */
struct smtp_mime_unit {
	struct ferry_peer_id sender; /* claimed by the sender */
	bool is_encrypted;	     /* as passed to its send() */
	uint32_t crc;		     /* as passed to its send() */
	const uint8_t *unit;	     /* the core's unit */
	size_t len;		     /* its length, at least 1 */
};

/* Checks and splits a filter line "Name: value": a header name of
 * printable ASCII without ':' (at most SMTP_MIME_FILTER_NAME_MAX), then
 * ':', blanks, and a value of printable ASCII without leading or trailing
 * blanks; at most SMTP_MIME_FILTER_MAX in all. Names that the mail format
 * writes itself or that steer delivery (From, To, Content-*, Resent-*, ...)
 * are refused. 0 and *ret (pointing into line), or -EINVAL. */
int smtp_mime_filter_parse(const char *line, size_t len,
    struct smtp_mime_filter *ret);

/* Largest unit whose mail stays within mail_max bytes including
 * SMTP_MIME_MTA_RESERVE; 0 if none fits. */
size_t smtp_mime_unit_max(size_t mail_max);

/* Writes the mail for unit (len bytes, at least 1) into a new allocation:
 * 0, *ret_mail (the caller frees it) and *ret_len; -EINVAL if a field of
 * m is missing or too long, -ENOMEM. */
int smtp_mime_compose(const struct smtp_mime_meta *m, const void *unit,
    size_t len, char **ret_mail, size_t *ret_len);

/*
 * Reads one mail (len bytes). It is ferry mail if one of its headers
 * equals one of the n_filters filter lines (name compared without case,
 * value exactly); then the ferry part is decoded into buf (max bytes;
 * smtp_base64_decoded_max(len) always suffices, less may give
 * SMTP_MIME_BROKEN). SMTP_MIME_OK and *ret, or why not.
 */
enum smtp_mime_verdict smtp_mime_parse(const char *mail, size_t len,
    const struct smtp_mime_filter *filters, size_t n_filters, uint8_t *buf,
    size_t max, struct smtp_mime_unit *ret);

/* The boundary of the top-level multipart, from the header section of a
 * mail (head, len bytes, up to and possibly including the empty line).
 * 0 and out (NUL-terminated; size > SMTP_MIME_BOUNDARY_MAX) with
 * *ret_len, or -ENOENT if the mail is not multipart or has no usable
 * boundary. */
int smtp_mime_boundary(const char *head, size_t len, char *out, size_t size,
    size_t *ret_len);

/* Whether line (without its line break) is a delimiter of boundary b:
 * 1 for "--b", 2 for the closing "--b--", 0 for neither. Trailing blanks
 * are allowed, as RFC 2046 says. */
int smtp_mime_delimiter(const char *line, size_t len, const char *b,
    size_t b_len);

#endif /* FERRY_PLUGINS_SMTP_MIME_H */
