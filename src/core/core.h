/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The core: what the layers above (dht, storage, service) see of the
 * message layer. It owns the identity, the transports, the peers and their
 * encrypted links (DESIGN.md, "Layers"; seed 004, section II).
 * Messages are unreliable and unordered, as the network is; a message
 * larger than a frame is fragmented and reassembled by the core.
 */
#ifndef FERRY_CORE_CORE_H
#define FERRY_CORE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <ferry/proto.h>

#include "core/core_links.h" /* who chooses links: core_link and more */

struct cfg;
struct core;
struct identity;
struct event_base;
struct stats;
struct subs;

/* A message for the layers above; everything is borrowed for the call. */
typedef void core_handler_fn(void *cls, const struct ferry_peer_id *peer,
    uint16_t type, const void *data, size_t len);
/* A peer's link came up (connected true) or went down. */
typedef void core_peer_fn(void *cls, const struct ferry_peer_id *peer,
    bool connected);
/*
 * The classes of a peer's send queue, each with its own bound. A layer
 * sends its small, urgent messages as CONTROL and its data as BULK:
 * CONTROL goes first, so that a request does not wait behind megabytes
 * of data queued to the same peer, except that BULK gets one message or
 * fragment after every 16 KiB of CONTROL while it waits, so that a flood
 * of requests slows data down but never stops it. The core's own traffic
 * (ACKs, keepalives, HELOs) goes before both.
 */
enum core_class {
	CORE_CLASS_CONTROL, /* small, urgent: the DHT's requests, answers */
	CORE_CLASS_BULK,    /* the rest: application data (core_send) */
	CORE_NCLASS
};

/* The class qclass of a peer's send queue went from refusing messages
 * (-EAGAIN) to below half its bound. */
typedef void core_drain_fn(void *cls, const struct ferry_peer_id *peer,
    enum core_class qclass);

/* The callback of a subscription, of the kind it subscribed to. */
union core_sub_fn {
	core_peer_fn *peer;   /* core_peer_subscribe */
	core_drain_fn *drain; /* core_drain_subscribe */
};

/*
 * One subscription to the core's events, embedded in the subscriber's own
 * struct: the subscriber owns the memory, the core only links it in.
 * Zeroed memory (calloc, or = { 0 }) reads as not subscribed. The members
 * are the core's; a subscriber only passes the node's address.
 */
struct core_sub {
	TAILQ_ENTRY(core_sub) link; /* in list, while subscribed */
	struct subs *list;	    /* the list, or NULL: not subscribed */
	union core_sub_fn fn;	    /* what the list calls */
	void *cls;		    /* fn's first argument */
	uint64_t seq;		    /* when it joined (see subs.c) */
};

struct core_transport_info {
	const char *name;  /* "udp" */
	uint16_t protocol; /* FERRY_PROTO_* */
	uint32_t mtu;	   /* bytes per unit */
	uint32_t cost;	   /* relative */
};

struct core_peer_info {
	struct ferry_peer_id id; /* the peer */
	uint64_t age_ms;	 /* since its link came up */
	const char *transport;	 /* name of the transport in use */
	uint16_t protocol;	 /* and its protocol number */
	char address[256];	 /* the peer's address there, for humans */
	bool asked;		 /* this side asked for it (core_links.h) */
	bool pinned;		 /* a local client wants it (idem) */
};

struct core_echo_result {
	uint32_t count;	   /* round trips that completed */
	uint64_t total_ns; /* their summed time */
	uint64_t min_ns;
	uint64_t max_ns;
};
/* status: 0, -ETIMEDOUT, -ENOTCONN (link lost), -ECANCELED (shutdown). */
typedef void core_echo_fn(void *cls, int status,
    const struct core_echo_result *res);

typedef void core_peer_visit_fn(void *cls, const struct core_peer_info *pi);

/* Checks the [core] and [testing] sections and every configured transport
 * (loaded in stub mode) without opening sockets. Logs each problem.
 * 0 or -EINVAL. */
int core_config_check(struct cfg *cfg);

/* Calls fn for each configuration key of the transport plugin `name`
 * (loaded in stub mode for the call). 0, or the loader's error. */
typedef void core_key_visit_fn(void *cls, const char *section,
    const char *key, const char *def, const char *help);
