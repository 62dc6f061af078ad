/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the configuration parser (src/lib/cfg.c): loads
 * arbitrary bytes as a config file, then reads every schema key through
 * every typed getter, runs the core's own checks and the warnings.
 *
 * Includes stay in a scratch directory: the input is named as a file in
 * it, so relative @INLINE@ names resolve there, where a few fixture files
 * wait (one includes itself, to reach the depth limit). An input whose
 * include names a path with '/' or a leading '.' is skipped, so nothing
 * outside that directory is ever opened.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ferry/transport.h>

#include "lib/cfg.h"
#include "lib/log.h"
#include "core/core_cfg.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir[PATH_MAX];
static char fuzz_name[PATH_MAX + 16];

static const struct {
	const char *name;
	const char *text;
} fuzz_fixtures[] = {
	{ "inc.conf",
	    "[core]\nMAX_PEERS = 12\n[transport-udp]\nPORT = 2086\n" },
	{ "loop.conf", "[core]\nKEEPALIVE = 1 s\n@INLINE@ loop.conf\n" },
	{ "bad.conf", "[core\n" },
	{ "empty.conf", "" },
	{ "chain.conf", "[testing]\nENABLE = yes\n@INLINE@ inc.conf\n" },
};
#define N_FIXTURES (sizeof(fuzz_fixtures) / sizeof(fuzz_fixtures[0]))

/* Keys the daemon's other tables declare; the core's come from core_cfg. */
static const struct cfg_schema_key fuzz_schema[] = {
	{ "paths", "STATE_DIR", NULL, "state" },
	{ "paths", "RUNTIME_DIR", NULL, "runtime" },
	{ "ferryd", "LOG_LEVEL", "notice", "level" },
	{ "service", "SOCKET_MODE", "0660", "mode" },
	{ NULL, NULL, NULL, NULL },
};

static const struct ferry_cfg_key fuzz_plugin_keys[] = {
	{ "PORT", "2086", "port" },
	{ "BIND_ADDRESS", NULL, "bind" },
	{ "ADVERTISE", "", "advertise" },
	{ "MTU", "1452", "mtu" },
	{ NULL, NULL, NULL },
};

static void
fuzz_cleanup(void)
{
	char path[PATH_MAX + 32];

	for (size_t i = 0; i < N_FIXTURES; i++) {
		(void)snprintf(path, sizeof(path), "%s/%s", fuzz_dir,
		    fuzz_fixtures[i].name);
		(void)unlink(path);
	}
	(void)rmdir(fuzz_dir);
}

static void fuzz_log_sink(void *cls, int level, const char *tag,
    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

static void
fuzz_log_sink(void *cls, int level, const char *tag, const char *fmt,
    va_list ap)
{
	char line[256];

	(void)cls;
	(void)level;
	(void)tag;
	(void)vsnprintf(line, sizeof(line), fmt, ap);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX + 32];

	(void)argc;
	(void)argv;
	if (tmp == NULL || *tmp != '/')
		tmp = "/tmp";
	(void)snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/ferry-fuzz-cfg.XXXXXX",
	    tmp);
	if (mkdtemp(fuzz_dir) == NULL) {
		perror("fuzz_cfg: mkdtemp");
		abort();
	}
	for (size_t i = 0; i < N_FIXTURES; i++) {
		FILE *f;

		(void)snprintf(path, sizeof(path), "%s/%s", fuzz_dir,
		    fuzz_fixtures[i].name);
		f = fopen(path, "w");
		if (f == NULL || fputs(fuzz_fixtures[i].text, f) == EOF ||
		    fclose(f) != 0) {
			perror("fuzz_cfg: fixture");
			abort();
		}
	}
	(void)snprintf(fuzz_name, sizeof(fuzz_name), "%s/fuzz.conf", fuzz_dir);
	(void)atexit(fuzz_cleanup);
	/* The core's checks log what they refuse; nobody needs to read it,
	 * but it is still formatted. */
	log_set_sink(fuzz_log_sink, NULL);
	log_set_level(FERRY_LOG_DEBUG);
	return 0;
}

/* True if every @INLINE@ line names a plain file of the scratch directory.
 * Mirrors the parser: lines end at '\n', trimmed with isspace(). */
static bool
fuzz_includes_contained(const uint8_t *data, size_t size)
{
	size_t pos = 0;

	while (pos < size) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t end = nl != NULL ? (size_t)(nl - data) : size;
		size_t i = pos, j = end;

		pos = end + 1;
		while (i < j && isspace(data[i]))
			i++;
		if (j - i < 8 ||
		    strncasecmp((const char *)data + i, "@INLINE@", 8) != 0)
			continue;
		i += 8;
		while (i < j && isspace(data[i]))
			i++;
		while (j > i && isspace(data[j - 1]))
			j--;
		if (i < j && data[i] == '.')
			return false;
		for (; i < j; i++)
			if (data[i] == '/' || data[i] == '\0')
				return false;
	}
	return true;
}

static void
fuzz_warn(void *cls, const char *msg)
{
	size_t *total = cls;

	*total += strlen(msg);
}

/* Every getter on one key; only that nothing breaks matters. */
static void
fuzz_read_key(struct cfg *c, const char *section, const char *key)
{
	char where[PATH_MAX + 32];
	const char *v, *word;
	uint64_t u;
	double d;
	bool b;
	size_t len;

	v = cfg_get(c, section, key);
	(void)cfg_is_set(c, section, key);
	(void)cfg_where(c, section, key, where, sizeof(where));
	(void)cfg_get_uint(c, section, key, 0, UINT64_MAX, &u);
	(void)cfg_get_uint(c, section, key, 10, 20, &u);
	(void)cfg_get_size(c, section, key, 0, UINT64_MAX, &u);
	(void)cfg_get_duration(c, section, key, 0, UINT64_MAX, &u);
	(void)cfg_get_bool(c, section, key, &b);
	(void)cfg_get_fraction(c, section, key, 0.0, 1.0, &d);
	(void)strlen(cfg_error(c));
	while (v != NULL && cfg_next_word(&v, &word, &len))
		if (len == 0)
			abort(); /* words are never empty */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct core_cfg cc;
	struct cfg *c;
	size_t total = 0;

	if (!fuzz_includes_contained(data, size))
		return 0;
	c = cfg_new();
	if (c == NULL || cfg_add_schema(c, core_cfg_keys) < 0 ||
	    cfg_add_schema(c, fuzz_schema) < 0 ||
	    cfg_add_schema_section(c, "transport-udp", fuzz_plugin_keys) < 0)
		abort();
	/* Twice, as a daemon merges a file and its overrides. */
	(void)cfg_load_buffer(c, fuzz_name, (const char *)data, size);
	(void)strlen(cfg_error(c));
	(void)cfg_load_buffer(c, fuzz_name, (const char *)data, size);
	for (const struct cfg_schema_key *k = core_cfg_keys; k->key != NULL;
	     k++)
		fuzz_read_key(c, k->section, k->key);
	for (const struct cfg_schema_key *k = fuzz_schema; k->key != NULL; k++)
		fuzz_read_key(c, k->section, k->key);
	for (const struct ferry_cfg_key *k = fuzz_plugin_keys; k->name != NULL;
	     k++)
		fuzz_read_key(c, "transport-udp", k->name);
	fuzz_read_key(c, "x", "K");
	(void)core_cfg_parse(c, &cc);
	(void)cfg_warnings(c, fuzz_warn, &total);
	(void)cfg_set(c, "core", "MAX_PEERS", "1");
	(void)cfg_fail(c, "core", "MAX_PEERS", "%s", "fuzz");
	cfg_free(c);
	return 0;
}
