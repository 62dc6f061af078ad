/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's mail format and FIFO stream splitter,
 * plugins/smtp/smtp_mime.c and smtp_mbox.c, on canned mails: a valid
 * ferry mail as composed and as an MTA delivers it (LF lines, a From
 * line, added headers), foreign mail, broken MIME, bad base64, bad
 * envelopes, a missing filter line, and several mails in one stream cut
 * at every byte boundary. The sources are compiled in: unit tests do not
 * link the plugin.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "unit.h"

#include "../../plugins/smtp/smtp_base64.c"
#include "../../plugins/smtp/smtp_mbox.c"
#include "../../plugins/smtp/smtp_mime.c"

#define FILTER "X-Ferry-Test: run-4711"
#define TOKEN  "00112233445566778899aabbccddeeff"

static struct ferry_peer_id sender_id;
static struct smtp_mime_filter filt;

static void
setup(void)
{
	memset(sender_id.bytes, 0x5a, sizeof(sender_id.bytes));
	ck_assert_int_eq(smtp_mime_filter_parse(FILTER, strlen(FILTER), &filt),
	    0);
}

/* A ferry mail for unit (len bytes); free it. */
static char *
compose(const void *unit, size_t len, size_t *ret_len)
{
	struct smtp_mime_meta m = {
		.rcpt = "peer1@localhost",
		.filter = FILTER,
		.domain = "example.org",
		.token = TOKEN,
		.date = 1732272426,
		.sender = &sender_id,
		.is_encrypted = true,
		.crc = 0xdeadbeef,
	};
	char *mail;

	ck_assert_int_eq(smtp_mime_compose(&m, unit, len, &mail, ret_len), 0);
	return mail;
}

/* Parses text (NUL-terminated) with our filter. */
static enum smtp_mime_verdict
parse(const char *text, size_t len, struct smtp_mime_unit *u, uint8_t **buf)
{
	size_t max = smtp_base64_decoded_max(len);

	*buf = malloc(max + 1);
	ck_assert_ptr_nonnull(*buf);
	return smtp_mime_parse(text, len, &filt, 1, *buf, max, u);
}

static enum smtp_mime_verdict
verdict(const char *text)
{
	struct smtp_mime_unit u;
	uint8_t *buf;
	enum smtp_mime_verdict v = parse(text, strlen(text), &u, &buf);

	free(buf);
	return v;
}

/* The mail as a Postfix + procmail delivery leaves it: LF line ends, an
 * mbox From line and the MTA's headers on top. */
static char *
as_delivered(const char *mail, size_t len, size_t *ret_len)
{
	static const char top[] =
	    "From MAILER-DAEMON  Sat Nov 22 11:27:20 2025\n"
	    "Return-Path: <>\n"
	    "X-Original-To: peer1@localhost\n"
	    "Delivered-To: peer1@localhost\n"
	    "Received: from vm (localhost [127.0.0.1])\n"
	    "\tby vm (Postfix) with ESMTP id E9CB8BA6E4\n"
	    "\tfor <peer1@localhost>; Sat, 22 Nov 2025 11:27:17 +0000 (UTC)\n";
	char *out = malloc(sizeof(top) + len);
	size_t w = sizeof(top) - 1;

	ck_assert_ptr_nonnull(out);
	memcpy(out, top, w);
	for (size_t i = 0; i < len; i++)
		if (mail[i] != '\r')
			out[w++] = mail[i];
	out[w] = '\0';
	*ret_len = w;
	return out;
}

START_TEST(round_trip)
{
	uint8_t unit[3000];
	struct smtp_mime_unit u;
	size_t len;
	uint8_t *buf;
	char *mail;

	for (size_t i = 0; i < sizeof(unit); i++)
		unit[i] = (uint8_t)(i * 31 + 7);
	mail = compose(unit, sizeof(unit), &len);
	ck_assert_int_eq(parse(mail, len, &u, &buf), SMTP_MIME_OK);
	ck_assert_uint_eq(u.len, sizeof(unit));
	ck_assert_mem_eq(u.unit, unit, sizeof(unit));
	ck_assert_mem_eq(u.sender.bytes, sender_id.bytes, FERRY_PEER_ID_LEN);
	ck_assert(u.is_encrypted);
	ck_assert_uint_eq(u.crc, 0xdeadbeef);
	free(buf);
	free(mail);
}
END_TEST

