/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT, dht layer (DESIGN.md; issue 12): blocks stored at the peers
 * whose ids are closest to their keys, requests routed recursively hop
 * by hop toward the key (seed 002, section 2), answers sent to the
 * requester directly when it is linked and back along the path
 * otherwise, PUTs signed by their originator and answered with signed
 * receipts once durable.
 *
 * The DHT sees the node below it only through struct dht_env: sending,
 * links, the clock, the block store and counters. The daemon fills it
 * from its core and block store; a simulator or a test can fill it with
 * a network of its own, and runs exactly this code. Nothing here waits:
 * the env's store calls complete later through their callbacks, and
 * timeouts are checked when the owner calls dht_tick().
 */
#ifndef FERRY_DHT_DHT_H
#define FERRY_DHT_DHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dht/dhtkey.h"
#include "dht/dhtmsg.h"

struct dht;
struct identity;

/* What the block store holds, for status displays. */
struct dht_store_usage {
	uint64_t blocks; /* blocks held */
	uint64_t bytes;  /* their data bytes, what the quota counts */
	uint64_t quota;  /* the most bytes it keeps */
};

typedef void dht_store_done_fn(void *arg, int status);
typedef void dht_store_got_fn(void *arg, int status, const uint8_t *data,
    size_t len, uint64_t expiry);
typedef void dht_records_got_fn(void *arg, int status,
    const struct dhtrec *recs, size_t n);

/* What the DHT needs of the node below it. cls is the first argument of
 * every call; pointers passed in are borrowed for the call. */
struct dht_env {
	void *cls;
	const struct identity *ident; /* signs receipts and our PUTs */
	/* Sends body as an inner message of type to peer. 0, -ENOTCONN,
	 * -EAGAIN (its queue is full), -ENOMEM. */
	int (*send)(void *cls, const struct dhtkey *peer, uint16_t type,
	    const void *body, size_t len);
	/* True if there is a link to peer that send() can use now. */
	bool (*linked)(void *cls, const struct dhtkey *peer);
	/* Asks for a link to peer, learning helo (its signed HELOs, may be
	 * empty if known already) first. Completion shows as
	 * dht_peer_up(). 0 or a negative errno (-ENOENT: no address of
	 * the peer is known). */
	int (*link)(void *cls, const struct dhtkey *peer, const void *helo,
	    size_t helo_len);
	/* Drops the link to peer (the peer is told); dht_peer_down()
	 * follows. 0 or a negative errno. NULL: links are not the DHT's to
	 * drop (the node below chooses them), and may_unlink is not
	 * called. */
	int (*unlink)(void *cls, const struct dhtkey *peer);
	/* True if this node asked for its link to peer and nothing else
	 * (a local client) needs it: the DHT may drop it if its table does
	 * not need it either. */
	bool (*may_unlink)(void *cls, const struct dhtkey *peer);
	/* This node's signed HELOs into buf; their length, 0 if none. */
	size_t (*own_helo)(void *cls, uint8_t *buf, size_t size);
	/* A linked peer's signed HELOs into buf, to hand on in FIND
	 * answers; their length, 0 if none fit or none are known. */
	size_t (*peer_helo)(void *cls, const struct dhtkey *peer, uint8_t *buf,
	    size_t size);
	uint64_t (*now_us)(void *cls); /* monotonic */
	uint64_t (*wall_s)(void *cls); /* seconds since the epoch */
	/* The block store. has() answers at once; put() and get() call back
	 * later, never from inside the call. put's callback comes once the
	 * block is durable (0), or with -ENOSPC, -EIO, -ENOMEM. get's with
	 * 0 or -ENOENT. Both return 0 or a negative errno (then no
	 * callback). */
	bool (*store_has)(void *cls, const struct dhtkey *key);
	int (*store_put)(void *cls, const struct dhtkey *key, const void *data,
	    size_t len, uint64_t expiry, dht_store_done_fn *done, void *arg);
	int (*store_get)(void *cls, const struct dhtkey *key,
	    dht_store_got_fn *got, void *arg);
	/* The counter "dht.<name>", never NULL (a sink if need be). */
	uint64_t *(*stat)(void *cls, const char *name);
	/* Fills ret with the store's figures. May be NULL: all 0 then. */
	void (*store_usage)(void *cls, struct dht_store_usage *ret);
	/* Asks the owner to call dht_tick() as soon as its loop can, never
	 * from inside this call: an answer to a request of ours that came
	 * while the request was being started waits for it (callbacks never
	 * run inside dht_put() and friends). May be NULL: the next periodic
	 * tick delivers it then. */
	void (*wake)(void *cls);
	/* The smoothed round-trip time to a linked peer in microseconds, 0
	 * if none was measured: our requests' attempts through it wait a
	 * few of them before the next. May be NULL: as 0. */
	uint64_t (*srtt_us)(void *cls, const struct dhtkey *peer);
	/* A deadline of ours (an attempt giving up) falls at at_us, on
	 * now_us's clock, before the one dht_next_deadline_us() last gave:
	 * the owner calls dht_tick() then, never from inside this call. May
	 * be NULL: the periodic tick finds it, up to a tick late. */
	void (*schedule)(void *cls, uint64_t at_us);
	/* BPCC (dht_bpcc.h): stops reading messages from peer (hold true)
	 * until called again with false, so that its sends to us back up
	 * into its own queues; holding twice is holding once. 0 or a
	 * negative errno (nothing changed). May be NULL: requests still
	 * wait in the neighbour queues, and those over twice BPCC_QUEUE are
	 * refused (a FAIL to their requester). The owner calls
	 * dht_drained() when a send that said -EAGAIN may go again. */
	int (*hold)(void *cls, const struct dhtkey *peer, bool hold);
	/* The records store (dhtrec.h; the daemon's is store_records.h,
	 * whose contracts these follow). record_put keeps a copy of rec
	 * (its signature checked) by dhtrec_admit() with the bounds given,
	 * records expired at now not counting, and calls done later with
	 * 0 (durable, or held already), -ESTALE, -ENOSPC or the store's
	 * errors. record_list calls got later with the unexpired records of
	 * topic, at most max, the latest expiring first. Both return 0 or
	 * a negative errno (then no callback). May be NULL (both): this
	 * node keeps no records, and refuses RPUTs (FAIL 3) and answers
	 * RGETs with none. */
	int (*record_put)(void *cls, const struct dhtrec *rec, uint64_t now,
	    uint64_t per_topic, uint64_t total_max, dht_store_done_fn *done,
	    void *arg);
	int (*record_list)(void *cls, const struct dhtkey *topic, uint64_t now,
	    size_t max, dht_records_got_fn *got, void *arg);
};

