/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A ferryd that sees a machine which has just booted (see harness.h): it
 * runs in a time namespace of its own whose monotonic and boot clocks
 * start near zero, so a test can catch code that takes a monotonic
 * timestamp of 0 for "long ago" (a fresh CI machine or a server starting
 * ferryd at boot is exactly that case).
 */
#include "harness_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080 /* Linux 5.6; glibc 2.36 names it */
#endif

/* Sets one clock's offset so that it reads HARNESS_BOOT_UPTIME_S now. */
static int
harness_boot_offset(int fd, const char *name, clockid_t clock)
{
	struct timespec ts;
	char line[64];
	int n;

	if (clock_gettime(clock, &ts) != 0)
		return -errno;
	if (ts.tv_sec <= HARNESS_BOOT_UPTIME_S)
		return 0;
	n = snprintf(line, sizeof(line), "%s %lld 0\n", name,
	    -(long long)(ts.tv_sec - HARNESS_BOOT_UPTIME_S));
	if (write(fd, line, (size_t)n) != n)
		return -errno;
	return 0;
}

int
harness_boot_enter(void)
{
	int fd, r = 0;

	if (unshare(CLONE_NEWTIME) != 0)
		return -errno;
	/* The offsets apply to the children of this process and, from its
	 * next execve(), to itself; they can be set until then only. */
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = harness_boot_offset(fd, "monotonic", CLOCK_MONOTONIC);
	if (r == 0)
		r = harness_boot_offset(fd, "boottime", CLOCK_BOOTTIME);
	(void)close(fd);
	return r;
}

int
harness_fresh_boot_probe(void)
{
	static int probed = 1; /* 1: not yet */
	int status;
	pid_t pid;

	if (probed == 1) {
		/* Try it in a child: the test's own clock stays as it is. */
		pid = fork();
		if (pid < 0)
			return -errno;
		if (pid == 0)
			_exit(harness_boot_enter() == 0 ? 0 : 1);
		if (waitpid(pid, &status, 0) != pid)
			return -errno;
		probed =
		    WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPERM;
	}
	return probed;
}

int
harness_daemon_fresh_boot(struct harness_daemon *d)
{
	int r = harness_fresh_boot_probe();

	if (r == 0)
		d->fresh_boot = true;
	return r;
}
