/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Test vectors checked against the code and a man page (vector_page.h). */
#include "vector_page.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "lib/fsutil.h"

#define VECTOR_MARK "\n.\\\" vector: "

void
vector_page_load(struct vector_page *vp)
{
	const char *env = getenv("FERRY_VECTORS_PRINT");
	char path[4096];
	uint8_t *data = NULL;
	size_t len;

	vp->print_only = env != NULL && *env != '\0' && strcmp(env, "0") != 0;
	vp->text = NULL;
	if (vp->print_only)
		return;
	ck_assert_int_eq(fs_path_join(path, sizeof(path), FERRY_SOURCE_DIR,
	                     vp->path),
	    0);
	ck_assert_int_eq(fs_read_file(path, 1 << 20, &data, &len), 0);
	vp->text = (char *)data;
}

void
vector_page_done(struct vector_page *vp)
{
	free(vp->text);
	vp->text = NULL;
}

const struct vector *
vector_page_find(const struct vector_page *vp, const char *name)
{
	for (size_t i = 0; i < vp->n; i++)
		if (strcmp(vp->v[i].name, name) == 0)
			return &vp->v[i];
	ck_abort_msg("no vector named %s in the test", name);
	return NULL;
}

/* The code's bytes as the page lays them out: 16 to a line. */
static void
vector_print_hex(const char *name, const uint8_t *b, size_t len)
{
	fprintf(stderr, "vector %s (%zu bytes) as the code makes it:\n", name,
	    len);
	for (size_t i = 0; i < len; i++)
		fprintf(stderr, "%02x%s", b[i],
		    i + 1 == len || i % 16 == 15 ? "\n" : " ");
}

static char *
vector_to_hex(const uint8_t *b, size_t len)
{
	char *s = malloc(2 * len + 1);

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < len; i++)
		(void)snprintf(s + 2 * i, 3, "%02x", b[i]);
	s[2 * len] = '\0';
	return s;
}

/* The leading two-digit hex words of the line from p to eol, into out;
 * how many characters. */
static size_t
vector_hex_line(const char *p, const char *eol, char *out)
{
	size_t n = 0;

	while (p < eol) {
		while (p < eol && *p == ' ')
			p++;
		if (eol - p < 2 || !isxdigit((unsigned char)p[0]) ||
		    !isxdigit((unsigned char)p[1]) ||
		    (p + 2 < eol && p[2] != ' '))
			break;
		out[n++] = (char)tolower((unsigned char)p[0]);
		out[n++] = (char)tolower((unsigned char)p[1]);
		p += 2;
	}
	return n;
}

/*
 * The block the page prints under ".\" vector: name": for bytes, the
 * leading two-digit hex words of each line (what follows is a comment);
 * for text, each line without its blanks, joined. NULL if there is none.
 */
static char *
vector_page_block(const struct vector_page *vp, const char *name, bool text)
{
	char marker[96], *out, *p, *end;
	size_t n = 0;

	(void)snprintf(marker, sizeof(marker), VECTOR_MARK "%s\n", name);
	p = strstr(vp->text, marker);
	if (p == NULL)
		return NULL;
	p = strchr(p + 1, '\n') + 1;
	ck_assert_msg(strncmp(p, ".Bd -literal", 12) == 0,
	    "%s: vector %s is not followed by a literal display", vp->path,
	    name);
	p = strchr(p, '\n') + 1;
	end = strstr(p, "\n.Ed\n");
	ck_assert_msg(end != NULL, "%s: vector %s has no .Ed", vp->path, name);
	out = calloc(1, (size_t)(end - p) + 2);
	ck_assert_ptr_nonnull(out);
	while (p <= end) {
		char *eol = strchr(p, '\n');

		if (text) {
			for (; p < eol; p++)
				if (!isspace((unsigned char)*p))
					out[n++] = *p;
		} else {
			n += vector_hex_line(p, eol, out + n);
		}
		p = eol + 1;
	}
	out[n] = '\0';
	return out;
}

void
vector_page_check(const struct vector_page *vp, const char *name,
    const void *got, size_t len)
{
	const struct vector *v = vector_page_find(vp, name);
	char *hex = v->text ? strndup(got, len) : vector_to_hex(got, len);
	char *shown;
	bool ok;

	ck_assert_ptr_nonnull(hex);
	ok = !vp->print_only && strcmp(hex, v->hex) == 0;
	if (!ok) {
		if (v->text)
			fprintf(stderr, "vector %s as the code makes it:\n%s\n",
			    name, hex);
		else
			vector_print_hex(name, got, len);
	}
	if (vp->print_only) {
		free(hex);
		return;
	}
	ck_assert_msg(ok, "vector %s: the code's bytes differ from the test's",
	    name);
	shown = vector_page_block(vp, name, v->text);
	ck_assert_msg(shown != NULL, "%s prints no vector %s", vp->path, name);
	ck_assert_msg(strcmp(shown, v->hex) == 0,
	    "vector %s: %s prints other bytes than the code makes", name,
	    vp->path);
	free(hex);
	free(shown);
}

void
vector_page_check_all(const struct vector_page *vp)
{
	const char *p = vp->text;
	size_t n = 0;

	if (vp->print_only)
		return;
	while ((p = strstr(p, VECTOR_MARK)) != NULL) {
		char name[64];

		p += strlen(VECTOR_MARK);
		ck_assert_int_eq(sscanf(p, "%63s", name), 1);
		(void)vector_page_find(vp, name);
		n++;
	}
	ck_assert_uint_eq(n, vp->n);
}
