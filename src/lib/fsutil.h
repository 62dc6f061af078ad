/* SPDX-License-Identifier: GPL-3.0-or-later */
/* File system helpers, layer 0. All return 0 or a negative errno. */
#ifndef FERRY_LIB_FSUTIL_H
#define FERRY_LIB_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Creates path and its missing parents with mode. Existing is fine. */
int fs_mkdir_p(const char *path, mode_t mode);
/* Replaces path atomically: writes a temporary file beside it, fsyncs it,
 * renames it over path and fsyncs the directory. */
int fs_write_atomic(const char *path, const void *data, size_t len,
    mode_t mode);
/* Opens path with flags (O_RDONLY for a file, O_RDONLY | O_DIRECTORY
 * for a directory) and fsyncs it: a file's data, or a directory's
 * entries. */
int fs_fsync_path(const char *path, int flags);
/* Reads a whole regular file of at most max bytes into a malloc'd buffer
 * (caller frees). -EFBIG if larger, -ENOENT if missing. */
int fs_read_file(const char *path, size_t max, uint8_t **ret_data,
    size_t *ret_len);
/* Checks that fd, open on path, may hold a secret of this user's (what
 * names it in the reason, "the identity key"): a regular file (else
 * -EBADMSG), with no permission bits for group or others and owned by
 * the effective uid (else -EPERM); fstat's error as it is. On failure
 * writes the reason, naming path, into why (size bytes) for the caller to
 * log. */
int fs_check_private(int fd, const char *path, const char *what, char *why,
    size_t size);
/* Joins dir and name into buf. -ENAMETOOLONG if it does not fit. */
int fs_path_join(char *buf, size_t size, const char *dir, const char *name);

#endif /* FERRY_LIB_FSUTIL_H */
