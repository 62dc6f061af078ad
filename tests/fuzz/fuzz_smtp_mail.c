/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the SMTP transport's mail reader: the FIFO stream
 * splitter (plugins/smtp/smtp_mbox.c) and the mail parser
 * (plugins/smtp/smtp_mime.c). The stream is fed whole and in pieces: the
 * mails handed on must be the same however it is cut. Every mail is
 * parsed into a buffer of exactly the size the reader allocates, and a
 * parsed ferry mail, composed again, must parse to the same unit.
 *
 * Input: u8 mail bound (64 + 32 * byte), u8 piece size (1 + byte), then
 * the stream. The whole stream is also parsed as one mail.
 */
/* fuzz-sources: plugins/smtp/smtp_mime.c plugins/smtp/smtp_mbox.c plugins/smtp/smtp_base64.c */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/smtp/smtp_base64.h"
#include "../../plugins/smtp/smtp_mbox.h"
#include "../../plugins/smtp/smtp_mime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAILS_MAX 256 /* mails compared per run */

static const char *const fuzz_lines[] = { "X-Ferry-Test: fuzz",
	"X-Mailer: GNUnet" };

/* What a run handed on: per mail, its length and a digest (oversize
 * mails only count: the length they had when refused depends on how the
 * stream was cut). */
struct fuzz_run {
	size_t n;
	size_t oversize;
	size_t len[FUZZ_MAILS_MAX];
	uint32_t digest[FUZZ_MAILS_MAX];
	bool parse; /* parse each mail (once per input is enough) */
};

static uint32_t
fuzz_digest(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* Parses a mail as the plugin does, and checks what comes back. */
static void
fuzz_parse(const char *mail, size_t len)
{
	struct smtp_mime_filter f[2];
	struct smtp_mime_unit u, u2;
	struct smtp_mime_meta meta;
	size_t max = smtp_base64_decoded_max(len), len2;
	uint8_t *buf = malloc(max > 0 ? max : 1), *buf2;
	char *again;

	if (buf == NULL)
		abort();
	for (size_t i = 0; i < 2; i++)
		if (smtp_mime_filter_parse(fuzz_lines[i], strlen(fuzz_lines[i]),
		        &f[i]) < 0)
			abort();
	if (smtp_mime_parse(mail, len, f, 2, buf, max, &u) != SMTP_MIME_OK) {
		free(buf);
		return;
	}
	if (u.len == 0 || u.unit < buf || u.unit + u.len > buf + max)
		abort();
	/* compose it again: the same unit and fields come back */
	meta = (struct smtp_mime_meta){ .rcpt = "peer@example.org",
		.filter = fuzz_lines[0],
		.domain = "example.org",
		.token = "0123456789abcdef0123456789abcdef",
		.date = 0,
		.sender = &u.sender,
		.is_encrypted = u.is_encrypted,
		.crc = u.crc };
	if (smtp_mime_compose(&meta, u.unit, u.len, &again, &len2) < 0)
		abort();
	buf2 = malloc(smtp_base64_decoded_max(len2));
	if (buf2 == NULL ||
	    smtp_mime_parse(again, len2, f, 1, buf2,
	        smtp_base64_decoded_max(len2), &u2) != SMTP_MIME_OK ||
	    u2.len != u.len || memcmp(u2.unit, u.unit, u.len) != 0 ||
	    memcmp(&u2.sender, &u.sender, sizeof(u.sender)) != 0 ||
	    u2.is_encrypted != u.is_encrypted || u2.crc != u.crc)
		abort();
	free(buf2);
	free(again);
	free(buf);
}

static void
fuzz_on_mail(void *cls, const char *mail, size_t len, bool oversize)
{
	struct fuzz_run *r = cls;

	if (oversize) {
		if (mail != NULL)
			abort();
		r->oversize++;
		return;
	}
	if (r->n < FUZZ_MAILS_MAX) {
		r->len[r->n] = len;
		r->digest[r->n] = fuzz_digest(mail, len);
	}
	r->n++;
	if (r->parse)
		fuzz_parse(mail, len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_run whole, cut;
	struct smtp_mbox m;
	size_t max, piece;

	if (size < 2)
		return 0;
	max = 64 + 32 * (size_t)data[0];
	piece = 1 + (size_t)data[1];
	data += 2;
	size -= 2;

	memset(&whole, 0, sizeof(whole));
	whole.parse = true;
	smtp_mbox_init(&m, max);
	(void)smtp_mbox_feed(&m, data, size, fuzz_on_mail, &whole);
	if (smtp_mbox_pending(&m) > 2 * max)
		abort();
	smtp_mbox_done(&m);

	memset(&cut, 0, sizeof(cut));
	smtp_mbox_init(&m, max);
	for (size_t off = 0; off < size; off += piece)
		(void)smtp_mbox_feed(&m, data + off,
		    size - off < piece ? size - off : piece, fuzz_on_mail,
		    &cut);
	smtp_mbox_done(&m);

	if (whole.n != cut.n || whole.oversize != cut.oversize)
		abort();
	for (size_t i = 0; i < whole.n && i < FUZZ_MAILS_MAX; i++)
		if (whole.len[i] != cut.len[i] ||
		    whole.digest[i] != cut.digest[i])
			abort();

	fuzz_parse((const char *)data, size);
	return 0;
}
