/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's mail format (see smtp_mime.h): the bounce-shaped
 * MIME mail of seed 004, III-C, written and read back. Header syntax after
 * RFC 5322 (fields, folding), MIME after RFC 2045/2046 (Content-Type
 * parameters, boundaries), the report after RFC 3462/3464.
 */
#include "smtp_mime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/wire.h"
#include "smtp_base64.h"

#define MIME_UNFOLD_MAX	1024 /* longest header value we look into */
#define MIME_TAIL_MAX	(2 + SMTP_MIME_TOKEN_LEN + 4) /* "--T--\r\n" */
#define MIME_TYPE_MAX	64
#define MIME_PARAM_MAX	256  /* longest parameter value we read */

/* One line of text without its line break (LF or CRLF). */
struct mime_line {
	const char *p; /* first character */
	size_t len;    /* characters before the line break */
	size_t next;   /* offset of the following line */
};

/* A parsed Content-Type: type/subtype and the boundary parameter. */
struct mime_ctype {
	char type[MIME_TYPE_MAX];    /* lower case */
	char subtype[MIME_TYPE_MAX]; /* lower case */
	char boundary[SMTP_MIME_BOUNDARY_MAX + 1];
	size_t boundary_len;	     /* 0 if none */
};

/* What the header fields of a mail or a part told us. */
struct mime_head {
	const struct smtp_mime_filter *filters; /* top level only */
	size_t n_filters;
	bool filter_seen;	/* a header equal to one of them */
	bool have_ctype;	/* a usable Content-Type */
	struct mime_ctype ctype;
	bool base64;		/* Content-Transfer-Encoding: base64 */
};

/* Header names the format writes or that steer delivery; a filter line
 * using one could break the mail or redirect it. */
static const char *const mime_reserved[] = {
	"date", "from", "to", "cc", "bcc", "sender", "reply-to", "subject",
	"message-id", "in-reply-to", "references", "mime-version",
	"auto-submitted", "received", "return-path", "delivered-to",
	"x-original-to", "errors-to", "disposition-notification-to",
};

static bool
mime_is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* ftext of RFC 5322: printable ASCII except ':' */
static bool
mime_is_ftext(char c)
{
	return c >= 33 && c <= 126 && c != ':';
}

static bool
mime_getline(const char *s, size_t n, size_t off, struct mime_line *l)
{
	const char *nl;
	size_t end;

	if (off >= n)
		return false;
	nl = memchr(s + off, '\n', n - off);
	end = nl != NULL ? (size_t)(nl - s) : n;
	l->p = s + off;
	l->len = end - off;
	l->next = nl != NULL ? end + 1 : n;
	if (l->len > 0 && l->p[l->len - 1] == '\r')
		l->len--;
	return true;
}

static bool
mime_prefix_ci(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && strncasecmp(s, prefix, n) == 0;
}

static bool
mime_equal_ci(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

static void
mime_trim(const char **p, size_t *len)
{
	while (*len > 0 && mime_is_blank(**p)) {
		(*p)++;
		(*len)--;
	}
	while (*len > 0 && mime_is_blank((*p)[*len - 1]))
		(*len)--;
}

int
smtp_mime_filter_parse(const char *line, size_t len,
    struct smtp_mime_filter *ret)
{
	const char *colon = memchr(line, ':', len);
	size_t name_len, vlen;
	const char *v;

	if (len > SMTP_MIME_FILTER_MAX || colon == NULL)
		return -EINVAL;
	name_len = (size_t)(colon - line);
	if (name_len == 0 || name_len > SMTP_MIME_FILTER_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < name_len; i++)
		if (!mime_is_ftext(line[i]))
			return -EINVAL;
	if (mime_prefix_ci(line, name_len, "content-") ||
	    mime_prefix_ci(line, name_len, "resent-"))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(mime_reserved) / sizeof(*mime_reserved);
	    i++)
		if (mime_equal_ci(line, name_len, mime_reserved[i]))
			return -EINVAL;
	v = colon + 1;
	vlen = len - name_len - 1;
	while (vlen > 0 && *v == ' ') {
		v++;
		vlen--;
	}
	if (vlen == 0 || v[vlen - 1] == ' ')
		return -EINVAL;
	for (size_t i = 0; i < vlen; i++)
		if (v[i] < 32 || v[i] > 126)
			return -EINVAL;
	ret->name = line;
	ret->name_len = name_len;
	ret->value = v;
	ret->value_len = vlen;
	return 0;
}

