/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The INI parser and store (src/lib/cfg.c): syntax, includes, every
 * malformed input with the line its message names, schema defaults,
 * warnings, typed getters and their range errors, and plugin schemas that
 * outlive the table they were copied from.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include <ferry/transport.h>

#include "lib/cfg.h"
#include "unit.h"

static struct cfg *c;
static char dir[256];
static char cwd[PATH_MAX];

static const struct cfg_schema_key test_schema[] = {
	{ "core", "TRANSPORTS", "udp tcp", "transports" },
	{ "core", "MAX_PEERS", "64", "peers" },
	{ "core", "QUEUE_BYTES", "4 MiB", "queue" },
	{ "core", "KEEPALIVE", "20 s", "keepalive" },
	{ "core", "PLUGIN_DIR", NULL, "no default" },
	{ "testing", "ENABLE", "no", "emulation" },
	{ "testing", "LOSS", "0", "loss" },
	{ NULL, NULL, NULL, NULL },
};

static void
test_setup(void)
{
	c = cfg_new();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(cfg_add_schema(c, test_schema), 0);
	unit_tmpdir(dir, sizeof(dir));
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
}

static void
test_teardown(void)
{
	ck_assert_int_eq(chdir(cwd), 0);
	unit_rmtree(dir);
	cfg_free(c);
	c = NULL;
}

static int
test_load(const char *text)
{
	return cfg_load_buffer(c, "test.conf", text, strlen(text));
}

static void
test_assert_get(const char *section, const char *key, const char *want)
{
	const char *v = cfg_get(c, section, key);

	if (want == NULL)
		ck_assert_msg(v == NULL, "[%s] %s = '%s', expected unset",
		    section, key, v);
	else
		ck_assert_msg(v != NULL && strcmp(v, want) == 0,
		    "[%s] %s = '%s', expected '%s'", section, key,
		    v ? v : "(null)", want);
}

/* --- syntax ------------------------------------------------------------ */

START_TEST(test_sections_and_keys)
{
	ck_assert_int_eq(test_load("[core]\n"
	                           "MAX_PEERS = 12\n"
	                           "TRANSPORTS=udp\n"
	                           "[transport-udp]\n"
	                           "PORT = 2086\n"
	                           "[core]\n"
	                           "KEEPALIVE = 5 s\n"),
	    0);
	test_assert_get("core", "MAX_PEERS", "12");
	test_assert_get("core", "TRANSPORTS", "udp");
	test_assert_get("core", "KEEPALIVE", "5 s");
	test_assert_get("transport-udp", "PORT", "2086");
	/* Names are case-insensitive, values are not. */
	test_assert_get("CORE", "max_peers", "12");
	test_assert_get("Transport-UDP", "Port", "2086");
	ck_assert_str_eq(cfg_error(c), "");
}
END_TEST

START_TEST(test_comments_and_blanks)
{
	ck_assert_int_eq(test_load("# a comment\n"
	                           "; another\n"
	                           "\n"
	                           "   \t\n"
	                           "  # indented comment\n"
	                           "[core]\n"
	                           "\t; indented\n"
	                           "MAX_PEERS = 3\n"
	                           "# MAX_PEERS = 99\n"),
	    0);
	test_assert_get("core", "MAX_PEERS", "3");
}
END_TEST

START_TEST(test_values)
{
	ck_assert_int_eq(test_load("[x]\n"
	                           "A =   spaced out   \n"
	                           "B = \"  kept  \"\n"
	                           "C =\n"
	                           "D = \"\"\n"
	                           "E = \"\n"
	                           "F = \"half\n"
	                           "G = a=b=c\n"
	                           "H = value # not a comment\n"
	                           "I\t=\ttabs\t\n"
	                           "key.with-odd_chars = ok\n"),
	    0);
	test_assert_get("x", "A", "spaced out");
	test_assert_get("x", "B", "  kept  ");
	test_assert_get("x", "C", "");
	test_assert_get("x", "D", "");
	test_assert_get("x", "E", "\"");
	test_assert_get("x", "F", "\"half");
	test_assert_get("x", "G", "a=b=c");
	test_assert_get("x", "H", "value # not a comment");
	test_assert_get("x", "I", "tabs");
	test_assert_get("x", "key.with-odd_chars", "ok");
}
END_TEST

