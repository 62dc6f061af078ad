/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The file URI, storage layer (issue 13): one short line naming a file by
 * its manifest root (block key, AEAD key) and size, with a version and a
 * CRC-32 so that a mistyped URI is told apart from a missing file:
 *
 *   ferry:f1.SIZE.DATA
 *
 * SIZE in decimal, DATA the Crockford base32 of block key, AEAD key and
 * check. Distinct from the peer URI ferry://. Grammar in ferry-storage(7).
 */
#ifndef FERRY_STORAGE_URI_H
#define FERRY_STORAGE_URI_H

#include <stddef.h>

#include "storage/chunk.h"

/* The longest URI, with its NUL: "ferry:f1." + 20 digits + "." + 109. */
#define STORAGE_URI_MAX 140

/*
 * Writes the URI of root (root->len is the file size) and a NUL into buf
 * of size bytes (STORAGE_URI_MAX always suffices). The URI's length, or
 * -ENOSPC if it does not fit, -EINVAL for a size over MANIFEST_FILE_MAX.
 */
int storage_uri_format(const struct storage_ref *root, char *buf, size_t size);
/*
 * Parses the URI s into root. 0 or -EINVAL, and then, if why is not
 * NULL, *why is a static sentence saying what was wrong (not a file URI,
 * a peer URI, unknown version, bad size, bad length or character, check
 * mismatch: a typo). root is written only on success. The scheme is read
 * in either case, DATA as base32 reads it (either case, O as 0, I and L
 * as 1); nothing may surround the URI.
 */
int storage_uri_parse(const char *s, struct storage_ref *root,
    const char **why);

#endif /* FERRY_STORAGE_URI_H */