START_TEST(looks_like_a_bounce)
{
	static const char *const wanted[] = {
		"\r\nFrom: Mail Delivery System <MAILER-DAEMON@example.org>\r\n",
		"\r\nTo: <peer1@localhost>\r\n",
		"\r\nSubject: Undelivered Mail Returned to Sender\r\n",
		"\r\nAuto-Submitted: auto-replied\r\n",
		"\r\n" FILTER "\r\n",
		"\r\nContent-Type: multipart/report; report-type=delivery-status;\r\n\tboundary=\"" TOKEN
		"\"\r\n",
		"\r\nContent-Type: message/delivery-status\r\n",
		"\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n",
	};
	uint8_t unit[500] = { 1 };
	size_t len, col = 0;
	char *mail = compose(unit, sizeof(unit), &len), *text;

	ck_assert(strncmp(mail, "Date: Fri, 22 Nov 2024 10:47:06 +0000\r\n",
	              39) == 0);
	text = strndup(mail, len);
	ck_assert_ptr_nonnull(text);
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		ck_assert_msg(strstr(text, wanted[i]) != NULL, "missing %s",
		    wanted[i]);
	/* CRLF everywhere, no bare LF or CR, lines of at most 78 */
	for (size_t i = 0; i < len; i++) {
		if (mail[i] == '\n') {
			ck_assert_int_eq(mail[i - 1], '\r');
			col = 0;
		} else if (mail[i] == '\r') {
			ck_assert_int_eq(mail[i + 1], '\n');
		} else {
			ck_assert_uint_le(++col, 78);
		}
	}
	ck_assert_str_eq(text + len - strlen("--" TOKEN "--\r\n"),
	    "--" TOKEN "--\r\n");
	free(text);
	free(mail);
}
END_TEST

START_TEST(delivered_with_lf_and_mta_headers)
{
	uint8_t unit[200];
	struct smtp_mime_unit u;
	size_t len, dlen;
	uint8_t *buf;
	char *mail, *d;

	memset(unit, 0xab, sizeof(unit));
	mail = compose(unit, sizeof(unit), &len);
	d = as_delivered(mail, len, &dlen);
	ck_assert_int_eq(parse(d, dlen, &u, &buf), SMTP_MIME_OK);
	ck_assert_uint_eq(u.len, sizeof(unit));
	ck_assert_mem_eq(u.unit, unit, sizeof(unit));
	free(buf);
	free(d);
	free(mail);
}
END_TEST

/* The composed mail with the first occurrence of from replaced by to. */
static char *
edited(const char *from, const char *to)
{
	uint8_t unit[100];
	size_t len;
	char *mail, *text, *p, *out;

	memset(unit, 0x42, sizeof(unit));
	mail = compose(unit, sizeof(unit), &len);
	text = strndup(mail, len);
	free(mail);
	ck_assert_ptr_nonnull(text);
	p = strstr(text, from);
	ck_assert_msg(p != NULL, "no '%s' in the mail", from);
	out = malloc(strlen(text) + strlen(to) + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, text, (size_t)(p - text));
	strcpy(out + (p - text), to);
	strcat(out, p + strlen(from));
	free(text);
	return out;
}

static void
expect_edit(const char *from, const char *to, enum smtp_mime_verdict v)
{
	char *text = edited(from, to);

	ck_assert_msg(verdict(text) == v, "'%s' -> '%s': verdict %d, not %d",
	    from, to, verdict(text), v);
	free(text);
}

START_TEST(filter_line_decides_foreign)
{
	/* another value: not ours */
	expect_edit(FILTER, "X-Ferry-Test: run-4712", SMTP_MIME_FOREIGN);
	/* the name in other case, blanks around the value: ours */
	expect_edit(FILTER, "x-ferry-test:   run-4711 ", SMTP_MIME_OK);
	/* no filter line at all */
	expect_edit(FILTER, "X-Other: run-4711", SMTP_MIME_FOREIGN);
	/* an ordinary mail, and nothing */
	ck_assert_int_eq(verdict("From: a@b\nTo: c@d\nSubject: hi\n\nhello\n"),
	    SMTP_MIME_FOREIGN);
	ck_assert_int_eq(verdict(""), SMTP_MIME_FOREIGN);
}
END_TEST