int core_transport_keys(struct cfg *cfg, const char *name,
    core_key_visit_fn *fn, void *cls);

/* Loads the identity from state_dir and the configured transports. The
 * core keeps cfg, stats and base borrowed; they must outlive it. Logs the
 * cause on failure. */
int core_new(struct event_base *base, struct cfg *cfg, struct stats *stats,
    const char *state_dir, struct core **ret);
/* Starts the transports' servers, loads the peer book and bootstraps. */
int core_start(struct core *core);
/* Stops transports, saves the peer book, frees everything. NULL is ok. */
void core_free(struct core *core);
/* Applies a new configuration (SIGHUP): reloads each transport's section,
 * loads transports added to [core] TRANSPORTS and unloads removed ones.
 * On failure the old configuration stays in force. The core keeps cfg. */
int core_reload(struct core *core, struct cfg *cfg);

const struct ferry_peer_id *core_identity(const struct core *core);
/* The identity itself, for layers that sign with it (the DHT's
 * receipts); valid until core_free. */
const struct identity *core_ident(const struct core *core);
/* Printable identity. */
const char *core_identity_string(const struct core *core);
size_t core_transport_count(const struct core *core);
/* Fills info for transport i < core_transport_count(). */
void core_transport_info(const struct core *core, size_t i,
    struct core_transport_info *info);

/* Routes inbound messages with lo <= type <= hi to fn; each layer owns
 * its ranges (FERRY_MSG_DHT_MIN, FERRY_MSG_STORAGE_MIN and
 * FERRY_APP_TYPE_MIN in <ferry/proto.h>), and the core calls the one
 * handler whose range holds a message's type. -EINVAL if lo > hi, fn is
 * NULL or lo < FERRY_MSG_DHT_MIN (the core's own types), -EEXIST if the
 * range overlaps another handler's, -ENOSPC if the core's table (32
 * handlers) is full. A handler may set and unset handlers, its own
 * included, while it runs. */
int core_handler_set(struct core *core, uint16_t lo, uint16_t hi,
    core_handler_fn *fn, void *cls);
/* Removes the handler set for exactly [lo, hi], if any; its cls is not
 * used again. */
void core_handler_unset(struct core *core, uint16_t lo, uint16_t hi);

/*
 * Subscriptions: any number of layers hear of links coming up and going
 * down (core_peer_subscribe) and of send queues draining after -EAGAIN
 * (core_drain_subscribe). sub is the subscriber's (struct core_sub); the
 * core keeps it linked until core_unsubscribe or core_free. Returns 0,
 * -EINVAL if fn is NULL, or -EALREADY if sub is subscribed already.
 *
 * Reentrancy: subscribers are called in the order they joined; the peer
 * id is borrowed for the call. From inside a callback a subscriber may
 *   - leave (core_unsubscribe), and free the memory holding its node;
 *   - make any other node leave: one not called yet for this event then
 *     is not;
 *   - join, or make another join: the new node hears from the next event;
 *   - call the core (core_send and the rest). An event of the same kind
 *     that this raises waits until the current one has reached every
 *     subscriber, so that each sees a peer's ups and downs in order.
 * It must not call core_free. Peer events stop once core_free begins.
 */
int core_peer_subscribe(struct core *core, struct core_sub *sub,
    core_peer_fn *fn, void *cls);
int core_drain_subscribe(struct core *core, struct core_sub *sub,
    core_drain_fn *fn, void *cls);
/* Ends sub's subscription, of either kind; its cls is not used again. A
 * no-op if sub is not subscribed, also after core_free (which ends every
 * subscription). */
void core_unsubscribe(struct core_sub *sub);

/*
 * Queues a message of type (FERRY_MSG_DHT_MIN or above) for a peer in
 * class qclass; data is copied. 0 when queued, -ENOTCONN if there is no
 * link to the peer, -EAGAIN if that class of its queue is over its bound
 * ([core] CONTROL_QUEUE_BYTES or QUEUE_BYTES; drain subscribers hear
 * when the class has room again), -EMSGSIZE if len > FERRY_APP_MSG_MAX, -EINVAL (type or
 * class), -ENOMEM.
 */
int core_send_class(struct core *core, const struct ferry_peer_id *peer,
    enum core_class qclass, uint16_t type, const void *data, size_t len);
