/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Readiness notification to systemd (Type=notify), daemon layer. */
#ifndef FERRY_DAEMON_SDNOTIFY_H
#define FERRY_DAEMON_SDNOTIFY_H

#include <stdarg.h>

/* Sends state ("READY=1", "STOPPING=1", "STATUS=...") if $NOTIFY_SOCKET
 * is set. 0, or a negative errno after logging a warning. */
int sdnotify(const char *state);
int sdnotifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* FERRY_DAEMON_SDNOTIFY_H */
