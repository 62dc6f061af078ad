/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The --json writer (see json.h): RFC 8259 escaping, UTF-8 checked. */
#include "cli/json.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "lib/utf8.h"

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

void
json_string(struct json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left, n;
	uint32_t cp;

	json_sep(j);
	if (s == NULL) {
		(void)fputs("null", j->f);
		return;
	}
	left = strlen(s);
	(void)fputc('"', j->f);
	while (left > 0) {
		n = utf8_seq(p, left, &cp);
		if (n == 0) {
			(void)fputs("\\ufffd", j->f);
			n = 1;
		} else if (n == 1) {
			json_escape_char(j, *p);
		} else if (cp >= 0x80 && cp <= 0x9f) {
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
