/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET, which
 * may name an abstract socket ('@'). Daemon layer.
 */
#define LOG_TAG "ferryd"
#include "daemon/sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/log.h"

int
sdnotify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun;
	size_t len;
	int fd, r = 0;

	if (path == NULL || *path == '\0')
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sun.sun_path))
		return log_warn_errno(-EINVAL, "NOTIFY_SOCKET=%s", path);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, len);
	if (sun.sun_path[0] == '@')
		sun.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return log_warn_errno(-errno, "sd_notify socket");
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		(struct sockaddr *)&sun,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		r = log_warn_errno(-errno, "sd_notify to %s", path);
	(void)close(fd);
	return r;
}

int
sdnotifyf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return sdnotify(buf);
}
