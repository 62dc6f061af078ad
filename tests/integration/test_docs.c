/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Documentation that matches the code (issue 6), checked against the
 * programs themselves rather than their source:
 *  - every key `ferryd --dump-schema` lists, with the built transports
 *    (udp, tcp, smtp), is in conf/ferryd.conf and man/ferryd.conf.5 with
 *    the same default;
 *  - the counters `ferry stats --json` reports after a small exchange
 *    between two daemons with every transport loaded are exactly those
 *    documented in ferryd(8) STATISTICS and ferry-smtp(7) STATISTICS;
 *  - the counters ferry-protocol(7) names are among those.
 */
/* ctest: TIMEOUT=300 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "lib/fsutil.h"
#include "mesh.h"

#define NAMES_MAX 512

/* A set of strings: counter names, or "[section] KEY" with defaults. */
struct names {
	size_t n;
	char name[NAMES_MAX][96];
	char value[NAMES_MAX][128];
};

static struct harness *h;

static void
setup(void)
{
	ck_assert_int_eq(harness_new("docs", &h), 0);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

/* A name or value that does not fit is a bug of the test's sizes. */
static void
copy_field(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src);

	ck_assert_msg(len < size, "'%s' is longer than %zu bytes", src,
	    size - 1);
	memcpy(dst, src, len + 1);
}

static void
names_add(struct names *s, const char *name, const char *value)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			return;
	ck_assert_uint_lt(s->n, NAMES_MAX);
	copy_field(s->name[s->n], sizeof(s->name[0]), name);
	copy_field(s->value[s->n], sizeof(s->value[0]),
	    value != NULL ? value : "");
	s->n++;
}

static const char *
names_find(const struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			return s->value[i];
	return NULL;
}

/* The source file rel, NUL-terminated (free it). */
static char *
read_source(const char *rel)
{
	char path[4096];
	uint8_t *data = NULL;
	size_t len;

	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", FERRY_SOURCE_DIR,
	                     rel),
	    (int)sizeof(path));
	ck_assert_msg(fs_read_file(path, 4 << 20, &data, &len) == 0,
	    "cannot read %s", path);
	return (char *)data;
}

/* Removes the mdoc escapes a default may hold (\& and \e). */
static void
unescape(char *s)
{
	char *o = s;

	for (char *p = s; *p != '\0'; p++) {
		if (p[0] == '\\' && p[1] == '&') {
			p++;
			continue;
		}
		if (p[0] == '\\' && p[1] == 'e')
			p++;
		*o++ = *p;
	}
	*o = '\0';
}

/* --- configuration keys ------------------------------------------------ */

/* "[section] KEY = default  # help" lines of ferryd --dump-schema. */
static void
schema_keys(struct names *keys)
{
	char *argv[] = { (char *)harness_ferryd_path(), (char *)"--dump-schema",
		NULL };
	struct harness_output o;
	char *save = NULL;

	ck_assert_int_eq(harness_run(argv, NULL, 30000, &o), 0);
	ck_assert_msg(o.status == 0, "ferryd --dump-schema: %s", o.err);
	for (char *l = strtok_r(o.out, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		char section[64], key[64], name[160];
		char *def, *end;

		ck_assert_msg(sscanf(l, "[%63[^]]] %63s =", section, key) == 2,
		    "ferryd --dump-schema: cannot parse '%s'", l);
		def = strstr(l, " = ");
		end = def != NULL ? strstr(def + 3, "  # ") : NULL;
		ck_assert_msg(end != NULL, "no default or help in '%s'", l);
		*end = '\0';
		(void)snprintf(name, sizeof(name), "[%s] %s", section, key);
		names_add(keys, name, def + 3);
	}
	harness_output_free(&o);
}

/* "#KEY = default" lines under "[section]" in conf/ferryd.conf. */
static void
conf_keys(struct names *keys)
{
	char *text = read_source("conf/ferryd.conf"), *save = NULL;
	char section[64] = "";

	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		char key[64], name[160];
		const char *v;

		if (sscanf(l, "[%63[^]]]", section) == 1)
			continue;
		if (sscanf(l, "#%63[A-Z0-9_] =", key) != 1 ||
		    (v = strstr(l, " =")) == NULL)
			continue;
		v += 2;
		(void)snprintf(name, sizeof(name), "[%s] %s", section, key);
		names_add(keys, name, *v == ' ' ? v + 1 : v);
	}
	free(text);
}

/* ".It Cm KEY = Ar default", "= Qq" or nothing, under ".Ss [section]",
 * in man/ferryd.conf.5. */
