/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the tests read of another process from /proc/PID/status: its
 * resident memory (VmRSS) and the peak of it (VmHWM), for the memory
 * bounds the integration tests, the adversarial tests and the soak check;
 * its CPU time, for the benchmarks; and what makes those figures mean
 * the same in a sanitizer build.
 */
#ifndef FERRY_TESTS_PROCSTAT_H
#define FERRY_TESTS_PROCSTAT_H

#include <stdbool.h>
#include <sys/types.h>

struct harness_daemon;

/* The "field:" line of /proc/pid/status in KiB (VmRSS, VmHWM, ...), or 0
 * if the process or the field is not there. */
unsigned long procstat_kib(pid_t pid, const char *field);

/* The CPU time pid has used so far, user and system, in seconds (from
 * /proc/pid/stat), or -1 if the process is not there: what a benchmark
 * reports next to its rates, since it holds on a loaded machine. */
double procstat_cpu_s(pid_t pid);

/* True in an AddressSanitizer build (of the tests, and so of ferryd). */
bool procstat_asan(void);

/*
 * What a memory figure may exceed the bytes a cap allows by, in KiB:
 * allocator rounding and the daemon's own working set. Under ASan every
 * byte has shadow and redzones and the allocator keeps more, so the
 * allowance grows.
 */
unsigned long procstat_allow_kib(unsigned long cap_kib,
    unsigned long slack_kib);

/* Before the daemon starts: under ASan, no quarantine, so that freed
 * memory is reused as in production and RSS shows what is live. */
void procstat_daemon_env(struct harness_daemon *d);

#endif
