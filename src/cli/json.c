/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The --json writer (see json.h): RFC 8259 escaping, UTF-8 checked. */
#include "cli/json.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

void
json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
	j->after_key = false;
}

/* Writes the separator a new value or key needs at the current depth. */
static void
json_sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		(void)fputc(',', j->f);
	j->first[j->depth] = false;
}

static void
json_open(struct json *j, int c)
{
	json_sep(j);
	assert(j->depth + 1 < JSON_DEPTH_MAX);
	(void)fputc(c, j->f);
	j->first[++j->depth] = true;
}

static void
json_close(struct json *j, int c)
{
	assert(j->depth > 0);
	(void)fputc(c, j->f);
	if (--j->depth == 0) {
		(void)fputc('\n', j->f);
		(void)fflush(j->f);
		j->first[0] = true;
	}
}

void
json_object_begin(struct json *j)
{
	json_open(j, '{');
}

void
json_object_end(struct json *j)
{
	json_close(j, '}');
}

void
json_array_begin(struct json *j)
{
	json_open(j, '[');
}

void
json_array_end(struct json *j)
{
	json_close(j, ']');
}

static void
json_escape_char(struct json *j, unsigned c)
{
	switch (c) {
	case '"':
		(void)fputs("\\\"", j->f);
		break;
	case '\\':
		(void)fputs("\\\\", j->f);
		break;
	case '\n':
		(void)fputs("\\n", j->f);
		break;
	case '\r':
		(void)fputs("\\r", j->f);
		break;
	case '\t':
		(void)fputs("\\t", j->f);
		break;
	case '\b':
		(void)fputs("\\b", j->f);
		break;
	case '\f':
		(void)fputs("\\f", j->f);
		break;
	default:
		if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0xff))
			(void)fprintf(j->f, "\\u%04x", c);
		else
			(void)fputc((int)c, j->f);
	}
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid
 * (RFC 3629 table: no overlongs, no surrogates, at most U+10FFFF). */
static size_t
json_utf8_len(const unsigned char *s, size_t left)
{
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (left < n)
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

void
json_string(struct json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left, n;

	json_sep(j);
	if (s == NULL) {
		(void)fputs("null", j->f);
		return;
	}
	left = strlen(s);
	(void)fputc('"', j->f);
	while (left > 0) {
		n = json_utf8_len(p, left);
		if (n == 0) {
			(void)fputs("\\ufffd", j->f);
			n = 1;
		} else if (n == 1) {
			json_escape_char(j, *p);
		} else if (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f) {
			/* A C1 control: valid JSON as it is, but a terminal
			 * showing the text may act on it (CSI). */
			(void)fprintf(j->f, "\\u%04x", p[1]);
		} else {
			(void)fwrite(p, 1, n, j->f);
		}
		p += n;
		left -= n;
	}
	(void)fputc('"', j->f);
}

void
json_bytes(struct json *j, const void *data, size_t len)
{
	const unsigned char *p = data;

	json_sep(j);
	(void)fputc('"', j->f);
	for (size_t i = 0; i < len; i++)
		json_escape_char(j, p[i]);
	(void)fputc('"', j->f);
}

void
json_key(struct json *j, const char *key)
{
	assert(!j->after_key);
	json_string(j, key);
	(void)fputc(':', j->f);
	j->after_key = true;
}

void
json_uint(struct json *j, uint64_t v)
{
	json_sep(j);
	(void)fprintf(j->f, "%" PRIu64, v);
}

void
json_int(struct json *j, int64_t v)
{
	json_sep(j);
	(void)fprintf(j->f, "%" PRId64, v);
}

void
json_double(struct json *j, double v)
{
	json_sep(j);
	/* JSON has no NaN or infinity. */
	if (!isfinite(v))
		(void)fputs("null", j->f);
	else
		(void)fprintf(j->f, "%.6g", v);
}

void
json_bool(struct json *j, bool v)
{
	json_sep(j);
	(void)fputs(v ? "true" : "false", j->f);
}

void
json_member_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void
json_member_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void
json_member_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}