static void
man_keys(struct names *keys)
{
	char *text = read_source("man/ferryd.conf.5"), *save = NULL;
	char section[64] = "";

	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		char key[64], name[160];
		int off = 0;

		if (strncmp(l, ".Sh ", 4) == 0)
			section[0] = '\0';
		if (sscanf(l, ".Ss [%63[^]]]", section) == 1 ||
		    section[0] == '\0' ||
		    sscanf(l, ".It Cm %63[A-Z0-9_]%n", key, &off) != 1)
			continue;
		l += off;
		(void)snprintf(name, sizeof(name), "[%s] %s", section, key);
		if (strncmp(l, " = Ar ", 6) == 0) {
			unescape(l + 6);
			names_add(keys, name, l + 6);
		} else {
			/* "= Qq" and a bare key both mean empty here:
			 * --dump-schema prints no default as "". */
			names_add(keys, name, "");
		}
	}
	free(text);
}

static void
compare_keys(const struct names *code, const struct names *doc,
    const char *doc_name)
{
	size_t bad = 0;

	for (size_t i = 0; i < code->n; i++) {
		const char *v = names_find(doc, code->name[i]);

		if (v != NULL && strcmp(v, code->value[i]) == 0)
			continue;
		fprintf(stderr, "%s: %s %s, default '%s' in ferryd\n", doc_name,
		    code->name[i], v == NULL ? "missing" : "other default",
		    code->value[i]);
		bad++;
	}
	ck_assert_msg(bad == 0,
	    "%zu key(s) of ferryd --dump-schema wrong in %s", bad, doc_name);
}

START_TEST(test_schema_documented)
{
	static struct names code, conf, man;
	const char *built = FERRY_BUILT_PLUGINS;
	char section[64];
	const char *word;
	size_t len;

	memset(&code, 0, sizeof(code));
	memset(&conf, 0, sizeof(conf));
	memset(&man, 0, sizeof(man));
	schema_keys(&code);
	ck_assert_ptr_nonnull(names_find(&code, "[service] SOCKET_MODE"));
	/* Every transport built is in the schema (its plugin loads). */
	while (*built != '\0') {
		bool found = false;

		word = built + strspn(built, " ");
		len = strcspn(word, " ");
		built = word + len;
		if (len == 0)
			break;
		(void)snprintf(section, sizeof(section), "[transport-%.*s] ",
		    (int)len, word);
		for (size_t i = 0; i < code.n && !found; i++)
			found = strncmp(code.name[i], section,
			            strlen(section)) == 0;
		ck_assert_msg(found, "ferryd --dump-schema lists no %skeys",
		    section);
	}
	conf_keys(&conf);
	man_keys(&man);
	compare_keys(&code, &conf, "conf/ferryd.conf");
	compare_keys(&code, &man, "man/ferryd.conf.5");
}
END_TEST

/* --- statistics counters ----------------------------------------------- */

/* Counter names documented under ".Sh STATISTICS" of a page: ".It" lines
 * name counters ("Cm a , b"), of the families in the last ".Ss x.*, y.*"
 * line, else of family. */
static void
doc_counters(const char *rel, const char *family, struct names *out)
{
	char *text = read_source(rel), *save = NULL, *s3 = NULL;
	char fams[8][32];
	size_t n_fams = 1;
	bool in = false;

	(void)snprintf(fams[0], sizeof(fams[0]), "%s", family);
	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, ".Sh ", 4) == 0)
			in = strcmp(l, ".Sh STATISTICS") == 0;
		if (!in)
			continue;
		if (strncmp(l, ".Ss ", 4) == 0) {
			char *w, *s2 = NULL;

			n_fams = 0;
			for (w = strtok_r(l + 4, " ,", &s2); w != NULL;
			     w = strtok_r(NULL, " ,", &s2)) {
				size_t wl = strlen(w);

				if (wl > 2 && strcmp(w + wl - 2, ".*") == 0 &&
				    n_fams < 8)
					(void)snprintf(fams[n_fams++],
					    sizeof(fams[0]), "%.*s",
					    (int)(wl - 2), w);
			}
			continue;
		}
		if (strncmp(l, ".It ", 4) != 0)
			continue;
		for (char *w = strtok_r(l + 4, " ", &s3); w != NULL;
		     w = strtok_r(NULL, " ", &s3)) {
			char name[96];
			bool ok = *w != '\0';

			for (const char *p = w; *p != '\0'; p++)
				ok = ok &&
				    (islower((unsigned char)*p) ||
				        isdigit((unsigned char)*p) ||
				        *p == '_');
			if (!ok)
				continue; /* "Cm", "," */
			for (size_t f = 0; f < n_fams; f++) {
				(void)snprintf(name, sizeof(name), "%s.%s",
				    fams[f], w);
				names_add(out, name, rel);
			}
		}
	}
	free(text);
}

/* The "name": keys of ferry stats --json. */
static void
reported_counters(struct harness_daemon *d, struct names *out)
{
	struct harness_output o;
	const char *p;

	ck_assert_int_eq(harness_run_cli(d, &o, "--json", "stats", NULL), 0);
	ck_assert_msg(o.status == 0, "ferry stats --json: %s", o.err);
	for (p = strchr(o.out, '"'); p != NULL; p = strchr(p, '"')) {
		const char *end = strchr(p + 1, '"');
		char name[96];

		ck_assert_ptr_nonnull(end);
		ck_assert_int_eq(end[1], ':');
		(void)snprintf(name, sizeof(name), "%.*s", (int)(end - p - 1),
		    p + 1);
		names_add(out, name, NULL);
		p = end + 1;
	}
	harness_output_free(&o);
}

