/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A peer as the core knows it: its addresses (from HELOs, validated or
 * not), its paths (transport sessions usable for traffic), its link keys,
 * its send queue and the state of frames in flight. Core layer, internal.
 */
#ifndef FERRY_CORE_PEER_H
#define FERRY_CORE_PEER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <ferry/proto.h>

#include "core/ack.h"
#include "core/cc.h"
#include "core/frag.h"
#include "core/identity.h"
#include "core/link.h"
#include "core/sendq.h"
#include "lib/ratelimit.h"

struct core;
struct event;
struct ferry_tsession;
struct transport;

enum addr_state {
	ADDR_NEW,     /* from a HELO, not yet pinged */
	ADDR_PINGING, /* PING sent, waiting for the PONG */
	ADDR_VALID,   /* PONG received: usable and gossiped */
	ADDR_FAILED,  /* no PONG: kept to remember not to retry too soon */
};

/* One transport address of a peer, as its signed HELO gave it. */
struct addr {
	TAILQ_ENTRY(addr) link;	 /* in peer->addrs */
	struct peer *peer;	 /* owner */
	struct transport *t;	 /* transport it belongs to */
	uint8_t *helo;		 /* the signed HELO, owned copy */
	size_t helo_len;
	const uint8_t *bytes;	 /* address, inside helo */
	uint16_t len;
	uint32_t mtu;		 /* from the HELO */
	uint64_t expiry_s;	 /* of the HELO */
	enum addr_state state;
	uint64_t valid_until_s;	 /* real time; ADDR_VALID only */
	uint8_t challenge[FERRY_CHALLENGE_LEN]; /* ADDR_PINGING only */
	uint64_t ping_sent_us;	 /* monotonic */
	uint64_t retry_at_us;	 /* earliest next PING (ADDR_FAILED) */
	unsigned failures;	 /* PINGs that got no PONG in a row */
	bool revalidating;	 /* ADDR_VALID with a PING out */
	bool local;		 /* from our config, user or peer book: its
				  * PING may be repeated within a timeout */
	bool ever_valid;	 /* a PONG proved it once: retried on failure */
	unsigned tries;		 /* PINGs sent for the current challenge */
	struct ferry_tsession *ts; /* session from connect(), one reference */
	struct path *path;	 /* the path over it, if any */
};
TAILQ_HEAD(addr_list, addr);

/* A transport session usable for a peer's traffic. */
struct path {
	TAILQ_ENTRY(path) link; /* in peer->paths */
	struct peer *peer;	/* owner */
	struct transport *t;
	struct ferry_tsession *ts; /* one reference held (connect/associate) */
	struct addr *addr;	/* outbound: the validated address; else NULL */
	uint64_t last_rx_us;	/* last authenticated frame over it */
	uint64_t created_us;
	bool blocked;		/* send() said -EAGAIN; send_ready follows */
	bool failed;		/* frames over it went unanswered */
	uint8_t *pending;	/* a unit send() refused with -EAGAIN */
	size_t pending_len;
	bool pending_enc;
};
TAILQ_HEAD(path_list, path);

struct peer {
	struct ferry_peer_id id; /* key of core->peers */
	TAILQ_ENTRY(peer) age_link; /* in core->peers_by_age, oldest first */
	uint64_t created_us;	 /* monotonic */
	bool evicting;		 /* made room for another; freed soon */
	char sid[PEER_SHORT_LEN + 1]; /* for log lines */
	struct core *core;
	uint8_t pk[FERRY_PUBKEY_LEN]; /* from its HELOs or KX */
	struct addr_list addrs;
	unsigned n_addrs;
	struct path_list paths;
	struct path *best;	 /* cached cheapest working path */
	bool link_ok;		 /* link_init done */
	struct link link;	 /* keys */
	bool connected;		 /* keys confirmed and a path exists */
	bool dying;		 /* peer_free in progress */
	uint64_t up_since_us;
	uint64_t last_rx_us;	 /* last authenticated frame */
	uint64_t last_tx_us;	 /* last frame sent */
	uint64_t last_kx_us;	 /* last KX sent */
	uint64_t kx_retry_us;	 /* current KX retransmission interval */
	uint64_t last_gossip_us;
	bool want_link;		 /* keep trying to link */
	bool asked;		 /* this side wants the link, not only the
				  * peer (core_links.h: who may drop it) */
	uint64_t pinned_until_us; /* a client's link: kept until then */
	bool unlinking;		 /* drop the link soon (core_links.c) */
	bool bye_owed;		 /* and tell the peer first (FERRY_MSG_BYE) */
	struct sendq q;		 /* outgoing messages */
	uint64_t q_gauged;	 /* q.bytes as core.queue_bytes counts it */
	struct acktrack acks;	 /* frames received, to acknowledge */
	uint32_t rwnd_told;	 /* receive window our last ACK told it */
	struct inflight fl;	 /* frames sent over unreliable paths */
	struct cc cc;		 /* congestion window */
	struct reasm_set rs;	 /* half-received large messages */
	uint32_t next_msg_id;	 /* for our fragmented messages */
	struct ratelimit rl_pings; /* PINGs for addresses it advertised */
	struct ratelimit rl_log;   /* log_peer lines about it */
	struct ratelimit rl_kx;	   /* KX replies to it */
	struct event *flush_ev;	   /* deferred flush of the send queue */
	struct event *timer_ev;	   /* ack delay, loss detection, pacing */
	uint64_t timer_at_us;	   /* when timer_ev fires, 0 if unarmed */
	uint64_t loss_at_us;	   /* a frame becomes lost then, 0: none */
	uint64_t last_ack_us;	   /* last ACK that acknowledged something */
	bool probe;		   /* send one frame past the window */
	bool rx_held;		   /* an account holds it (rxhold.c) */
	bool persist;		   /* its window is closed: ask once more */
	unsigned persist_n;	   /* times asked since it was last open */
	uint64_t persist_at_us;	   /* when to ask next, 0 if not due */
};

/* The peer record for id, creating it (unauthenticated) if absent. When
 * the table is full, the oldest half-open peer makes room (it is freed
 * from the event loop, not here, as a caller up the stack may be using
 * its sessions). NULL if no peer can make room (logged) or on OOM. */
struct peer *peer_get(struct core *core, const struct ferry_peer_id *id);
/* The peer for id, or NULL. */
struct peer *peer_find(const struct core *core, const struct ferry_peer_id *id);
/* The peer whose frames carry receiver index idx, or NULL. */
struct peer *peer_by_index(const struct core *core, uint32_t idx);
/* Sets up the link keys (needs the peer's identity known). 0 or -ENOMEM. */
int peer_link_init(struct peer *p);
/* Frees the peer and everything it holds; its sessions are released.
 * Not for the middle of a callback that still uses p. */
void peer_free(struct peer *p);
/* Recomputes connected/best and tells the layers above on change. */
void peer_update_state(struct peer *p);
/* Nothing arrived for LINK_TIMEOUT: drops the paths and sends the
 * addresses back to validation. */
void peer_link_lost(struct peer *p);
/* True when neither addresses, paths nor a link justify keeping it. */
bool peer_is_idle(const struct peer *p);
/* True while nothing vouches for the peer: no link up, and none of its
 * addresses came from us or ever answered a PING. Anyone can create
 * such a peer with one message; it is the first to go. */
bool peer_is_half_open(const struct peer *p);
/* Frees the peers marked evicting (from the event loop). */
void peer_evict_run(struct core *core);

/* Log a line about a peer, rate-limited per peer (STYLE.md: log_peer). */
void peer_log(struct peer *p, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* FERRY_CORE_PEER_H */
