/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Helpers shared by the integration tests that build small networks of
 * real ferryd processes: start them with a bootstrap HELO, wait for links,
 * exchange messages, read counters. Every helper fails the Check test
 * (after dumping the daemons' logs) rather than return an error.
 */
#ifndef FERRY_TESTS_MESH_H
#define FERRY_TESTS_MESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/client.h>

#include "harness.h"

#define MESH_APP_TYPE 0x4242 /* the message type tests exchange */

/* n daemons with the given transports; the first starts alone, the
 * others get its HELO as [core] BOOTSTRAP (and extra config text, may be
 * NULL). */
void mesh_start(struct harness *h, struct harness_daemon **d, size_t n,
    const char *transports, const char *extra);
/* The daemon's "ferry hello" URI (free it). */
char *mesh_hello(struct harness_daemon *d);
/* Waits until d has at least n connected peers. */
void mesh_wait_peers(struct harness *h, struct harness_daemon *d, size_t n,
    int timeout_ms);
/* Connected peers of d right now. */
size_t mesh_peer_count(struct harness_daemon *d);
/* The transport d uses for peer, or "" if not connected. */
const char *mesh_peer_transport(struct harness_daemon *d,
    const struct ferry_peer_id *peer, char *buf, size_t size);
/* A statistics counter of d (0 if absent). */
uint64_t mesh_stat(struct harness_daemon *d, const char *name);
/* Waits until counter name of d reaches at least value. */
bool mesh_wait_stat(struct harness_daemon *d, const char *name,
    uint64_t value, int timeout_ms);
/* A client of d registered for MESH_APP_TYPE. */
struct ferry_client *mesh_listener(struct harness_daemon *d);
/* Sends from daemon from to daemon to; fails the test unless queued. */
void mesh_send(struct harness_daemon *from, struct harness_daemon *to,
    const void *data, size_t len);
/* Hands a message to from's daemon without asking what became of it. */
void mesh_send_lossy(struct harness_daemon *from, struct harness_daemon *to,
    const void *data, size_t len);
/* Receives one MESH_APP_TYPE message within timeout_ms and checks that
 * it came from `from` with exactly data. */
void mesh_expect(struct harness *h, struct ferry_client *c,
    struct harness_daemon *from, const void *data, size_t len,
    int timeout_ms);
/* Discards messages arriving at c until none came for quiet_ms. */
void mesh_drain(struct ferry_client *c, int quiet_ms);
/* Rewrites d's configuration and sends it SIGHUP. */
void mesh_reload(struct harness_daemon *d);

#endif /* FERRY_TESTS_MESH_H */
