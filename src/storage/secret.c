/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The convergence secret file (see secret.h), storage layer. Created the
 * way a key should be: written whole to a temporary file and fsynced, then
 * linked into place (link(2) never replaces an existing file, so two
 * daemons starting at once agree on one secret), then the directory is
 * fsynced so the name survives a crash.
 */
#define LOG_TAG "storage"
#include "storage/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/fsutil.h"
#include "lib/log.h"

/* Reads and checks the file; secret receives its 32 bytes. Logs every
 * error but -ENOENT. */
static int
secret_read(const char *path, uint8_t secret[STORAGE_SECRET_LEN])
{
	uint8_t file[STORAGE_SECRET_LEN + 1];
	char why[PATH_MAX + 160];
	ssize_t n;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP)
			log_err(
			    "%s is a symbolic link; the convergence secret must be a regular file",
			    path);
		else if (r != -ENOENT)
			log_err_errno(r, "cannot open %s", path);
		return r;
	}
	r = fs_check_private(fd, path, "the convergence secret", why,
	    sizeof(why));
	if (r < 0) {
		log_err("%s", why);
		goto out;
	}
	n = read(fd, file, sizeof(file));
	if (n < 0) {
		r = log_err_errno(-errno, "cannot read %s", path);
		goto out;
	}
	if (n != STORAGE_SECRET_LEN) {
		log_err(
		    "%s holds %s%zd bytes; a convergence secret is exactly %d (it is not replaced: move it away to make a new one)",
		    path, n > STORAGE_SECRET_LEN ? "more than " : "",
		    n > STORAGE_SECRET_LEN ? (ssize_t)STORAGE_SECRET_LEN : n,
		    STORAGE_SECRET_LEN);
		r = -EBADMSG;
		goto out;
	}
	memcpy(secret, file, STORAGE_SECRET_LEN);
out:
	sodium_memzero(file, sizeof(file));
	(void)close(fd);
	return r;
}

/* The directory part of path into buf ("." if none). */
static int
secret_dir(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t len;

	if (slash == NULL)
		return snprintf(buf, size, ".") < (int)size ? 0 : -ENAMETOOLONG;
	len = slash == path ? 1 : (size_t)(slash - path);
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, path, len);
	buf[len] = '\0';
	return 0;
}

/* Writes a new random secret to a temporary file beside path and links it
 * there; -EEXIST if path appeared meanwhile (then the caller reads it). */
static int
secret_create(const char *path)
{
	uint8_t secret[STORAGE_SECRET_LEN];
	char tmp[PATH_MAX], dir[PATH_MAX];
	ssize_t n;
	int fd, r;

	r = secret_dir(path, dir, sizeof(dir));
	/* The six X are mkostemp's template, which it replaces by a unique
	 * name: the secret is written beside its path, then renamed. */
	if (r < 0 ||
	    snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >=
	        (int)sizeof(tmp))
		return log_err_errno(-ENAMETOOLONG, "%s", path);
	fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0)
		return log_err_errno(-errno, "cannot create a file beside %s",
		    path);
	randombytes_buf(secret, sizeof(secret));
	n = write(fd, secret, sizeof(secret));
	sodium_memzero(secret, sizeof(secret));
	if (n != (ssize_t)sizeof(secret) || fchmod(fd, 0600) < 0 ||
	    fsync(fd) < 0) {
		r = log_err_errno(n < 0 ? -errno : -EIO, "cannot write %s",
		    tmp);
		goto out;
	}
	if (link(tmp, path) < 0) {
		r = -errno;
		if (r != -EEXIST)
			log_err_errno(r, "cannot create %s", path);
		goto out;
	}
	r = fs_fsync_path(dir, O_RDONLY | O_DIRECTORY);
	if (r < 0)
		log_err_errno(r, "cannot fsync %s", dir);
out:
	(void)close(fd);
	(void)unlink(tmp);
	return r;
}

int
storage_secret_load(const char *path, bool create,
    uint8_t secret[STORAGE_SECRET_LEN])
{
	uint8_t got[STORAGE_SECRET_LEN];
	int r;

	if (path == NULL || secret == NULL)
		return -EINVAL;
	if (sodium_init() < 0)
		return -ENOMEM;
	r = secret_read(path, got);
	if (r == -ENOENT && create) {
		/* -EEXIST: another process made it first; read theirs. */
		r = secret_create(path);
		if (r == 0)
			log_notice("created a new convergence secret in %s",
			    path);
		if (r < 0 && r != -EEXIST)
			goto out; /* logged */
		r = secret_read(path, got);
	}
	if (r == -ENOENT)
		log_err("no convergence secret at %s", path);
	if (r == 0)
		memcpy(secret, got, STORAGE_SECRET_LEN);
out:
	sodium_memzero(got, sizeof(got));
	return r;
}
