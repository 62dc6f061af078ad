/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A network of DHT nodes in one process, in virtual time: each node is a
 * real struct dht (src/dht) with its own identity and counters; what is
 * below the DHT, links, message delivery, the clock and the block store,
 * is this file's, handed to it as struct dht_env. For the unit tests of
 * the DHT's routing and link choice, and the seed of the simulator of
 * issue 19: one thread, no sockets, no daemon, and nothing drawn but
 * from the seed (the identities, dhtsim_random()).
 *
 * The model: one queue of events (a message, a link coming up or going
 * down, a store call completing, a tick a node asked for), delivered in
 * order, each taking DHTSIM_EVENT_US of time (cfg.event_us: with 0 they
 * take none, and each node takes proc_us for a message instead, in
 * parallel); with the queue empty time moves DHTSIM_IDLE_US at a step
 * (DHTSIM_EVENT_US with deadline ticks), never past the next message
 * due. Every node is ticked every DHTSIM_TICK_US. A HELO is a node's
 * index in 2 bytes, which only this env reads.
 *
 * Each way of a link (dhtsim_link.c) is a FIFO of the messages sent over
 * it: a message is due once sent at the way's rate, one after the other,
 * and carried for its delay, and then queued for its peer, which takes
 * it unless it holds the sender (env.hold; with cfg.hold_latency only
 * what the sender sent once the hold reached it) or is stopped; until
 * taken it counts against the way's cap, past which sends say -EAGAIN
 * and the sender hears dht_drained() once they fell to half, as from
 * ferryd's core. By default a way has no delay, no transfer time and no cap: a
 * message is queued as it is sent.
 *
 * While a network exists libsodium's randombytes, the DHT's own draws,
 * come from its seed too (dhtsim_rand.c): a seed replays a run.
 */
#ifndef FERRY_TESTS_DHTSIM_H
#define FERRY_TESTS_DHTSIM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dht/dht.h"

#define DHTSIM_TICK_US  100000u     /* the periodic dht_tick(), as ferryd's */
#define DHTSIM_EVENT_US 50u         /* the time one event takes */
#define DHTSIM_IDLE_US  1000u       /* a step of time with nothing queued */
#define DHTSIM_T0_US    1000000u    /* the clock at the start */
#define DHTSIM_WALL0_S  1700000000u /* the wall clock at the start */
#define DHTSIM_NO_CAP   UINT_MAX    /* a way of a link without a bound */

struct dhtsim;
struct dhtsim_due;
struct dhtsim_event;
struct map;

/* What becomes of a message a node sends over a link. */
enum dhtsim_verdict {
	DHTSIM_DELIVER, /* queued for the peer */
	DHTSIM_DROP,    /* lost on the way; the send succeeded */
	DHTSIM_FULL,    /* the send fails with -EAGAIN (a full queue) */
	DHTSIM_HOLD,    /* kept aside until dhtsim_release() */
};

/* Decides the fate of the message of type and len bytes that node from
 * sends to node to, over their link. */
typedef enum dhtsim_verdict dhtsim_filter_fn(void *arg, int from, int to,
    uint16_t type, size_t len);

/* How one way of a link, from a node to its peer, carries messages. */
struct dhtsim_link_cfg {
	uint64_t delay_us;    /* on the way, once sent */
	uint64_t rate;        /* bytes a second it sends, one message after
			       * the other; 0: no transfer time */
	unsigned cap;         /* messages on it at once, from their send
			       * until the peer takes them; DHTSIM_NO_CAP:
			       * no bound */
	unsigned answer_room; /* DHT answers may go this many past cap, as
			       * ferryd's take the core's bulk class when
			       * requests fill its control class
			       * (dhtnode_env.c) */
};

