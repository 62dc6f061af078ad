/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Address validation (seed 004, sections II-C and III-C; DESIGN.md): an
 * address from a HELO is used, and gossiped, only after a PING with a
 * random challenge sent to it was answered by a PONG signed by the
 * advertised peer, for that challenge and that address. At most one PING
 * per address per PING_INTERVAL whoever advertises it, at most
 * PINGS_PER_PEER per interval for addresses one peer advertised, and a
 * PONG is never larger than the PING that asked for it. Core layer.
 */
#ifndef FERRY_CORE_VALIDATE_H
#define FERRY_CORE_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addr;
struct core;
struct ferry_message_pack;
struct peer;
struct transport;

/*
 * Takes a HELO message from the network, the config or the CLI. local:
 * from our own configuration or user (no per-advertiser limit). Else
 * advertiser is the peer that passed it on over a link, NULL when the
 * HELO arrived outside one, from the network source src (the limits of
 * both the HELO's peer and src apply). Checks signature, expiry and the
 * transport's opinion of the address, records the address and starts
 * validating it. 0 if accepted or already known, else a negative errno
 * (counted; the HELO is unused).
 */
int validate_learn(struct core *core, const uint8_t *msg, size_t len,
    struct peer *advertiser, bool local, const void *src, size_t src_len);
/* Adds a HELO from the peer book as already validated until
 * valid_until_s, and schedules a fresh check. 0 or negative errno. */
int validate_restore(struct core *core, const uint8_t *msg, size_t len,
    uint64_t valid_until_s);
/* Answers a PING that arrived in unit (whose HELOs, before the PING, say
 * where the pinger can be reached if the arrival session cannot reply). */
void validate_on_ping(struct core *core, struct transport *t,
    const struct ferry_message_pack *mp, const uint8_t *msg, size_t len);
/* Checks a PONG against the PING it answers. */
void validate_on_pong(struct core *core, const uint8_t *msg, size_t len);
/* p is to be linked (core_link): opens a path over each validated
 * address that has none and pings the addresses waiting for a retry
 * (within the per-address limit). */
void validate_peer_wanted(struct peer *p);
/* Timeouts, retries, expiry and revalidation of p's addresses. */
void validate_peer_tick(struct peer *p, uint64_t now_us);
/* Unlinks and frees an address with its session and path. */
void validate_addr_free(struct addr *a);

#endif /* FERRY_CORE_VALIDATE_H */
