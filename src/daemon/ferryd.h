/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The daemon as a function, daemon layer: ferryd's main (main.c), and
 * test builds that set a test seam first (tests/tools/ferryd_hostile.c). */
#ifndef FERRY_DAEMON_FERRYD_H
#define FERRY_DAEMON_FERRYD_H

/* Runs ferryd with the command line argc, argv (ferryd(8)): parses it,
 * loads the configuration, runs the subsystems until a signal or a
 * client stops them. Call once per process. The exit status: 0, 1 (a
 * failure, logged) or 2 (a usage error). */
int ferryd_main(int argc, char **argv);

#endif /* FERRY_DAEMON_FERRYD_H */