#define DHT_SPARE_LINKS_MAX 100000 /* largest SPARE_LINKS */
#define DHT_CC_QUEUE_MAX    1000000 /* largest CC_QUEUE */
#define DHT_CSCC_CREDITS_MAX 1000000 /* largest CSCC_MAX_CREDITS */
#define DHT_RECORDS_MAX_MAX  (1u << 24) /* largest RECORDS_MAX */

/* The congestion control of requests ([dht] CONGESTION; seed 002,
 * dht_cc.h). */
enum dht_congestion {
	DHT_CC_NONE, /* relays drop what their next hop's queue refuses */
	DHT_CC_CSCC, /* a credit window at each requester (section 2.1) */
	DHT_CC_BPCC, /* back-pressure, one queue per neighbour (2.2) */
	DHT_CC_COUNT
};

/* A scheme's name as [dht] CONGESTION spells it ("none", "cscc",
 * "bpcc"), "?" out of range. */
const char *dht_congestion_name(enum dht_congestion c);

/* CSCC's constants (seed 002, section 2.1), [dht] CSCC_*. */
struct dht_cscc_cfg {
	unsigned initial_credits; /* c at the start */
	unsigned max_credits;     /* c never grows past it; the first
				   * ssthresh */
	unsigned loss_credits;    /* c after a loss: 5 */
	double decrease;          /* ssthresh's factor on a loss: 0.8 */
	double rtt_gain;          /* of a sample in RTT_est: 0.125 */
	double err_gain;          /* of an error in err_est: 0.25 */
	unsigned rto_err_factor;  /* RTO = RTT_est + this * err_est: 10 */
	uint64_t initial_rto_us;  /* RTO before the first sample */
};

