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
 * order, each taking DHTSIM_EVENT_US of time; with the queue empty time
 * moves DHTSIM_IDLE_US at a step (DHTSIM_EVENT_US with deadline ticks).
 * Every node is ticked every DHTSIM_TICK_US. A HELO is a node's index in
 * 2 bytes, which only this env reads.
 */
#ifndef FERRY_TESTS_DHTSIM_H
#define FERRY_TESTS_DHTSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dht/dht.h"

#define DHTSIM_TICK_US  100000u     /* the periodic dht_tick(), as ferryd's */
#define DHTSIM_EVENT_US 50u         /* the time one event takes */
#define DHTSIM_IDLE_US  1000u       /* a step of time with nothing queued */
#define DHTSIM_T0_US    1000000u    /* the clock at the start */
#define DHTSIM_WALL0_S  1700000000u /* the wall clock at the start */

struct dhtsim;
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
};

/* One side of a link, or of a wish for one: node a's view of b. Kept
 * after the link went down (ups, born_us, heard_us). */
struct dhtsim_link {
	int peer;                 /* b, the map's key */
	bool up;                  /* linked now (both sides say so) */
	bool asked;               /* a asked for it (the DHT may drop it) */
	bool pinned;              /* a client of a wants it (may_unlink: no) */
	bool known;               /* a knows b's address (a link or its HELO) */
	unsigned ups;             /* link-up events a's DHT had for b */
	uint64_t born_us;         /* when it last came up */
	uint64_t heard_us;        /* when a last had a message of b over it */
	struct dhtsim_link *next; /* a's next record */
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
	struct identity *ident; /* from the seed and idx */
	struct dhtkey id;       /* of ident */
	struct dht *dht;
	struct stats *stats;           /* its DHT's counters, "dht.<name>" */
	uint64_t tick_at;              /* its next deadline (deadline ticks) */
	unsigned unlinks;              /* links its DHT dropped */
	uint64_t sink;                 /* a counter stats could not make */
	struct map *links;             /* peer index -> struct dhtsim_link */
	struct dhtsim_link *link_list; /* all of them, to free */
	struct map *blocks;            /* key -> struct dhtsim_block */
	struct dhtsim_block *block_list;
	size_t n_blocks;
	uint64_t bytes; /* of the blocks' data */
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
};

struct dhtsim {
	struct dhtsim_cfg cfg;     /* a copy; deadline_ticks and
				    * store_quota may change between runs */
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
	/* The sim's own: the queue (a ring), messages held, and events of
	 * frozen nodes' stores, cancelled at the end. */
	struct dhtsim_event *q;
	size_t q_head, q_len, q_cap;
	struct dhtsim_event *held, *parked;
	size_t n_held, cap_held, n_parked, cap_parked;
};

/* The defaults: seed 1, dht_cfg_default() with REFRESH_INTERVAL 2 s, the
 * DHT not dropping links, periodic ticks only, srtt 500 µs (a round trip
 * at light load: an event each way, behind what else is queued), a quota
 * of 512 KiB. */
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
 * would: through the filter. 0, -ENOTCONN, -EAGAIN or -ENOMEM. */
int dhtsim_send(struct dhtsim *s, int a, int b, uint16_t type, const void *body,
    size_t len);
/* The messages held (DHTSIM_HOLD) go on their way, in order. */
void dhtsim_release(struct dhtsim *s);

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
