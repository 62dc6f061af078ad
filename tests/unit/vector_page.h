/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Test vectors kept twice, in a test and in the man page that documents
 * them, for test_protocol_vectors.c and test_storage_vectors.c: what the
 * code makes is compared with the test's hex and with the block the page
 * prints under the same name (a roff comment ".\" vector: NAME" before a
 * literal display), so that neither the code nor the page can drift
 * alone. On a mismatch the code's bytes are printed as the page lays them
 * out; FERRY_VECTORS_PRINT=1 prints them all and checks nothing, for when
 * a format changes on purpose. Failures fail the running Check test.
 */
#ifndef FERRY_TESTS_VECTOR_PAGE_H
#define FERRY_TESTS_VECTOR_PAGE_H

#include <stdbool.h>
#include <stddef.h>

/* One vector: its name, and its bytes in hex (lower case) or, for a text
 * vector, its text. */
struct vector {
	const char *name;
	const char *hex; /* bytes in hex, or the text of a text vector */
	bool text;
};

/* A page and the vectors a test keeps for it. */
struct vector_page {
	const char *path;       /* under the source tree: "man/x.7" */
	const struct vector *v; /* the test's */
	size_t n;
	bool print_only; /* FERRY_VECTORS_PRINT, set by _load */
	char *text;      /* the page, between _load and _done */
};

/* Reads FERRY_VECTORS_PRINT and, unless it asks to print only, the page
 * (a test's setup). */
void vector_page_load(struct vector_page *vp);
/* Frees what _load read (a test's teardown). */
void vector_page_done(struct vector_page *vp);
/* The vector called name; fails the test if there is none. */
const struct vector *vector_page_find(const struct vector_page *vp,
    const char *name);
/* Checks the len bytes the code made (the text, for a text vector)
 * against the vector called name and the page's block of that name. */
void vector_page_check(const struct vector_page *vp, const char *name,
    const void *got, size_t len);
/* Checks that every vector block of the page is one of the test's, and
 * that there are as many. */
void vector_page_check_all(const struct vector_page *vp);

#endif /* FERRY_TESTS_VECTOR_PAGE_H */
