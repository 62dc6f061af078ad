/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Shared by the resource-bound tests (test_bounds_*.c, issue 6 "Resource
 * bounds"): a daemon's resident memory and its peak, the allowance a
 * sanitizer build needs, and sender processes that push messages as fast
 * as the daemon takes them.
 */
#ifndef FERRY_TESTS_BOUNDS_H
#define FERRY_TESTS_BOUNDS_H

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ferry/client.h>

#include "harness.h"
#include "procstat.h"

#define BOUNDS_KIB 1024UL
#define BOUNDS_MIB (1024UL * 1024UL)

static inline unsigned long
bounds_rss_kib(pid_t pid)
{
	return procstat_kib(pid, "VmRSS");
}

/* The largest RSS since the last bounds_reset_peak(). */
static inline unsigned long
bounds_peak_kib(pid_t pid)
{
	return procstat_kib(pid, "VmHWM");
}

/* Makes VmHWM start again from the current RSS (proc(5), clear_refs). */
static inline void
bounds_reset_peak(pid_t pid)
{
	char path[64];
	int fd;

	(void)snprintf(path, sizeof(path), "/proc/%ld/clear_refs", (long)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	(void)!write(fd, "5", 1);
	(void)close(fd);
}

/*
 * A child process sending count messages of size bytes of type `type` to
 * `to` through `from` (count 0: until killed); with burst > 0 it rests
 * 5 ms after each burst messages, else ferry_send blocks it only while
 * the daemon pushes back, so it pushes exactly as hard as it is let.
 */
static inline pid_t
bounds_sender_paced(struct harness_daemon *from, const struct ferry_peer_id *to,
    uint16_t type, size_t size, unsigned long count, unsigned burst)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct ferry_client *c;
		uint8_t *body = calloc(1, size + 1);

		if (body == NULL || harness_daemon_client(from, &c) != 0)
			_exit(1);
		ferry_client_set_timeout(c, -1);
		for (unsigned long i = 0; count == 0 || i < count; i++) {
			if (ferry_send(c, to, type, body, size) != 0)
				_exit(2);
			if (burst > 0 && i % burst == burst - 1 &&
			    ferry_flush(c) == 0)
				harness_sleep_ms(5);
		}
		_exit(ferry_flush(c) == 0 ? 0 : 3);
	}
	return pid;
}

static inline pid_t
bounds_sender(struct harness_daemon *from, const struct ferry_peer_id *to,
    uint16_t type, size_t size, unsigned long count)
{
	return bounds_sender_paced(from, to, type, size, count, 0);
}

/* Kills and reaps a bounds_sender child. */
static inline void
bounds_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	(void)kill(pid, SIGKILL);
	(void)waitpid(pid, NULL, 0);
}

#endif /* FERRY_TESTS_BOUNDS_H */