/* core_send_class in CORE_CLASS_BULK. */
int core_send(struct core *core, const struct ferry_peer_id *peer,
    uint16_t type, const void *data, size_t len);
/* True if core_send to peer would not return -EAGAIN now. */
bool core_can_send(struct core *core, const struct ferry_peer_id *peer);
/* The bytes of messages waiting in class qclass of peer's send queue
 * (not yet handed to a transport). 0, -ENOTCONN (no link), -EINVAL. */
int core_peer_queue_bytes(struct core *core, const struct ferry_peer_id *peer,
    enum core_class qclass, uint64_t *ret_bytes);
/* The smoothed round-trip time to peer, from the acknowledgements on its
 * current path (cc.h). 0, -ENOTCONN (no link), -ENODATA (no sample yet,
 * or a reliable transport, TCP, which carries no acknowledgements). */
int core_peer_srtt_us(struct core *core, const struct ferry_peer_id *peer,
    uint64_t *ret_us);

/* Visits connected peers. */
void core_peers_foreach(struct core *core, core_peer_visit_fn *fn, void *cls);
/* What core_peers_foreach says of one peer, found by id: 0 with *ret,
 * -ENOTCONN if it has no link. */
int core_peer_info(struct core *core, const struct ferry_peer_id *peer,
    struct core_peer_info *ret);
/* Our HELOs as a "ferry://" URI (malloc'd). -ENOENT if no transport
 * advertises an address. */
int core_hello_uri(struct core *core, char **ret_uri);
/* The operator's CONNECT: checks the HELOs of a "ferry://" URI, starts
 * validating their addresses and links to their peer whatever the link
 * policy, pinned (core_links.h). 0, -EINVAL (malformed; logged at info),
 * -EBADMSG (bad signature or expired), -ENOENT (no usable address). */
int core_add_uri(struct core *core, const char *uri);
/* Runs count sequential echo round trips of payload_len bytes with a peer
 * and reports once. 0 if started (fn will be called exactly once, never
 * from within this call), or -ENOTCONN / -EINVAL. */
int core_echo(struct core *core, const struct ferry_peer_id *peer,
    uint32_t count, uint16_t payload_len, uint32_t timeout_ms,
    core_echo_fn *fn, void *cls);

/*
 * Receive back-pressure (DESIGN.md, BPCC), per layer and per peer.
 *
 * A layer that takes messages from the core faster than it can pass them
 * on (the service to its clients, the DHT to its next hops) opens an
 * account and keeps its backlog there: bytes taken and not yet passed
 * on. The sum of all accounts holds every peer back: the window that
 * ACKs advertise over unreliable transports shrinks by it (never below
 * 16 KiB, so that peers are slowed, not stalled), and stream transports
 * stop being read while it is above RECV_WINDOW, until it has halved.
 *
 * An account may also hold single peers: a held peer is told a window of
 * 0 and its stream sessions are not read, so that its sender's queue
 * fills (core_send then says -EAGAIN there), while every other peer goes
 * on. Frames already under way still arrive and are delivered. A peer is
 * held while any account holds it; holds are by id, so they outlive the
 * peer's links. When the last hold goes, the peer is told the open
 * window at once (a window update) and its streams are read again.
 */
struct core_rx_account;

#define CORE_RX_ACCOUNTS_MAX 8 /* accounts open at once */

/* Opens an account with a backlog of 0 and no holds, owned by the caller
 * until core_rx_account_free, which must come before core_free. 0,
 * -ENOSPC (CORE_RX_ACCOUNTS_MAX are open), -ENOMEM. */
int core_rx_account_new(struct core *core, struct core_rx_account **ret);
/* Releases the account's holds and backlog and frees it. NULL is ok. */
void core_rx_account_free(struct core_rx_account *acct);
/* Sets the account's backlog to bytes. */
void core_rx_account_set(struct core_rx_account *acct, uint64_t bytes);
/* Holds peer (hold true) or lets it go; holding twice is holding once.
 * The peer need not be known or linked. 0, or -ENOMEM (nothing
 * changed). */
int core_rx_account_hold(struct core_rx_account *acct,
    const struct ferry_peer_id *peer, bool hold);

#endif /* FERRY_CORE_CORE_H */
