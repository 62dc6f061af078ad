/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Running a program under test (see harness.h): its input fed from a
 * string, its standard output and error captured, a time limit.
 */
#include "harness_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define HARNESS_CLI_TIMEOUT_MS 30000
#define HARNESS_CLI_ARGS_MAX   32

struct harness_capture {
	char *data; /* NUL-terminated */
	size_t len, cap;
};

static int
harness_capture_read(int fd, struct harness_capture *c)
{
	ssize_t n;

	if (c->cap - c->len < 4097) {
		size_t cap = c->cap ? c->cap * 2 : 8192;
		char *p = realloc(c->data, cap);

		if (p == NULL)
			return -ENOMEM;
		c->data = p;
		c->cap = cap;
	}
	n = read(fd, c->data + c->len, 4096);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	c->len += (size_t)n;
	c->data[c->len] = '\0';
	return n > 0;
}

static _Noreturn void
harness_run_child(char *const argv[], int in, int out, int err)
{
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(err, STDERR_FILENO) < 0)
		_exit(126);
	execv(argv[0], argv);
	fprintf(stderr, "harness: cannot run %s: %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

/* Feeds input and collects output until both pipes close. */
static int
harness_run_io(int in, int out, int err, const char *input, uint64_t end,
    struct harness_capture cap[2])
{
	size_t left = input != NULL ? strlen(input) : 0;
	struct pollfd pfd[3] = { { out, POLLIN, 0 }, { err, POLLIN, 0 },
		{ left > 0 ? in : -1, POLLOUT, 0 } };
	int open_fds = 2, r = 0;

	if (left == 0) {
		(void)close(in);
		in = -1;
	}
	while (open_fds > 0 && r == 0) {
		int64_t ms = (int64_t)(end - harness_now_ms());

		if (ms <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (poll(pfd, 3, (int)ms) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		for (int i = 0; i < 2 && r == 0; i++) {
			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			r = harness_capture_read(pfd[i].fd, &cap[i]);
			if (r == 0) {
				pfd[i].fd = -1;
				open_fds--;
			}
			r = r < 0 ? r : 0;
		}
		if (in >= 0 && pfd[2].revents != 0) {
			ssize_t n = write(in, input, left);

			if (n > 0) {
				input += n;
				left -= (size_t)n;
			}
			if (n < 0 || left == 0) {
				(void)close(in);
				in = pfd[2].fd = -1;
			}
		}
	}
	if (in >= 0)
		(void)close(in);
	return r;
}

static void
harness_pipes_close(int p[3][2])
{
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++)
			if (p[i][j] >= 0)
				(void)close(p[i][j]);
}

static int
harness_run_wait(pid_t pid, uint64_t end, int *ret_status)
{
	while (!harness_reap(pid, ret_status)) {
		if (harness_now_ms() >= end) {
			(void)kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			return -ETIMEDOUT;
		}
		harness_sleep_ms(2);
	}
	return 0;
}

int
harness_run(char *const argv[], const char *stdin_data, int timeout_ms,
    struct harness_output *ret)
{
	struct harness_capture cap[2] = { { NULL, 0, 0 }, { NULL, 0, 0 } };
	int p[3][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 } }, status = 0, r;
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;
	pid_t pid;

	for (int i = 0; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0) {
			r = -errno;
			harness_pipes_close(p);
			return r;
		}
	(void)fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		harness_pipes_close(p);
		return r;
	}
	if (pid == 0)
		harness_run_child(argv, p[0][0], p[1][1], p[2][1]);
	(void)close(p[0][0]);
	(void)close(p[1][1]);
	(void)close(p[2][1]);
	/* A child that stops reading must not kill us with SIGPIPE. */
	(void)signal(SIGPIPE, SIG_IGN);
	r = harness_run_io(p[0][1], p[1][0], p[2][0], stdin_data, end, cap);
	(void)close(p[1][0]);
	(void)close(p[2][0]);
	if (r == 0)
		r = harness_run_wait(pid, end, &status);
	else
		(void)harness_run_wait(pid, 0, &status);
	for (int i = 0; i < 2 && r == 0; i++) {
		if (cap[i].data == NULL)
			cap[i].data = calloc(1, 1);
		if (cap[i].data == NULL)
			r = -ENOMEM;
	}
	if (r < 0) {
		free(cap[0].data);
		free(cap[1].data);
		return r;
	}
	ret->status = status;
	ret->out = cap[0].data;
	ret->out_len = cap[0].len;
	ret->err = cap[1].data;
	ret->err_len = cap[1].len;
	return 0;
}

int
harness_run_cli(const struct harness_daemon *d, struct harness_output *ret, ...)
{
	char *argv[HARNESS_CLI_ARGS_MAX + 4];
	size_t n = 0;
	const char *arg;
	va_list ap;

	argv[n++] = (char *)harness_cli_path();
	if (d != NULL) {
		argv[n++] = (char *)"--socket";
		argv[n++] = (char *)d->socket;
	}
	va_start(ap, ret);
	while ((arg = va_arg(ap, const char *)) != NULL) {
		if (n == HARNESS_CLI_ARGS_MAX + 3) {
			va_end(ap);
			return -E2BIG;
		}
		argv[n++] = (char *)arg;
	}
	va_end(ap);
	argv[n] = NULL;
	return harness_run(argv, NULL, HARNESS_CLI_TIMEOUT_MS, ret);
}

void
harness_output_free(struct harness_output *o)
{
	if (o == NULL)
		return;
	free(o->out);
	free(o->err);
	o->out = o->err = NULL;
}