START_TEST(test_line_endings)
{
	ck_assert_int_eq(test_load("[core]\r\nMAX_PEERS = 7\r\n[x]\r\nK=v"), 0);
	test_assert_get("core", "MAX_PEERS", "7");
	test_assert_get("x", "K", "v"); /* last line without a newline */
	ck_assert_int_eq(cfg_load_buffer(c, "empty", "", 0), 0);
}
END_TEST

START_TEST(test_later_wins_and_merges)
{
	char where[64];

	ck_assert_int_eq(test_load("[core]\nMAX_PEERS = 1\nMAX_PEERS = 2\n"),
	    0);
	test_assert_get("core", "MAX_PEERS", "2");
	ck_assert_str_eq(cfg_where(c, "core", "MAX_PEERS", where,
	                     sizeof(where)),
	    "test.conf:3");
	ck_assert_int_eq(cfg_load_buffer(c, "second.conf",
	                     "[core]\n\nMAX_PEERS = 3\n", 22),
	    0);
	test_assert_get("core", "MAX_PEERS", "3");
	ck_assert_str_eq(cfg_where(c, "core", "MAX_PEERS", where,
	                     sizeof(where)),
	    "second.conf:3");
}
END_TEST

/* --- malformed input: each error names its file and line ---------------- */

struct bad {
	const char *text;
	const char *prefix;  /* expected start of cfg_error() */
	const char *message; /* expected in cfg_error() */
};

static const struct bad bad_inputs[] = {
	{ "[core]\n# fine\n\n[core\n", "test.conf:4: ", "lacks ']'" },
	{ "[]\n", "test.conf:1: ", "bad section name" },
	{ "[  ]\n", "test.conf:1: ", "bad section name" },
	{ "\n[bad name]\n", "test.conf:2: ", "bad section name" },
	{ "[a/b]\n", "test.conf:1: ", "bad section name" },
	{ "[core] # note\n", "test.conf:1: ", "lacks ']'" },
	{ "[core]\nMAX_PEERS\n", "test.conf:2: ", "expected [section]" },
	{ "[core]\nA = 1\n= 2\n", "test.conf:3: ", "bad key name" },
	{ "[core]\nbad key = 1\n", "test.conf:2: ", "bad key name" },
	{ "[core]\nk\xc3\xa9y = 1\n", "test.conf:2: ", "bad key name" },
	{ "# top\nKEY = 1\n", "test.conf:2: ", "outside of any [section]" },
	{ "[core]\n@INLINE@\n", "test.conf:2: ", "needs a file name" },
	{ "[core]\n@INLINE@   \n", "test.conf:2: ", "needs a file name" },
	{ "[core]\nA = 1\nB = x\0y\n", "test.conf:3: ", "NUL byte" },
	{ "[core]\n@INLINE@ does-not-exist.conf\n",
	    "test.conf:2: ", "cannot read does-not-exist.conf" },
};

START_TEST(test_malformed)
{
	const struct bad *b = &bad_inputs[_i];
	size_t len = strlen(b->text);
	int r;

	/* The NUL case has bytes after the NUL. */
	if (strstr(b->message, "NUL") != NULL)
		len = 20;
	ck_assert_int_eq(chdir(dir), 0);
	r = cfg_load_buffer(c, "test.conf", b->text, len);
	ck_assert_int_lt(r, 0);
	ck_assert_msg(strncmp(cfg_error(c), b->prefix, strlen(b->prefix)) == 0,
	    "error '%s' does not start with '%s'", cfg_error(c), b->prefix);
	ck_assert_msg(strstr(cfg_error(c), b->message) != NULL,
	    "error '%s' lacks '%s'", cfg_error(c), b->message);
}
END_TEST

