/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Keeps conf/ferryd.conf and man/ferryd.conf.5 true to the code: every key
 * of every schema table (ferryd's, the core's, the service's and each
 * built transport's) must appear in both with its compiled-in default, and
 * neither may document a key that no table declares.
 *
 * ferryd_cfg_keys is static in src/daemon/ferryd.c, so it is read from the
 * source; the other tables are linked in, and the transports' come from
 * loading each built plugin in stub mode.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <ferry/transport.h>

#include "lib/cfg.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "core/core_cfg.h"
#include "core/transport.h"
#include "dht/dhtnode.h"
#include "storage/xfer.h"
#include "intermediary/rqueue.h"
#ifdef FERRY_HAVE_SERVICE
#include "service/service.h"
#endif
#ifdef FERRY_HAVE_INTERMEDIARY
#include "intermediary/imd.h"
#endif
#include "unit.h"

#define KEYS_MAX     512
#define PROBLEMS_MAX 64

struct key {
	char section[64];
	char name[64];
	char def[256];      /* "" if has_def is false */
	bool has_def;       /* false: no default (unset) */
	const char *origin; /* where it was declared or documented */
	bool used;          /* matched by the other side */
};

struct keyset {
	size_t n;
	struct key k[KEYS_MAX];
};

static struct keyset code, conf, man;
static char problems[PROBLEMS_MAX][320];
static size_t n_problems;
static char built_sections[512]; /* " transport-udp transport-tcp " */

static void test_problem(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
test_problem(const char *fmt, ...)
{
	va_list ap;

	if (n_problems < PROBLEMS_MAX) {
		va_start(ap, fmt);
		(void)vsnprintf(problems[n_problems],
		    sizeof(problems[n_problems]), fmt, ap);
		va_end(ap);
		fprintf(stderr, "test_conf_keys: %s\n", problems[n_problems]);
	}
	n_problems++;
}

static void
test_add(struct keyset *set, const char *section, const char *name,
    const char *def, const char *origin)
{
	struct key *k;

	ck_assert_uint_lt(set->n, KEYS_MAX);
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->k[i].section, section) == 0 &&
		    strcmp(set->k[i].name, name) == 0)
			test_problem("%s: [%s] %s appears twice", origin,
			    section, name);
	k = &set->k[set->n++];
	memset(k, 0, sizeof(*k));
	(void)snprintf(k->section, sizeof(k->section), "%s", section);
	(void)snprintf(k->name, sizeof(k->name), "%s", name);
	k->has_def = def != NULL;
	(void)snprintf(k->def, sizeof(k->def), "%s", def != NULL ? def : "");
	k->origin = origin;
}

static void
test_add_table(const struct cfg_schema_key *t, const char *origin)
{
	for (; t->key != NULL; t++)
		test_add(&code, t->section, t->key, t->def, origin);
}

static char *
test_read(const char *rel)
{
	char path[4096];
	uint8_t *data = NULL;
	size_t len;

	ck_assert_int_eq(fs_path_join(path, sizeof(path), FERRY_SOURCE_DIR,
	                     rel),
	    0);
	ck_assert_msg(fs_read_file(path, 4 << 20, &data, &len) == 0,
	    "cannot read %s", path);
	return (char *)data;
}

/* --- the static table in ferryd.c -------------------------------------- */

static const char *
test_skip_space(const char *p)
{
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (p[0] == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");

			p = end != NULL ? end + 2 : p + strlen(p);
			continue;
		}
		return p;
	}
}

/* One field: NULL, or adjacent string literals (concatenated). Returns
 * the position after it, or NULL if it is neither. */
static const char *
test_c_field(const char *p, char *out, size_t size, bool *ret_null)
{
	size_t o = 0;

	p = test_skip_space(p);
	*ret_null = strncmp(p, "NULL", 4) == 0;
	if (*ret_null)
		return p + 4;
	if (*p != '"')
		return NULL;
	while (*p == '"') {
		for (p++; *p != '"' && *p != '\0'; p++) {
			if (*p == '\\' && p[1] != '\0')
				p++;
			if (o + 1 < size)
				out[o++] = *p;
		}
		if (*p != '"')
			return NULL;
		p = test_skip_space(p + 1);
	}
	out[o] = '\0';
	return p;
}

static void
test_parse_c_table(const char *text, const char *table, const char *origin)
{
	const char *p = strstr(text, table);
	char f[4][256];
	bool null[4];

	ck_assert_msg(p != NULL, "%s: no table %s", origin, table);
	p = strchr(p, '{');
	ck_assert_ptr_nonnull(p);
	for (p++;;) {
		p = test_skip_space(p);
		if (*p == '}')
			break;
		ck_assert_msg(*p == '{', "%s: cannot parse %s", origin, table);
		for (int i = 0; i < 4; i++) {
			p = test_c_field(p + 1, f[i], sizeof(f[i]), &null[i]);
			ck_assert_msg(p != NULL, "%s: cannot parse %s", origin,
			    table);
			p = test_skip_space(p);
			ck_assert(*p == ',' || (i == 3 && *p == '}'));
		}
		if (null[0])
			break;
		test_add(&code, f[0], f[1], null[2] ? NULL : f[2], origin);
		p = strchr(p, '}');
		ck_assert_ptr_nonnull(p);
		p = test_skip_space(p + 1);
		if (*p == ',')
			p++;
	}
}