START_TEST(filter_line_folded_in_transit)
{
	const char *mail =
	    "X-Ferry-Test:\r\n run-4711\r\n"
	    "Content-Type: multipart/mixed; boundary=b\r\n\r\n"
	    "--b\r\nContent-Type: application/octet-stream\r\n"
	    "Content-Transfer-Encoding: base64\r\n\r\n"
	    "AQAAAAAAAAAAAAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB4\r\n"
	    "--b--\r\n";

	/* a minimal hand-made ferry mail: version 1, no flags, crc 0,
	 * unit_len 1, sender zero, unit "x" */
	ck_assert_int_eq(verdict(mail), SMTP_MIME_OK);
}
END_TEST

START_TEST(broken_mime)
{
	/* no Content-Type, not multipart, no boundary */
	expect_edit("Content-Type: multipart/report;",
	    "X-Nothing:", SMTP_MIME_BROKEN);
	expect_edit("multipart/report", "text/plain", SMTP_MIME_BROKEN);
	expect_edit("boundary=", "boundery=", SMTP_MIME_BROKEN);
	/* the ferry part missing, doubled, or of another type */
	expect_edit("application/octet-stream", "application/pdf",
	    SMTP_MIME_BROKEN);
	expect_edit("Content-Type: message/delivery-status",
	    "Content-Type: application/octet-stream\r\n"
	    "Content-Transfer-Encoding: base64",
	    SMTP_MIME_BROKEN);
	expect_edit("Content-Transfer-Encoding: base64",
	    "Content-Transfer-Encoding: 7bit", SMTP_MIME_BROKEN);
	/* truncated: no close delimiter */
	expect_edit("--" TOKEN "--", "", SMTP_MIME_BROKEN);
	/* a header line that is no header */
	expect_edit("MIME-Version: 1.0", "MIME-Version 1.0", SMTP_MIME_BROKEN);
	/* the header section never ends */
	ck_assert_int_eq(verdict(FILTER "\nContent-Type: multipart/mixed"),
	    SMTP_MIME_BROKEN);
}
END_TEST

START_TEST(bad_base64)
{
	/* the first base64 line of the ferry part starts with the
	 * envelope: version 1 ("AQ") */
	expect_edit("base64\r\n\r\nAQ", "base64\r\n\r\nA*", SMTP_MIME_BASE64);
	expect_edit("base64\r\n\r\nAQ", "base64\r\n\r\nA Q", SMTP_MIME_BASE64);
	expect_edit("base64\r\n\r\nAQ", "base64\r\n\r\nQ", SMTP_MIME_BASE64);
}
END_TEST

/* A one-part mail carrying base64 of env (n bytes). */
static enum smtp_mime_verdict
verdict_env(const uint8_t *env, size_t n)
{
	char b64[256], mail[512];

	b64[smtp_base64_encode(env, n, b64)] = '\0';
	(void)snprintf(mail, sizeof(mail),
	    FILTER "\nContent-Type: multipart/mixed; boundary=\"=_b\"\n\n"
	           "--=_b\nContent-Type: Application/Octet-Stream\n"
	           "Content-Transfer-Encoding: BASE64\n\n%s--=_b--\n",
	    b64);
	return verdict(mail);
}

START_TEST(bad_envelope)
{
	uint8_t env[SMTP_MIME_ENV_LEN + 4] = { 1, 0, 0, 0 };

	env[11] = 4; /* unit_len 4 */
	ck_assert_int_eq(verdict_env(env, sizeof(env)), SMTP_MIME_OK);
	env[0] = 2; /* version */
	ck_assert_int_eq(verdict_env(env, sizeof(env)), SMTP_MIME_ENVELOPE);
	env[0] = 1;
	env[1] = 2; /* unknown flag */
	ck_assert_int_eq(verdict_env(env, sizeof(env)), SMTP_MIME_ENVELOPE);
	env[1] = 0;
	env[3] = 1; /* reserved */
	ck_assert_int_eq(verdict_env(env, sizeof(env)), SMTP_MIME_ENVELOPE);
	env[3] = 0;
	env[11] = 5; /* longer than what is there */
	ck_assert_int_eq(verdict_env(env, sizeof(env)), SMTP_MIME_ENVELOPE);
	env[11] = 3; /* shorter */
	ck_assert_int_eq(verdict_env(env, sizeof(env)), SMTP_MIME_ENVELOPE);
	/* no unit at all, and less than an envelope */
	env[11] = 0;
	ck_assert_int_eq(verdict_env(env, SMTP_MIME_ENV_LEN),
	    SMTP_MIME_ENVELOPE);
	ck_assert_int_eq(verdict_env(env, 10), SMTP_MIME_ENVELOPE);
}
END_TEST

