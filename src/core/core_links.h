/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Link policy, core layer: what the layers above see of who chooses the
 * peers to link to ([core] LINK_POLICY; DESIGN.md: "The DHT, not the
 * core, chooses which peers stay linked"). Implemented in core_links.c;
 * core.h includes it.
 *
 * With LINK_POLICY = core the core links to every peer whose address
 * validates (up to MAX_PEERS) and gossips the HELOs it validated to every
 * link: a small network of peers that all know each other (issue 3).
 * When a layer above chooses (LINK_POLICY = manual, or auto once a layer
 * claimed the choice with core_links_claim), the core links to the peers
 * that layer names with core_link, to the operator's (BOOTSTRAP, CONNECT)
 * and to those that link to it, gossips only its own HELOs, and ignores
 * others' HELOs gossiped to it. Under any policy a peer's link comes and
 * goes with the peer events.
 *
 * A link is asked for by this side (core_link, the operator, the core's
 * own rule), by the peer, or by both; core_peer_info says which. The
 * side that asked is the one to drop a link it no longer needs: the peer
 * asked for its own reasons (its routing table, its clients), and
 * dropping that link would only make it ask again.
 *
 * A link is pinned while a local client wants it: for PIN_IDLE after the
 * operator's CONNECT, and after each message of the layers above the DHT
 * (storage and applications, FERRY_MSG_STORAGE_MIN and up) sent or
 * received over it, or an echo (ferry ping). A layer that chooses links
 * leaves pinned ones alone.
 */
#ifndef FERRY_CORE_CORE_LINKS_H
#define FERRY_CORE_CORE_LINKS_H

#include <stddef.h>

#include <ferry/proto.h>

struct core;

/* A layer above takes the choice of links: under LINK_POLICY = auto the
 * core behaves as under manual from now on, until core_free. Call it
 * before core_start, so that no address from the peer book or BOOTSTRAP
 * is linked by the core's own rule first. 0 if the layer chooses now
 * (auto, manual), -EPERM under LINK_POLICY = core (the core keeps the
 * choice: the layer may ask for links, and should drop none). */
int core_links_claim(struct core *core);

/* Links to peer, now or once one of its addresses validates; the peer
 * events tell when it is up. 0 if linked or under way, -ENOENT if the
 * core knows no address of the peer (core_learn_helo), -ENOSPC at
 * MAX_PEERS links (counted), -EINVAL for our own id. */
int core_link(struct core *core, const struct ferry_peer_id *peer);
/* Drops the link to peer, if any, and tells it (BYE), from the event loop
 * (so it may be called from any callback); messages to it are refused
 * (-ENOTCONN) from now on. The core keeps the peer's HELOs but no longer
 * wants the link: under LINK_POLICY = core it may link again when the
 * peer's address is validated anew or the peer links to us. 0, -ENOENT
 * if the peer is unknown. */
int core_unlink(struct core *core, const struct ferry_peer_id *peer);
/* Learns HELO messages (FERRY_P2P_HELO, one or more back to back, as
 * core_peer_helos gives them) and starts validating their addresses.
 * from: the linked peer that handed them over, whose PING budget pays
 * (PINGS_PER_PEER), or NULL for our own store or operator (no limit).
 * 0 if some were taken (our own count as taken), -EBADMSG (malformed,
 * forged), -ESTALE (expired), -ENOENT (no transport for them), -EDQUOT
 * (from's budget is spent), -ENOTCONN (from has no link), -ENOMEM. */
int core_learn_helo(struct core *core, const struct ferry_peer_id *from,
    const void *helos, size_t len);
#define CORE_PEER_HELOS_MAX (16 * (FERRY_HELO_FIXED + FERRY_ADDR_MAX))
/* Copies the signed HELOs of peer's validated addresses (ours for our
 * own id), back to back, into buf of size bytes, for handing on. 0 with
 * *ret_len, -ENOENT (none validated), -ENOSPC (size too small; never
 * more than CORE_PEER_HELOS_MAX is needed). */
int core_peer_helos(struct core *core, const struct ferry_peer_id *peer,
    void *buf, size_t size, size_t *ret_len);

#endif /* FERRY_CORE_CORE_LINKS_H */