struct dht_cfg {
	unsigned k;            /* bucket size, and FIND's default answer */
	unsigned replication;  /* storing peers of a PUT by default */
	unsigned per_net;      /* entries of one network per bucket */
	unsigned hops_max;     /* hops a request may take */
	size_t max_block;      /* largest block stored or sent */
	uint64_t timeout_us;   /* a request of ours gives up after this */
	uint64_t path_ttl_us;  /* requests seen are remembered this long */
	size_t path_max;       /* and at most this many */
	unsigned max_fails;    /* unanswered requests before an entry goes */
	uint64_t refresh_us;   /* a bucket not looked into this long is */
	unsigned request_rate; /* requests a second from one neighbour
				* (bursts of twice that); 0: no limit */
	uint64_t origin_quota; /* bytes stored for one PUT signer; 0: no
				* limit */
	unsigned spare_links;    /* surplus links kept (dht_links.c) */
	uint64_t link_grace_us;  /* no link is dropped younger than this */
	enum dht_congestion congestion; /* the scheme (needs a restart) */
	unsigned cc_queue;       /* requests of ours that may wait for the
				  * scheme to let them start */
	struct dht_cscc_cfg cscc;
	unsigned bpcc_queue;     /* requests one neighbour queue holds before
				  * it holds their senders (BPCC_QUEUE) */
	uint64_t bpcc_block_max_us; /* a queue blocked this long is given up
				     * (BPCC_BLOCK_MAX) */
	unsigned records_per_topic; /* records kept at one topic, 1 to
				     * DHTMSG_RECORDS_MAX (RECORDS_PER_TOPIC) */
	uint64_t records_max;       /* and in all (RECORDS_MAX) */
	uint64_t record_lifetime_s; /* an RPUT expiring further out than this
				     * is refused (RECORD_LIFETIME) */
};

/* The defaults ferryd.conf(5) documents. */
void dht_cfg_default(struct dht_cfg *ret);

/* One peer of a FIND answer. */
struct dht_node {
	struct dhtkey id;
	const uint8_t *helo; /* borrowed for the callback */
	size_t helo_len;
};

/* The outcome of a request of ours, borrowed for the callback. */
struct dht_result {
	int status; /* 0; -ENOENT not found; -EHOSTUNREACH no route;
		     * -ETIMEDOUT; -EIO a PUT with fewer receipts than asked
		     * (receipts says how many, at least 1); a PUT with none:
		     * -ENOSPC the storing peers are full, -EDQUOT over our
		     * ORIGIN_QUOTA there, -EREMOTEIO their disks failed
		     * to take it; -EAGAIN a hop is over its
		     * REQUEST_RATE for its neighbour; -EBADMSG refused */
	struct dhtkey key;
	unsigned hops; /* most hops a request took to an answer */
	/* GET */
	const uint8_t *block;
	size_t block_len;
	const struct dhtkey *responder; /* the peer that answered with the
					 * block, as its answer names it
					 * (this node's own id: its store) */
	/* PUT: the valid receipts from distinct peers we can vouch for
	 * (ferry-protocol(7): a link authenticated them) */
	unsigned receipts;
	const struct dhtmsg_receipt *receipt; /* receipts of them */
	const struct dhtkey *storer;          /* and who signed each */
	/* FIND, closest first */
	const struct dht_node *nodes;
	size_t n_nodes;
	/* RGET (dht_records): the valid, unexpired records the storing
	 * peers that answered hold, one per signer (its highest seq), at
	 * most DHTMSG_RECORDS_MAX, the latest expiring first; answered says
	 * how many storing peers answered */
	const struct dhtrec *records;
	size_t n_records;
	unsigned answered;
};

typedef void dht_done_fn(void *cls, const struct dht_result *r);

/* Takes a copy of env and cfg. 0, -EINVAL for a cfg out of range, or
 * -ENOMEM. */
int dht_new(const struct dht_env *env, const struct dht_cfg *cfg,
    struct dht **ret);
/* Ends every request of ours with -ECANCELED first. NULL is allowed. */
void dht_free(struct dht *d);

/* Links to peer came up or went down; net tags its network
 * (rtable_net_of, 0 unknown). */
void dht_peer_up(struct dht *d, const struct dhtkey *peer, uint64_t net);
void dht_peer_down(struct dht *d, const struct dhtkey *peer);
/* A DHT message (type FERRY_MSG_DHT_*) from a linked peer. */
void dht_receive(struct dht *d, const struct dhtkey *from, uint16_t type,
    const void *body, size_t len);
/* A send to peer that said -EAGAIN may go again (the node below's queue
 * to it has room): the requests waiting for it go on (BPCC). */
void dht_drained(struct dht *d, const struct dhtkey *peer);
/* Delivers answers kept while their requests were starting, times
 * requests out and refreshes buckets; call it every 100 ms or so, and
 * when the env's wake() asks. */
void dht_tick(struct dht *d);
/* When dht_tick() is next due for a deadline of ours (an attempt that
 * gives up, a request that times out; now if an answer waits), on
 * now_us's clock; UINT64_MAX if there is none. The owner ticks then or
 * at its period, whichever comes first, so that a lost answer costs its
 * attempt's time and not a tick more; the env's schedule() tells it of
 * earlier deadlines that come up in between. */
