/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Other users for integration tests that run as root: code run in a child
 * with another uid, gid and supplementary groups (a client the daemon
 * should judge by its credentials, or procmail delivering as the mail
 * user), a ferryd of the harness started as another user through
 * setpriv(1), and the directory permissions that let those users reach
 * what the harness made (mode 0700 by default).
 *
 * Numeric ids need no entry in /etc/passwd. Functions return 0 or a
 * negative errno and never abort the test.
 */
#ifndef FERRY_TESTS_ASUSER_H
#define FERRY_TESTS_ASUSER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "harness.h"

#define ASUSER_GROUPS_MAX 8
#define ASUSER_FAILED     126 /* the child could not take the identity */

/* An identity to run as. */
struct asuser {
	uid_t uid;
	gid_t gid;
	size_t n_groups; /* supplementary groups, none if 0 */
	gid_t groups[ASUSER_GROUPS_MAX];
	bool private_users; /* asuser_daemon(): in a user namespace that
	                     * maps only root and uid/gid, as systemd's
	                     * PrivateUsers=yes (groups are then ignored) */
};

/* Returns the child's exit status: 0..125. */
typedef int asuser_fn(void *cls);

/* Call first in main(): when the program was started as the helper of
 * asuser_daemon() with private_users, it becomes that daemon and does not
 * return (or exits 127 on failure); otherwise it returns at once. */
void asuser_main(int argc, char **argv);

/* True if the test runs as root; otherwise prints that it skips, or fails
 * the test when FERRY_REQUIRE_ROOT=1 (CI). */
bool asuser_root_or_skip(const char *what);

/* Starts fn(cls) in a child that runs as u (real, effective and saved
 * ids, exactly u's groups). Collect it with asuser_wait(). */
int asuser_spawn(const struct asuser *u, asuser_fn *fn, void *cls,
    pid_t *ret_pid);
/* Waits for a child of asuser_spawn(): its exit status, ASUSER_FAILED if
 * it could not switch, 128+signal if killed, or a negative errno. */
int asuser_wait(pid_t pid);
/* asuser_spawn() and asuser_wait() in one. */
int asuser_run(const struct asuser *u, asuser_fn *fn, void *cls);

/* Lets every user search path (adds o+x and g+x, keeps the rest). */
int asuser_open_dir(const char *path);
/* Lets every user reach d's socket path: the harness's directory and
 * d's own become searchable by all. */
int asuser_open_daemon(struct harness_daemon *d);
/* From its next start on, d runs as u: d's directory is given to u and
 * $FERRYD points (for this process) at a wrapper that starts ferryd
 * through setpriv(1), or through this program in a new user namespace
 * (private_users, see asuser_main()), when the daemon's environment asks
 * for it, so other daemons stay unchanged. */
int asuser_daemon(struct harness_daemon *d, const struct asuser *u);
/* Points $FERRYD back where it was before asuser_daemon(); call it in
 * the test's teardown, as the wrapper goes with the harness. */
void asuser_reset(void);

#endif /* FERRY_TESTS_ASUSER_H */
