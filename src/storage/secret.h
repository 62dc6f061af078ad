/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The convergence secret, storage layer (issue 13): 32 random bytes that
 * salt every chunk key, so that only those who hold it can confirm that a
 * guessed file was stored. Kept like the identity key: a file of mode
 * 0600, created atomically and fsynced, never silently replaced.
 */
#ifndef FERRY_STORAGE_SECRET_H
#define FERRY_STORAGE_SECRET_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/chunk.h"

/* The file's name in the daemon's state directory. */
#define STORAGE_SECRET_FILE "convergence.key"

/*
 * Loads the 32-byte convergence secret at path into secret. If the file
 * is absent and create is true, makes a new random one first (mode 0600,
 * written to a temporary file, fsynced, linked into place only if path is
 * still absent, directory fsynced). Logs once, naming the path, and
 * returns:
 *   -ENOENT   absent and create is false
 *   -EPERM    readable by group or others (mode must be 0600 or 0400)
 *   -EBADMSG  not exactly 32 bytes, or not a regular file
 *   other     as open(2), read(2), write(2) or fsync(2) said
 * secret is written only on success.
 */
int storage_secret_load(const char *path, bool create,
    uint8_t secret[STORAGE_SECRET_LEN]);

#endif /* FERRY_STORAGE_SECRET_H */