uint64_t dht_next_deadline_us(struct dht *d);

/* Stores data (1 to max_block bytes) at replication peers (0: the
 * default) until expiry (in the future, or -EINVAL); done is called
 * once, never from inside the call. The key is BLAKE2b-256(data),
 * written to *ret_key. This and the other requests below return
 * -EAGAIN, and never call done, when the congestion control holds back
 * as many requests as cfg.cc_queue already (dht_cc.h). */
int dht_put(struct dht *d, const void *data, size_t len, uint64_t expiry,
    unsigned replication, dht_done_fn *done, void *cls, struct dhtkey *ret_key);
/* dht_put() of data whose key the caller has computed already
 * (storage_seal() does, for every block of a file): the BLAKE2b pass
 * over the block is not repeated. key must be dhtkey_of_block(data,
 * len): this node stores what it is given under it when it is one of
 * the storing peers, while the others check and refuse a wrong one. */
int dht_put_keyed(struct dht *d, const struct dhtkey *key, const void *data,
    size_t len, uint64_t expiry, unsigned replication, dht_done_fn *done,
    void *cls);
/* Like dht_put_keyed(), but ends with status 0 once quorum (1 to
 * replication; 0: replication) of the replication peers sent receipts,
 * not waiting for the others: a put asked of more peers than it needs,
 * so that one slow or gone among the closest does not hold it up (the
 * storage layer's hedged and widened puts). The later receipts are not
 * counted. */
int dht_put_quorum(struct dht *d, const struct dhtkey *key, const void *data,
    size_t len, uint64_t expiry, unsigned replication, unsigned quorum,
    dht_done_fn *done, void *cls);
/* Relays a PUT that another key signed (a thin client's, through the
 * intermediary, ferry-intermediary(7)): put's origin_pk and sig go out
 * unchanged, with this node as the requester, and done sees the storing
 * peers' receipts for that signed request's put_hash as for
 * dht_put_keyed(); a storing peer charges the block to origin_pk's
 * ORIGIN_QUOTA, this node too when it is one. put->replication (1 to
 * DHTMSG_REPL_MAX) is part of what was signed and is used as it is.
 * put->block is borrowed for the call. The key is the block's hash,
 * computed here once and written to *ret_key whenever the block's size
 * is in range (so also with -EBADMSG): a relay cannot be handed a key
 * that is not its block's. -EBADMSG (counted as refused) when the
 * signature is not origin_pk's over that key, replication and expiry;
 * -EINVAL for an empty or too large block, a replication out of range
 * or an expiry past; else as dht_put(). */
int dht_put_signed(struct dht *d, const struct dhtmsg_put *put,
    dht_done_fn *done, void *cls, struct dhtkey *ret_key);
/* Fetches the block of key; its hash is checked before done sees it. */
int dht_get(struct dht *d, const struct dhtkey *key, dht_done_fn *done,
    void *cls);
/* Like dht_get(), but asks the peers closest to key that this node knows
 * (REPLICATION + 2 of them, itself left out) directly and at once rather
 * than hop by hop: the first right block wins, and it fails (-ENOENT)
 * once all have said they lack it. For asking again a block slow to come
 * of other holders than the route reached (the storage layer's hedged
 * requests); routed as dht_get() when nobody is known. */
int dht_get_wide(struct dht *d, const struct dhtkey *key, dht_done_fn *done,
    void *cls);
/* The want (1 to DHTMSG_FIND_MAX) peers closest to key that the peers
 * around it know, this node included. */
int dht_find(struct dht *d, const struct dhtkey *key, unsigned want,
    dht_done_fn *done, void *cls);

/* Announces value (0 to DHTREC_VALUE_MAX bytes) at topic until expiry
 * (in the future, within cfg.record_lifetime_s, or -EINVAL): a record
 * signed by this node's identity, whose seq is the wall clock in
 * microseconds (and above the last one this node signed), stored at the
 * cfg.replication peers closest to topic, each of which answers with a
 * receipt (done sees them as a PUT's) or refuses: -ESTALE a newer
 * record of ours is held there, -ENOSPC the topic is full. A newer
 * announcement replaces the older at every storing peer. */
int dht_announce(struct dht *d, const struct dhtkey *topic, const void *value,
    size_t len, uint64_t expiry, dht_done_fn *done, void *cls);
/* Stores rec, signed by anyone (a record found by dht_records(), passed
 * on unchanged), as dht_announce() does. -EBADMSG if its signature is
 * not its signer's, -EINVAL if it is expired or expires too far out. */
