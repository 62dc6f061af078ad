/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The thin client's config directory, remote client: its key and
 * convergence secret (kept as a daemon keeps its own: mode 0600 files in
 * a 0700 directory, looser modes refused), the intermediaries it knows,
 * those it found bad, and the receipt cursor of each.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fsutil.h"

#define REMOTE_LIST_BYTES (1024 * 1024) /* a list file we read */

static int
remote_dir_default(char *path, size_t size)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	if (xdg != NULL && *xdg == '/')
		n = snprintf(path, size, "%s/ferry/remote", xdg);
	else if (home != NULL && *home == '/')
		n = snprintf(path, size, "%s/.config/ferry/remote", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int
remote_dir_open(const char *o_dir, char *path, size_t size, char *why,
    size_t why_size)
{
	struct stat st;
	int r;

	*why = '\0';
	r = o_dir != NULL
	    ? (snprintf(path, size, "%s", o_dir) >= (int)size ? -ENAMETOOLONG
	                                                      : 0)
	    : remote_dir_default(path, size);
	if (r < 0) {
		(void)snprintf(why, why_size, "%s",
		    r == -ENOENT ? "neither $XDG_CONFIG_HOME nor $HOME is set"
		                 : "the config directory's name is too long");
		return r;
	}
	r = fs_mkdir_p(path, 0700);
	if (r < 0 || lstat(path, &st) < 0) {
		r = r < 0 ? r : -errno;
		(void)snprintf(why, why_size, "cannot make %s: %s", path,
		    strerror(-r));
		return r;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 0077) != 0) {
		(void)snprintf(why, why_size,
		    "%s must be a directory of this user's with mode 0700 (it holds the client key; chmod 700 %s)",
		    path, path);
		return -EPERM;
	}
	return 0;
}

void
remote_dir_lines_free(char **lines, size_t n)
{
	for (size_t i = 0; lines != NULL && i < n; i++)
		free(lines[i]);
	free(lines);
}

int
remote_dir_lines(const char *dir, const char *name, size_t max, char ***ret,
    size_t *ret_n)
{
	char path[4096], **lines = NULL, *p, *nl;
	uint8_t *data = NULL;
	size_t len, n = 0;
	int r;

	r = fs_path_join(path, sizeof(path), dir, name);
	if (r == 0)
		r = fs_read_file(path, REMOTE_LIST_BYTES, &data, &len);
	if (r == -ENOENT) {
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	if (r < 0)
		return r;
	lines = calloc(max > 0 ? max : 1, sizeof(*lines));
	if (lines == NULL) {
		r = -ENOMEM;
		goto out;
	}
	for (p = (char *)data; p < (char *)data + len && n < max; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)((char *)data + len - p));
		if (nl == NULL)
			nl = (char *)data + len;
		if (nl == p)
			continue;
		lines[n] = strndup(p, (size_t)(nl - p));
		if (lines[n] == NULL) {
			r = -ENOMEM;
			goto out;
		}
		n++;
	}
	*ret = lines;
	*ret_n = n;
	lines = NULL;
out:
	remote_dir_lines_free(lines, n);
	free(data);
	return r;
}

int
remote_dir_write_lines(const char *dir, const char *name, char *const *lines,
    size_t n)
{
	char path[4096];
	size_t len = 0, off = 0;
	char *text;
	int r;

	r = fs_path_join(path, sizeof(path), dir, name);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		len += strlen(lines[i]) + 1;
	text = malloc(len + 1);
	if (text == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		off += (size_t)sprintf(text + off, "%s\n", lines[i]);
	r = fs_write_atomic(path, text, len, 0600);
	free(text);
	return r;
}

uint64_t
remote_dir_cursor(const char *dir, const char *peer)
{
	size_t plen = strlen(peer), n;
	uint64_t c = 0;
	char **lines;

	if (remote_dir_lines(dir, REMOTE_CURSOR_FILE, 4096, &lines, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(lines[i], peer, plen) == 0 && lines[i][plen] == ' ')
			c = strtoull(lines[i] + plen + 1, NULL, 10);
	remote_dir_lines_free(lines, n);
	return c;
}

int
remote_dir_set_cursor(const char *dir, const char *peer, uint64_t c)
{
	size_t plen = strlen(peer), n, k = 0;
	char **lines, **out;
	int r;

	r = remote_dir_lines(dir, REMOTE_CURSOR_FILE, 4095, &lines, &n);
	if (r < 0)
		return r;
	out = calloc(n + 1, sizeof(*out));
	if (out == NULL) {
		remote_dir_lines_free(lines, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (!(strncmp(lines[i], peer, plen) == 0 &&
		        lines[i][plen] == ' '))
			out[k++] = lines[i];
	r = asprintf(&out[k], "%s %" PRIu64, peer, c) < 0 ? -ENOMEM : 0;
	if (r == 0) {
		r = remote_dir_write_lines(dir, REMOTE_CURSOR_FILE, out, k + 1);
		free(out[k]);
	}
	free(out);
	remote_dir_lines_free(lines, n);
	return r;
}
