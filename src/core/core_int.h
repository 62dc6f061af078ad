/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * State shared by the core's .c files and its unit tests only. The layers
 * above use core.h.
 */
#ifndef FERRY_CORE_CORE_INT_H
#define FERRY_CORE_CORE_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "core/core.h"
#include "core/core_cfg.h"
#include "core/frag.h"
#include "core/subs.h"
#include "lib/ratelimit.h"

#define CORE_MAX_TRANSPORTS 16
#define CORE_MAX_HANDLERS 32
#define CORE_OWN_HELOS_MAX 4096 /* bytes of our own HELOs */
#define CORE_TICK_US 250000	/* maintenance period */

struct addr;
struct echo_req;
struct event;
struct ferry_tsession;
struct identity;
struct linkemu;
struct map;
struct peer;
struct transport;
struct tx_unit;

struct core_handler {
	uint16_t lo, hi;     /* inclusive type range */
	core_handler_fn *fn; /* receiver */
	void *cls;
};

/* Counters under "core."; each points into the stats registry. */
struct core_counters {
	uint64_t *units_bad;	     /* units that did not parse */
	uint64_t *helo_in;	     /* HELOs received (any way) */
	uint64_t *helo_bad;	     /* bad signature or malformed */
	uint64_t *helo_expired;
	uint64_t *helo_refused;	     /* address refused by the transport */
	uint64_t *helo_no_transport; /* for a transport we do not run */
	uint64_t *ping_sent;
	uint64_t *ping_in;
	uint64_t *ping_refused;	     /* not for us or not our address */
	uint64_t *ping_limited;	     /* a PING we did not send: rate limit */
	uint64_t *pong_sent;
	uint64_t *pong_limited;	     /* a PONG we did not sign: rate limit */
	uint64_t *pong_in;
	uint64_t *pong_bad;	     /* forged, mismatched or expired */
	uint64_t *pong_unsolicited;
	uint64_t *validations;	     /* addresses validated */
	uint64_t *validation_failures;
	uint64_t *kx_sent;
	uint64_t *kx_in;
	uint64_t *kx_bad;	     /* bad signature, malformed, degenerate */
	uint64_t *kx_stale;	     /* replayed, old or clock skew */
	uint64_t *kx_limited;	     /* dropped by the handshake rate limit */
	uint64_t *kx_refused;	     /* not for us, or no room for a peer */
	uint64_t *key_changes;	     /* key sets that became current */
	uint64_t *enc_in;
	uint64_t *enc_out;
	uint64_t *enc_bad;	     /* did not authenticate */
	uint64_t *enc_replay;	     /* replayed or too old */
	uint64_t *enc_unknown;	     /* unknown index or key id */
	uint64_t *msg_in;	     /* messages delivered upwards */
	uint64_t *msg_out;	     /* messages handed to the core */
	uint64_t *msg_bytes_in;
	uint64_t *msg_bytes_out;
	uint64_t *msg_no_handler;
	uint64_t *msg_bad;	     /* malformed inner messages */
	uint64_t *send_no_link;	     /* core_send: no link to the peer */
	uint64_t *send_queue_full;   /* core_send: -EAGAIN */
	uint64_t *frames_lost;	     /* declared lost by ACKs or timeouts */
	uint64_t *frag_out;	     /* fragments sent (first time) */
	uint64_t *frag_retx;	     /* fragments sent again */
	uint64_t *frag_in;
	uint64_t *reasm_done;
	uint64_t *reasm_dropped;     /* timeout, budget or inconsistency */
	uint64_t *msgs_abandoned;    /* fragmented, cut off by a restart */
	uint64_t *acks_out;
	uint64_t *acks_in;
	uint64_t *window_updates;    /* ACKs sent as the window reopened */
	uint64_t *path_failures;     /* paths given up after probe timeouts */
	uint64_t *peers_connected;   /* gauge */
	uint64_t *peers_known;	     /* gauge */
	uint64_t *peers_evicted;     /* half-open peers dropped for room */
	uint64_t *peers_expired;     /* half-open peers that never linked */
	uint64_t *emu_dropped;	     /* [testing] losses */
	uint64_t *queue_bytes;	     /* gauge: bytes queued to all peers */
	uint64_t *peers_held;	     /* gauge: peer ids an account holds */
	uint64_t *window_probes;     /* frames asking a closed window */
	uint64_t *link_refused;	     /* core_link at MAX_PEERS */
	uint64_t *unlinks;	     /* links dropped by core_unlink */
	uint64_t *byes_in;	     /* links the peer dropped (BYE) */
	uint64_t *gossip_ignored;    /* others' HELOs gossiped, manual policy */
};

struct core {
	struct event_base *base; /* borrowed */
	struct cfg *cfg;	 /* borrowed; replaced on reload */
	struct stats *stats;	 /* borrowed */
	struct core_cfg cc;	 /* parsed [core] and [testing] */
	struct identity *ident;	 /* owned */
	char state_dir[PATH_MAX];
	uint64_t started_us; /* monotonic */
	bool stopping;	     /* core_free in progress */

	struct transport *transports[CORE_MAX_TRANSPORTS]; /* owned */
	size_t n_transports;

	struct core_handler handlers[CORE_MAX_HANDLERS];
	size_t n_handlers;
	struct subs peer_subs;	/* core_peer_subscribe */
	struct subs drain_subs; /* core_drain_subscribe */
	struct core_rx_account *rx_accounts[CORE_RX_ACCOUNTS_MAX]; /* open
			      * ones; the slot is the account's hold bit */
	uint64_t rx_backlog; /* sum of the accounts' backlogs */
	struct map *rx_holds; /* peer id -> struct rxhold */
	uint32_t rwnd_told;  /* least window an ACK told a peer not held
			      * since the last window update
			      * (tx_window_opened) */
	bool rx_paused;	     /* stream sessions are not being read */

