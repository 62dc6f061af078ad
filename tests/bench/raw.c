/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Raw loopback baselines (see raw.h): UDP and TCP ping-pong, a UDP
 * datagram blast and a TCP stream between this process and a child.
 */
#include "raw.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define RAW_READ_CHUNK (256u * 1024)

/* State the two processes share during a flow. */
struct raw_shared {
	volatile uint64_t send_end_ns; /* set by A when it is done */
	volatile uint64_t received;
	volatile uint64_t bytes;
	volatile uint64_t last_ns;
	volatile int ready;
};

static void
raw_loopback(struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static void
raw_timeout(int fd, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Two UDP sockets on 127.0.0.1, each connected to the other. */
static int
raw_udp_pair(int fd[2])
{
	struct sockaddr_in sin[2];
	socklen_t len = sizeof(sin[0]);

	fd[0] = fd[1] = -1;
	for (int i = 0; i < 2; i++) {
		raw_loopback(&sin[i]);
		fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd[i] < 0 ||
		    bind(fd[i], (struct sockaddr *)&sin[i], sizeof(sin[i])) <
		        0 ||
		    getsockname(fd[i], (struct sockaddr *)&sin[i], &len) < 0)
			goto fail;
	}
	if (connect(fd[0], (struct sockaddr *)&sin[1], sizeof(sin[1])) < 0 ||
	    connect(fd[1], (struct sockaddr *)&sin[0], sizeof(sin[0])) < 0)
		goto fail;
	return 0;
fail:
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			(void)close(fd[i]);
	return -errno;
}

/* A connected TCP pair on 127.0.0.1: fd[0] dialled, fd[1] accepted. */
static int
raw_tcp_pair(int fd[2], bool nodelay)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int l, one = 1, r = 0;

	raw_loopback(&sin);
	fd[0] = fd[1] = -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -errno;
	if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&sin, &len) < 0 ||
	    (fd[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd[0], (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (fd[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0)
		r = -errno;
	(void)close(l);
	if (r < 0) {
		if (fd[0] >= 0)
			(void)close(fd[0]);
		return r;
	}
	for (int i = 0; nodelay && i < 2; i++)
		(void)setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
	return 0;
}

static int
raw_read_full(int fd, uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = read(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		off += (size_t)n;
	}
	return 0;
}

static int
raw_write_full(int fd, const uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/* One message of size bytes over a UDP socket or a stream. */
static int
raw_msg_send(enum raw_proto proto, int fd, const uint8_t *buf, size_t size)
{
	if (proto == RAW_TCP)
		return raw_write_full(fd, buf, size);
	return send(fd, buf, size, 0) < 0 ? -errno : 0;
}

static int
raw_msg_recv(enum raw_proto proto, int fd, uint8_t *buf, size_t size)
{
	ssize_t n;

	if (proto == RAW_TCP)
		return raw_read_full(fd, buf, size);
	n = recv(fd, buf, size, 0);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	return 0;
}

/* One message out and its echo back (or, for B, the other way round). */
static int
raw_exchange(enum raw_proto proto, int fd, uint8_t *buf, size_t size,
    bool first_send)
{
	int r = first_send ? raw_msg_send(proto, fd, buf, size) : 0;

	if (r == 0)
		r = raw_msg_recv(proto, fd, buf, size);
	if (r == 0 && !first_send)
		r = raw_msg_send(proto, fd, buf, size);
	return r;
}

/* In a fresh child: dies with the parent, runs on side B's CPU. */
static void
raw_child_init(enum bench_place place)
{
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	(void)bench_pin(0, bench_side_cpu(place, 1));
}

int
raw_pingpong(enum raw_proto proto, size_t size, unsigned count, unsigned warmup,
    enum bench_place place, uint64_t *ret_ns)
{
	uint8_t *buf = calloc(1, size > 0 ? size : 1);
	uint64_t t0 = 0;
	int fd[2], r;
	pid_t pid;

	if (buf == NULL)
		return -ENOMEM;
	r = proto == RAW_UDP ? raw_udp_pair(fd) : raw_tcp_pair(fd, true);
	if (r < 0)
		goto out;
	raw_timeout(fd[0], 2000);
	raw_timeout(fd[1], 5000);
	(void)fflush(NULL);
	pid = fork();
	if (pid == 0) {
		raw_child_init(place);
		(void)close(fd[0]);
		for (unsigned i = 0; i < count + warmup; i++)
			if (raw_exchange(proto, fd[1], buf, size, false) < 0)
				_exit(1);
		_exit(0);
	}
	(void)close(fd[1]);
	if (pid < 0) {
		r = -errno;
		(void)close(fd[0]);
		goto out;
	}
	for (unsigned i = 0; r == 0 && i < count + warmup; i++) {
		if (i == warmup)
			t0 = bench_now_ns();
		r = raw_exchange(proto, fd[0], buf, size, true);
	}
	*ret_ns = bench_now_ns() - t0;
	(void)close(fd[0]);
	if (r < 0)
		(void)kill(pid, SIGKILL);
	if (bench_wait_child(pid) < 0 && r == 0)
		r = -ECHILD;
out:
	free(buf);
	return r;
}

/* A relay of the chain: n times, a message from in_fd goes out on
 * out_fd and the answer from out_fd back on in_fd (or, with in_fd < 0,
 * the echo: back out on out_fd). */
static _Noreturn void
raw_relay(enum raw_proto in_proto, int in_fd, enum raw_proto out_proto,
    int out_fd, size_t size, unsigned n, enum bench_place place, int side)
{
	uint8_t *buf = calloc(1, size > 0 ? size : 1);
	int r = buf != NULL ? 0 : -ENOMEM;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	(void)bench_pin(0, bench_side_cpu(place, side));
	for (unsigned i = 0; r == 0 && i < n; i++) {
		if (in_fd < 0) {
			r = raw_msg_recv(out_proto, out_fd, buf, size);
			if (r == 0)
				r = raw_msg_send(out_proto, out_fd, buf, size);
			continue;
		}
		r = raw_msg_recv(in_proto, in_fd, buf, size);
		if (r == 0)
			r = raw_msg_send(out_proto, out_fd, buf, size);
		if (r == 0)
			r = raw_msg_recv(out_proto, out_fd, buf, size);
		if (r == 0)
			r = raw_msg_send(in_proto, in_fd, buf, size);
	}
	_exit(r == 0 ? 0 : 1);
}

static void
raw_close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			(void)close(fds[i]);
}

int
raw_chain(enum raw_proto proto, size_t size, unsigned count, unsigned warmup,
    enum bench_place place, uint64_t *ret_ns)
{
	/* ua: A1-A2, mid: A2-B2, ub: B2-B1 */
	int fds[6] = { -1, -1, -1, -1, -1, -1 };
	int *ua = fds, *mid = fds + 2, *ub = fds + 4;
	uint8_t *buf = calloc(1, size > 0 ? size : 1);
	unsigned n = count + warmup;
	pid_t pid[3] = { -1, -1, -1 };
	uint64_t t0 = 0;
	int r = buf != NULL ? 0 : -ENOMEM;

	if (r == 0 &&
	    (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ua) < 0 ||
	        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ub) < 0))
		r = -errno;
	if (r == 0)
		r = proto == RAW_UDP ? raw_udp_pair(mid)
		                     : raw_tcp_pair(mid, true);
	for (int i = 0; r == 0 && i < 6; i++)
		raw_timeout(fds[i], 5000);
	(void)fflush(NULL);
	for (int i = 0; r == 0 && i < 3; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			r = -errno;
		if (pid[i] == 0 && i == 0) /* B1: echo */
			raw_relay(RAW_TCP, -1, RAW_TCP, ub[1], size, n, place,
			    1);
		if (pid[i] == 0 && i == 1) /* B2 */
			raw_relay(proto, mid[1], RAW_TCP, ub[0], size, n, place,
			    1);
		if (pid[i] == 0 && i == 2) /* A2 */
			raw_relay(RAW_TCP, ua[1], proto, mid[0], size, n, place,
			    0);
	}
	for (unsigned i = 0; r == 0 && i < n; i++) {
		if (i == warmup)
			t0 = bench_now_ns();
		r = raw_write_full(ua[0], buf, size);
		if (r == 0)
			r = raw_read_full(ua[0], buf, size);
	}
	*ret_ns = bench_now_ns() - t0;
	raw_close_all(fds, 6);
	for (int i = 0; i < 3; i++) {
		if (pid[i] <= 0)
			continue;
		if (r < 0)
			(void)kill(pid[i], SIGKILL);
		if (bench_wait_child(pid[i]) < 0 && r == 0)
			r = -ECHILD;
	}
	free(buf);
	return r;
}

/* B's side of a UDP blast. */
static _Noreturn void
raw_blast_receiver(int fd, size_t size, uint64_t count, unsigned drain_ms,
    struct raw_shared *sh, uint64_t *arrival)
{
	uint8_t *buf = malloc(size + 1);

	raw_timeout(fd, 20);
	sh->ready = 1;
	while (buf != NULL && sh->received < count) {
		ssize_t n = recv(fd, buf, size + 1, 0);
		uint64_t now = bench_now_ns();

		if (n < 0) {
			if (sh->send_end_ns != 0 &&
			    now > sh->send_end_ns + drain_ms * 1000000ull)
				break;
			continue;
		}
		if (arrival != NULL)
			arrival[sh->received] = now;
		sh->bytes += (uint64_t)n;
		sh->last_ns = now;
		sh->received++;
	}
	_exit(buf != NULL ? 0 : 1);
}

/* Socket buffers of n bytes, past the system maximum if allowed. */
static void
raw_sockbuf(int fd, size_t n)
{
	int v = n > INT_MAX / 2 ? INT_MAX / 2 : (int)n;

	if (n == 0)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

int
raw_udp_blast(size_t size, uint64_t count, unsigned drain_ms, size_t sockbuf,
    enum bench_place place, uint64_t *arrival, struct raw_flow *ret)
{
	struct raw_shared *sh = bench_shared(sizeof(*sh));
	uint8_t *buf = calloc(1, size > 0 ? size : 1);
	int fd[2], r = -ENOMEM;
	pid_t pid;

	memset(ret, 0, sizeof(*ret));
	if (sh == NULL || buf == NULL)
		goto out;
	r = raw_udp_pair(fd);
	if (r < 0)
		goto out;
	raw_sockbuf(fd[0], sockbuf);
	raw_sockbuf(fd[1], sockbuf);
	(void)fflush(NULL);
	pid = fork();
	if (pid == 0) {
		raw_child_init(place);
		(void)close(fd[0]);
		raw_blast_receiver(fd[1], size, count, drain_ms, sh, arrival);
	}
	(void)close(fd[1]);
	if (pid < 0) {
		r = -errno;
		(void)close(fd[0]);
		goto out;
	}
	while (!sh->ready)
		(void)usleep(1000);
	ret->start_ns = bench_now_ns();
	for (uint64_t i = 0; i < count; i++) {
		memcpy(buf, &i, size < sizeof(i) ? size : sizeof(i));
		/* Loopback drops what the receiver's buffer cannot take;
		 * a refused send (ENOBUFS) is a loss too. */
		if (send(fd[0], buf, size, 0) == (ssize_t)size)
			ret->sent++;
	}
	ret->send_end_ns = sh->send_end_ns = bench_now_ns();
	r = bench_wait_child(pid);
	(void)close(fd[0]);
	ret->received = sh->received;
	ret->bytes = sh->bytes;
	ret->last_ns = sh->last_ns;
	ret->arrival_ns = arrival;
	ret->sent = count;
out:
	free(buf);
	bench_shared_free(sh, sizeof(*sh));
	return r;
}

/* B's side of a TCP stream. */
static _Noreturn void
raw_stream_receiver(int fd, uint64_t total, struct raw_shared *sh)
{
	uint8_t *buf = malloc(RAW_READ_CHUNK);
	uint64_t got = 0;

	sh->ready = 1;
	while (buf != NULL && got < total) {
		ssize_t n = read(fd, buf, RAW_READ_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (uint64_t)n;
	}
	sh->last_ns = bench_now_ns();
	sh->bytes = got;
	_exit(got == total ? 0 : 1);
}

int
raw_tcp_stream(size_t size, uint64_t count, enum bench_place place,
    struct raw_flow *ret)
{
	struct raw_shared *sh = bench_shared(sizeof(*sh));
	uint8_t *buf = calloc(1, size > 0 ? size : 1);
	int fd[2], r = -ENOMEM;
	pid_t pid;

	memset(ret, 0, sizeof(*ret));
	if (sh == NULL || buf == NULL)
		goto out;
	r = raw_tcp_pair(fd, false);
	if (r < 0)
		goto out;
	(void)fflush(NULL);
	pid = fork();
	if (pid == 0) {
		raw_child_init(place);
		(void)close(fd[0]);
		raw_stream_receiver(fd[1], (uint64_t)size * count, sh);
	}
	(void)close(fd[1]);
	if (pid < 0) {
		r = -errno;
		(void)close(fd[0]);
		goto out;
	}
	while (!sh->ready)
		(void)usleep(1000);
	ret->start_ns = bench_now_ns();
	for (uint64_t i = 0; r == 0 && i < count; i++) {
		r = raw_write_full(fd[0], buf, size);
		if (r == 0)
			ret->sent++;
	}
	ret->send_end_ns = bench_now_ns();
	if (bench_wait_child(pid) < 0 && r == 0)
		r = -EIO;
	(void)close(fd[0]);
	ret->bytes = sh->bytes;
	ret->received = sh->bytes / (size > 0 ? size : 1);
	ret->last_ns = sh->last_ns;
out:
	free(buf);
	bench_shared_free(sh, sizeof(*sh));
	return r;
}
