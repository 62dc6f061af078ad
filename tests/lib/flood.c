/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The paced UDP flood of integration tests (see flood.h). */
#include "flood.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/time.h"

#define FLOOD_BATCH     64     /* datagrams per sendmmsg() */
#define FLOOD_NAP_NS    200000 /* between rounds of the pacing loop */
#define FLOOD_SOCKS_MAX 1024

struct flood {
	pthread_t thread;
	atomic_bool stop;         /* set by flood_stop() */
	_Atomic uint64_t sent;    /* datagrams handed to the kernel */
	int fds[FLOOD_SOCKS_MAX]; /* sending sockets */
	unsigned n_fds;
	struct sockaddr_in to; /* the target */
	uint8_t *dgrams;       /* n of size bytes */
	size_t size, n;
	unsigned rate; /* datagrams per second */
};

/* Sends count datagrams from the next socket, starting with datagram
 * *next. Returns how many went. */
static unsigned
flood_batch(struct flood *f, unsigned sock, size_t *next, unsigned count)
{
	struct mmsghdr msgs[FLOOD_BATCH];
	struct iovec iov[FLOOD_BATCH];
	int n;

	memset(msgs, 0, sizeof(msgs));
	for (unsigned i = 0; i < count; i++) {
		iov[i].iov_base = f->dgrams + ((*next + i) % f->n) * f->size;
		iov[i].iov_len = f->size;
		msgs[i].msg_hdr.msg_name = &f->to;
		msgs[i].msg_hdr.msg_namelen = sizeof(f->to);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	n = sendmmsg(f->fds[sock], msgs, count, MSG_DONTWAIT);
	if (n <= 0)
		return 0;
	*next = (*next + (size_t)n) % f->n;
	return (unsigned)n;
}

static void *
flood_run(void *arg)
{
	struct flood *f = arg;
	struct timespec nap = { 0, FLOOD_NAP_NS };
	uint64_t start = time_mono_us(), sent = 0;
	size_t next = 0;
	unsigned sock = 0;

	while (!atomic_load(&f->stop)) {
		uint64_t due =
		    (time_mono_us() - start) * f->rate / USEC_PER_SEC;

		while (sent < due && !atomic_load(&f->stop)) {
			unsigned want = due - sent < FLOOD_BATCH
			    ? (unsigned)(due - sent)
			    : FLOOD_BATCH;
			unsigned got = flood_batch(f, sock, &next, want);

			sock = (sock + 1) % f->n_fds;
			if (got == 0)
				break;
			sent += got;
			atomic_store(&f->sent, sent);
		}
		(void)nanosleep(&nap, NULL);
	}
	return NULL;
}

static void
flood_free(struct flood *f)
{
	for (unsigned i = 0; i < f->n_fds; i++)
		(void)close(f->fds[i]);
	free(f->dgrams);
	free(f);
}

static int
flood_open(struct flood *f, const char *ip, unsigned n_socks)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1)
		return -EINVAL;
	for (unsigned i = 0; i < n_socks; i++) {
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -errno;
		f->fds[f->n_fds++] = fd;
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
			return -errno;
	}
	return 0;
}

int
flood_start(const char *ip, unsigned n_socks, const struct sockaddr_in *to,
    const void *dgrams, size_t size, size_t n, unsigned rate,
    struct flood **ret)
{
	struct flood *f;
	int r;

	if (n_socks == 0 || n_socks > FLOOD_SOCKS_MAX || n == 0 || size == 0 ||
	    rate == 0)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->dgrams = malloc(size * n);
	if (f->dgrams == NULL) {
		free(f);
		return -ENOMEM;
	}
	memcpy(f->dgrams, dgrams, size * n);
	f->size = size;
	f->n = n;
	f->rate = rate;
	f->to = *to;
	atomic_init(&f->stop, false);
	atomic_init(&f->sent, 0);
	r = flood_open(f, ip, n_socks);
	if (r == 0)
		r = -pthread_create(&f->thread, NULL, flood_run, f);
	if (r < 0) {
		flood_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

uint64_t
flood_sent(struct flood *f)
{
	return atomic_load(&f->sent);
}

uint64_t
flood_stop(struct flood *f)
{
	uint64_t sent;

	atomic_store(&f->stop, true);
	(void)pthread_join(f->thread, NULL);
	sent = atomic_load(&f->sent);
	flood_free(f);
	return sent;
}
