/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The pieces of an HTTP/1.1 request (RFC 9112) the intermediary's server
 * reads, intermediary layer: the request line, a header field line, a
 * chunk-size line and a Content-Length. Pure functions over bytes the
 * caller has cut at CRLF, with a fuzz target (fuzz_httpmsg); httpd.c
 * does the I/O. Strict: what a correct client never sends is refused,
 * not guessed at (obsolete line folding, bare CR, spaces before a colon,
 * a target that is not an origin-form path).
 */
#ifndef FERRY_INTERMEDIARY_HTTPMSG_H
#define FERRY_INTERMEDIARY_HTTPMSG_H

#include <stddef.h>
#include <stdint.h>

#define HTTPMSG_METHOD_MAX 16   /* longest method, NUL included */
#define HTTPMSG_TARGET_MAX 2048 /* longest request target, NUL included */

struct httpmsg_reqline {
	char method[HTTPMSG_METHOD_MAX]; /* upper-case letters */
	char target[HTTPMSG_TARGET_MAX]; /* "/...", visible ASCII */
	unsigned minor;                  /* HTTP/1.minor: 0 or 1 */
};

/* A header field line's name and value, pointing into the line. */
struct httpmsg_field {
	const char *name; /* token characters */
	size_t name_len;
	const char *value; /* without surrounding blanks */
	size_t value_len;
};

/* Parses "METHOD SP TARGET SP HTTP/1.x" (len bytes, no CRLF). 0 or
 * -EBADMSG; -EMSGSIZE for a method or target over its bound. */
int httpmsg_request_line(const char *line, size_t len,
    struct httpmsg_reqline *ret);
/* Parses "name: value" (len bytes, no CRLF), pointing ret into line. 0
 * or -EBADMSG. */
int httpmsg_field(const char *line, size_t len, struct httpmsg_field *ret);
/* Parses a chunk-size line: hex digits, optionally ";" extensions, which
 * are ignored. 0, -EBADMSG, or -EOVERFLOW past 2^48. */
int httpmsg_chunk_size(const char *line, size_t len, uint64_t *ret);
/* Parses a Content-Length value: decimal digits only. 0, -EBADMSG, or
 * -EOVERFLOW past 2^53. */
int httpmsg_content_length(const char *value, size_t len, uint64_t *ret);
/* Whether field f is called name (ASCII, case-insensitive). */
int httpmsg_field_is(const struct httpmsg_field *f, const char *name);
/* Whether value (len bytes) equals s, case-insensitive. */
int httpmsg_value_is(const char *value, size_t len, const char *s);

#endif /* FERRY_INTERMEDIARY_HTTPMSG_H */