struct dhtsim_cfg {
	uint64_t seed;        /* the identities and dhtsim_random() */
	struct dht_cfg dht;   /* every node's at its start */
	bool dht_unlinks;     /* env.unlink given: the DHT drops links it
			       * asked for (LINK_POLICY = dht); else NULL */
	bool deadline_ticks;  /* nodes are ticked at their next deadline
			       * too (dht_next_deadline_us), as ferryd does */
	uint64_t srtt_us;     /* env.srtt_us of a linked peer; 0: no
			       * srtt_us (NULL) */
	uint64_t store_quota; /* what each store's usage says is its
			       * quota (bytes) */
	int store_status;     /* what each store's puts end with: 0, or
			       * a failing disk's -errno (nothing kept) */
	bool no_helos;        /* own_helo and peer_helo give none: a node
			       * links only to peers it was linked to */
	uint64_t event_us;    /* the time each event of the queue takes */
	uint64_t proc_us;     /* the time a node takes for a message it
			       * takes, and takes no other; 0: none */
	bool hold_latency;    /* a hold reaches the held peer over the
			       * link: what it sent before it heard of the
			       * hold (the way's delay after) is taken
			       * still, as ferryd's core delivers the
			       * frames under way when it closes a window;
			       * else a hold stops what is on the way too */
	/* Each way of a link when first linked or asked for. */
	struct dhtsim_link_cfg link;
};

/* A message on one way of a link. */
struct dhtsim_msg {
	struct dhtsim_msg *next; /* the next one sent that way */
	uint64_t at_us;          /* when it is due at the peer */
	uint64_t sent_us;        /* when its sender sent it */
	uint64_t seq;            /* the order of all sends */
	uint16_t type;
	size_t len;
	uint8_t body[]; /* len bytes */
};

/* One side of a link, or of a wish for one: node a's view of b. Kept
 * after the link went down (ups, born_us, heard_us). */
struct dhtsim_link {
	int peer;          /* b, the map's key */
	bool up;           /* linked now (both sides say so) */
	bool asked;        /* a asked for it (the DHT may drop it) */
	bool pinned;       /* a client of a wants it (may_unlink: no) */
	bool known;        /* a knows b's address (a link or its HELO) */
	unsigned ups;      /* link-up events a's DHT had for b */
	uint64_t born_us;  /* when it last came up */
	uint64_t heard_us; /* when a last had a message of b over it */
	bool holds;        /* a holds b (env.hold): takes nothing of b's
			    * (with cfg.hold_latency, nothing b sent from
			    * hold_from_us and hold_seq on) */
	uint64_t hold_from_us; /* when b hears of the hold */
	uint64_t hold_seq;     /* the sends before the hold */
	/* The way from a to b: how it carries messages, and those on it,
	 * oldest first. */
	struct dhtsim_link_cfg cfg;
	struct dhtsim_msg *head, *tail;
	unsigned n_msgs;
	unsigned n_stalled;       /* of those, due but left: b held a or
				   * was stopped */
	uint64_t free_us;         /* when it may start sending the next */
	uint64_t last_us;         /* when the last one sent is due */
	bool owed;                /* a send was refused: a drain is owed */
	struct dhtsim_link *next; /* a's next record */
};

/* A record the store of a node holds (value in its own bytes). */
struct dhtsim_rec {
	struct dhtrec rec;
	uint8_t value[DHTREC_VALUE_MAX];
};

/* A block the store of a node holds. */
struct dhtsim_block {
	struct dhtkey key; /* the map's key */
	uint8_t *data;     /* owned */
	size_t len;
	uint64_t expiry; /* the latest put's */
	struct dhtsim_block *next;
};

struct dhtsim_node {
	int idx;                /* its place in dhtsim.nodes */
	bool alive;             /* false: crashed, frozen: hears nothing,
				* is not ticked, links to it are not made;
				* its links stay until cut */
	bool unreachable;       /* links asked for to or by it never come */
	bool corrupt;           /* serves blocks with a byte flipped */
	bool liar;              /* its store_has() says no to everything */
	bool stopped;           /* stopped (SIGSTOP; dhtsim_stop()) */
	struct identity *ident; /* from the seed and idx */
	struct dhtkey id;       /* of ident */
	struct dht *dht;
	struct stats *stats;           /* its DHT's counters, "dht.<name>" */
	uint64_t tick_at;              /* its next deadline (deadline ticks) */
	uint64_t busy_us;              /* it takes no message before */
	unsigned unlinks;              /* links its DHT dropped */
	uint64_t sink;                 /* a counter stats could not make */
	struct map *links;             /* peer index -> struct dhtsim_link */
	struct dhtsim_link *link_list; /* all of them, to free */
	struct map *blocks;            /* key -> struct dhtsim_block */
	struct dhtsim_block *block_list;
	size_t n_blocks;
	uint64_t bytes; /* of the blocks' data */
	struct dhtsim_rec *recs; /* its records store (dhtsim_records.c) */
	size_t n_recs, cap_recs;
	struct dhtsim *sim;
};

