/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The service layer: ferryd's local client socket (DESIGN.md, "Layers").
 * Applications and the ferry CLI connect over a UNIX stream socket and
 * speak the framed protocol of <ferry/proto.h>; the service dispatches
 * their requests to the core and relays application messages both ways.
 */
#ifndef FERRY_SERVICE_SERVICE_H
#define FERRY_SERVICE_SERVICE_H

#include "lib/cfg.h"

struct core;
struct dht;
struct event_base;
struct service;
struct stats;
struct xfer;

/* A client asked the daemon to shut down (FERRY_C_SHUTDOWN). */
typedef void service_shutdown_fn(void *cls);

/* The [service] keys with their defaults. */
extern const struct cfg_schema_key service_cfg_keys[];

/* Checks the [service] section; logs each problem. 0 or -EINVAL. */
int service_config_check(struct cfg *cfg);
/*
 * Opens the client socket ([service] SOCKET, default
 * <runtime_dir>/ferryd.sock) with the configured mode and group. Refuses
 * with -EADDRINUSE (logged) when another ferryd serves that socket, and
 * replaces a stale socket file. base, stats, core and dht are borrowed
 * and must outlive the service; dht (and the transfer engine xfer) may
 * be NULL when the daemon runs no DHT, and every DHT and file request is
 * then answered -ENOTCONN. cfg is only
 * read during the call.
 */
int service_new(struct event_base *base, struct cfg *cfg, struct stats *stats,
    struct core *core, struct dht *dht, struct xfer *xfer,
    const char *runtime_dir,
    service_shutdown_fn *on_shutdown, void *cls, struct service **ret);
/* Disconnects all clients, closes and removes the socket. NULL is ok. */
void service_free(struct service *svc);
/* Applies the limits of a new configuration; the socket path, mode and
 * group stay as they were (a change is logged as needing a restart). */
int service_reload(struct service *svc, struct cfg *cfg);

#endif /* FERRY_SERVICE_SERVICE_H */