START_TEST(test_counters_documented)
{
	static struct names doc, got;
	struct harness_daemon *d[2];
	struct ferry_client *listener;
	const char *transports = strstr(FERRY_BUILT_PLUGINS, "smtp") != NULL
	    ? "udp tcp smtp"
	    : "udp tcp";
	size_t bad = 0;

	memset(&doc, 0, sizeof(doc));
	memset(&got, 0, sizeof(got));
	/* A small exchange, so that whatever is counted on first use
	 * exists. */
	mesh_start(h, d, 2, transports, NULL);
	mesh_wait_peers(h, d[0], 1, 10000);
	listener = mesh_listener(d[1]);
	mesh_send(d[0], d[1], "counters", 8);
	mesh_expect(h, listener, d[0], "counters", 8, 10000);
	ferry_client_close(listener);
	reported_counters(d[0], &got);
	reported_counters(d[1], &got);
	doc_counters("man/ferryd.8", "", &doc);
	doc_counters("man/ferry-smtp.7", "smtp", &doc);
	for (size_t i = 0; i < got.n; i++) {
		if (names_find(&doc, got.name[i]) != NULL)
			continue;
		fprintf(stderr, "counter %s is not documented\n", got.name[i]);
		bad++;
	}
	for (size_t i = 0; i < doc.n; i++) {
		/* A transport this build lacks cannot report, nor a daemon
		 * that is no intermediary (test_intermediary checks those
		 * the tests rely on). */
		if (strncmp(doc.name[i], "smtp.", 5) == 0 &&
		    strstr(transports, "smtp") == NULL)
			continue;
		if (strncmp(doc.name[i], "intermediary.", 13) == 0)
			continue;
		if (names_find(&got, doc.name[i]) != NULL)
			continue;
		fprintf(stderr, "%s documents %s, which no daemon reports\n",
		    doc.value[i], doc.name[i]);
		bad++;
	}
	ck_assert_msg(bad == 0,
	    "%zu counter(s) differ between ferry stats and ferryd(8) / ferry-smtp(7)",
	    bad);
	/* The families the tests rely on are all there. */
	ck_assert_ptr_nonnull(names_find(&got, "core.validations"));
	ck_assert_ptr_nonnull(names_find(&got, "service.clients_refused"));
	ck_assert_ptr_nonnull(names_find(&got, "udp.rx_datagrams"));
	ck_assert_ptr_nonnull(names_find(&got, "tcp.connections_in"));
}
END_TEST

/* Counters ferry-protocol(7) names, as ".Va name" (core.name when the name
 * has no family), into out. */
static void
protocol_counters(struct names *out)
{
	char *text = read_source("man/ferry-protocol.7"), *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		for (char *v = strstr(l, "Va "); v != NULL;
		     v = strstr(v + 3, "Va ")) {
			char word[64], name[96];

			/* A macro: ".Va" or "... Va" after a blank. */
			if (v != l + 1 && v[-1] != ' ')
				continue;
			if (sscanf(v + 3, "%63[a-z0-9_.]", word) != 1)
				continue;
			(void)snprintf(name, sizeof(name), "%s%s",
			    strchr(word, '.') != NULL ? "" : "core.", word);
			names_add(out, name, NULL);
		}
	}
	free(text);
}

/* The test above holds ferryd(8) and ferry-smtp(7) to what the daemons
 * report; the protocol page must name no counter beyond them. */
START_TEST(test_protocol_counters)
{
	static struct names doc, named;
	size_t bad = 0;

	memset(&doc, 0, sizeof(doc));
	memset(&named, 0, sizeof(named));
	doc_counters("man/ferryd.8", "", &doc);
	doc_counters("man/ferry-smtp.7", "smtp", &doc);
	protocol_counters(&named);
	ck_assert_uint_gt(named.n, 20);
	for (size_t i = 0; i < named.n; i++) {
		if (names_find(&doc, named.name[i]) != NULL)
			continue;
		fprintf(stderr,
		    "ferry-protocol(7) names %s, which ferryd(8) and ferry-smtp(7) do not document\n",
		    named.name[i]);
		bad++;
	}
	ck_assert_msg(bad == 0, "%zu counter(s) of ferry-protocol(7) unknown",
	    bad);
}
END_TEST

static Suite *
docs_suite(void)
{
	Suite *s = suite_create("docs");
	TCase *tc = tcase_create("docs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_schema_documented);
	tcase_add_test(tc, test_counters_documented);
	tcase_add_test(tc, test_protocol_counters);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(docs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