START_TEST(previous_filter_accepted)
{
	struct smtp_mime_filter f[2];
	struct smtp_mime_unit u;
	uint8_t unit[5] = { 1, 2, 3, 4, 5 }, buf[512];
	size_t len;
	char *mail = compose(unit, sizeof(unit), &len);

	ck_assert_int_eq(smtp_mime_filter_parse("X-New: abc", 10, &f[0]), 0);
	f[1] = filt;
	ck_assert_int_eq(smtp_mime_parse(mail, len, f, 1, buf, sizeof(buf), &u),
	    SMTP_MIME_FOREIGN);
	ck_assert_int_eq(smtp_mime_parse(mail, len, f, 2, buf, sizeof(buf), &u),
	    SMTP_MIME_OK);
	/* a buffer too small is no crash */
	ck_assert_int_eq(smtp_mime_parse(mail, len, f, 2, buf, 20, &u),
	    SMTP_MIME_BROKEN);
	free(mail);
}
END_TEST

START_TEST(filter_lines)
{
	static const char *const good[] = { "X-Mailer: GNUnet", "X-A:b",
		"X-Ferry-Test: run 1 (of 3)", "Keywords: ferry", "a: ~" };
	static const char *const bad[] = { "", "X-Mailer", ": x",
		"X-A:", "X-A: ", "X-A: b ", "X-A:\tb", "X A: b",
		"X-A: b\r\nBcc: v", "From: x", "to: x", "Subject: x",
		"Content-Type: text/plain", "content-transfer-encoding: 7bit",
		"Resent-To: x", "BCC: x", "Received: x", "X-A: \xc3\xa9" };
	struct smtp_mime_filter f;
	char longname[80], longline[220];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(smtp_mime_filter_parse(good[i], strlen(good[i]),
		                  &f) == 0,
		    "refused '%s'", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(smtp_mime_filter_parse(bad[i], strlen(bad[i]),
		                  &f) == -EINVAL,
		    "accepted '%s'", bad[i]);
	ck_assert_int_eq(smtp_mime_filter_parse("X-A:  b c", 9, &f), 0);
	ck_assert_uint_eq(f.name_len, 3);
	ck_assert_uint_eq(f.value_len, 3);
	ck_assert_int_eq(memcmp(f.value, "b c", 3), 0);
	memset(longname, 'N', 65);
	memcpy(longname + 65, ": v", 4);
	ck_assert_int_eq(smtp_mime_filter_parse(longname, 68, &f), -EINVAL);
	memset(longline, 'v', sizeof(longline));
	memcpy(longline, "X-A: ", 5);
	ck_assert_int_eq(smtp_mime_filter_parse(longline, 200, &f), 0);
	ck_assert_int_eq(smtp_mime_filter_parse(longline, 201, &f), -EINVAL);
}
END_TEST

START_TEST(unit_max_fits_the_mail_limit)
{
	static const size_t limits[] = { 32768, 100000, 1000000 };
	char *mail;
	size_t len;

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		size_t um = smtp_mime_unit_max(limits[i]);
		uint8_t *unit = calloc(1, um + 57);

		ck_assert_ptr_nonnull(unit);
		mail = compose(unit, um, &len);
		ck_assert_uint_le(len, limits[i] - SMTP_MIME_MTA_RESERVE);
		free(mail);
		/* one more line of base64 would not be within the promise */
		ck_assert_uint_gt(SMTP_MIME_HEAD_MAX + 38 +
		        smtp_base64_encoded_size(SMTP_MIME_ENV_LEN + um + 57),
		    limits[i] - SMTP_MIME_MTA_RESERVE);
		free(unit);
	}
	ck_assert_uint_eq(smtp_mime_unit_max(10240000), 7471003);
	ck_assert_uint_eq(smtp_mime_unit_max(16384), 0);
}
END_TEST