/* What the network did, for tests to check the fake itself. */
struct dhtsim_counters {
	uint64_t delivered;   /* messages a node received */
	uint64_t dropped;     /* lost: DHTSIM_DROP, or to a dead node */
	uint64_t full;        /* sends refused with DHTSIM_FULL */
	uint64_t held;        /* kept aside with DHTSIM_HOLD */
	uint64_t bad_unlinks; /* unlink() of a link not the DHT's to drop
			       * (refused; a bug in the DHT) */
	uint64_t refused;     /* sends a way at its cap refused */
	uint64_t drains;      /* dht_drained() calls it made */
	uint64_t hold_calls;  /* env.hold() calls, either way */
	uint64_t trace;       /* a hash of each message taken: its time,
			       * nodes, type and length */
};

struct dhtsim {
	struct dhtsim_cfg cfg;     /* a copy; deadline_ticks, hold_latency
				    * and store_quota may change between
				    * runs */
	struct dhtsim_node *nodes; /* n of them */
	int n;
	uint64_t now_us;          /* the virtual clock (env.now_us) */
	uint64_t last_tick_us;    /* of the last periodic tick */
	bool links_frozen;        /* link() fails with -EPERM */
	dhtsim_filter_fn *filter; /* NULL: every message is delivered */
	void *filter_arg;
	struct dhtsim_counters c;
	uint64_t rng;      /* dhtsim_random()'s state */
	struct map *by_id; /* node id -> struct dhtsim_node */
	/* The sim's own: the queue (a ring), messages held, events of
	 * frozen nodes' stores, cancelled at the end, events of stopped
	 * nodes, and messages not due yet (a heap by time). */
	struct dhtsim_event *q;
	size_t q_head, q_len, q_cap;
	struct dhtsim_event *held, *parked, *paused;
	size_t n_held, cap_held, n_parked, cap_parked, n_paused, cap_paused;
	struct dhtsim_due *due;
	size_t n_due, cap_due;
	uint64_t due_seq;
	uint64_t send_seq; /* sends so far (dhtsim_msg.seq) */
};

/* The defaults: seed 1, dht_cfg_default() with REFRESH_INTERVAL 2 s, the
 * DHT not dropping links, periodic ticks only, srtt 500 µs (a round trip
 * at light load: an event each way, behind what else is queued), a quota
 * of 512 KiB, HELOs, events of DHTSIM_EVENT_US and no processing time,
 * links without delay, transfer time or cap. */
void dhtsim_cfg_default(struct dhtsim_cfg *ret);

/* n nodes (1 to 65536) with the cfg (copied), none linked; node i's
 * identity is drawn from the seed and i. 0, -EINVAL, -ENOMEM, or
 * dht_new()'s error. */
int dhtsim_new(const struct dhtsim_cfg *cfg, int n, struct dhtsim **ret);
/* Calls back the store calls still queued, parked or held with
 * -ECANCELED, as a store that closes does (whatever the DHT sends then
 * is dropped), then frees every node and the network. NULL is fine. */
void dhtsim_free(struct dhtsim *s);

/* The node whose id is id, or NULL. */
struct dhtsim_node *dhtsim_node_of(const struct dhtsim *s,
    const struct dhtkey *id);
/* Node i's counter "dht.<name>" (0 if it has none). */
uint64_t dhtsim_stat(const struct dhtsim *s, int i, const char *name);
/* The sum of dhtsim_stat(name) over the nodes. */
uint64_t dhtsim_stat_sum(const struct dhtsim *s, const char *name);
/* The block of key in node i's store, or NULL. */
const struct dhtsim_block *dhtsim_block(const struct dhtsim *s, int i,
    const struct dhtkey *key);
