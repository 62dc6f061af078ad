/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading /proc/PID/status (see procstat.h). */
#include "procstat.h"

#include <stdio.h>
#include <string.h>

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