START_TEST(compose_refuses_bad_meta)
{
	struct smtp_mime_meta m = {
		.rcpt = "peer1@localhost",
		.filter = FILTER,
		.domain = "example.org",
		.token = "not-hex",
		.date = 0,
		.sender = &sender_id,
	};
	char *mail;
	size_t len;

	ck_assert_int_eq(smtp_mime_compose(&m, "x", 1, &mail, &len), -EINVAL);
	m.token = TOKEN;
	ck_assert_int_eq(smtp_mime_compose(&m, "x", 0, &mail, &len), -EINVAL);
	m.rcpt = NULL;
	ck_assert_int_eq(smtp_mime_compose(&m, "x", 1, &mail, &len), -EINVAL);
}
END_TEST

/*
 * The stream splitter.
 */

#define MAX_SEEN 16

struct seen {
	size_t n;             /* mails */
	size_t oversize;      /* skipped mails */
	char *mail[MAX_SEEN]; /* copies */
	size_t len[MAX_SEEN];
};

static void
on_mail(void *cls, const char *mail, size_t len, bool oversize)
{
	struct seen *s = cls;

	if (oversize) {
		ck_assert_ptr_null(mail);
		s->oversize++;
		return;
	}
	ck_assert_uint_lt(s->n, MAX_SEEN);
	s->mail[s->n] = malloc(len + 1);
	ck_assert_ptr_nonnull(s->mail[s->n]);
	memcpy(s->mail[s->n], mail, len);
	s->mail[s->n][len] = '\0';
	s->len[s->n++] = len;
}

static void
seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->mail[i]);
	memset(s, 0, sizeof(*s));
}

/* Two ferry mails around a foreign one, with junk before the first. */
static char *
make_stream(size_t *ret_len, char *parts[3])
{
	uint8_t u1[300], u2[90];
	size_t l1, l2, d1, d2, n;
	char *m1, *m2, *s;
	static const char foreign[] =
	    "From someone@example.net Sat Nov 22 11:00:00 2025\n"
	    "From: someone@example.net\n" FILTER "\n"
	    "Subject: not MIME\n\n"
	    "a body with\n\nFrom the first line after a blank\n";

	memset(u1, 1, sizeof(u1));
	memset(u2, 2, sizeof(u2));
	m1 = compose(u1, sizeof(u1), &l1);
	m2 = compose(u2, sizeof(u2), &l2);
	parts[0] = as_delivered(m1, l1, &d1);
	parts[1] = strdup(foreign);
	parts[2] = as_delivered(m2, l2, &d2);
	free(m1);
	free(m2);
	n = strlen("junk\nmore junk\n") + d1 + 1 + strlen(foreign) + 1 + d2 + 1;
	s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	(void)snprintf(s, n + 1, "junk\nmore junk\n%s\n%s\n%s\n", parts[0],
	    parts[1], parts[2]);
	*ret_len = n;
	return s;
}

/* What the splitter must hand on: each mail up to its end. The foreign
 * one ends before the next From line, its blank line included. */
static void
check_split(const struct seen *s, char *parts[3])
{
	ck_assert_uint_eq(s->n, 4);
	ck_assert_uint_eq(s->oversize, 0);
	ck_assert_str_eq(s->mail[0], parts[0]);
	/* the foreign mail is cut at its "\n\nFrom " line */
	ck_assert(strncmp(s->mail[1], parts[1], strlen(s->mail[1])) == 0);
	ck_assert(strstr(s->mail[2], "From the first line") == s->mail[2]);
	ck_assert_str_eq(s->mail[3], parts[2]);
}