START_TEST(test_malformed_codes)
{
	ck_assert_int_eq(test_load("[core\n"), -EINVAL);
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(test_load("[core]\n@INLINE@ nope.conf\n"), -ENOENT);
	ck_assert_int_eq(test_load("[core]\n@INLINE@ .\n"), -EINVAL);
	/* A later good load clears the message. */
	ck_assert_int_eq(test_load("[core]\n"), 0);
	ck_assert_str_eq(cfg_error(c), "");
}
END_TEST

START_TEST(test_line_too_long)
{
	size_t n = 3 + CFG_LINE_MAX + 2;
	char *text = malloc(n + 16);
	char *p = text;

	ck_assert_ptr_nonnull(text);
	p += sprintf(p, "[x]\nK = ");
	memset(p, 'v', CFG_LINE_MAX - 4); /* "K = " + value == CFG_LINE_MAX */
	p += CFG_LINE_MAX - 4;
	*p++ = '\n';
	ck_assert_int_eq(cfg_load_buffer(c, "long.conf", text,
	                     (size_t)(p - text)),
	    0);
	ck_assert_uint_eq(strlen(cfg_get(c, "x", "K")), CFG_LINE_MAX - 4);
	p[-1] = 'v';
	*p++ = '\n';
	ck_assert_int_eq(cfg_load_buffer(c, "long.conf", text,
	                     (size_t)(p - text)),
	    -EINVAL);
	ck_assert_str_eq(cfg_error(c),
	    "long.conf:2: line longer than 4096 bytes");
	free(text);
}
END_TEST

START_TEST(test_name_limits)
{
	char text[400];

	/* 127 characters fit a key or section name, 128 do not. */
	(void)snprintf(text, sizeof(text), "[x]\n%0127d = 1\n", 0);
	ck_assert_int_eq(test_load(text), 0);
	(void)snprintf(text, sizeof(text), "[x]\n%0128d = 1\n", 0);
	ck_assert_int_eq(test_load(text), -EINVAL);
	ck_assert_ptr_nonnull(strstr(cfg_error(c), ":2: bad key name"));
	(void)snprintf(text, sizeof(text), "[%0127d]\n", 0);
	ck_assert_int_eq(test_load(text), 0);
	(void)snprintf(text, sizeof(text), "[%0128d]\n", 0);
	ck_assert_int_eq(test_load(text), -EINVAL);
}
END_TEST