	struct map *peers;	  /* peer id -> struct peer */
	TAILQ_HEAD(, peer) peers_by_age; /* every peer, oldest first */
	unsigned n_evicting;	  /* peers marked evicting, not yet freed */
	bool table_full_logged;	  /* said so since it last had room */
	struct event *evict_ev;	  /* frees them, right after the callback */
	struct event *unlink_ev;  /* drops links marked unlinking, likewise */
	bool links_claimed;	  /* a layer above chooses links (auto) */
	struct map *by_index;	  /* receiver index -> struct peer */
	struct map *by_ts;	  /* session pointer -> struct path */
	struct map *challenges;	  /* PING challenge -> struct addr */
	struct map *ping_times;	  /* protocol+address -> last PING time */
	struct map *src_limits;	  /* network source -> handshake bucket */
	size_t n_connected;
	struct ratelimit rl_kx;	  /* handshakes verified, in total */
	struct ratelimit rl_pong; /* PONGs signed, in total */
	struct reasm_budget reasm; /* all peers' reassembly memory */

	uint8_t own_helos[CORE_OWN_HELOS_MAX]; /* our HELOs, back to back */
	size_t own_helos_len;
	uint64_t own_helos_until_s; /* rebuild before this */

	uint8_t *unit_buf;	/* scratch for building units */
	size_t unit_cap;
	uint8_t *pt_buf;	/* scratch plaintext, FERRY_MSG_SIZE_MAX */
	uint8_t *rx_buf;	/* scratch for opening frames, likewise */
	bool rx_refused;	/* the frame being walked had a fragment the
				 * reassembly budget refused: no ACK for it */
	struct tx_unit *txu;	/* scratch for the frames of one unit */

	struct event *tick_ev;	  /* maintenance */
	struct event *save_ev;	  /* deferred peer book save */
	bool book_dirty;
	struct linkemu *emu;	  /* [testing], or NULL */
	TAILQ_HEAD(, echo_req) echos; /* core_echo runs not yet reported */
	struct core_counters ctr;
};

/* The peer layer (peer.c and friends): set up with the core, started
 * after the transports, stopped before they are unloaded. */
int core_peers_init(struct core *core);
int core_peers_start(struct core *core);
void core_peers_stop(struct core *core);
void core_peers_done(struct core *core);
/* The configuration changed (core->cc and the transport set). */
void core_peers_reconfigured(struct core *core);
/* Drops every session of t before it is unloaded. */
void core_transport_detach(struct core *core, struct transport *t);
/* What the transports call (rx.c). */
extern const struct transport_hooks core_transport_hooks_impl;

/* The handler for a message type, or NULL. */
const struct core_handler *core_handler_find(const struct core *core,
    uint16_t type);
/* The loaded transport for a protocol number, or NULL. */
struct transport *core_transport_by_proto(const struct core *core,
    uint16_t protocol);
/* Sends a unit through t, applying [testing] link emulation. Returns what
 * the transport's send returned (0, -EAGAIN, ...). Counts units out. */
int core_unit_send(struct core *core, struct transport *t,
    struct ferry_tsession *ts, const uint8_t *unit, size_t len,
    bool is_encrypted);
/* Per-source budget of expensive work (signatures) a sender can cause:
 * KX_RATE_PER_SOURCE per second for each src (a transport's network
 * origin, e.g. an IP address). True if this one may go ahead. */
bool core_src_allow(struct core *core, const void *src, size_t len);
/* Per-source budget of PINGs for addresses in HELOs a source sent us
 * outside any link: PINGS_PER_PEER per PING_INTERVAL, as for one peer,
 * whatever identities signed them. True if this one may go out. */
bool core_src_allow_ping(struct core *core, const void *src, size_t len);
/* Receive back-pressure (rxhold.c): set up with the peer layer; done
 * frees the holds (the accounts are their layers'). */
int core_rx_init(struct core *core);
void core_rx_done(struct core *core);
/* True if some account holds the peer id. */
bool core_rx_is_held(const struct core *core, const struct ferry_peer_id *id);
/* Pauses or resumes reading every stream path as the sum of the accounts
 * says; held peers' paths stay paused. */
void core_rx_pause(struct core *core, bool pause);
/* A session died: forget emulated units queued for it. */
void core_emu_forget(struct core *core, const struct ferry_tsession *ts);
/* The address whose validation session is ts (no path yet), or NULL. */
struct addr *core_addr_by_ts(struct core *core,
    const struct ferry_tsession *ts);
/* Link policy (core_links.c): its event, made with the peer layer. */
int core_links_init(struct core *core);
void core_links_done(struct core *core);
/* p said BYE: its link goes once the frame is handled. */
void core_links_on_bye(struct peer *p);
/* True if links are the choice of a layer above and the operator
 * (LINK_POLICY manual, or auto once claimed): the core links to no
 * validated address on its own and gossips only its own HELOs. */
bool core_links_manual(const struct core *core);
/* The operator's "ferry://" URI; pin: keep the link PIN_IDLE as a
 * client's (CONNECT), or not (BOOTSTRAP). As core_add_uri. */
int core_links_add_uri(struct core *core, const char *uri, bool pin);
/* Something a local client asked for went to or came from p: its link
 * is pinned for PIN_IDLE from now. */
void core_links_pin(struct peer *p);

/* Marks the peer book for saving soon. */
void core_book_dirty(struct core *core);
/* Scratch buffer of at least n bytes for building units; NULL on OOM. */
uint8_t *core_unit_buf(struct core *core, size_t n);

#endif /* FERRY_CORE_CORE_INT_H */
