/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A paced UDP flood for integration tests: prepared datagrams sent in
 * turn from many sockets (so many source ports) bound to one loopback
 * address, towards a daemon's address, at a set rate, in a thread of its own
 * while the test goes on. Handshake-flood tests build the datagrams with
 * the core's codecs.
 */
#ifndef FERRY_TESTS_FLOOD_H
#define FERRY_TESTS_FLOOD_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct flood;

/* Starts sending the n datagrams of size bytes each at dgrams (copied),
 * over and over, from n_socks sockets bound to ip (e.g. "127.0.0.2") on
 * ports the kernel picks, to `to` (a daemon: &d->addr), rate datagrams
 * per second. 0, -EINVAL or another negative errno. */
int flood_start(const char *ip, unsigned n_socks, const struct sockaddr_in *to,
    const void *dgrams, size_t size, size_t n, unsigned rate,
    struct flood **ret);
/* Datagrams sent so far. */
uint64_t flood_sent(struct flood *f);
/* Stops the thread, closes the sockets, frees f and returns how many
 * datagrams it sent. */
uint64_t flood_stop(struct flood *f);

#endif /* FERRY_TESTS_FLOOD_H */
