/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The file a get writes (see outfile.h). */
#include "cli/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* An unnamed file in $TMPDIR (or /tmp) for the file on its way to
 * standard output. */
int
outfile_tmp(void)
{
	const char *dir = getenv("TMPDIR");

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

/* Copies fd from its start to standard output. 0 or -errno. */
int
outfile_copy_out(int fd)
{
	char buf[65536];
	off_t off = 0;
	ssize_t n, w;

	for (;;) {
		n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		off += n;
		for (ssize_t done = 0; done < n; done += w) {
			w = write(STDOUT_FILENO, buf + done,
			    (size_t)(n - done));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w < 0)
				return -errno;
		}
	}
}

/* FILE.part into part. 0 or -ENAMETOOLONG. */
int
outfile_part_name(const char *file, char *part, size_t size)
{
	return (size_t)snprintf(part, size, "%s.part", file) >= size
	    ? -ENAMETOOLONG
	    : 0;
}

/* Renames part to file and syncs the directory. 0 or -errno. */
int
outfile_finish(const char *part, const char *file)
{
	char dir[4096];
	int fd;

	if (rename(part, file) < 0)
		return -errno;
	(void)snprintf(dir, sizeof(dir), "%s", file);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		(void)close(fd);
	}
	return 0;
}
