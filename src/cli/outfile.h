/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The file a get writes, for ferry get and ferry remote get: FILE.part,
 * renamed to FILE once every byte is written and checked, or an unnamed
 * temporary file copied to standard output.
 */
#ifndef FERRY_CLI_OUTFILE_H
#define FERRY_CLI_OUTFILE_H

#include <stddef.h>

/* An unnamed file in $TMPDIR (or /tmp), open O_RDWR: a descriptor or -1
 * with errno set. */
int outfile_tmp(void);
/* Copies fd from its start to standard output. 0 or -errno. */
int outfile_copy_out(int fd);
/* FILE.part into part. 0 or -ENAMETOOLONG. */
int outfile_part_name(const char *file, char *part, size_t size);
/* Renames part to file and syncs the directory. 0 or -errno. */
int outfile_finish(const char *part, const char *file);

#endif /* FERRY_CLI_OUTFILE_H */
