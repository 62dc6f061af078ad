/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the tests read of another process from /proc/PID/status: its
 * resident memory (VmRSS) and the peak of it (VmHWM), for the memory
 * bounds the integration tests, the adversarial tests and the soak check.
 */
#ifndef FERRY_TESTS_PROCSTAT_H
#define FERRY_TESTS_PROCSTAT_H

#include <sys/types.h>

/* The "field:" line of /proc/pid/status in KiB (VmRSS, VmHWM, ...), or 0
 * if the process or the field is not there. */
unsigned long procstat_kib(pid_t pid, const char *field);

#endif
