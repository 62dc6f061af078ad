/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading /proc/PID/status (see procstat.h). */
#include "procstat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#if defined(__SANITIZE_ADDRESS__)
#define PROCSTAT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PROCSTAT_ASAN 1
#endif
#endif
#ifndef PROCSTAT_ASAN
#define PROCSTAT_ASAN 0
#endif

unsigned long
procstat_kib(pid_t pid, const char *field)
{
	size_t flen = strlen(field);
	char path[64], line[256];
	unsigned long kib = 0;
	FILE *f;

	(void)snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, flen) == 0 && line[flen] == ':' &&
		    sscanf(line + flen + 1, "%lu", &kib) == 1)
			break;
	(void)fclose(f);
	return kib;
}

double
procstat_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long utime, stime;
	long tick = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	(void)fclose(f);
	buf[n] = '\0';
	/* The command name in parentheses may hold spaces: fields 14 and
	 * 15 (utime, stime) count from the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL || tick <= 0 ||
	    sscanf(p + 1,
	        " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
	        &utime, &stime) != 2)
		return -1;
	return (double)(utime + stime) / (double)tick;
}

bool
procstat_asan(void)
{
	return PROCSTAT_ASAN;
}

unsigned long
procstat_allow_kib(unsigned long cap_kib, unsigned long slack_kib)
{
	if (PROCSTAT_ASAN)
		return cap_kib * 2 + slack_kib * 3;
	return cap_kib + slack_kib;
}

void
procstat_daemon_env(struct harness_daemon *d)
{
	const char *old = getenv("ASAN_OPTIONS");
	char opts[1024];

	if (!PROCSTAT_ASAN)
		return;
	(void)snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=0",
	    old != NULL ? old : "", old != NULL && *old != '\0' ? ":" : "");
	(void)harness_daemon_setenv(d, "ASAN_OPTIONS", opts);
}
