/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferryd --dump-schema: every configuration key with its default and a
 * line of help, so documentation and tests can be checked against the
 * code (conf/ferryd.conf, ferryd.conf(5)). Daemon layer.
 */
#define LOG_TAG "ferryd"
#include "daemon/schema.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/core_cfg.h"
#include "dht/dhtnode.h"
#include "lib/cfg.h"
#include "lib/log.h"
#include "service/service.h"

#define SCHEMA_PLUGIN_PREFIX "libtransport_"
#define SCHEMA_PLUGIN_SUFFIX ".so"

static void
schema_line(void *cls, const char *section, const char *key, const char *def,
    const char *help)
{
	FILE *out = cls;

	fprintf(out, "[%s] %s = %s  # %s\n", section, key,
	    def != NULL ? def : "", help != NULL ? help : "");
}

static void
schema_table(FILE *out, const struct cfg_schema_key *keys)
{
	for (const struct cfg_schema_key *k = keys; k->key != NULL; k++)
		schema_line(out, k->section, k->key, k->def, k->help);
}

static int
schema_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The transport names in the plugin directory, sorted (free each). */
static size_t
schema_plugins(const char *dir, char **names, size_t max)
{
	size_t plen = strlen(SCHEMA_PLUGIN_PREFIX);
	size_t slen = strlen(SCHEMA_PLUGIN_SUFFIX);
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	if (d == NULL) {
		log_warn_errno(-errno, "plugin directory %s", dir);
		return 0;
	}
	while (n < max && (de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len <= plen + slen ||
		    strncmp(de->d_name, SCHEMA_PLUGIN_PREFIX, plen) != 0 ||
		    strcmp(de->d_name + len - slen, SCHEMA_PLUGIN_SUFFIX) != 0)
			continue;
		names[n] = strndup(de->d_name + plen, len - plen - slen);
		if (names[n] != NULL)
			n++;
	}
	(void)closedir(d);
	qsort(names, n, sizeof(*names), schema_name_cmp);
	return n;
}

int
schema_dump(struct cfg *cfg, FILE *out)
{
	char *names[64];
	size_t n;

	schema_table(out, ferryd_cfg_keys);
	schema_table(out, core_cfg_keys);
	schema_table(out, dhtnode_cfg_keys);
	schema_table(out, service_cfg_keys);
	n = schema_plugins(core_cfg_plugin_dir(cfg), names,
	    sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < n; i++) {
		(void)core_transport_keys(cfg, names[i], schema_line, out);
		free(names[i]);
	}
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}