START_TEST(test_file_errors)
{
	char big_path[512];
	FILE *f;

	ck_assert_int_eq(cfg_load_file(c, "/nonexistent/ferryd.conf"), -ENOENT);
	ck_assert_str_eq(cfg_error(c),
	    "/nonexistent/ferryd.conf: cannot read: No such file or directory");
	(void)snprintf(big_path, sizeof(big_path), "%s/big.conf", dir);
	f = fopen(big_path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 70000; i++)
		fputs("# padding line\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(cfg_load_file(c, big_path), -EFBIG);
	ck_assert_ptr_nonnull(strstr(cfg_error(c), "big.conf: cannot read"));
	ck_assert_int_eq(cfg_load_file(c, dir), -EINVAL);
}
END_TEST

START_TEST(test_error_in_file_names_it)
{
	const char *path = unit_write_str(dir, "bad.conf",
	    "[core]\nMAX_PEERS = 1\n\nnonsense\n");
	char want[512];

	ck_assert_int_eq(cfg_load_file(c, path), -EINVAL);
	(void)snprintf(want, sizeof(want), "%s/bad.conf:4: ", dir);
	ck_assert_msg(strncmp(cfg_error(c), want, strlen(want)) == 0,
	    "error '%s'", cfg_error(c));
}
END_TEST

/* --- includes ------------------------------------------------------------ */

START_TEST(test_include_relative_to_file)
{
	char sub[300], main_path[320], where[600], want[600];

	(void)snprintf(sub, sizeof(sub), "%s/conf.d", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	unit_write_str(sub, "peers.conf", "MAX_PEERS = 5\n[x]\nK = from-inc\n");
	unit_write_str(sub, "more.conf", "[y]\nL = deeper\n");
	unit_write_str(dir, "abs.conf", "[z]\nM = absolute\n");
	(void)snprintf(main_path, sizeof(main_path), "%s/main.conf", dir);
	{
		char text[700];

		(void)snprintf(text, sizeof(text),
		    "[core]\n"
		    "@INLINE@ conf.d/peers.conf\n"
		    "KEEPALIVE = 9 s\n"
		    "@inline@   %s/abs.conf  \n"
		    "[q]\n"
		    "@INLINE@ conf.d/more.conf\n",
		    dir);
		unit_write_str(dir, "main.conf", text);
	}
	/* Run from elsewhere: includes follow the including file. */
	ck_assert_int_eq(chdir("/"), 0);
	ck_assert_msg(cfg_load_file(c, main_path) == 0, "%s", cfg_error(c));
	test_assert_get("core", "MAX_PEERS", "5");
	test_assert_get("x", "K", "from-inc");
	test_assert_get("z", "M", "absolute");
	test_assert_get("y", "L", "deeper");
	/* An include does not change the including file's section. */
	test_assert_get("core", "KEEPALIVE", "9 s");
	test_assert_get("x", "KEEPALIVE", NULL);
	(void)snprintf(want, sizeof(want), "%s/conf.d/peers.conf:1", dir);
	ck_assert_str_eq(cfg_where(c, "core", "MAX_PEERS", where,
	                     sizeof(where)),
	    want);
}
END_TEST

START_TEST(test_include_from_buffer_uses_cwd)
{
	unit_write_str(dir, "inc.conf", "[core]\nMAX_PEERS = 77\n");
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(test_load("@INLINE@ inc.conf\n"), 0);
	test_assert_get("core", "MAX_PEERS", "77");
}
END_TEST

START_TEST(test_include_depth_limit)
{
	char name[32], text[64], top[300];

	/* f0 includes f1 ... f<CFG_INCLUDE_DEPTH>: the deepest allowed. */
	for (int i = 0; i < CFG_INCLUDE_DEPTH; i++) {
		(void)snprintf(name, sizeof(name), "f%d.conf", i);
		(void)snprintf(text, sizeof(text),
		    "[d]\nK%d = %d\n@INLINE@ f%d.conf\n", i, i, i + 1);
		unit_write_str(dir, name, text);
	}
	(void)snprintf(name, sizeof(name), "f%d.conf", CFG_INCLUDE_DEPTH);
	unit_write_str(dir, name, "[d]\nLAST = yes\n");
	(void)snprintf(top, sizeof(top), "%s/f0.conf", dir);
	ck_assert_msg(cfg_load_file(c, top) == 0, "%s", cfg_error(c));
	test_assert_get("d", "LAST", "yes");
	/* One more level is refused, at the include line of the deepest. */
	(void)snprintf(text, sizeof(text),
	    "[d]\nLAST = no\n@INLINE@ f%d.conf\n", CFG_INCLUDE_DEPTH + 1);
	unit_write_str(dir, name, text);
	(void)snprintf(name, sizeof(name), "f%d.conf", CFG_INCLUDE_DEPTH + 1);
	unit_write_str(dir, name, "[d]\nTOO = deep\n");
	ck_assert_int_eq(cfg_load_file(c, top), -ELOOP);
	ck_assert_ptr_nonnull(strstr(cfg_error(c), "nested more than 8 deep"));
	(void)snprintf(text, sizeof(text), "/f%d.conf:3: ", CFG_INCLUDE_DEPTH);
	ck_assert_msg(strstr(cfg_error(c), text) != NULL, "error '%s'",
	    cfg_error(c));
	test_assert_get("d", "TOO", NULL);
}
END_TEST

START_TEST(test_include_self_loop)
{
	char path[300];

	unit_write_str(dir, "loop.conf", "[a]\nK = 1\n@INLINE@ loop.conf\n");
	(void)snprintf(path, sizeof(path), "%s/loop.conf", dir);
	ck_assert_int_eq(cfg_load_file(c, path), -ELOOP);
	ck_assert_ptr_nonnull(strstr(cfg_error(c), "loop.conf:3: includes"));
}
END_TEST

START_TEST(test_include_error_names_included_file)
{
	char path[300];

	unit_write_str(dir, "inner.conf", "[a]\nK = 1\n[oops\n");
	unit_write_str(dir, "outer.conf", "[a]\n@INLINE@ inner.conf\n");
	(void)snprintf(path, sizeof(path), "%s/outer.conf", dir);
	ck_assert_int_eq(cfg_load_file(c, path), -EINVAL);
	ck_assert_ptr_nonnull(strstr(cfg_error(c), "/inner.conf:3: "));
}
END_TEST

/* --- schema, defaults, where -------------------------------------------- */

START_TEST(test_defaults)
{
	char where[64];

	test_assert_get("core", "MAX_PEERS", "64");
	test_assert_get("core", "PLUGIN_DIR", NULL);
	test_assert_get("core", "UNKNOWN", NULL);
	test_assert_get("nosection", "MAX_PEERS", NULL);
	ck_assert(!cfg_is_set(c, "core", "MAX_PEERS"));
	ck_assert_str_eq(cfg_where(c, "core", "MAX_PEERS", where,
	                     sizeof(where)),
	    "default");
	ck_assert_int_eq(test_load("[core]\nMAX_PEERS = 8\n"), 0);
	ck_assert(cfg_is_set(c, "core", "MAX_PEERS"));
	ck_assert_int_eq(cfg_set(c, "core", "PLUGIN_DIR", "/opt/p"), 0);
	test_assert_get("core", "PLUGIN_DIR", "/opt/p");
	ck_assert_str_eq(cfg_where(c, "core", "PLUGIN_DIR", where,
	                     sizeof(where)),
	    "<command line>");
	ck_assert_int_eq(cfg_set(c, "", "K", "v"), -EINVAL);
	ck_assert_int_eq(cfg_set(c, "s", "", "v"), -EINVAL);
}
END_TEST

struct warns {
	size_t n;
	char msg[16][700];
};

static void
test_warn(void *cls, const char *msg)
{
	struct warns *w = cls;

	if (w->n < 16)
		(void)snprintf(w->msg[w->n], sizeof(w->msg[0]), "%s", msg);
	w->n++;
}

static bool
test_warned(const struct warns *w, const char *needle)
{
	for (size_t i = 0; i < w->n && i < 16; i++)
		if (strstr(w->msg[i], needle) != NULL)
			return true;
	return false;
}

START_TEST(test_warnings)
{
	struct warns w;

	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(test_load("[core]\n"
	                           "MAX_PEERS = 1\n"
	                           "TRANSPORTS = udp\n"),
	    0);
	ck_assert_uint_eq(cfg_warnings(c, test_warn, &w), 0);
	ck_assert_int_eq(test_load("[core]\n"
	                           "MAX_PEER = 1\n"
	                           "[nowhere]\n"
	                           "A = 1\n"
	                           "B = 2\n"
	                           "[testing]\n"
	                           "LOSS = 1%\n"
	                           "LOSS = 2%\n"),
	    0);
	ck_assert_uint_eq(cfg_warnings(c, test_warn, &w), 4);
	ck_assert_uint_eq(w.n, 4);
	ck_assert(test_warned(&w,
	    "test.conf:2: unknown key MAX_PEER in [core] (ignored)"));
	ck_assert(test_warned(&w,
	    "test.conf:4: unknown section [nowhere] (key A ignored)"));
	ck_assert(test_warned(&w, "unknown section [nowhere] (key B ignored)"));
	ck_assert(test_warned(&w,
	    "test.conf:8: [testing] LOSS set 2 times; this last value wins"));
}
END_TEST

/* --- typed getters ------------------------------------------------------- */

START_TEST(test_typed_getters)
{
	uint64_t u = 0;
	double d = 0;
	bool b = false;

	ck_assert_int_eq(test_load("[core]\n"
	                           "MAX_PEERS = 12\n"
	                           "QUEUE_BYTES = 64 KiB\n"
	                           "KEEPALIVE = 250 ms\n"
	                           "[testing]\n"
	                           "ENABLE = yes\n"
	                           "LOSS = 5%\n"),
	    0);
	ck_assert_int_eq(cfg_get_uint(c, "core", "MAX_PEERS", 1, 100, &u), 0);
	ck_assert_uint_eq(u, 12);
	ck_assert_int_eq(cfg_get_size(c, "core", "QUEUE_BYTES", 0, 1 << 20, &u),
	    0);
	ck_assert_uint_eq(u, 65536);
	ck_assert_int_eq(cfg_get_duration(c, "core", "KEEPALIVE", 0, 1000000000,
	                     &u),
	    0);
	ck_assert_uint_eq(u, 250000);
	ck_assert_int_eq(cfg_get_bool(c, "testing", "ENABLE", &b), 0);
	ck_assert(b);
	ck_assert_int_eq(cfg_get_fraction(c, "testing", "LOSS", 0, 1, &d), 0);
	ck_assert_double_eq_tol(d, 0.05, 1e-12);
	/* Defaults go through the same parsers. */
	ck_assert_int_eq(cfg_set(c, "core", "QUEUE_BYTES", "1 MiB"), 0);
	ck_assert_int_eq(cfg_get_size(c, "core", "QUEUE_BYTES", 0, 1 << 30, &u),
	    0);
	ck_assert_uint_eq(u, 1048576);
}
END_TEST

START_TEST(test_getter_defaults_and_missing)
{
	uint64_t u = 1;

	ck_assert_int_eq(cfg_get_uint(c, "core", "MAX_PEERS", 1, 100, &u), 0);
	ck_assert_uint_eq(u, 64);
	ck_assert_int_eq(cfg_get_duration(c, "core", "KEEPALIVE", 0, UINT64_MAX,
	                     &u),
	    0);
	ck_assert_uint_eq(u, 20000000);
	u = 1;
	ck_assert_int_eq(cfg_get_uint(c, "core", "PLUGIN_DIR", 0, 10, &u),
	    -ENOENT);
	ck_assert_uint_eq(u, 1);
	ck_assert_str_eq(cfg_error(c),
	    "default: [core] PLUGIN_DIR: no value and no default");
}
END_TEST

START_TEST(test_getter_errors)
{
	uint64_t u = 7;
	double d = 7;
	bool b = true;

	ck_assert_int_eq(test_load("[core]\n"
	                           "MAX_PEERS = 500\n"
	                           "QUEUE_BYTES = lots\n"
	                           "KEEPALIVE = 3 weeks\n"
	                           "[testing]\n"
	                           "ENABLE = perhaps\n"
	                           "LOSS = 150%\n"),
	    0);
	ck_assert_int_eq(cfg_get_uint(c, "core", "MAX_PEERS", 1, 100, &u),
	    -ERANGE);
	ck_assert_str_eq(cfg_error(c),
	    "test.conf:2: [core] MAX_PEERS: '500' is not a whole number from 1 to 100");
	ck_assert_int_eq(cfg_get_size(c, "core", "QUEUE_BYTES", 0, 100, &u),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(cfg_error(c),
	    "test.conf:3: [core] QUEUE_BYTES: 'lots' is not a size from 0 to 100 bytes"));
	ck_assert_int_eq(cfg_get_duration(c, "core", "KEEPALIVE", 0, 100, &u),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(cfg_error(c),
	    "test.conf:4: [core] KEEPALIVE: '3 weeks' is not a duration"));
	ck_assert_int_eq(cfg_get_bool(c, "testing", "ENABLE", &b), -EINVAL);
	ck_assert_str_eq(cfg_error(c),
	    "test.conf:6: [testing] ENABLE: 'perhaps' is not yes or no");
	ck_assert_int_eq(cfg_get_fraction(c, "testing", "LOSS", 0, 1, &d),
	    -ERANGE);
	ck_assert_ptr_nonnull(strstr(cfg_error(c),
	    "test.conf:7: [testing] LOSS: '150%' is not a fraction from 0 to 1"));
	/* Failed getters leave the output alone. */
	ck_assert_uint_eq(u, 7);
	ck_assert_double_eq(d, 7);
	ck_assert(b);
}
END_TEST

START_TEST(test_cfg_fail)
{
	ck_assert_int_eq(test_load("[core]\n\nTRANSPORTS = carrier-pigeon\n"),
	    0);
	ck_assert_int_eq(cfg_fail(c, "core", "TRANSPORTS", "no plugin %s",
	                     "carrier-pigeon"),
	    -EINVAL);
	ck_assert_str_eq(cfg_error(c),
	    "test.conf:3: [core] TRANSPORTS: no plugin carrier-pigeon");
}
END_TEST

/* --- plugin schemas ------------------------------------------------------ */

START_TEST(test_plugin_schema_is_copied)
{
	struct ferry_cfg_key *keys = calloc(4, sizeof(*keys));
	struct warns w;

	ck_assert_ptr_nonnull(keys);
	keys[0].name = strdup("PORT");
	keys[0].def = strdup("2086");
	keys[0].help = "port";
	keys[1].name = strdup("BIND_ADDRESS");
	keys[1].def = NULL;
	keys[1].help = "address";
	keys[2].name = strdup("MTU");
	keys[2].def = strdup("1400");
	keys[2].help = "mtu";
	ck_assert_int_eq(cfg_add_schema_section(c, "transport-udp", keys), 0);
	/* The plugin is unloaded: its table and strings go away. */
	for (int i = 0; i < 3; i++) {
		if (keys[i].name != NULL)
			memset((char *)keys[i].name, 'X', strlen(keys[i].name));
		if (keys[i].def != NULL)
			memset((char *)keys[i].def, 'Y', strlen(keys[i].def));
		free((char *)keys[i].name);
		free((char *)keys[i].def);
	}
	free(keys);
	test_assert_get("transport-udp", "PORT", "2086");
	test_assert_get("transport-udp", "mtu", "1400");
	test_assert_get("transport-udp", "BIND_ADDRESS", NULL);
	test_assert_get("transport-tcp", "PORT", NULL);
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(test_load("[transport-udp]\n"
	                           "PORT = 1\n"
	                           "BIND_ADDRESS = 127.0.0.1\n"
	                           "PROT = 2\n"),
	    0);
	ck_assert_uint_eq(cfg_warnings(c, test_warn, &w), 1);
	ck_assert(test_warned(&w, "unknown key PROT in [transport-udp]"));
}
END_TEST

START_TEST(test_plugin_schema_adds_and_empty)
{
	static const struct ferry_cfg_key first[] = { { "A", "1", "a" },
		{ NULL, NULL, NULL } };
	static const struct ferry_cfg_key second[] = { { "B", "2", "b" },
		{ NULL, NULL, NULL } };
	struct warns w;

	ck_assert_int_eq(cfg_add_schema_section(c, "transport-x", first), 0);
	ck_assert_int_eq(cfg_add_schema_section(c, "transport-x", second), 0);
	ck_assert_int_eq(cfg_add_schema_section(c, "transport-none", NULL), 0);
	test_assert_get("transport-x", "A", "1");
	test_assert_get("transport-x", "B", "2");
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(test_load("[transport-x]\nA = 1\nB = 2\n"
	                           "[transport-none]\nC = 3\n"),
	    0);
	/* A plugin without keys makes its section known, not its keys. */
	ck_assert_uint_eq(cfg_warnings(c, test_warn, &w), 1);
	ck_assert(test_warned(&w, "unknown key C in [transport-none]"));
}
END_TEST

START_TEST(test_schema_prefix)
{
	static const struct ferry_cfg_key udp[] = { { "PORT", "2086", "p" },
		{ NULL, NULL, NULL } };
	struct warns w;

	ck_assert_int_eq(cfg_add_schema_prefix(c, "transport-"), 0);
	ck_assert_int_eq(cfg_add_schema_section(c, "transport-udp", udp), 0);
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(test_load("[transport-smtp]\n"
	                           "INBOX = /var/spool/x\n"
	                           "[Transport-Carrier]\n"
	                           "PIGEONS = 3\n"
	                           "[transport-udp]\n"
	                           "PORT = 1\n"
	                           "PROT = 2\n"
	                           "[transportudp]\n"
	                           "A = 1\n"),
	    0);
	/* A plugin that is not loaded cannot judge its section; one that is
	 * loaded judges its own, and the prefix is not a wildcard. */
	ck_assert_uint_eq(cfg_warnings(c, test_warn, &w), 2);
	ck_assert(test_warned(&w, "unknown key PROT in [transport-udp]"));
	ck_assert(test_warned(&w, "unknown section [transportudp]"));
	/* The prefix gives no defaults. */
	test_assert_get("transport-smtp", "INBOX", "/var/spool/x");
	test_assert_get("transport-smtp", "PORT", NULL);
}
END_TEST

/* --- lists --------------------------------------------------------------- */

START_TEST(test_next_word)
{
	static const char *const inputs[] = { "udp tcp smtp",
		"  udp,tcp , smtp  ", "\tudp\t,\ttcp,,smtp,",
		"udp, tcp, smtp" };
	const char *s, *word;
	size_t len;

	for (size_t i = 0; i < 4; i++) {
		char got[64] = "";

		s = inputs[i];
		while (cfg_next_word(&s, &word, &len)) {
			strncat(got, word, len);
			strcat(got, "|");
		}
		ck_assert_str_eq(got, "udp|tcp|smtp|");
		ck_assert_int_eq(*s, '\0');
		ck_assert(!cfg_next_word(&s, &word, &len));
	}
	s = "";
	ck_assert(!cfg_next_word(&s, &word, &len));
	s = " , ";
	ck_assert(!cfg_next_word(&s, &word, &len));
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("cfg");
	TCase *tc;

	tc = tcase_create("syntax");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_sections_and_keys);
	tcase_add_test(tc, test_comments_and_blanks);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_line_endings);
	tcase_add_test(tc, test_later_wins_and_merges);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_loop_test(tc, test_malformed, 0,
	    sizeof(bad_inputs) / sizeof(bad_inputs[0]));
	tcase_add_test(tc, test_malformed_codes);
	tcase_add_test(tc, test_line_too_long);
	tcase_add_test(tc, test_name_limits);
	tcase_add_test(tc, test_file_errors);
	tcase_add_test(tc, test_error_in_file_names_it);
	suite_add_tcase(s, tc);

	tc = tcase_create("includes");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_include_relative_to_file);
	tcase_add_test(tc, test_include_from_buffer_uses_cwd);
	tcase_add_test(tc, test_include_depth_limit);
	tcase_add_test(tc, test_include_self_loop);
	tcase_add_test(tc, test_include_error_names_included_file);
	suite_add_tcase(s, tc);

	tc = tcase_create("schema");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_warnings);
	tcase_add_test(tc, test_typed_getters);
	tcase_add_test(tc, test_getter_defaults_and_missing);
	tcase_add_test(tc, test_getter_errors);
	tcase_add_test(tc, test_cfg_fail);
	tcase_add_test(tc, test_plugin_schema_is_copied);
	tcase_add_test(tc, test_plugin_schema_adds_and_empty);
	tcase_add_test(tc, test_schema_prefix);
	tcase_add_test(tc, test_next_word);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