int dht_record_put(struct dht *d, const struct dhtrec *rec, dht_done_fn *done,
    void *cls);
/* The records at topic: asks the cfg.replication peers closest to it,
 * and gives done their records merged (struct dht_result), each checked
 * here. Status 0 (and maybe no records) once they all answered, or
 * some did by the time an attempt gave up; else a failure as dht_get's. */
int dht_records(struct dht *d, const struct dhtkey *topic, dht_done_fn *done,
    void *cls);

/* The routing table, for status and tests. */
const struct rtable *dht_rtable(const struct dht *d);
/* The configuration the DHT runs with (its copy, valid while d is). */
const struct dht_cfg *dht_config(const struct dht *d);
/* This node's id in the key space (valid while d is). */
const struct dhtkey *dht_self(const struct dht *d);
/* The block store's figures, through the env (zeros without one). */
void dht_store_usage(const struct dht *d, struct dht_store_usage *ret);

/* The congestion control's state, for `ferry dht status`; the figures
 * of a scheme that does not keep them are 0. */
struct dht_cc_status {
	enum dht_congestion scheme;
	uint64_t waiting;     /* requests of ours waiting to start */
	uint64_t in_flight;   /* requests of ours holding a credit (CSCC) */
	double credits;       /* CSCC's c */
	double ssthresh;
	uint64_t rtt_us;      /* CSCC's RTT_est (0: no sample yet) */
	uint64_t err_us;      /* its err_est */
	uint64_t rto_us;      /* the timeout it gives a request */
	uint64_t retransmits; /* attempts sent again for want of an ACK */
	uint64_t losses;      /* losses CSCC reacted to */
	uint64_t drops;       /* requests a full queue refused here */
	uint64_t duplicates;  /* requests answered here more than once */
	uint64_t refused;     /* requests of ours refused: cc_queue full */
};

/* What `ferry dht status` shows. */
struct dht_status {
	unsigned k;
	unsigned replication;
	size_t entries;  /* peers in buckets */
	size_t cached;   /* in replacement caches */
	size_t buckets;  /* buckets in use */
	uint64_t blocks; /* blocks stored here */
	uint64_t bytes;
	uint64_t quota;
	size_t requests; /* our requests in flight, or waiting to start */
	struct dht_cc_status cc; /* the congestion control's state */
};
void dht_get_status(struct dht *d, struct dht_status *ret);
/* BPCC's state as a whole, for `ferry dht status` (dht_bpcc.c). */
struct dht_bpcc_status {
	bool on;                 /* CONGESTION = bpcc */
	unsigned queue;          /* BPCC_QUEUE */
	uint64_t block_max_us;   /* BPCC_BLOCK_MAX */
	size_t queues;           /* neighbours with a queue */
	size_t depth;            /* requests waiting in all of them */
	size_t blocked;          /* queues whose neighbour refuses now */
	size_t held;             /* neighbours we hold now */
	uint64_t holds;          /* holds started, ever */
	uint64_t releases;       /* and ended */
	uint64_t block_timeouts; /* queues given up after BPCC_BLOCK_MAX */
	uint64_t failed_over;    /* their requests sent to another hop */
	uint64_t fails;          /* and answered FAIL instead */
	uint64_t overflow;       /* refused: a queue at twice its bound */
};
/* One neighbour's queue. */
struct dht_bpcc_peer {
	struct dhtkey id;
	unsigned depth;          /* requests waiting for it */
	uint64_t blocked_us;     /* since its last send went, if blocked */
	bool blocked;            /* its last send said -EAGAIN */
	bool stalled;            /* given up at BPCC_BLOCK_MAX, until it drains */
	bool held;               /* we hold it (its requests filled a queue) */
};
void dht_bpcc_get_status(struct dht *d, struct dht_bpcc_status *ret);
/* Up to max neighbours' queues into ret, deepest first; how many. */
size_t dht_bpcc_get_peers(struct dht *d, struct dht_bpcc_peer *ret, size_t max);
/* Replaces the replication, timeouts, limits and link bounds (the
 * table's k and bounds need a restart). 0 or -EINVAL. */
int dht_set_cfg(struct dht *d, const struct dht_cfg *cfg);
/* Adds the entries of a saved table (rtable_encode's form) as known
 * peers, and asks for links to those with HELOs. 0 or rtable_decode's
 * errors. */
int dht_load_table(struct dht *d, const void *data, size_t len);

#endif /* FERRY_DHT_DHT_H */
