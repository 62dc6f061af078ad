/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A byte buffer's traffic with a stream socket (see bufio.h), layer 0. */
#include "lib/bufio.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

ssize_t
bufio_read(struct buf *b, int fd, size_t max)
{
	uint8_t *p = buf_reserve(b, max);
	ssize_t n;

	if (p == NULL)
		return -ENOMEM;
	n = read(fd, p, max);
	if (n < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	buf_commit(b, (size_t)n);
	return n;
}

int
bufio_send(struct buf *b, int fd)
{
	ssize_t n;

	while (buf_size(b) > 0) {
		/* MSG_NOSIGNAL: the other side gone is an error code here,
		 * whatever the process's signal setup. */
		n = send(fd, buf_head(b), buf_size(b), MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		buf_consume(b, (size_t)n);
	}
	return 0;
}
