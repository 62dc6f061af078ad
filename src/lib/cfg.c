/* SPDX-License-Identifier: GPL-3.0-or-later */
/* INI configuration parser and store (see cfg.h), layer 0. */
#include "lib/cfg.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/fsutil.h"
#include "lib/strparse.h"

#define CFG_FILE_MAX (1024 * 1024)

struct cfg_entry {
	char *section;
	char *key;
	char *value;
	const char *file; /* interned in cfg.files */
	unsigned line;	  /* 0: set by cfg_set */
	unsigned times;	  /* assignments seen */
};

struct cfg_schema {
	const struct cfg_schema_key *keys; /* borrowed table, or NULL */
	char *prefix;			   /* owned: any section starting so */
	char *section;			   /* owned, with plugin_keys */
	char **plugin_keys;		   /* owned copy: name, def pairs */
	size_t n_plugin_keys;
};

struct cfg {
	struct cfg_entry *entries;
	size_t n, cap;
	struct cfg_schema *schemas;
	size_t n_schemas;
	char **files;
	size_t n_files;
	char error[512];
};

struct cfg_parse {
	struct cfg *c;
	const char *file; /* interned */
	char section[128];
	int depth;
};

static int cfg_parse_text(struct cfg_parse *p, const char *text, size_t len);

struct cfg *
cfg_new(void)
{
	return calloc(1, sizeof(struct cfg));
}

void
cfg_free(struct cfg *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->entries[i].section);
		free(c->entries[i].key);
		free(c->entries[i].value);
	}
	for (size_t i = 0; i < c->n_files; i++)
		free(c->files[i]);
	for (size_t i = 0; i < c->n_schemas; i++) {
		for (size_t k = 0; k < 2 * c->schemas[i].n_plugin_keys; k++)
			free(c->schemas[i].plugin_keys[k]);
		free(c->schemas[i].plugin_keys);
		free(c->schemas[i].section);
		free(c->schemas[i].prefix);
	}
	free(c->entries);
	free(c->schemas);
	free(c->files);
	free(c);
}

const char *
cfg_error(const struct cfg *c)
{
	return c->error;
}

static int
cfg_seterr(struct cfg *c, int r, const char *file, unsigned line,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
cfg_seterr(struct cfg *c, int r, const char *file, unsigned line,
    const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		(void)snprintf(c->error, sizeof(c->error), "%s:%u: %s", file,
		    line, msg);
	else
		(void)snprintf(c->error, sizeof(c->error), "%s: %s", file,
		    msg);
	return r;
}

static const char *
cfg_intern_file(struct cfg *c, const char *name)
{
	char **files, *copy;

	for (size_t i = 0; i < c->n_files; i++)
		if (strcmp(c->files[i], name) == 0)
			return c->files[i];
	files = realloc(c->files, (c->n_files + 1) * sizeof(*files));
	if (files == NULL)
		return NULL;
	c->files = files;
	copy = strdup(name);
	if (copy == NULL)
		return NULL;
	c->files[c->n_files++] = copy;
	return copy;
}

static struct cfg_entry *
cfg_find(const struct cfg *c, const char *section, const char *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcasecmp(c->entries[i].section, section) == 0 &&
		    strcasecmp(c->entries[i].key, key) == 0)
			return &c->entries[i];
	return NULL;
}

/* line 0: set on the command line, which overrides a file on purpose and
 * so is not counted as a second assignment. */
static int
cfg_store(struct cfg *c, const char *section, const char *key,
    const char *value, const char *file, unsigned line)
{
	struct cfg_entry *e = cfg_find(c, section, key);
	char *v = strdup(value);

	if (v == NULL)
		return -ENOMEM;
	if (e != NULL) {
		free(e->value);
		e->value = v;
		e->file = file;
		e->line = line;
		if (line > 0)
			e->times++;
		return 0;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		struct cfg_entry *ents = realloc(c->entries, cap * sizeof(*ents));

		if (ents == NULL)
			goto oom;
		c->entries = ents;
		c->cap = cap;
	}
	e = &c->entries[c->n];
	memset(e, 0, sizeof(*e));
	e->section = strdup(section);
	e->key = strdup(key);
	if (e->section == NULL || e->key == NULL) {
		free(e->section);
		free(e->key);
		goto oom;
	}
	e->value = v;
	e->file = file;
	e->line = line;
	e->times = 1;
	c->n++;
	return 0;
oom:
	free(v);
	return -ENOMEM;
}