size_t
smtp_mime_unit_max(size_t mail_max)
{
	size_t fixed = SMTP_MIME_MTA_RESERVE + SMTP_MIME_HEAD_MAX +
	    MIME_TAIL_MAX;
	size_t lines, bytes;

	if (mail_max <= fixed)
		return 0;
	/* Full base64 lines: 57 bytes become 76 characters and CRLF. */
	lines = (mail_max - fixed) / (SMTP_B64_LINE + 2);
	bytes = lines * SMTP_B64_LINE_BYTES;
	return bytes > SMTP_MIME_ENV_LEN ? bytes - SMTP_MIME_ENV_LEN : 0;
}

/* RFC 5322 date-time in UTC, with English names whatever the locale. */
static void
mime_date(uint64_t when, char *out, size_t size)
{
	static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu",
		"Fri", "Sat" };
	static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May",
		"Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t t = (time_t)when;
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	/* The moduli and precisions only tell the compiler how wide each
	 * field can be. */
	(void)snprintf(out, size, "%.3s, %02u %.3s %04u %02u:%02u:%02u +0000",
	    days[(unsigned)tm.tm_wday % 7u], (unsigned)tm.tm_mday % 32u,
	    months[(unsigned)tm.tm_mon % 12u], (unsigned)(tm.tm_year + 1900) % 10000u,
	    (unsigned)tm.tm_hour % 24u, (unsigned)tm.tm_min % 60u,
	    (unsigned)tm.tm_sec % 61u);
}

/* Headers, the notification and the delivery report: everything before
 * the ferry part's base64. Length, or -EINVAL if it would not fit. */
static int
mime_head(const struct smtp_mime_meta *m, char *out, size_t size)
{
	char date[64];
	int n;

	mime_date(m->date, date, sizeof(date));
	n = snprintf(out, size,
	    "Date: %s\r\n"
	    "From: Mail Delivery System <MAILER-DAEMON@%s>\r\n"
	    "To: <%s>\r\n"
	    "Subject: Undelivered Mail Returned to Sender\r\n"
	    "Message-ID: <%s@%s>\r\n"
	    "MIME-Version: 1.0\r\n"
	    "Auto-Submitted: auto-replied\r\n"
	    "%s\r\n"
	    "Content-Type: multipart/report; report-type=delivery-status;\r\n"
	    "\tboundary=\"%s\"\r\n"
	    "\r\n"
	    "This is a MIME-encapsulated message.\r\n"
	    "\r\n"
	    "--%s\r\n"
	    "Content-Description: Notification\r\n"
	    "Content-Type: text/plain; charset=us-ascii\r\n"
	    "\r\n"
	    "The mail system at %s could not deliver the attached message.\r\n"
	    "\r\n"
	    "--%s\r\n"
	    "Content-Description: Delivery report\r\n"
	    "Content-Type: message/delivery-status\r\n"
	    "\r\n"
	    "Reporting-MTA: dns; %s\r\n"
	    "Arrival-Date: %s\r\n"
	    "\r\n"
	    "Final-Recipient: rfc822; %s\r\n"
	    "Action: failed\r\n"
	    "Status: 5.0.0\r\n"
	    "\r\n"
	    "--%s\r\n"
	    "Content-Description: Undelivered Message\r\n"
	    "Content-Type: application/octet-stream\r\n"
	    "Content-Transfer-Encoding: base64\r\n"
	    "\r\n",
	    date, m->domain, m->rcpt, m->token, m->domain, m->filter,
	    m->token, m->token, m->domain, m->token, m->domain, date, m->rcpt,
	    m->token);
	if (n < 0 || (size_t)n >= size)
		return -EINVAL;
	return n;
}

static bool
mime_meta_ok(const struct smtp_mime_meta *m)
{
	if (m->rcpt == NULL || m->filter == NULL || m->domain == NULL ||
	    m->token == NULL || m->sender == NULL)
		return false;
	if (strlen(m->token) != SMTP_MIME_TOKEN_LEN ||
	    strspn(m->token, "0123456789abcdef") != SMTP_MIME_TOKEN_LEN)
		return false;
	return strlen(m->rcpt) <= SMTP_MIME_RCPT_MAX &&
	    strlen(m->domain) <= SMTP_MIME_DOMAIN_MAX &&
	    strlen(m->filter) <= SMTP_MIME_FILTER_MAX;
}