/* --- the transports, loaded in stub mode -------------------------------- */

static void
test_add_plugin(const char *dir, const char *name)
{
	static char origins[8][64];
	static size_t n_origins;
	struct transport_env env;
	struct ferry_peer_id nobody;
	struct transport *t = NULL;
	struct cfg *cfg = cfg_new();
	struct stats *st = stats_new();
	const char *origin = "a plugin";

	ck_assert(cfg != NULL && st != NULL);
	memset(&env, 0, sizeof(env));
	memset(&nobody, 0, sizeof(nobody));
	env.self = &nobody;
	env.cfg = cfg;
	env.stats = st;
	if (n_origins < 8) {
		(void)snprintf(origins[n_origins], sizeof(origins[0]),
		    "libtransport_%s.so", name);
		origin = origins[n_origins++];
	}
	if (transport_load(dir, name, &env, &t) < 0) {
		test_problem(
		    "%s/libtransport_%s.so is built but does not load in stub mode",
		    dir, name);
		goto out;
	}
	for (const struct ferry_cfg_key *k = t->api->keys; k && k->name; k++)
		test_add(&code, t->section, k->name, k->def, origin);
	(void)strncat(built_sections, t->section,
	    sizeof(built_sections) - strlen(built_sections) - 2);
	(void)strcat(built_sections, " ");
	transport_unload(t);
out:
	cfg_free(cfg);
	stats_free(st);
}

static void
test_collect_code(void)
{
	const char *dir = getenv("FERRY_PLUGIN_DIR");
	const char *list = FERRY_BUILT_PLUGINS, *word;
	char name[32], *ferryd;
	size_t len;

	if (dir == NULL || *dir == '\0')
		dir = FERRY_PLUGIN_DIR_DEFAULT;
	memset(&code, 0, sizeof(code));
	(void)snprintf(built_sections, sizeof(built_sections), " ");
	ferryd = test_read("src/daemon/ferryd.c");
	test_parse_c_table(ferryd, "ferryd_cfg_keys[]", "src/daemon/ferryd.c");
	free(ferryd);
	test_add_table(core_cfg_keys, "core_cfg_keys");
	test_add_table(dhtnode_cfg_keys, "dhtnode_cfg_keys");
	test_add_table(xfer_cfg_keys, "xfer_cfg_keys");
	test_add_table(rqueue_cfg_keys, "rqueue_cfg_keys");
#ifdef FERRY_HAVE_SERVICE
	test_add_table(service_cfg_keys, "service_cfg_keys");
#endif
#ifdef FERRY_HAVE_INTERMEDIARY
	test_add_table(imd_cfg_keys, "imd_cfg_keys");
#endif
	while (cfg_next_word(&list, &word, &len)) {
		ck_assert_uint_lt(len, sizeof(name));
		memcpy(name, word, len);
		name[len] = '\0';
		test_add_plugin(dir, name);
	}
}

/* --- the documents ------------------------------------------------------ */

/* "#KEY = value" lines under "[section]" lines. */
static void
test_parse_conf(void)
{
	char *text = test_read("conf/ferryd.conf"), *save = NULL;
	char section[64] = "";
	char key[64], rest[256];

	memset(&conf, 0, sizeof(conf));
	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		if (sscanf(l, "[%63[^]]]", section) == 1)
			continue;
		if (sscanf(l, "#%63[A-Z0-9_] =%255[^\n]", key, rest) >= 1 &&
		    strstr(l, " =") != NULL) {
			const char *v = strstr(l, " =") + 2;

			if (*section == '\0')
				test_problem(
				    "conf/ferryd.conf: %s outside a section",
				    key);
			test_add(&conf, section, key, *v == ' ' ? v + 1 : v,
			    "conf/ferryd.conf");
		}
	}
	free(text);
}

/* mdoc escapes that may appear in a default. */
static void
test_unescape(char *s)
{
	char *o = s;

	for (char *p = s; *p != '\0'; p++) {
		if (p[0] == '\\' && p[1] == '&') {
			p++;
			continue;
		}
		if (p[0] == '\\' && p[1] == 'e') {
			*o++ = '\\';
			p++;
			continue;
		}
		*o++ = *p;
	}
	*o = '\0';
}

/* ".It Cm KEY = Ar DEFAULT", ".It Cm KEY = Qq" or ".It Cm KEY" under
 * ".Ss [section]" headings, up to the next ".Sh". */
