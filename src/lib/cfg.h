/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * INI configuration in GNUnet's style, layer 0: "[section]",
 * "KEY = value", comment lines starting with '#' or ';', and
 * "@INLINE@ path" includes (relative to the including file). Section and
 * key names are case-insensitive; a later assignment wins. Every key a
 * module reads is declared in a schema with its compiled-in default, so a
 * daemon runs with no file at all and unknown keys can be reported.
 * The library never logs: failures leave a "file:line: message" text in
 * cfg_error() for the caller to log once.
 */
#ifndef FERRY_LIB_CFG_H
#define FERRY_LIB_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/transport.h>

struct cfg;

/* One known key. Tables end with an entry whose key is NULL. */
struct cfg_schema_key {
	const char *section; /* "core" */
	const char *key;     /* "TRANSPORTS" */
	const char *def;     /* compiled-in default; NULL means unset */
	const char *help;    /* one line, for ferryd.conf(5) */
};

typedef void cfg_warn_fn(void *cls, const char *msg);

#define CFG_LINE_MAX 4096
#define CFG_INCLUDE_DEPTH 8

/* NULL on OOM. */
struct cfg *cfg_new(void);
void cfg_free(struct cfg *c);

/* Parses a file and merges what it sets. 0, or a negative errno with
 * cfg_error() naming file and line. */
int cfg_load_file(struct cfg *c, const char *path);
/* Same for text in memory; name appears in messages. Includes resolve
 * relative to the working directory. */
int cfg_load_buffer(struct cfg *c, const char *name, const char *text,
    size_t len);
/* Sets one value (from the command line). 0 or -ENOMEM / -EINVAL. */
int cfg_set(struct cfg *c, const char *section, const char *key,
    const char *value);
/* Declares known keys; the table is borrowed and must outlive c. */
int cfg_add_schema(struct cfg *c, const struct cfg_schema_key *keys);
/* Declares the keys of a plugin's section; the table is copied. Declaring
 * a section again adds to it. */
int cfg_add_schema_section(struct cfg *c, const char *section,
    const struct ferry_cfg_key *keys);

/* Declares that sections whose names start with prefix belong to
 * someone who may not be present (a transport plugin that is not loaded):
 * unless a key table for the exact section is declared too, their keys
 * are not reported as unknown. */
int cfg_add_schema_prefix(struct cfg *c, const char *prefix);

/* The value set in a file or by cfg_set, else the schema default, else
 * NULL. Valid until c is freed or the key is set again. */
const char *cfg_get(const struct cfg *c, const char *section,
    const char *key);
/* True if a file or cfg_set gave the key a value. */
bool cfg_is_set(const struct cfg *c, const char *section, const char *key);
/* "file:line" of the key's value, or "default". */
const char *cfg_where(const struct cfg *c, const char *section,
    const char *key, char *buf, size_t size);

/* Typed getters: 0 and *ret, or -EINVAL/-ERANGE/-ENOENT (no value and no
 * default) with cfg_error() saying where and what was expected. */
int cfg_get_uint(struct cfg *c, const char *section, const char *key,
    uint64_t min, uint64_t max, uint64_t *ret);
int cfg_get_size(struct cfg *c, const char *section, const char *key,
    uint64_t min, uint64_t max, uint64_t *ret);
int cfg_get_duration(struct cfg *c, const char *section, const char *key,
    uint64_t min_us, uint64_t max_us, uint64_t *ret_us);
int cfg_get_bool(struct cfg *c, const char *section, const char *key,
    bool *ret);
int cfg_get_fraction(struct cfg *c, const char *section, const char *key,
    double min, double max, double *ret);
/* Records a caller's own complaint about a key in cfg_error() form and
 * returns -EINVAL. */
int cfg_fail(struct cfg *c, const char *section, const char *key,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The last failure, "" if none. */
const char *cfg_error(const struct cfg *c);
/* Reports keys and sections no schema knows and keys set twice; returns
 * how many it reported. */
size_t cfg_warnings(const struct cfg *c, cfg_warn_fn *fn, void *cls);

/* Walks a list value ("udp tcp" or "udp, tcp"): returns false at the end,
 * else the next word and its length, advancing *s. */
bool cfg_next_word(const char **s, const char **ret_word, size_t *ret_len);

#endif /* FERRY_LIB_CFG_H */
