/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Peer discovery by gossip (seed 004, section II-C: a peer advertises
 * others only after validating them). Connected peers receive our HELOs
 * and the HELOs of addresses we validated ourselves, when their link
 * comes up and every GOSSIP_INTERVAL; HELOs they send us are validated
 * before use, within the per-advertiser PING budget. Under the manual
 * link policy only our own HELOs go out, and of those that come in only
 * the sender's own are taken. Core layer.
 */
#ifndef FERRY_CORE_GOSSIP_H
#define FERRY_CORE_GOSSIP_H

#include <stddef.h>
#include <stdint.h>

struct peer;

#define GOSSIP_MAX_HELOS 64 /* HELOs of others sent to a peer at once */

/* p's link came up: tell it what we know. */
void gossip_link_up(struct peer *p);
/* Periodic gossip to p, from the maintenance tick. */
void gossip_peer_tick(struct peer *p, uint64_t now_us);
/* A HELO arrived from p inside an encrypted frame. */
void gossip_on_helo(struct peer *p, const uint8_t *msg, size_t len);

#endif /* FERRY_CORE_GOSSIP_H */