int
smtp_mime_compose(const struct smtp_mime_meta *m, const void *unit,
    size_t len, char **ret_mail, size_t *ret_len)
{
	uint8_t env[SMTP_MIME_ENV_LEN];
	struct smtp_b64_enc enc;
	char head[SMTP_MIME_HEAD_MAX];
	size_t size, w;
	char *mail;
	int hlen;

	if (!mime_meta_ok(m) || len == 0 || len > UINT32_MAX ||
	    len > SIZE_MAX / 2 - SMTP_MIME_ENV_LEN)
		return -EINVAL;
	hlen = mime_head(m, head, sizeof(head));
	if (hlen < 0)
		return hlen;
	/* The envelope of smtp_mime.h */
	env[0] = SMTP_MIME_ENV_VERSION;
	env[1] = m->is_encrypted ? 1 : 0;
	wire_put16(env + 2, 0);
	wire_put32(env + 4, m->crc);
	wire_put32(env + 8, (uint32_t)len);
	memcpy(env + 12, m->sender->bytes, FERRY_PEER_ID_LEN);

	/* + 1: snprintf's NUL after the tail */
	size = (size_t)hlen + smtp_base64_encoded_size(SMTP_MIME_ENV_LEN + len) +
	    MIME_TAIL_MAX + 1;
	mail = malloc(size);
	if (mail == NULL)
		return -ENOMEM;
	memcpy(mail, head, (size_t)hlen);
	w = (size_t)hlen;
	smtp_base64_enc_init(&enc);
	w += smtp_base64_enc_update(&enc, env, sizeof(env), mail + w);
	w += smtp_base64_enc_update(&enc, unit, len, mail + w);
	w += smtp_base64_enc_final(&enc, mail + w);
	w += (size_t)snprintf(mail + w, size - w, "--%s--\r\n", m->token);
	*ret_mail = mail;
	*ret_len = w;
	return 0;
}

/* Copies a folded header value into out without its line breaks (the
 * blanks after them stay, RFC 5322 section 2.2.3). Length, or -1 if it
 * does not fit. */
static long
mime_unfold(const char *v, size_t len, char *out, size_t size)
{
	size_t w = 0;

	for (size_t i = 0; i < len; i++) {
		if (v[i] == '\r' || v[i] == '\n')
			continue;
		if (w + 1 >= size)
			return -1;
		out[w++] = v[i];
	}
	out[w] = '\0';
	return (long)w;
}

/* Copies a token (RFC 2045) lower-cased; its length, or 0 if none. */
static size_t
mime_token(const char **p, const char *end, char *out, size_t size)
{
	static const char tspecials[] = "()<>@,;:\\\"/[]?= \t";
	size_t n = 0;

	while (*p < end && **p > 32 && **p < 127 &&
	    strchr(tspecials, **p) == NULL) {
		if (n + 1 >= size)
			return 0;
		out[n++] = (char)(**p >= 'A' && **p <= 'Z' ? **p + 32 : **p);
		(*p)++;
	}
	out[n] = '\0';
	return n;
}

/* A parameter value: a token or a quoted string; copied as is. */
static size_t
mime_param_value(const char **p, const char *end, char *out, size_t size)
{
	size_t n = 0;

	if (*p >= end || **p != '"') {
		const char *start = *p;
		char tok[MIME_PARAM_MAX];
		size_t tl = mime_token(p, end, tok, sizeof(tok));

		/* tokens keep their case: copy the original characters */
		if (tl == 0 || tl >= size)
			return 0;
		memcpy(out, start, tl);
		out[tl] = '\0';
		return tl;
	}
	for ((*p)++; *p < end && **p != '"'; (*p)++) {
		if (**p == '\\' && *p + 1 < end)
			(*p)++;
		if (n + 1 >= size)
			return 0;
		out[n++] = **p;
	}
	if (*p == end)
		return 0;
	(*p)++;
	out[n] = '\0';
	return n;
}

/* RFC 2046 bchars, not ending in a space. */
static bool
mime_boundary_ok(const char *b, size_t len)
{
	static const char extra[] = "'()+_,-./:=? ";

	if (len == 0 || len > SMTP_MIME_BOUNDARY_MAX || b[len - 1] == ' ')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = b[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') ||
		    (c != '\0' && strchr(extra, c) != NULL)))
			return false;
	}
	return true;
}

static void
mime_skip_blanks(const char **p, const char *end)
{
	while (*p < end && mime_is_blank(**p))
		(*p)++;
}

/* Parses "type/subtype *(; name=value)"; false if the type is unusable.
 * Parameters after one we cannot read (a comment, say) are ignored. */
