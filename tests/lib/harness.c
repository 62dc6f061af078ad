/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The test harness's frame (see harness.h): the temporary directory,
 * free loopback ports and addresses, clocks and the program paths.
 */
#include "harness_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int
harness_new(const char *name, struct harness **ret)
{
	const char *tmp = getenv("TMPDIR");
	struct harness *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return -ENOMEM;
	if (tmp == NULL || *tmp != '/')
		tmp = "/tmp";
	/* Short: socket paths must fit in sun_path. */
	if (snprintf(h->dir, sizeof(h->dir), "%s/ferry-%.16s-XXXXXX", tmp,
	        name) >= (int)sizeof(h->dir)) {
		free(h);
		return -ENAMETOOLONG;
	}
	if (mkdtemp(h->dir) == NULL) {
		int r = -errno;

		free(h);
		return r;
	}
	*ret = h;
	return 0;
}

static int
harness_rm_one(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

void
harness_rmtree(const char *path)
{
	(void)nftw(path, harness_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void
harness_free(struct harness *h)
{
	const char *keep = getenv("FERRY_TEST_KEEP");

	if (h == NULL)
		return;
	for (size_t i = 0; i < h->n_daemons; i++)
		harness_daemon_free(h->daemons[i]);
	if (keep != NULL && *keep != '\0' && strcmp(keep, "0") != 0)
		fprintf(stderr, "harness: keeping %s\n", h->dir);
	else
		harness_rmtree(h->dir);
	free(h);
}

const char *
harness_dir(const struct harness *h)
{
	return h->dir;
}

void
harness_dump_logs(const struct harness *h)
{
	for (size_t i = 0; i < h->n_daemons; i++) {
		char *log = harness_daemon_log(h->daemons[i]);

		fprintf(stderr, "----- %s -----\n%s", h->daemons[i]->log,
		    log != NULL ? log : "(no log)\n");
		free(log);
	}
}

int
harness_reap(pid_t pid, int *ret_status)
{
	int st;
	pid_t r;

	do
		r = waitpid(pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r != pid)
		return 0;
	if (WIFEXITED(st))
		*ret_status = WEXITSTATUS(st);
	else if (WIFSIGNALED(st))
		*ret_status = 128 + WTERMSIG(st);
	else
		*ret_status = 255;
	return 1;
}

int
harness_sin(const char *ip, uint16_t port, struct sockaddr_in *ret)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1)
		return -EINVAL;
	*ret = sin;
	return 0;
}

bool
harness_sin_eq(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_family == b->sin_family && a->sin_port == b->sin_port &&
	    a->sin_addr.s_addr == b->sin_addr.s_addr;
}

/* Binds a socket of type to at with its port (0: any). Returns the fd. */
static int
harness_bind(int type, struct sockaddr_in at, uint16_t port,
    uint16_t *ret_port)
{
	socklen_t len = sizeof(at);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	at.sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)&at, sizeof(at)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&at, &len) < 0) {
		int r = -errno;

		(void)close(fd);
		return r;
	}
	*ret_port = ntohs(at.sin_port);
	return fd;
}

int
harness_free_port_at(const char *ip, uint16_t *ret)
{
	/* One list for every address: ports stay distinct in a test. */
	static uint16_t given[1024];
	static size_t n_given;
	struct sockaddr_in at;
	uint16_t port, same;
	int tfd, ufd;

	if (harness_sin(ip, 0, &at) < 0)
		return -EINVAL;
	for (int attempt = 0; attempt < 100; attempt++) {
		tfd = harness_bind(SOCK_STREAM, at, 0, &port);
		if (tfd < 0)
			return tfd;
		ufd = harness_bind(SOCK_DGRAM, at, port, &same);
		(void)close(tfd);
		if (ufd < 0)
			continue;
		(void)close(ufd);
		for (size_t i = 0; i < n_given; i++)
			if (given[i] == port)
				port = 0;
		if (port == 0)
			continue;
		if (n_given < sizeof(given) / sizeof(given[0]))
			given[n_given++] = port;
		*ret = port;
		return 0;
	}
	return -EADDRINUSE;
}

int
harness_free_port(uint16_t *ret)
{
	return harness_free_port_at("127.0.0.1", ret);
}

uint64_t
harness_now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
harness_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const char *
harness_program(const char *env, const char *rel)
{
	static char buf[2][PATH_MAX];
	const char *v = getenv(env);
	char *slot = buf[strcmp(env, "FERRYD") == 0 ? 0 : 1];

	if (v != NULL && *v != '\0')
		return v;
	(void)snprintf(slot, PATH_MAX, "%s/%s", FERRY_BUILD_DIR, rel);
	return slot;
}

const char *
harness_ferryd_path(void)
{
	return harness_program("FERRYD", "src/daemon/ferryd");
}

const char *
harness_cli_path(void)
{
	return harness_program("FERRY_CLI", "src/cli/ferry");
}
