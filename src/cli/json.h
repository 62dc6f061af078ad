/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A small streaming JSON writer for the ferry command's --json output:
 * compact, one document per line, strings escaped per RFC 8259.
 */
#ifndef FERRY_CLI_JSON_H
#define FERRY_CLI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_DEPTH_MAX 16

struct json {
	FILE *f;                    /* where the text goes, borrowed */
	unsigned depth;             /* open objects and arrays */
	bool first[JSON_DEPTH_MAX]; /* nothing written yet at that depth */
	bool after_key;             /* a key was written, its value is next */
};

/* Starts a document on f. */
void json_init(struct json *j, FILE *f);
/* Containers; nesting deeper than JSON_DEPTH_MAX is a caller bug. The
 * end of the outermost one writes a newline and flushes. */
void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
/* The key of the next member, inside an object. */
void json_key(struct json *j, const char *key);
/* Values. json_string takes UTF-8 and writes invalid bytes as U+FFFD;
 * json_bytes writes each byte >= 0x80 as the code point of that value,
 * so any data prints losslessly (as Latin-1). NULL s writes null. */
void json_string(struct json *j, const char *s);
void json_bytes(struct json *j, const void *data, size_t len);
void json_uint(struct json *j, uint64_t v);
void json_int(struct json *j, int64_t v);
void json_double(struct json *j, double v);
void json_bool(struct json *j, bool v);
/* A member of the object being written: json_key, then the value. */
void json_member_string(struct json *j, const char *key, const char *s);
void json_member_uint(struct json *j, const char *key, uint64_t v);
void json_member_bool(struct json *j, const char *key, bool v);

#endif /* FERRY_CLI_JSON_H */
