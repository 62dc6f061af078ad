/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Paths: the transport sessions a peer's traffic may use, and the choice
 * among them (seed 004: "the core will choose the cheapest available
 * transport"). An outbound path runs over a validated address; an inbound
 * one over a session the peer opened and proved itself on (a good KX or
 * frame arrived over it). Core layer.
 */
#ifndef FERRY_CORE_PATH_H
#define FERRY_CORE_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addr;
struct core;
struct ferry_tsession;
struct path;
struct peer;
struct transport;

/* Adds a path over ts, taking over one reference on it (released on
 * failure). An existing path over ts is returned instead (and the extra
 * reference dropped). NULL on OOM. */
struct path *path_add(struct peer *p, struct transport *t,
    struct ferry_tsession *ts, struct addr *addr);
/* Removes a path. release: drop our session reference (false when the
 * transport reported the session gone). Re-chooses the peer's best. */
void path_free(struct path *pa, bool release);
/* The path over a session, or NULL. */
struct path *path_by_ts(const struct core *core,
    const struct ferry_tsession *ts);
/* Picks the cheapest path that has not failed (failed ones only if
 * nothing else is left) into p->best. */
void path_choose(struct peer *p);
/* Frames over pa go unanswered: prefer others from now on. */
void path_fail(struct path *pa);
/* True if frames over pa need ACKs (the transport may lose them). */
bool path_unreliable(const struct path *pa);
/* Largest unit pa's transport takes. */
size_t path_mtu(const struct path *pa);
/*
 * Sends a unit over pa. On -EAGAIN the unit is kept and resent when the
 * transport says there is room (path_on_ready); the path is then
 * blocked. Returns 0 if sent or kept, else the transport's error.
 */
int path_send(struct path *pa, const uint8_t *unit, size_t len, bool enc);
/* The transport has room again on pa's session. */
void path_on_ready(struct path *pa);
/* Stops or resumes reading from pa's session, if its transport can. */
void path_recv_pause(struct path *pa, bool pause);
/* Formats the path's remote address for humans. */
void path_address_string(const struct path *pa, char *buf, size_t size);

#endif /* FERRY_CORE_PATH_H */