START_TEST(stream_cut_anywhere)
{
	char *parts[3], *stream;
	size_t len;
	struct seen s = { 0 };
	struct smtp_mbox m;

	stream = make_stream(&len, parts);
	for (size_t cut = 0; cut <= len; cut++) {
		smtp_mbox_init(&m, 1 << 20);
		ck_assert_int_eq(smtp_mbox_feed(&m, stream, cut, on_mail, &s),
		    0);
		ck_assert_int_eq(smtp_mbox_feed(&m, stream + cut, len - cut,
		                     on_mail, &s),
		    0);
		check_split(&s, parts);
		seen_free(&s);
		smtp_mbox_done(&m);
	}
	/* byte by byte */
	smtp_mbox_init(&m, 1 << 20);
	for (size_t i = 0; i < len; i++)
		ck_assert_int_eq(smtp_mbox_feed(&m, stream + i, 1, on_mail, &s),
		    0);
	check_split(&s, parts);
	seen_free(&s);
	smtp_mbox_done(&m);
	for (size_t i = 0; i < 3; i++)
		free(parts[i]);
	free(stream);
}
END_TEST

/* A mail without MIME ends where the next From line begins. With a bound
 * just above its size it must be handed on whether that line comes whole
 * or in pieces: a regression found by fuzz_smtp_mail (the unfinished
 * line counted against the mail before it). */
START_TEST(stream_bound_cut_anywhere)
{
	static const char first[] = "From a@b Sat Nov 22 11:00:00 2025\n"
	                            "Subject: one\n\nbody\n\n";
	static const char stream[] =
	    "From a@b Sat Nov 22 11:00:00 2025\n"
	    "Subject: one\n\nbody\n\n"
	    "From c@d Sat Nov 22 11:00:01 2025\nSubject: two\n\nx\n\n"
	    "From e@f Sat Nov 22 11:00:02 2025\nSubject: three\n\ny\n";
	struct seen s = { 0 };
	struct smtp_mbox m;
	size_t len = strlen(stream);

	for (size_t extra = 0; extra < 30; extra++) {
		for (size_t piece = 1; piece <= len; piece++) {
			smtp_mbox_init(&m, strlen(first) + extra);
			for (size_t off = 0; off < len; off += piece)
				ck_assert_int_eq(smtp_mbox_feed(&m,
				                     stream + off,
				                     len - off < piece
				                         ? len - off
				                         : piece,
				                     on_mail, &s),
				    0);
			ck_assert_uint_eq(s.oversize, 0);
			ck_assert_uint_eq(s.n, 2);
			ck_assert_str_eq(s.mail[0], first);
			smtp_mbox_done(&m);
			seen_free(&s);
		}
	}
}
END_TEST

START_TEST(stream_mail_ends_without_next)
{
	uint8_t unit[40] = { 3 };
	struct seen s = { 0 };
	struct smtp_mbox m;
	size_t l, d;
	char *mail = compose(unit, sizeof(unit), &l);
	char *del = as_delivered(mail, l, &d);

	/* no blank line, no next From line: handed on at its close
	 * delimiter, and it parses */
	smtp_mbox_init(&m, 1 << 20);
	ck_assert_int_eq(smtp_mbox_feed(&m, del, d, on_mail, &s), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.len[0], d);
	ck_assert_uint_eq(smtp_mbox_pending(&m), 0);
	ck_assert_int_eq(verdict(s.mail[0]), SMTP_MIME_OK);
	seen_free(&s);
	smtp_mbox_done(&m);
	free(del);
	free(mail);
}
END_TEST

START_TEST(stream_oversize_skipped)
{
	uint8_t big[20000], small[10];
	struct seen s = { 0 };
	struct smtp_mbox m;
	size_t l1, l2, d1, d2;
	char *m1, *m2, *d1s, *d2s;

	memset(big, 7, sizeof(big));
	memset(small, 8, sizeof(small));
	m1 = compose(big, sizeof(big), &l1);
	m2 = compose(small, sizeof(small), &l2);
	d1s = as_delivered(m1, l1, &d1);
	d2s = as_delivered(m2, l2, &d2);
	smtp_mbox_init(&m, 8000);
	for (size_t off = 0; off < d1; off += 1000)
		ck_assert_int_eq(smtp_mbox_feed(&m, d1s + off,
		                     d1 - off < 1000 ? d1 - off : 1000, on_mail,
		                     &s),
		    0);
	ck_assert_int_eq(smtp_mbox_feed(&m, "\n", 1, on_mail, &s), 0);
	ck_assert_uint_le(smtp_mbox_pending(&m), 8000);
	ck_assert_int_eq(smtp_mbox_feed(&m, d2s, d2, on_mail, &s), 0);
	ck_assert_uint_eq(s.oversize, 1);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.mail[0], d2s);
	seen_free(&s);
	smtp_mbox_done(&m);
	free(d1s);
	free(d2s);
	free(m1);
	free(m2);
}
END_TEST

