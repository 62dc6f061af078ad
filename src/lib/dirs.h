/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Default directories, layer 0: one rule for ferryd and its clients, so
 * both find the same socket. systemd's STATE_DIRECTORY and
 * RUNTIME_DIRECTORY win; then root gets /var/lib/ferry and /run/ferry, and
 * other users $XDG_STATE_HOME/ferry (~/.local/state/ferry) and
 * $XDG_RUNTIME_DIR/ferry (/tmp/ferry-UID).
 */
#ifndef FERRY_LIB_DIRS_H
#define FERRY_LIB_DIRS_H

#include <stddef.h>

#define DIRS_SOCKET_NAME "ferryd.sock"

/* Each writes a path into buf: 0, -ENAMETOOLONG or -ENOENT (no $HOME). */
int dirs_state(char *buf, size_t size);
int dirs_runtime(char *buf, size_t size);
/* $FERRY_SOCKET, else <runtime>/ferryd.sock. */
int dirs_socket(char *buf, size_t size);

#endif /* FERRY_LIB_DIRS_H */
