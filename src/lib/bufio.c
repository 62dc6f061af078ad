/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A byte buffer's traffic with a stream socket (see bufio.h), layer 0. */
#include "lib/bufio.h"

/* Descriptors one read takes at most. */
#define BUFIO_FDS_MAX 16

#include <errno.h>
#include <string.h>
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

ssize_t
bufio_read_fds(struct buf *b, int fd, size_t max, int *fds, size_t max_fds,
    size_t *ret_n_fds, bool *ret_truncated)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(BUFIO_FDS_MAX * sizeof(int))];
	} cm;
	uint8_t *p = buf_reserve(b, max);
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *c;
	size_t n_fds = 0;
	ssize_t n;

	*ret_n_fds = 0;
	*ret_truncated = false;
	if (p == NULL)
		return -ENOMEM;
	if (max_fds > BUFIO_FDS_MAX)
		max_fds = BUFIO_FDS_MAX;
	iov.iov_base = p;
	iov.iov_len = max;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.b;
	mh.msg_controllen = CMSG_SPACE(max_fds * sizeof(int));
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int d;

			memcpy(&d, CMSG_DATA(c) + i * sizeof(int), sizeof(d));
			if (n_fds < max_fds)
				fds[n_fds++] = d;
			else
				(void)close(d);
		}
	}
	*ret_n_fds = n_fds;
	*ret_truncated = (mh.msg_flags & MSG_CTRUNC) != 0;
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
