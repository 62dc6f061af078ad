/* SPDX-License-Identifier: GPL-3.0-or-later */
/* File system helpers (see fsutil.h), layer 0. */
#include "lib/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
fs_path_join(char *buf, size_t size, const char *dir, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* mkdir that accepts an existing directory, and only a directory. */
static int
fs_mkdir_one(const char *path, mode_t mode)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int
fs_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path);
	int r;

	if (len == 0 || len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		r = fs_mkdir_one(tmp, mode);
		if (r < 0)
			return r;
		*p = '/';
	}
	return fs_mkdir_one(tmp, mode);
}

static int
fs_write_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
fs_fsync_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	(void)close(fd);
	return r;
}

static int
fs_fsync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	return fs_fsync_path(dir, O_RDONLY | O_DIRECTORY);
}

int
fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	r = fs_write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlink(tmp);
		return r;
	}
	return fs_fsync_dir_of(path);
}

int
fs_read_file(const char *path, size_t max, uint8_t **ret_data,
    size_t *ret_len)
{
	struct stat st;
	uint8_t *data = NULL;
	size_t len = 0;
	int fd, r = 0;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer; the type
	 * check below refuses it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		r = -EFBIG;
		goto out;
	}
	data = malloc((size_t)st.st_size + 1);
	if (data == NULL) {
		r = -ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, data + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	data[len] = '\0';
	*ret_data = data;
	*ret_len = len;
	data = NULL;
out:
	free(data);
	(void)close(fd);
	return r;
}

int
fs_check_private(int fd, const char *path, const char *what, char *why,
    size_t size)
{
	struct stat st;
	int r;

	if (fstat(fd, &st) < 0) {
		r = -errno;
		(void)snprintf(why, size, "cannot stat %s: %s", path,
		    strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		(void)snprintf(why, size, "%s is not a regular file, so not %s",
		    path, what);
		return -EBADMSG;
	}
	if ((st.st_mode & 0077) != 0) {
		(void)snprintf(why, size,
		    "%s has mode %04o; %s must not be accessible to group or others (chmod 600 %s)",
		    path, (unsigned)(st.st_mode & 07777), what, path);
		return -EPERM;
	}
	if (st.st_uid != geteuid()) {
		(void)snprintf(why, size,
		    "%s is owned by uid %lu, not by this user (uid %lu)", path,
		    (unsigned long)st.st_uid, (unsigned long)geteuid());
		return -EPERM;
	}
	return 0;
}
