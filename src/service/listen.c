/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The client socket's file system side, service layer: a single-instance
 * lock on "<socket>.lock" held for the daemon's lifetime, replacement of
 * a stale socket file, bind with the configured mode and group, whose
 * members the credential policy then lets in.
 */
#define LOG_TAG "service"
#include "service/service_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"

/* The pid the current holder wrote into the lock file, or 0. */
static long
listen_lock_owner(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *end;
	long pid;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	return end != buf && pid > 0 ? pid : 0;
}

static int
listen_lock(struct service *svc)
{
	char pid[32];
	long other;
	int fd, len;

	if (snprintf(svc->lock_path, sizeof(svc->lock_path), "%s.lock",
	        svc->cfg.socket) >= (int)sizeof(svc->lock_path))
		return log_err_errno(-ENAMETOOLONG, "%s.lock", svc->cfg.socket);
	fd = open(svc->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return log_err_errno(-errno, "cannot open %s", svc->lock_path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = -errno;

		if (r == -EWOULDBLOCK) {
			other = listen_lock_owner(fd);
			log_err(
			    "another ferryd (pid %ld) is serving %s; not starting a second one",
			    other, svc->cfg.socket);
			r = -EADDRINUSE;
		} else {
			log_err_errno(r, "cannot lock %s", svc->lock_path);
		}
		(void)close(fd);
		svc->lock_path[0] = '\0'; /* not ours to remove */
		return r;
	}
	svc->lock_fd = fd;
	len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len)
		log_warn("cannot write our pid into %s", svc->lock_path);
	return 0;
}

static int
listen_bind(struct service *svc)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, svc->cfg.socket, strlen(svc->cfg.socket));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return log_err_errno(-errno, "socket");
	svc->listen_fd = fd;
	/* We hold the lock, so a socket file left here is from a daemon
	 * that died without cleaning up. */
	if (unlink(svc->cfg.socket) == 0)
		log_notice("replaced the stale socket %s", svc->cfg.socket);
	else if (errno != ENOENT)
		return log_err_errno(-errno, "cannot remove the stale %s",
		    svc->cfg.socket);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		return log_err_errno(-errno, "cannot bind %s", svc->cfg.socket);
	svc->socket_created = true;
	if (chmod(svc->cfg.socket, svc->cfg.mode) < 0)
		return log_err_errno(-errno, "cannot chmod %s",
		    svc->cfg.socket);
	if (stat(svc->cfg.socket, &st) < 0)
		return log_err_errno(-errno, "%s", svc->cfg.socket);
	/* No chown when bind() gave the group already: a sandbox may
	 * forbid the call (systemd's SystemCallFilter=~@privileged). */
	if (svc->cfg.set_gid && st.st_gid != svc->cfg.gid) {
		if (chown(svc->cfg.socket, (uid_t)-1, svc->cfg.gid) < 0)
			return log_err_errno(-errno,
			    "cannot give %s to group %lu", svc->cfg.socket,
			    (unsigned long)svc->cfg.gid);
		st.st_gid = svc->cfg.gid;
	}
	policy_set_socket_gid(&svc->cfg.policy, st.st_gid);
	if (listen(fd, 128) < 0)
		return log_err_errno(-errno, "cannot listen on %s",
		    svc->cfg.socket);
	return 0;
}

int
listen_open(struct service *svc)
{
	int r;

	if (svc->cfg.socket[0] == '\0')
		return log_err_errno(-EINVAL, "no socket path");
	r = listen_lock(svc);
	if (r < 0)
		return r;
	return listen_bind(svc);
}

void
listen_close(struct service *svc)
{
	if (svc->listen_fd >= 0)
		(void)close(svc->listen_fd);
	svc->listen_fd = -1;
	if (svc->socket_created)
		(void)unlink(svc->cfg.socket);
	svc->socket_created = false;
	/* Unlinked while still locked, so no other daemon can take over a
	 * file we are about to remove. */
	if (svc->lock_fd >= 0) {
		(void)unlink(svc->lock_path);
		(void)close(svc->lock_fd);
	}
	svc->lock_fd = -1;
}