static bool
mime_parse_ctype(const char *v, size_t len, struct mime_ctype *ct)
{
	const char *p = v, *end = v + len;
	char name[MIME_TYPE_MAX], value[MIME_PARAM_MAX];
	size_t vl;

	memset(ct, 0, sizeof(*ct));
	mime_skip_blanks(&p, end);
	if (mime_token(&p, end, ct->type, sizeof(ct->type)) == 0 ||
	    p == end || *p++ != '/' ||
	    mime_token(&p, end, ct->subtype, sizeof(ct->subtype)) == 0)
		return false;
	for (;;) {
		mime_skip_blanks(&p, end);
		if (p == end || *p++ != ';')
			return true;
		mime_skip_blanks(&p, end);
		if (mime_token(&p, end, name, sizeof(name)) == 0 || p == end ||
		    *p++ != '=')
			return true;
		vl = mime_param_value(&p, end, value, sizeof(value));
		if (vl == 0)
			return true;
		if (strcmp(name, "boundary") == 0 && mime_boundary_ok(value, vl)) {
			memcpy(ct->boundary, value, vl + 1);
			ct->boundary_len = vl;
		}
	}
}

/* One header field, its value with the folds still in it. */
static void
mime_field(struct mime_head *h, const char *name, size_t name_len,
    const char *raw, size_t raw_len)
{
	char v[MIME_UNFOLD_MAX];
	const char *t = v;
	size_t tl;
	long n = mime_unfold(raw, raw_len, v, sizeof(v));

	if (n < 0)
		return; /* longer than anything we look for */
	tl = (size_t)n;
	mime_trim(&t, &tl);
	if (mime_equal_ci(name, name_len, "content-type")) {
		h->have_ctype = mime_parse_ctype(t, tl, &h->ctype);
		return;
	}
	if (mime_equal_ci(name, name_len, "content-transfer-encoding")) {
		h->base64 = mime_equal_ci(t, tl, "base64");
		return;
	}
	for (size_t i = 0; i < h->n_filters; i++) {
		const struct smtp_mime_filter *f = &h->filters[i];

		if (name_len == f->name_len &&
		    strncasecmp(name, f->name, name_len) == 0 &&
		    tl == f->value_len && memcmp(t, f->value, tl) == 0)
			h->filter_seen = true;
	}
}

/*
 * Reads the header section of s[off, n): fields, each a line "Name: ..."
 * and the continuation lines (starting with a blank) after it, up to an
 * empty line. 0 and *ret_body (offset after the empty line), or -EBADMSG
 * if a line is not a field or the empty line is missing; the fields
 * around a bad line are still read, so that the filter line is found.
 */
static int
mime_read_head(const char *s, size_t n, size_t off, struct mime_head *h,
    size_t *ret_body)
{
	struct mime_line l;
	const char *name = NULL, *raw = NULL;
	size_t name_len = 0;
	int r = 0;

	while (mime_getline(s, n, off, &l)) {
		if (l.len > 0 && mime_is_blank(l.p[0]) && name != NULL) {
			off = l.next; /* continuation of the current field */
			continue;
		}
		if (name != NULL)
			mime_field(h, name, name_len, raw,
			    (size_t)(s + off - raw));
		name = NULL;
		off = l.next;
		if (l.len == 0) {
			*ret_body = l.next;
			return r;
		}
		for (name_len = 0; name_len < l.len &&
		    mime_is_ftext(l.p[name_len]); name_len++)
			;
		if (name_len == 0 || name_len == l.len ||
		    l.p[name_len] != ':') {
			r = -EBADMSG;
			continue;
		}
		name = l.p;
		raw = l.p + name_len + 1;
	}
	if (name != NULL) /* the headers never ended: still look at it */
		mime_field(h, name, name_len, raw, (size_t)(s + off - raw));
	return -EBADMSG;
}

int
smtp_mime_delimiter(const char *line, size_t len, const char *b,
    size_t b_len)
{
	size_t i;
	int kind = 1;

	if (len < 2 + b_len || line[0] != '-' || line[1] != '-' ||
	    memcmp(line + 2, b, b_len) != 0)
		return 0;
	i = 2 + b_len;
	if (len - i >= 2 && line[i] == '-' && line[i + 1] == '-') {
		kind = 2;
		i += 2;
	}
	for (; i < len; i++)
		if (!mime_is_blank(line[i]))
			return 0;
	return kind;
}

/* Offset of the first line after an mbox "From " line, if there is one. */
static size_t
mime_skip_from_line(const char *s, size_t n)
{
	struct mime_line l;

	if (n >= 5 && memcmp(s, "From ", 5) == 0 && mime_getline(s, n, 0, &l))
		return l.next;
	return 0;
}

