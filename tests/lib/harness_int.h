/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The harness's own state, shared by the .c files of tests/lib only. */
#ifndef FERRY_TESTS_HARNESS_INT_H
#define FERRY_TESTS_HARNESS_INT_H

#include "harness.h"

struct harness {
	char dir[PATH_MAX]; /* temporary directory */
	struct harness_daemon *daemons[HARNESS_MAX_DAEMONS]; /* owned */
	size_t n_daemons;
};

/* Frees a daemon, stopping it first. */
void harness_daemon_free(struct harness_daemon *d);
/* In a child about to exec a daemon: a new time namespace whose clocks
 * will read HARNESS_BOOT_UPTIME_S from the exec. 0 or negative errno. */
int harness_boot_enter(void);
/* Removes a directory tree; errors are ignored. */
void harness_rmtree(const char *path);
/* Reaps pid without blocking: 1 and *ret_status if it exited, else 0. */
int harness_reap(pid_t pid, int *ret_status);

#endif /* FERRY_TESTS_HARNESS_INT_H */
