/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * UTF-8 as RFC 3629 defines it, for the places that print text from
 * elsewhere (the CLI's JSON strings and its escaped listings): one
 * decoder, so that both agree on what is valid.
 */
#ifndef FERRY_LIB_UTF8_H
#define FERRY_LIB_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length (1 to 4) of the valid UTF-8 sequence at s, of which left
 * bytes (at least 1) may be read, with its code point in *cp; 0 if s
 * does not start one: overlong forms, surrogates, code points past
 * U+10FFFF, stray continuation bytes and sequences cut short are all
 * invalid. */
size_t utf8_seq(const unsigned char *s, size_t left, uint32_t *cp);

#endif /* FERRY_LIB_UTF8_H */