int
smtp_mime_boundary(const char *head, size_t len, char *out, size_t size,
    size_t *ret_len)
{
	struct mime_head h;
	size_t body;

	memset(&h, 0, sizeof(h));
	if (size <= SMTP_MIME_BOUNDARY_MAX ||
	    mime_read_head(head, len, mime_skip_from_line(head, len), &h,
	    &body) < 0 ||
	    !h.have_ctype || strcmp(h.ctype.type, "multipart") != 0 ||
	    h.ctype.boundary_len == 0)
		return -ENOENT;
	memcpy(out, h.ctype.boundary, h.ctype.boundary_len + 1);
	*ret_len = h.ctype.boundary_len;
	return 0;
}

/* The ferry part of a multipart body s[off, n) with boundary b:
 * [*ret_start, *ret_end) is its base64 text. SMTP_MIME_OK, or BROKEN if
 * the close delimiter is missing or there is not exactly one part of type
 * application/octet-stream in base64. */
static enum smtp_mime_verdict
mime_find_part(const char *s, size_t n, size_t off, const char *b,
    size_t b_len, size_t *ret_start, size_t *ret_end)
{
	struct mime_line l;
	size_t part = 0, found = 0;
	bool in_part = false;

	while (mime_getline(s, n, off, &l)) {
		int d = smtp_mime_delimiter(l.p, l.len, b, b_len);

		if (d != 0 && in_part) {
			struct mime_head ph;
			size_t body;

			memset(&ph, 0, sizeof(ph));
			if (mime_read_head(s, off, part, &ph, &body) == 0 &&
			    ph.have_ctype && ph.base64 &&
			    strcmp(ph.ctype.type, "application") == 0 &&
			    strcmp(ph.ctype.subtype, "octet-stream") == 0) {
				if (found++ > 0)
					return SMTP_MIME_BROKEN;
				*ret_start = body;
				*ret_end = off;
			}
		}
		if (d == 2)
			return found == 1 ? SMTP_MIME_OK : SMTP_MIME_BROKEN;
		if (d == 1) {
			in_part = true;
			part = l.next;
		}
		off = l.next;
	}
	return SMTP_MIME_BROKEN;
}

/* The envelope of smtp_mime.h, from the decoded ferry part. */
static enum smtp_mime_verdict
mime_envelope(const uint8_t *p, size_t len, struct smtp_mime_unit *ret)
{
	uint32_t unit_len;

	if (len <= SMTP_MIME_ENV_LEN || p[0] != SMTP_MIME_ENV_VERSION ||
	    (p[1] & ~1u) != 0 || wire_get16(p + 2) != 0)
		return SMTP_MIME_ENVELOPE;
	unit_len = wire_get32(p + 8);
	if (unit_len != len - SMTP_MIME_ENV_LEN)
		return SMTP_MIME_ENVELOPE;
	ret->is_encrypted = (p[1] & 1) != 0;
	ret->crc = wire_get32(p + 4);
	memcpy(ret->sender.bytes, p + 12, FERRY_PEER_ID_LEN);
	ret->unit = p + SMTP_MIME_ENV_LEN;
	ret->len = unit_len;
	return SMTP_MIME_OK;
}

enum smtp_mime_verdict
smtp_mime_parse(const char *mail, size_t len,
    const struct smtp_mime_filter *filters, size_t n_filters, uint8_t *buf,
    size_t max, struct smtp_mime_unit *ret)
{
	struct mime_head h;
	enum smtp_mime_verdict v;
	size_t body, start = 0, end = 0, dlen;
	int r;

	memset(&h, 0, sizeof(h));
	h.filters = filters;
	h.n_filters = n_filters;
	r = mime_read_head(mail, len, mime_skip_from_line(mail, len), &h,
	    &body);
	/* Foreign first: whatever is wrong with mail not for us, it is not
	 * ours to count as broken. */
	if (!h.filter_seen)
		return SMTP_MIME_FOREIGN;
	if (r < 0 || !h.have_ctype || strcmp(h.ctype.type, "multipart") != 0 ||
	    h.ctype.boundary_len == 0)
		return SMTP_MIME_BROKEN;
	v = mime_find_part(mail, len, body, h.ctype.boundary,
	    h.ctype.boundary_len, &start, &end);
	if (v != SMTP_MIME_OK)
		return v;
	r = smtp_base64_decode(mail + start, end - start, buf, max, &dlen);
	if (r == -ENOSPC)
		return SMTP_MIME_BROKEN;
	if (r < 0)
		return SMTP_MIME_BASE64;
	return mime_envelope(buf, dlen, ret);
}
