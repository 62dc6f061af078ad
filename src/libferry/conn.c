/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's connection: connecting, and a small blocking I/O engine over
 * a non-blocking socket and poll(), so every wait honours the client's
 * timeout and reads (and queues) what the daemon sends meanwhile.
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/bufio.h"
#include "lib/time.h"
#include "lib/wire.h"

int
ferry_client_open(const char *path, struct ferry_client **ret_client)
{
	char def[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct sockaddr_un sun;
	struct ferry_client *c;
	int fd, r;

	if (ret_client == NULL)
		return -EINVAL;
	if (path == NULL) {
		r = ferry_default_socket(def, sizeof(def));
		if (r < 0)
			return r;
		path = def;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Connect blocking (a local connect is immediate or refused), then
	 * switch: every later wait goes through poll() with a deadline. */
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		r = -errno;
		(void)close(fd);
		return r;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		(void)close(fd);
		return -ENOMEM;
	}
	c->fd = fd;
	c->timeout_ms = LF_DEFAULT_TIMEOUT_MS;
	c->next_req_id = 1;
	buf_init(&c->in);
	buf_init(&c->out);
	buf_init(&c->queue);
	buf_init(&c->msg);
	buf_init(&c->rx_reasm);
	*ret_client = c;
	return 0;
}

void
ferry_client_close(struct ferry_client *c)
{
	if (c == NULL)
		return;
	(void)close(c->fd);
	buf_done(&c->in);
	buf_done(&c->out);
	buf_done(&c->queue);
	buf_done(&c->msg);
	buf_done(&c->rx_reasm);
	lf_async_free(c);
	free(c);
}

int
ferry_client_fd(const struct ferry_client *c)
{
	return c->fd;
}

void
ferry_client_set_timeout(struct ferry_client *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms < 0 ? -1 : timeout_ms;
}

int64_t
lf_deadline(const struct ferry_client *c, uint64_t extra_ms)
{
	if (c->timeout_ms < 0)
		return -1;
	return (int64_t)(time_mono_us() / 1000 + (uint64_t)c->timeout_ms +
	    extra_ms);
}

int
lf_fail(struct ferry_client *c, int r)
{
	if (c->dead == 0)
		c->dead = r;
	return r;
}

int
lf_next_frame(struct ferry_client *c, struct lf_frame *ret)
{
	const uint8_t *p = buf_head(&c->in);
	size_t have = buf_size(&c->in);
	uint16_t size;

	if (have < FERRY_HDR_SIZE)
		return 0;
	size = wire_get16(p);
	if (size < FERRY_HDR_SIZE)
		return lf_fail(c, -EPROTO);
	if (have < size)
		return 0;
	ret->p = p;
	ret->size = size;
	ret->type = wire_get16(p + 2);
	return 1;
}

void
lf_consume(struct ferry_client *c, const struct lf_frame *f)
{
	buf_consume(&c->in, f->size);
}

int
lf_drain_input(struct ferry_client *c)
{
	struct lf_frame f;
	int r;

	while ((r = lf_next_frame(c, &f)) > 0) {
		/* No blocking request is waiting: anything but a message is
		 * a reply to an asynchronous request, or a late reply to one
		 * that timed out. */
		if (f.type == FERRY_C_RECEIVE) {
			r = lf_rx_frame(c, &f);
			if (r < 0)
				return lf_fail(c, r);
		} else {
			lf_async_frame(c, &f);
		}
		lf_consume(c, &f);
	}
	return r;
}

static int
lf_read(struct ferry_client *c)
{
	ssize_t n = bufio_read(&c->in, c->fd, LF_READ_CHUNK);

	if (n == -EAGAIN || n > 0)
		return 0;
	if (n == -ENOMEM)
		return -ENOMEM;
	return lf_fail(c, n == 0 ? -ECONNRESET : (int)n);
}

static int
lf_write(struct ferry_client *c)
{
	/* A daemon that went away is an error code for the application,
	 * not a SIGPIPE. */
	int r = bufio_send(&c->out, c->fd);

	if (r < 0)
		return lf_fail(c, r == -EPIPE ? -ECONNRESET : r);
	return 0;
}

int
lf_write_nowait(struct ferry_client *c)
{
	if (c->dead)
		return c->dead;
	return buf_size(&c->out) > 0 ? lf_write(c) : 0;
}

static int
lf_poll_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - (int64_t)(time_mono_us() / 1000);
	if (left <= 0)
		return 0;
	return left > 60000 ? 60000 : (int)left;
}

int
lf_wait(struct ferry_client *c, bool want_write, int64_t deadline)
{
	struct pollfd pfd = { c->fd, POLLIN, 0 };
	int n, ms;

	if (c->dead)
		return c->dead;
	if (want_write)
		pfd.events |= POLLOUT;
	for (;;) {
		ms = lf_poll_ms(deadline);
		n = poll(&pfd, 1, ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			break;
		if (ms == 0)
			return -ETIMEDOUT;
	}
	if (pfd.revents & (POLLIN | POLLHUP | POLLERR))
		return lf_read(c);
	return 0;
}

int
lf_write_until(struct ferry_client *c, size_t keep, int64_t deadline)
{
	int r;

	if (c->dead)
		return c->dead;
	for (;;) {
		r = lf_write(c);
		if (r < 0 || buf_size(&c->out) <= keep)
			return r;
		/* While we wait to write, the daemon may be waiting for us
		 * to read: take its messages off the socket. */
		r = lf_wait(c, true, deadline);
		if (r == 0)
			r = lf_drain_input(c);
		if (r < 0)
			return r;
	}
}

int
lf_write_fd(struct ferry_client *c, const void *frame, size_t size, int fd,
    int64_t deadline)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { (void *)frame, size };
	struct msghdr mh;
	struct cmsghdr *h;
	ssize_t n;
	int r = lf_write_until(c, 0, deadline);

	memset(&mh, 0, sizeof(mh));
	memset(&cm, 0, sizeof(cm));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.b;
	mh.msg_controllen = sizeof(cm.b);
	h = CMSG_FIRSTHDR(&mh);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	/* The descriptor goes with the frame's first byte: the daemon takes
	 * it for this frame. */
	while (r == 0) {
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
		if (n >= 0) {
			if ((size_t)n < size &&
			    buf_append(&c->out, (const uint8_t *)frame + n,
			        size - (size_t)n) < 0)
				return lf_fail(c, -ENOMEM);
			return lf_write_until(c, 0, deadline);
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return lf_fail(c,
			    errno == EPIPE ? -ECONNRESET : -errno);
		r = lf_wait(c, true, deadline);
		if (r == 0)
			r = lf_drain_input(c);
	}
	return r;
}
