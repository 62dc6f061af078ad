/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * HELO addresses of the SMTP transport (see smtp_addr.h): their checks
 * (seed 004, II-B verifyHelo), the blacklist (II-C) and the key of the
 * per-destination cap (III-C).
 */
#include "smtp_addr.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/cfg.h"

static bool
addr_is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* A dot-atom of the restricted set of smtp_addr.h. */
static bool
addr_local_ok(const char *p, size_t len)
{
	if (len == 0 || len > SMTP_ADDR_LOCAL_MAX || p[0] == '.' ||
	    p[len - 1] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = p[i];

		if (c == '.' && p[i + 1] == '.')
			return false;
		if (!addr_is_alnum(c) && (c == '\0' ||
		    strchr(".#%*+-=?^_~", c) == NULL))
			return false;
	}
	return true;
}

/* A host name: labels of letters, digits and inner hyphens. */
static bool
addr_domain_ok(const char *p, size_t len)
{
	size_t label = 0;

	if (len == 0 || len > SMTP_MIME_DOMAIN_MAX)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || p[i] == '.') {
			if (label == 0 || p[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!addr_is_alnum(p[i]) && p[i] != '-')
			return false;
		if (label == 0 && p[i] == '-')
			return false;
		if (++label > SMTP_ADDR_LABEL_MAX)
			return false;
	}
	return true;
}

int
smtp_addr_check_mail(const char *mail, size_t len)
{
	const char *at;

	if (len < 3 || len > SMTP_ADDR_MAIL_MAX)
		return -EINVAL;
	at = memchr(mail, '@', len);
	if (at == NULL)
		return -EINVAL;
	if (!addr_local_ok(mail, (size_t)(at - mail)) ||
	    !addr_domain_ok(at + 1, len - (size_t)(at - mail) - 1))
		return -EINVAL;
	return 0;
}

int
smtp_addr_decode(const void *addr, size_t len, struct smtp_addr *ret)
{
	const char *p = addr;
	struct smtp_mime_filter f;
	size_t mail_len, filter_len;

	if (len < 1)
		return -EINVAL;
	mail_len = (unsigned char)p[0];
	if (mail_len > len - 1)
		return -EINVAL;
	filter_len = len - 1 - mail_len;
	if (smtp_addr_check_mail(p + 1, mail_len) < 0 ||
	    smtp_mime_filter_parse(p + 1 + mail_len, filter_len, &f) < 0)
		return -EINVAL;
	memcpy(ret->mail, p + 1, mail_len);
	ret->mail[mail_len] = '\0';
	ret->mail_len = mail_len;
	memcpy(ret->filter, p + 1 + mail_len, filter_len);
	ret->filter[filter_len] = '\0';
	ret->filter_len = filter_len;
	return 0;
}

int
smtp_addr_encode(const char *mail, size_t mail_len, const char *filter,
    size_t filter_len, void *out, size_t max, size_t *ret_len)
{
	struct smtp_mime_filter f;
	char *o = out;

	if (smtp_addr_check_mail(mail, mail_len) < 0 ||
	    smtp_mime_filter_parse(filter, filter_len, &f) < 0)
		return -EINVAL;
	if (max < 1 + mail_len + filter_len)
		return -ENOSPC;
	o[0] = (char)mail_len;
	memcpy(o + 1, mail, mail_len);
	memcpy(o + 1 + mail_len, filter, filter_len);
	*ret_len = 1 + mail_len + filter_len;
	return 0;
}

int
smtp_addr_format(const void *addr, size_t len, char *buf, size_t size)
{
	struct smtp_addr a;
	int n;

	if (smtp_addr_decode(addr, len, &a) < 0)
		return -EINVAL;
	n = snprintf(buf, size, "%s [%s]", a.mail, a.filter);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

const char *
smtp_addr_domain(const char *mail, size_t len)
{
	const char *at = memchr(mail, '@', len);

	return at != NULL ? at + 1 : mail + len;
}

int
smtp_addr_check_list(const char *list)
{
	const char *word;
	size_t wlen;

	while (cfg_next_word(&list, &word, &wlen)) {
		if (word[0] == '@' ? !addr_domain_ok(word + 1, wlen - 1)
				   : smtp_addr_check_mail(word, wlen) < 0)
			return -EINVAL;
	}
	return 0;
}

/* Whether domain d (dlen) is entry e (elen) or a subdomain of it. */
static bool
addr_domain_in(const char *d, size_t dlen, const char *e, size_t elen)
{
	if (dlen < elen || strncasecmp(d + dlen - elen, e, elen) != 0)
		return false;
	return dlen == elen || d[dlen - elen - 1] == '.';
}

bool
smtp_addr_listed(const char *list, const char *mail, size_t len)
{
	const char *domain = smtp_addr_domain(mail, len);
	size_t dlen = len - (size_t)(domain - mail);
	const char *word;
	size_t wlen;

	while (list != NULL && cfg_next_word(&list, &word, &wlen)) {
		if (word[0] == '@') {
			if (addr_domain_in(domain, dlen, word + 1, wlen - 1))
				return true;
		} else if (wlen == len && strncasecmp(word, mail, len) == 0) {
			return true;
		}
	}
	return false;
}

size_t
smtp_addr_budget_key(const char *mail, size_t len, char *out)
{
	const char *at = memchr(mail, '@', len);
	size_t local = at != NULL ? (size_t)(at - mail) : len;
	const char *plus = memchr(mail, '+', local);
	size_t w = 0;

	for (size_t i = 0; i < len; i++) {
		char c = mail[i];

		if (plus != NULL && i >= (size_t)(plus - mail) && i < local)
			continue;
		out[w++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	out[w] = '\0';
	return w;
}
