/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A byte buffer's traffic with a non-blocking stream socket, layer 0: one
 * read into the buffer's tail, and sends from its front until the socket
 * is full. For the daemon's client connections (service/conn.c) and
 * libferry's end of them.
 */
#ifndef FERRY_LIB_BUFIO_H
#define FERRY_LIB_BUFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/buf.h"

/* Reads once from fd into the tail of b, at most max bytes. The bytes
 * read (> 0), 0 at end of file, or a negative errno: -EAGAIN when nothing
 * waits (or the read was interrupted), -ENOMEM (b could not grow). */
ssize_t bufio_read(struct buf *b, int fd, size_t max);
/* bufio_read() that also takes the descriptors sent with the bytes
 * (SCM_RIGHTS, close-on-exec), at most max_fds of them, into fds and
 * *ret_n_fds; the caller owns them. *ret_truncated is true when more came
 * than fit (those the kernel closed). */
ssize_t bufio_read_fds(struct buf *b, int fd, size_t max, int *fds,
    size_t max_fds, size_t *ret_n_fds, bool *ret_truncated);
/* Sends the front of b to fd until b is empty or the socket takes no
 * more, and consumes what it took: the caller sees how much from
 * buf_size(b), also after a failure. Never raises SIGPIPE. 0, or a
 * negative errno: the connection failed (-EPIPE: the other side left). */
int bufio_send(struct buf *b, int fd);

#endif /* FERRY_LIB_BUFIO_H */