static void
test_parse_man(void)
{
	char *text = test_read("man/ferryd.conf.5"), *save = NULL;
	char section[64] = "", key[64];
	int off;

	memset(&man, 0, sizeof(man));
	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, ".Sh ", 4) == 0)
			section[0] = '\0';
		if (sscanf(l, ".Ss [%63[^]]]", section) == 1 ||
		    *section == '\0')
			continue;
		off = 0;
		if (sscanf(l, ".It Cm %63[A-Z0-9_]%n", key, &off) != 1)
			continue;
		l += off;
		if (*l == '\0') {
			test_add(&man, section, key, NULL, "man/ferryd.conf.5");
		} else if (strcmp(l, " = Qq") == 0) {
			test_add(&man, section, key, "", "man/ferryd.conf.5");
		} else if (strncmp(l, " = Ar ", 6) == 0) {
			test_unescape(l + 6);
			test_add(&man, section, key, l + 6,
			    "man/ferryd.conf.5");
		} else {
			test_problem(
			    "man/ferryd.conf.5: [%s] %s: expected '= Ar DEFAULT', '= Qq' or nothing after the key",
			    section, key);
		}
	}
	free(text);
}

/* --- comparison --------------------------------------------------------- */

static struct key *
test_find(struct keyset *set, const char *section, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->k[i].section, section) == 0 &&
		    strcmp(set->k[i].name, name) == 0)
			return &set->k[i];
	return NULL;
}

static const char *
test_show_def(const struct key *k, char *buf, size_t size)
{
	if (k->has_def)
		(void)snprintf(buf, size, "'%s'", k->def);
	else
		(void)snprintf(buf, size, "none");
	return buf;
}

/* strict: NULL and "" defaults must be told apart (the man page can). */
static void
test_compare(struct keyset *doc, const char *doc_name, bool strict)
{
	for (size_t i = 0; i < code.n; i++) {
		const struct key *c = &code.k[i];
		struct key *d = test_find(doc, c->section, c->name);

		if (d == NULL) {
			char cd[300];

			test_problem("%s lacks [%s] %s (default %s, from %s)",
			    doc_name, c->section, c->name,
			    test_show_def(c, cd, sizeof(cd)), c->origin);
			continue;
		}
		d->used = true;
		if (strcmp(c->def, d->def) != 0 ||
		    (strict && c->has_def != d->has_def)) {
			char dd[300], cd[300];

			test_problem("%s: [%s] %s has default %s, the code %s",
			    doc_name, c->section, c->name,
			    test_show_def(d, dd, sizeof(dd)),
			    test_show_def(c, cd, sizeof(cd)));
		}
	}
	for (size_t i = 0; i < doc->n; i++) {
		const struct key *d = &doc->k[i];
		char probe[80];

		(void)snprintf(probe, sizeof(probe), " %s ", d->section);
		/* A transport this build lacks cannot be judged. */
		if (d->used ||
		    (strncmp(d->section, "transport-", 10) == 0 &&
		        strstr(built_sections, probe) == NULL))
			continue;
		test_problem("%s documents [%s] %s, which no schema declares",
		    doc_name, d->section, d->name);
	}
}

static void
test_setup(void)
{
	n_problems = 0;
	/* Plugins loaded in stub mode may log; keep the output for us. */
	log_set_level(FERRY_LOG_ERR);
	test_collect_code();
}

START_TEST(test_code_tables_found)
{
	ck_assert_uint_eq(n_problems, 0);
	ck_assert_ptr_nonnull(test_find(&code, "ferryd", "LOG_LEVEL"));
	ck_assert_ptr_nonnull(test_find(&code, "core", "TRANSPORTS"));
#ifdef FERRY_HAVE_SERVICE
	ck_assert_ptr_nonnull(test_find(&code, "service", "SOCKET_MODE"));
#endif
}
END_TEST

START_TEST(test_conf_matches_code)
{
	test_parse_conf();
	test_compare(&conf, "conf/ferryd.conf", false);
	ck_assert_msg(n_problems == 0,
	    "%zu problem(s) between the code and conf/ferryd.conf, e.g. %s",
	    n_problems, problems[0]);
}
END_TEST

START_TEST(test_man_matches_code)
{
	test_parse_man();
	test_compare(&man, "man/ferryd.conf.5", true);
	ck_assert_msg(n_problems == 0,
	    "%zu problem(s) between the code and man/ferryd.conf.5, e.g. %s",
	    n_problems, problems[0]);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("conf_keys");
	TCase *tc = tcase_create("conf_keys");

	tcase_add_checked_fixture(tc, test_setup, NULL);
	tcase_add_test(tc, test_code_tables_found);
	tcase_add_test(tc, test_conf_matches_code);
	tcase_add_test(tc, test_man_matches_code);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
