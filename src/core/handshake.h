/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * When to send KX messages and what to do with those that arrive, core
 * layer (the rules themselves are in link.h). Handshake work is bounded:
 * a KX is checked for freshness before its signature, and signatures are
 * verified at most KX_RATE per second in total and KX_RATE_PER_SOURCE per
 * second per network source, so a flood cannot starve the peers we know.
 */
#ifndef FERRY_CORE_HANDSHAKE_H
#define FERRY_CORE_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

struct core;
struct ferry_message_pack;
struct peer;
struct transport;

/* We want a link to p: starts the key exchange if a path exists. */
void handshake_want(struct peer *p);
/* Sends our KX to p over its best path. 0 or negative errno. */
int handshake_send(struct peer *p);
/* A KX message arrived over t. */
void handshake_on_kx(struct core *core, struct transport *t,
    const struct ferry_message_pack *mp, const uint8_t *msg, size_t len);
/* Retransmissions and rekeying, from the maintenance tick. */
void handshake_peer_tick(struct peer *p, uint64_t now_us);

#endif /* FERRY_CORE_HANDSHAKE_H */