START_TEST(stream_long_junk_lines)
{
	struct seen s = { 0 };
	struct smtp_mbox m;
	char *junk = malloc(100000);
	const char *mail = "From x\nA: b\n\nbody\n\n";

	ck_assert_ptr_nonnull(junk);
	memset(junk, 'j', 100000);
	smtp_mbox_init(&m, 1 << 20);
	/* a 300000-byte line without LF between mails is not kept */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(smtp_mbox_feed(&m, junk, 100000, on_mail, &s),
		    0);
	ck_assert_uint_le(m.in.cap, 4 * SMTP_MBOX_LINE_MAX);
	/* "From " in the middle of that line starts nothing */
	ck_assert_int_eq(smtp_mbox_feed(&m, "From y\n", 7, on_mail, &s), 0);
	ck_assert_int_eq(smtp_mbox_feed(&m, mail, strlen(mail), on_mail, &s),
	    0);
	ck_assert_int_eq(smtp_mbox_feed(&m, mail, strlen(mail), on_mail, &s),
	    0);
	/* the first mail ends at the second's From line */
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.mail[0], mail);
	seen_free(&s);
	smtp_mbox_done(&m);
	free(junk);
}
END_TEST

/* A mail that passes the bound on an empty CRLF line: that line still
 * lets the next From line start a mail when a read ends between its CR
 * and LF. A regression found by fuzz_smtp_mail (the splitter refused the
 * mail at the CR and dropped the rest of the line as not empty). */
START_TEST(stream_oversize_ends_at_split_crlf)
{
	static const char stream[] = "From a\r\nS: x\r\n" /* 14 bytes */
	                             "\r\n"
	                             "From b\r\n\r\n"
	                             "From c\r\n";
	/* the CR of the empty line is the first byte past the bound */
	const size_t max = 14, len = strlen(stream);
	struct seen s = { 0 };
	struct smtp_mbox m;

	for (size_t cut = 0; cut <= len; cut++) {
		smtp_mbox_init(&m, max);
		ck_assert_int_eq(smtp_mbox_feed(&m, stream, cut, on_mail, &s),
		    0);
		ck_assert_int_eq(smtp_mbox_feed(&m, stream + cut, len - cut,
		                     on_mail, &s),
		    0);
		ck_assert_msg(s.oversize == 1 && s.n == 1,
		    "cut at %zu: %zu oversize, %zu mails", cut, s.oversize,
		    s.n);
		ck_assert_str_eq(s.mail[0], "From b\r\n\r\n");
		seen_free(&s);
		smtp_mbox_done(&m);
	}
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("smtp_mime");
	TCase *tc = tcase_create("mime");
	TCase *tm = tcase_create("mbox");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, looks_like_a_bounce);
	tcase_add_test(tc, delivered_with_lf_and_mta_headers);
	tcase_add_test(tc, filter_line_decides_foreign);
	tcase_add_test(tc, filter_line_folded_in_transit);
	tcase_add_test(tc, broken_mime);
	tcase_add_test(tc, bad_base64);
	tcase_add_test(tc, bad_envelope);
	tcase_add_test(tc, previous_filter_accepted);
	tcase_add_test(tc, filter_lines);
	tcase_add_test(tc, unit_max_fits_the_mail_limit);
	tcase_add_test(tc, compose_refuses_bad_meta);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tm, setup, NULL);
	tcase_add_test(tm, stream_cut_anywhere);
	tcase_add_test(tm, stream_bound_cut_anywhere);
	tcase_add_test(tm, stream_mail_ends_without_next);
	tcase_add_test(tm, stream_oversize_skipped);
	tcase_add_test(tm, stream_long_junk_lines);
	tcase_add_test(tm, stream_oversize_ends_at_split_crlf);
	suite_add_tcase(s, tm);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
