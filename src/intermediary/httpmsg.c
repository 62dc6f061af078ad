/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The HTTP/1.1 request pieces (httpmsg.h), intermediary layer. */
#include "intermediary/httpmsg.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

/* RFC 9110's tchar. */
static int
httpmsg_is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

int
httpmsg_request_line(const char *line, size_t len, struct httpmsg_reqline *ret)
{
	const char *sp1, *sp2, *end = line + len;
	size_t mlen, tlen;

	sp1 = memchr(line, ' ', len);
	if (sp1 == NULL)
		return -EBADMSG;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (sp2 == NULL)
		return -EBADMSG;
	mlen = (size_t)(sp1 - line);
	tlen = (size_t)(sp2 - sp1 - 1);
	if (mlen == 0 || tlen == 0)
		return -EBADMSG;
	if (mlen >= HTTPMSG_METHOD_MAX || tlen >= HTTPMSG_TARGET_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < mlen; i++)
		if (line[i] < 'A' || line[i] > 'Z')
			return -EBADMSG;
	/* origin-form only: no absolute URIs, no "*" */
	if (sp1[1] != '/')
		return -EBADMSG;
	for (size_t i = 0; i < tlen; i++) {
		unsigned char c = (unsigned char)sp1[1 + i];

		if (c <= 0x20 || c >= 0x7f)
			return -EBADMSG;
	}
	if ((size_t)(end - sp2 - 1) != 8 ||
	    memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return -EBADMSG;
	memcpy(ret->method, line, mlen);
	ret->method[mlen] = '\0';
	memcpy(ret->target, sp1 + 1, tlen);
	ret->target[tlen] = '\0';
	ret->minor = (unsigned)(sp2[8] - '0');
	return 0;
}

int
httpmsg_field(const char *line, size_t len, struct httpmsg_field *ret)
{
	const char *colon = memchr(line, ':', len), *v, *e = line + len;

	if (colon == NULL || colon == line)
		return -EBADMSG;
	for (const char *p = line; p < colon; p++)
		if (!httpmsg_is_tchar((unsigned char)*p))
			return -EBADMSG;
	for (const char *p = colon + 1; p < e; p++) {
		unsigned char c = (unsigned char)*p;

		/* field-vchar, obs-text and blanks; no CR, LF or NUL */
		if (c != '\t' && (c < 0x20 || c == 0x7f))
			return -EBADMSG;
	}
	v = colon + 1;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	ret->name = line;
	ret->name_len = (size_t)(colon - line);
	ret->value = v;
	ret->value_len = (size_t)(e - v);
	return 0;
}

int
httpmsg_chunk_size(const char *line, size_t len, uint64_t *ret)
{
	uint64_t n = 0;
	size_t i = 0;

	for (; i < len; i++) {
		char c = line[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		if (n >> 44 != 0)
			return -EOVERFLOW;
		n = n * 16 + d;
	}
	if (i == 0)
		return -EBADMSG;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i < len && line[i] != ';')
		return -EBADMSG;
	*ret = n;
	return 0;
}

int
httpmsg_content_length(const char *value, size_t len, uint64_t *ret)
{
	uint64_t n = 0;

	if (len == 0)
		return -EBADMSG;
	for (size_t i = 0; i < len; i++) {
		if (value[i] < '0' || value[i] > '9')
			return -EBADMSG;
		if (n > (1ull << 53) / 10)
			return -EOVERFLOW;
		n = n * 10 + (uint64_t)(value[i] - '0');
	}
	*ret = n;
	return 0;
}

int
httpmsg_field_is(const struct httpmsg_field *f, const char *name)
{
	return httpmsg_value_is(f->name, f->name_len, name);
}

int
httpmsg_value_is(const char *value, size_t len, const char *s)
{
	return strlen(s) == len && strncasecmp(value, s, len) == 0;
}