int
cfg_set(struct cfg *c, const char *section, const char *key,
    const char *value)
{
	const char *origin = cfg_intern_file(c, "<command line>");

	if (origin == NULL)
		return -ENOMEM;
	if (*section == '\0' || *key == '\0')
		return -EINVAL;
	return cfg_store(c, section, key, value, origin, 0);
}

static bool
cfg_is_name(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

static void
cfg_trim(const char **s, size_t *len)
{
	while (*len > 0 && isspace((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

static int
cfg_include(struct cfg_parse *p, const char *arg, size_t len, unsigned line)
{
	char path[PATH_MAX], name[PATH_MAX];
	const char *slash;
	struct cfg_parse sub;
	uint8_t *text;
	size_t tlen;
	int r;

	if (p->depth >= CFG_INCLUDE_DEPTH)
		return cfg_seterr(p->c, -ELOOP, p->file, line,
		    "includes nested more than %d deep", CFG_INCLUDE_DEPTH);
	if (len == 0 || len >= sizeof(name))
		return cfg_seterr(p->c, -EINVAL, p->file, line,
		    "@INLINE@ needs a file name");
	memcpy(name, arg, len);
	name[len] = '\0';
	slash = strrchr(p->file, '/');
	if (name[0] != '/' && slash != NULL) {
		int dl = (int)(slash - p->file);

		if (snprintf(path, sizeof(path), "%.*s/%s", dl, p->file,
			name) >= (int)sizeof(path))
			return cfg_seterr(p->c, -ENAMETOOLONG, p->file, line,
			    "include path too long");
	} else {
		(void)snprintf(path, sizeof(path), "%s", name);
	}
	r = fs_read_file(path, CFG_FILE_MAX, &text, &tlen);
	if (r < 0)
		return cfg_seterr(p->c, r, p->file, line, "cannot read %s: %s",
		    path, strerror(-r));
	sub = *p;
	sub.depth = p->depth + 1;
	sub.file = cfg_intern_file(p->c, path);
	if (sub.file == NULL) {
		free(text);
		return -ENOMEM;
	}
	r = cfg_parse_text(&sub, (const char *)text, tlen);
	free(text);
	return r;
}

static int
cfg_parse_line(struct cfg_parse *p, const char *s, size_t len, unsigned line)
{
	const char *eq, *key, *val;
	size_t klen, vlen;
	char kbuf[128], *vbuf;
	int r;

	cfg_trim(&s, &len);
	if (len == 0 || s[0] == '#' || s[0] == ';')
		return 0;
	if (s[0] == '[') {
		if (s[len - 1] != ']')
			return cfg_seterr(p->c, -EINVAL, p->file, line,
			    "section header lacks ']'");
		s++;
		len -= 2;
		cfg_trim(&s, &len);
		if (!cfg_is_name(s, len) || len >= sizeof(p->section))
			return cfg_seterr(p->c, -EINVAL, p->file, line,
			    "bad section name");
		memcpy(p->section, s, len);
		p->section[len] = '\0';
		return 0;
	}
	if (len >= 8 && strncasecmp(s, "@INLINE@", 8) == 0) {
		const char *arg = s + 8;
		size_t alen = len - 8;

		cfg_trim(&arg, &alen);
		return cfg_include(p, arg, alen, line);
	}
	eq = memchr(s, '=', len);
	if (eq == NULL)
		return cfg_seterr(p->c, -EINVAL, p->file, line,
		    "expected [section], KEY = value or a comment");
	key = s;
	klen = (size_t)(eq - s);
	val = eq + 1;
	vlen = len - klen - 1;
	cfg_trim(&key, &klen);
	cfg_trim(&val, &vlen);
	if (!cfg_is_name(key, klen) || klen >= sizeof(kbuf))
		return cfg_seterr(p->c, -EINVAL, p->file, line,
		    "bad key name");
	if (p->section[0] == '\0')
		return cfg_seterr(p->c, -EINVAL, p->file, line,
		    "key %.*s outside of any [section]", (int)klen, key);
	/* A value in double quotes keeps its surrounding spaces. */
	if (vlen >= 2 && val[0] == '"' && val[vlen - 1] == '"') {
		val++;
		vlen -= 2;
	}
	memcpy(kbuf, key, klen);
	kbuf[klen] = '\0';
	vbuf = strndup(val, vlen);
	if (vbuf == NULL)
		return -ENOMEM;
	r = cfg_store(p->c, p->section, kbuf, vbuf, p->file, line);
	free(vbuf);
	return r;
}

static int
cfg_parse_text(struct cfg_parse *p, const char *text, size_t len)
{
	unsigned line = 0;
	size_t pos = 0;
	int r;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - (text + pos)) : len - pos;

		line++;
		if (llen > CFG_LINE_MAX)
			return cfg_seterr(p->c, -EINVAL, p->file, line,
			    "line longer than %d bytes", CFG_LINE_MAX);
		if (memchr(text + pos, '\0', llen) != NULL)
			return cfg_seterr(p->c, -EINVAL, p->file, line,
			    "NUL byte in line");
		r = cfg_parse_line(p, text + pos, llen, line);
		if (r < 0)
			return r;
		pos += llen + (nl != NULL);
	}
	return 0;
}

int
cfg_load_buffer(struct cfg *c, const char *name, const char *text,
    size_t len)
{
	struct cfg_parse p;

	memset(&p, 0, sizeof(p));
	p.c = c;
	p.file = cfg_intern_file(c, name);
	if (p.file == NULL)
		return -ENOMEM;
	c->error[0] = '\0';
	return cfg_parse_text(&p, text, len);
}

int
cfg_load_file(struct cfg *c, const char *path)
{
	uint8_t *text;
	size_t len;
	int r;

	r = fs_read_file(path, CFG_FILE_MAX, &text, &len);
	if (r < 0)
		return cfg_seterr(c, r, path, 0, "cannot read: %s",
		    strerror(-r));
	r = cfg_load_buffer(c, path, (const char *)text, len);
	free(text);
	return r;
}

static int
cfg_add_schema_entry(struct cfg *c, struct cfg_schema s)
{
	struct cfg_schema *n =
	    realloc(c->schemas, (c->n_schemas + 1) * sizeof(*n));

	if (n == NULL)
		return -ENOMEM;
	c->schemas = n;
	c->schemas[c->n_schemas++] = s;
	return 0;
}

int
cfg_add_schema(struct cfg *c, const struct cfg_schema_key *keys)
{
	struct cfg_schema s = { .keys = keys };

	return cfg_add_schema_entry(c, s);
}

/* Plugins are unloaded while the configuration lives on, so their key
 * tables are copied. */
int
cfg_add_schema_section(struct cfg *c, const char *section,
    const struct ferry_cfg_key *keys)
{
	struct cfg_schema s = { 0 };
	size_t n = 0;

	while (keys != NULL && keys[n].name != NULL)
		n++;
	s.section = strdup(section);
	s.plugin_keys = calloc(2 * n + 1, sizeof(char *));
	if (s.section == NULL || s.plugin_keys == NULL)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		s.plugin_keys[2 * i] = strdup(keys[i].name);
		if (keys[i].def != NULL)
			s.plugin_keys[2 * i + 1] = strdup(keys[i].def);
		s.n_plugin_keys = i + 1;
		if (s.plugin_keys[2 * i] == NULL ||
		    (keys[i].def != NULL && s.plugin_keys[2 * i + 1] == NULL))
			goto oom;
	}
	if (cfg_add_schema_entry(c, s) == 0)
		return 0;
oom:
	for (size_t k = 0; k < 2 * s.n_plugin_keys; k++)
		free(s.plugin_keys[k]);
	free(s.plugin_keys);
	free(s.section);
	return -ENOMEM;
}

int
cfg_add_schema_prefix(struct cfg *c, const char *prefix)
{
	struct cfg_schema s = { 0 };

	s.prefix = strdup(prefix);
	if (s.prefix == NULL)
		return -ENOMEM;
	if (cfg_add_schema_entry(c, s) < 0) {
		free(s.prefix);
		return -ENOMEM;
	}
	return 0;
}

/* Schema lookup: sets *known, returns the default (may be NULL). */
static const char *
cfg_schema_default(const struct cfg *c, const char *section, const char *key,
    bool *known)
{
	*known = false;
	for (size_t i = 0; i < c->n_schemas; i++) {
		const struct cfg_schema *s = &c->schemas[i];

		if (s->prefix != NULL)
			continue;
		if (s->keys != NULL) {
			for (const struct cfg_schema_key *k = s->keys;
			     k->key != NULL; k++)
				if (strcasecmp(k->section, section) == 0 &&
				    strcasecmp(k->key, key) == 0) {
					*known = true;
					return k->def;
				}
			continue;
		}
		if (strcasecmp(s->section, section) != 0)
			continue;
		for (size_t k = 0; k < s->n_plugin_keys; k++)
			if (strcasecmp(s->plugin_keys[2 * k], key) == 0) {
				*known = true;
				return s->plugin_keys[2 * k + 1];
			}
	}
	return NULL;
}

/* A section with its own key table (not just a matching prefix). */
static bool
cfg_section_known(const struct cfg *c, const char *section)
{
	for (size_t i = 0; i < c->n_schemas; i++) {
		const struct cfg_schema *s = &c->schemas[i];

		if (s->prefix != NULL)
			continue;
		if (s->keys == NULL) {
			if (strcasecmp(s->section, section) == 0)
				return true;
			continue;
		}
		for (const struct cfg_schema_key *k = s->keys; k->key != NULL;
		     k++)
			if (strcasecmp(k->section, section) == 0)
				return true;
	}
	return false;
}

const char *
cfg_get(const struct cfg *c, const char *section, const char *key)
{
	const struct cfg_entry *e = cfg_find(c, section, key);
	bool known;

	if (e != NULL)
		return e->value;
	return cfg_schema_default(c, section, key, &known);
}

bool
cfg_is_set(const struct cfg *c, const char *section, const char *key)
{
	return cfg_find(c, section, key) != NULL;
}

const char *
cfg_where(const struct cfg *c, const char *section, const char *key,
    char *buf, size_t size)
{
	const struct cfg_entry *e = cfg_find(c, section, key);

	if (e == NULL)
		(void)snprintf(buf, size, "default");
	else if (e->line == 0)
		(void)snprintf(buf, size, "%s", e->file);
	else
		(void)snprintf(buf, size, "%s:%u", e->file, e->line);
	return buf;
}

int
cfg_fail(struct cfg *c, const char *section, const char *key,
    const char *fmt, ...)
{
	char where[PATH_MAX + 16], msg[320];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	(void)cfg_where(c, section, key, where, sizeof(where));
	(void)snprintf(c->error, sizeof(c->error), "%.200s: [%.64s] %.64s: %.160s", where,
	    section, key, msg);
	return -EINVAL;
}

/* Fetches the value for a typed getter, failing if there is none. */
static int
cfg_value(struct cfg *c, const char *section, const char *key,
    const char **ret)
{
	const char *v = cfg_get(c, section, key);

	if (v == NULL) {
		(void)cfg_fail(c, section, key, "no value and no default");
		return -ENOENT;
	}
	*ret = v;
	return 0;
}

int
cfg_get_uint(struct cfg *c, const char *section, const char *key,
    uint64_t min, uint64_t max, uint64_t *ret)
{
	const char *v;
	int r = cfg_value(c, section, key, &v);

	if (r < 0)
		return r;
	r = parse_uint(v, min, max, ret);
	if (r < 0)
		(void)cfg_fail(c, section, key,
		    "'%s' is not a whole number from %llu to %llu", v,
		    (unsigned long long)min, (unsigned long long)max);
	return r;
}

int
cfg_get_size(struct cfg *c, const char *section, const char *key,
    uint64_t min, uint64_t max, uint64_t *ret)
{
	const char *v;
	int r = cfg_value(c, section, key, &v);

	if (r < 0)
		return r;
	r = parse_size(v, min, max, ret);
	if (r < 0)
		(void)cfg_fail(c, section, key,
		    "'%s' is not a size from %llu to %llu bytes (units: B, KiB, MiB, GiB, KB, MB, GB)",
		    v, (unsigned long long)min, (unsigned long long)max);
	return r;
}

int
cfg_get_duration(struct cfg *c, const char *section, const char *key,
    uint64_t min_us, uint64_t max_us, uint64_t *ret_us)
{
	const char *v;
	int r = cfg_value(c, section, key, &v);

	if (r < 0)
		return r;
	r = parse_duration(v, min_us, max_us, ret_us);
	if (r < 0)
		(void)cfg_fail(c, section, key,
		    "'%s' is not a duration from %llu us to %llu us (units: us, ms, s, min, h, d)",
		    v, (unsigned long long)min_us, (unsigned long long)max_us);
	return r;
}

int
cfg_get_bool(struct cfg *c, const char *section, const char *key, bool *ret)
{
	const char *v;
	int r = cfg_value(c, section, key, &v);

	if (r < 0)
		return r;
	r = parse_bool(v, ret);
	if (r < 0)
		(void)cfg_fail(c, section, key, "'%s' is not yes or no", v);
	return r;
}

int
cfg_get_fraction(struct cfg *c, const char *section, const char *key,
    double min, double max, double *ret)
{
	const char *v;
	int r = cfg_value(c, section, key, &v);

	if (r < 0)
		return r;
	r = parse_fraction(v, min, max, ret);
	if (r < 0)
		(void)cfg_fail(c, section, key,
		    "'%s' is not a fraction from %g to %g (e.g. 0.05 or 5%%)",
		    v, min, max);
	return r;
}

static bool
cfg_section_prefixed(const struct cfg *c, const char *section)
{
	for (size_t i = 0; i < c->n_schemas; i++) {
		const char *pre = c->schemas[i].prefix;

		if (pre != NULL && strncasecmp(section, pre, strlen(pre)) == 0)
			return true;
	}
	return false;
}

size_t
cfg_warnings(const struct cfg *c, cfg_warn_fn *fn, void *cls)
{
	char msg[640], where[PATH_MAX + 16];
	size_t count = 0;
	bool known;

	for (size_t i = 0; i < c->n; i++) {
		const struct cfg_entry *e = &c->entries[i];

		(void)cfg_where(c, e->section, e->key, where, sizeof(where));
		if (!cfg_section_known(c, e->section) &&
		    cfg_section_prefixed(c, e->section))
			continue; /* its owner is not loaded to judge it */
		if (!cfg_section_known(c, e->section)) {
			(void)snprintf(msg, sizeof(msg),
			    "%.200s: unknown section [%.64s] (key %.64s ignored)", where,
			    e->section, e->key);
			fn(cls, msg);
			count++;
			continue;
		}
		(void)cfg_schema_default(c, e->section, e->key, &known);
		if (!known) {
			(void)snprintf(msg, sizeof(msg),
			    "%.200s: unknown key %.64s in [%.64s] (ignored)", where,
			    e->key, e->section);
			fn(cls, msg);
			count++;
		}
		if (e->times > 1) {
			(void)snprintf(msg, sizeof(msg),
			    "%.200s: [%.64s] %.64s set %u times; this last value wins",
			    where, e->section, e->key, e->times);
			fn(cls, msg);
			count++;
		}
	}
	return count;
}

bool
cfg_next_word(const char **s, const char **ret_word, size_t *ret_len)
{
	const char *p = *s;
	size_t len;

	while (*p == ' ' || *p == '\t' || *p == ',')
		p++;
	if (*p == '\0') {
		*s = p;
		return false;
	}
	len = strcspn(p, " \t,");
	*ret_word = p;
	*ret_len = len;
	*s = p + len;
	return true;
}
