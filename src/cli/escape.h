/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Text from elsewhere (a transfer's label, which another user may have
 * chosen) printed on a terminal or into a line-based listing: what could
 * break a line or drive the terminal is escaped, readable text is not.
 */
#ifndef FERRY_CLI_ESCAPE_H
#define FERRY_CLI_ESCAPE_H

#include <stdio.h>

/*
 * Writes s to f with every byte that is not printable text escaped:
 * backslash as \\, newline, tab and carriage return as \n, \t, \r,
 * other C0 controls, DEL and bytes that are not valid UTF-8 as \xNN, and
 * valid UTF-8 sequences that are controls (C1, U+0080 to U+009F) or
 * reorder or hide text (U+200B to U+200F, U+2028 to U+202E, U+2060 to
 * U+206F, U+FEFF) as \xNN for each of their bytes. Other UTF-8 goes out
 * as it is. The output is one line, and never holds an escape sequence.
 */
void escape_print(FILE *f, const char *s);

#endif /* FERRY_CLI_ESCAPE_H */