/* Puts a copy of data into node i's store under key (not checked), as
 * if it had been stored there before, with expiry unless it has a later
 * one. 0 or -ENOMEM. */
int dhtsim_store(struct dhtsim *s, int i, const struct dhtkey *key,
    const void *data, size_t len, uint64_t expiry);

/* How many records of topic node i's store holds, expired or not; with
 * ret (may be NULL), the one of signer (NULL: none) into it. */
size_t dhtsim_records(const struct dhtsim *s, int i, const struct dhtkey *topic,
    const uint8_t *signer, struct dhtrec *ret);
/* Drops every record of node i's store, as a peer that lost them. */
void dhtsim_records_clear(struct dhtsim *s, int i);

/* Node a asks for a link to b (as if a's DHT had, HELO and all): unless
 * it is up already, or either node is dead or unreachable, it comes up
 * and both DHTs hear of it, in order. 0, or -EINVAL, -ENOMEM. */
int dhtsim_link(struct dhtsim *s, int a, int b);
/* Drops the link between a and b (neither asked for it any more); with
 * tell, both DHTs hear of it, else it is gone silently, as a link to a
 * crashed peer is before it times out. */
void dhtsim_cut(struct dhtsim *s, int a, int b, bool tell);
/* dhtsim_cut() of every link of node i. */
void dhtsim_cut_all(struct dhtsim *s, int i, bool tell);
/* Whether a and b are linked now. */
bool dhtsim_linked(const struct dhtsim *s, int a, int b);
/* a's record of b (all zeros and peer b if there is none). */
struct dhtsim_link dhtsim_link_get(const struct dhtsim *s, int a, int b);
/* A client of a wants (or no longer wants) the link to b: the DHT may
 * not drop it then. 0 or -ENOMEM. */
int dhtsim_pin(struct dhtsim *s, int a, int b, bool pinned);
/* Sends a message of type from a to b over their link, as a's DHT
 * would: through the filter, then onto the way from a to b. 0,
 * -ENOTCONN, -EAGAIN (the filter, or the way at its cap: a drain is owed
 * to a) or -ENOMEM. */
int dhtsim_send(struct dhtsim *s, int a, int b, uint16_t type, const void *body,
    size_t len);
/* The messages held (DHTSIM_HOLD) go on their way, in order. */
void dhtsim_release(struct dhtsim *s);
/* The way from a to b carries what a sends from now on as cfg says (the
 * messages on it keep their times); if its messages are within half the
 * new cap and a drain is owed, a hears of it now. 0, -EINVAL or
 * -ENOMEM. */
int dhtsim_link_set(struct dhtsim *s, int a, int b,
    const struct dhtsim_link_cfg *cfg);
/* The messages on the way from a to b, oldest first, or NULL; valid
 * until the network runs or a sends again. */
const struct dhtsim_msg *dhtsim_link_msgs(const struct dhtsim *s, int a, int b);
/* a holds b (or lets go), as a's DHT does through env.hold: a takes no
 * message of b's until it lets go, and then takes those due, in order;
 * with cfg.hold_latency it still takes those b sent before the hold
 * reached it, one delay of the way from a to b later. 0 or -EINVAL. */
int dhtsim_hold(struct dhtsim *s, int a, int b, bool hold);
/* Stops node i (SIGSTOP) or lets it go on: stopped, it is not ticked,
 * takes nothing from its links (they fill, and then refuse sends), and
 * its other events (a store's completion, a wake, news of a link) and
 * drains owed to it wait; all come in order once it goes on. */
void dhtsim_stop(struct dhtsim *s, int i, bool stop);

/* Runs the network until the clock reads end. */
void dhtsim_run_until(struct dhtsim *s, uint64_t end_us);
/* Runs it for ms of virtual time. */
void dhtsim_run_ms(struct dhtsim *s, uint64_t ms);
/* Ticks node i now (dht_tick()), and notes its next deadline. */
void dhtsim_tick(struct dhtsim *s, int i);

/* The next number of the seeded generator (SplitMix64). */
uint64_t dhtsim_rand(struct dhtsim *s);
/* len bytes of it into buf. */
void dhtsim_random(struct dhtsim *s, void *buf, size_t len);

#endif /* FERRY_TESTS_DHTSIM_H */
