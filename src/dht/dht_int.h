/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * State shared by the DHT's .c files (and its unit tests): the layer
 * object, our own requests in flight, the counters. Layers above see
 * dht.h only.
 */
#ifndef FERRY_DHT_DHT_INT_H
#define FERRY_DHT_DHT_INT_H

#include <sys/queue.h>

#include "dht/dht.h"
#include "dht/dht_cc.h"
#include "dht/pathcache.h"
#include "dht/rtable.h"
#include "lib/buf.h"
#include "lib/ratelimit.h"

struct map;
struct dht_links;
struct dht_lru;
struct dht_bpcc;
struct dht_recset;

#define DHT_LIMIT_PEERS 4096 /* neighbours, and signers, whose limits are
			      * kept (the least recently seen go) */

/* The "dht.*" counters; each points at the env's counter. */
struct dht_counters {
	uint64_t *requests_in;  /* requests taken from peers */
	uint64_t *forwarded;    /* passed on toward their key */
	uint64_t *duplicates;   /* seen before: dropped (loops too) */
	uint64_t *malformed;    /* bodies that did not decode */
	uint64_t *no_route;     /* no hop closer, or none left */
	uint64_t *not_found;    /* GETs that ended here without the block */
	uint64_t *refused;      /* PUTs with a bad signature or hash */
	uint64_t *stored;       /* blocks stored for others, durable */
	uint64_t *store_fails;  /* FAILs: the store said no */
	uint64_t *served;       /* GETs answered with a block */
	uint64_t *answers_direct;  /* answers sent straight to requesters */
	uint64_t *answers_routed;  /* answers sent back along the path */
	uint64_t *routed_back;     /* others' answers passed back */
	uint64_t *answers_in_direct; /* answers to our requests that came
				      * from the peer that gave them */
	uint64_t *answers_in_routed; /* and through other peers */
	uint64_t *answers_lost;    /* answers with no way on */
	uint64_t *receipts_in;     /* valid receipts for our PUTs */
	uint64_t *receipts_bad;    /* forged or for something else */
	uint64_t *receipts_implausible; /* valid, from storers we could not
					 * vouch for by the end */
	uint64_t *blocks_bad;      /* blocks that did not hash to their key */
	uint64_t *unsolicited;     /* answers to no request of ours */
	uint64_t *entries_failed;  /* neighbours out of the table after
				    * max_fails silent attempts */
	uint64_t *timeouts;        /* our requests that timed out */
	uint64_t *requests_out;    /* requests we started */
	uint64_t *rate_limited;    /* requests over their neighbour's rate */
	uint64_t *rate_fails;      /* FAILs (rate) answering those */
	uint64_t *rate_fails_held; /* those not answered: over the FAILs'
				    * own allowance */
	uint64_t *origin_refused;  /* PUTs over their signer's ORIGIN_QUOTA */
	uint64_t *completed;       /* our requests that succeeded */
	uint64_t *hops_total;      /* the hops those took, summed */
	uint64_t *retries;         /* our GETs asked again of the holders */
	uint64_t *busy_again;      /* our attempts a busy hop refused,
				    * sent again */
	uint64_t *acks_sent;       /* ACKs sent ahead of large answers */
	uint64_t *cc_drops;        /* requests a full queue refused */
	uint64_t *cc_duplicates;   /* requests answered here again */
	uint64_t *cc_waiting;      /* gauge: ours waiting to start */
	uint64_t *cc_refused;      /* ours refused: CC_QUEUE was full */
	uint64_t *cscc_credits;    /* gauge: c, whole credits */
	uint64_t *cscc_ssthresh;   /* gauge: ssthresh, whole credits */
	uint64_t *cscc_in_flight;  /* gauge: ours out, unacknowledged */
	uint64_t *cscc_rtt_us;     /* gauge: RTT_est */
	uint64_t *cscc_rto_us;     /* gauge: the timeout it gives */
	uint64_t *cscc_acks;       /* ACKs taken */
	uint64_t *cscc_losses;     /* losses taken */
	uint64_t *cscc_retransmits; /* attempts sent again for want of an
				     * ACK */
	uint64_t *records_stored;  /* records kept for others, durable */
	uint64_t *records_refused; /* RPUTs with a bad signature, expired
				    * or expiring too far out */
	uint64_t *records_stale;   /* RPUTs older than their signer's held */
	uint64_t *records_full;    /* RPUTs refused: no room */
	uint64_t *records_served;  /* records sent answering RGETs */
	uint64_t *records_in;      /* valid records for our RGETs */
	uint64_t *records_bad;     /* records in answers that were forged,
				    * expired or for another topic */
};

#define DHT_ATTEMPTS_MAX 4 /* tries of one request of ours, all within
			    * REQUEST_TIMEOUT of its start */
/* An attempt's req_id is its request's (id_base, whose low bits are
 * clear) with a number of its own in the low bits, 1 and up, so that a
 * responsible peer can tell a request it answered before
 * (dht.cc_duplicates) while the hops of an earlier path take the attempt
 * for a new request. An attempt a busy hop refused (FAIL 8) is sent again
 * under the next number, not counted as an attempt: the hops before the
 * busy one saw its number, and would drop it as a duplicate. */
#define DHT_ATTEMPT_ID_BITS 0xffu
_Static_assert(DHT_ATTEMPTS_MAX < DHT_ATTEMPT_ID_BITS,
    "attempt numbers fit in the low bits of req_id");

/*
 * One request of ours. It is tried up to DHT_ATTEMPTS_MAX times, each
 * attempt under a request id of its own (all of them in d->op_by_id),
 * so that the peers of an earlier path do not drop it as a duplicate,
 * and answers to any attempt count, each storer's receipt once:
 *   ROUTED  (the first) sent as anyone's request is, through the
 *           neighbour closest to the key;
 *   ASKED   (a GET's, once) sent to the peers closest to the key that
 *           we know, each directly;
 *   ROUTED  (again) through the closest neighbour not tried yet, or, for
 *           a PUT that ended here, placed again.
 * A new attempt starts when the latest gives up (dht_attempt_timeout()
 * after it started: a few round trips to its neighbour), when no
 * attempt has an answer left to bring (all FAILed, a wrong block), or
 * when a link comes up while the latest, placed here, lacks storing
 * peers for want of links (dht_attempts_link_up); the
 * request ends when an answer completes it, when no attempt has an
 * answer left to bring and none can start, or at deadline_us. An
 * attempt a busy hop refused (FAIL 8: BPCC's queue at its bound) went
 * nowhere: it is taken back and sent again after a short wait
 * (dht_attempt_busy_again), not counted as one of DHT_ATTEMPTS_MAX.
 */
struct dht_op {
	TAILQ_ENTRY(dht_op) link; /* d->ops */
	TAILQ_ENTRY(dht_op) wait_link; /* d->cc.wait, while cc_waiting */
	bool cc_waiting;          /* not started: the scheme holds it */
	bool cc_credit;           /* holds one of CSCC's credits */
	bool cc_acked;            /* an ACK came (dht_cc_answered) */
	uint64_t req_id;          /* the latest attempt's */
	uint16_t type;            /* FERRY_MSG_DHT_PUT, _GET, _FIND, _RPUT
				   * or _RGET */
	struct dhtkey key;
	uint64_t started_us;      /* when its first attempt went out */
	uint64_t deadline_us;     /* REQUEST_TIMEOUT after it was asked
				   * for (dht_put and friends) */
	uint64_t attempt_deadline_us; /* when the latest attempt gives up */
	dht_done_fn *done;
	void *cls;
	unsigned hops;            /* most seen in answers */
	bool filling;             /* a lookup that fills the table */
	bool wide;                /* GET: asked of the closest peers first
				   * (dht_get_wide) */
	unsigned attempts;        /* started so far */
	uint64_t id_base;         /* the req_ids' high bits (0: none yet),
				   * in d->op_by_id while op lives, so that
				   * no other request draws it */
	unsigned n_ids;           /* the numbers of id_base sent so far */
	unsigned busy;            /* attempts busy hops refused */
	bool busy_wait;           /* the latest of them waits to be sent
				   * again, at attempt_deadline_us */
	uint64_t ids[DHT_ATTEMPTS_MAX];      /* each attempt's req_id */
	uint64_t sent_us[DHT_ATTEMPTS_MAX];  /* when each went out */
	unsigned waiting[DHT_ATTEMPTS_MAX];  /* answers each may still bring */
	struct dhtkey hop[DHT_ATTEMPTS_MAX]; /* the neighbour it went to */
	bool has_hop[DHT_ATTEMPTS_MAX];      /* (none: it ended here, or it
					      * went to several peers) */
	bool stranded;            /* the latest attempt, placed here, went
				   * to fewer storing peers than wanted
				   * for want of links: the next starts
				   * when one comes up */
	unsigned blamed;          /* attempts whose neighbour was blamed
				   * for their silence (dht_attempt.c) */
	unsigned asked_at;        /* GET: 1 + its ASKED attempt, 0 none */
	bool not_found;           /* GET: an asked peer said it has none */
	int fail_status;          /* why the last FAIL said no */
	struct buf msg;           /* the first attempt's request, encoded */
	/* PUT, RPUT (replication also RGET's) */
	unsigned replication;
	unsigned quorum;          /* receipts that complete it */
	uint8_t put_hash[DHTMSG_HASH_LEN];
	unsigned n_receipts;
	struct dhtmsg_receipt receipts[DHTMSG_REPL_MAX];
	struct dhtkey storers[DHTMSG_REPL_MAX];
	uint8_t storer_attempts[DHTMSG_REPL_MAX]; /* bit i: the storer
						   * answered attempt i */
	unsigned n_refusers;      /* storing peers that FAILed it, each once */
	struct dhtkey refusers[DHTMSG_REPL_MAX];
	unsigned n_held;          /* valid receipts of storers we cannot
				   * vouch for (yet: see dht_answer.c) */
	struct dht_held {
		struct dhtmsg_receipt receipt;
		struct dhtkey storer;
		unsigned attempt; /* the one it answered */
	} held[DHTMSG_REPL_MAX];
	/* An answer that came while the request was being started, kept
	 * for dht_tick (callbacks never run inside dht_put and friends). */
	uint16_t later_type;
	struct buf later;
	struct dht_recset *recs;  /* RGET: the records merged so far */
};

/* The time our requests of one type took, for their attempts' timeouts
 * (Jacobson's estimator, as TCP's; samples from requests that took one
 * attempt only, so that a late answer to an earlier one is not taken for
 * a fast one). */
struct dht_rtt {
	uint64_t srtt_us;   /* 0: no sample yet */
	uint64_t rttvar_us;
};

struct dht {
	struct dht_env env;
	struct dht_cfg cfg;
	struct dhtkey self;
	struct rtable *rt;
	struct pathcache *paths;
	TAILQ_HEAD(, dht_op) ops;
	struct map *op_by_id; /* req_id -> op */
	struct dht_lru *peers;   /* neighbour -> its request bucket */
	struct dht_lru *origins; /* PUT signer -> bytes stored for it */
	struct dht_op *starting; /* the request of ours being started */
	struct dht_rtt rtt[5];   /* of our PUTs, GETs, FINDs, RPUTs and
				  * RGETs */
	bool looked_up_self;  /* the first self-lookup was sent */
	uint64_t deadline_told_us; /* the earliest deadline the owner knows
				    * of (see dht_next_deadline_us) */
	struct dht_counters c;
	struct dht_links *links;   /* the links chosen (dht_links.c) */
	struct dht_cc cc;          /* congestion control (dht_cc.c) */
	struct dht_bpcc *bpcc;     /* the neighbour queues (dht_bpcc.c) */
	struct ratelog log;        /* lines about peers' bad input */
	uint64_t last_seq;         /* of the last record we signed */
};

/* Requests placed at the replication peers closest to their key, each
 * of which answers (PUT, RPUT, RGET). */
static inline bool
dht_is_placed(uint16_t type)
{
	return type == FERRY_MSG_DHT_PUT || type == FERRY_MSG_DHT_RPUT ||
	    type == FERRY_MSG_DHT_RGET;
}

/* Requests whose answers are receipts (PUT, RPUT). */
static inline bool
dht_is_stored(uint16_t type)
{
	return type == FERRY_MSG_DHT_PUT || type == FERRY_MSG_DHT_RPUT;
}

/* dht.c */
/* Logs a drop a peer caused (a counter says how many there were), at
 * info level, a burst of 5 and then one a second, naming the peer and
 * how many lines were held back since the last (lib/ratelimit.h's
 * ratelog). */
void dht_log_drop(struct dht *d, const struct dhtkey *peer,
    const char *what);
/* The linked peer closest to key other than the n_avoid peers of avoid,
 * and closer to it than this node unless anywhere: 0 with *ret, or
 * -ENOENT. */
int dht_next_hop(struct dht *d, const struct dhtkey *key,
    const struct dhtkey *avoid, size_t n_avoid, bool anywhere,
    struct dhtkey *ret);
/* Up to n linked peers closest to key, and this node, closest first,
 * into ret; how many. */
size_t dht_closest_with_self(struct dht *d, const struct dhtkey *key,
    size_t n, struct dhtkey *ret);
uint64_t dht_now(const struct dht *d);
/* Neighbour peer failed to answer once more (an attempt or BPCC's queue
 * timed out): rtable_failed(), unless it is the only linked neighbour.
 * Whether it left the table (counted in dht.entries_failed). */
bool dht_entry_failed(struct dht *d, const struct dhtkey *peer);

/* dht_limit.c */
/* Makes the tables of limits: 0 or -ENOMEM. dht_limit_done frees them
 * (also after a failed init). */
int dht_limit_init(struct dht *d);
#define DHT_FAIL_SHARE 4 /* FAILs for requests over REQUEST_RATE: at
			  * most a quarter of that a second */

enum dht_limit_verdict {
	DHT_LIMIT_TAKEN, /* within the neighbour's allowance */
	DHT_LIMIT_FAIL,  /* over it: answer FAIL (rate) */
	DHT_LIMIT_DROP,  /* over it, and over the FAILs' allowance too */
};

/* Takes a token of from's request allowance, or of its allowance of
 * FAILs when it has none left. */
enum dht_limit_verdict dht_limit_take(struct dht *d,
    const struct dhtkey *from);
/* Charges len bytes stored to the origin that signed a PUT: false if
 * that takes it over cfg.origin_quota (nothing charged then). */
bool dht_origin_charge(struct dht *d, const uint8_t pk[FERRY_PUBKEY_LEN],
    size_t len);
void dht_limit_done(struct dht *d);

/* dht_links.c: the links the DHT asks for and drops. */
/* Sets up d->links and its counters (after the env is copied). 0 or
 * -ENOMEM; dht_links_free() cleans up either way. */
int dht_links_new(struct dht *d);
void dht_links_free(struct dht *d);
/* Asks the env for a link to peer unless it is linked; counted. 0 or
 * env.link's error. */
int dht_links_ask(struct dht *d, const struct dhtkey *peer,
    const void *helo, size_t helo_len);
/* Events: a link came up or went down; a message came from peer. */
void dht_links_up(struct dht *d, const struct dhtkey *peer);
void dht_links_down(struct dht *d, const struct dhtkey *peer);
void dht_links_used(struct dht *d, const struct dhtkey *peer);
/* Links the table's entries and drops surplus links, once a second. */
void dht_links_tick(struct dht *d);

/* dht_route.c */
/* A request, from a peer or (from NULL) from us; body is its encoding. */
void dht_route_request(struct dht *d, const struct dhtkey *from,
    const struct dhtmsg_req *req);
/* Routes again a request (fw: as dht_forward passed it on) that its next
 * hop could not take (BPCC gave it up): to another hop, or it ends here,
 * as if that hop were not there. */
void dht_route_resume(struct dht *d, const struct dhtkey *from,
    const struct dhtmsg_req *fw);

/* A store operation under way for a peer's request: what the answer
 * needs once the store calls back (dht_route.c). */
struct dht_pending {
	struct dht *d;
	struct dhtmsg_req req; /* helo points into buf; no block or value */
	struct dhtkey prev;    /* hop it came from */
	bool has_prev;
	uint8_t put_hash[DHTMSG_HASH_LEN];
	uint8_t *buf;          /* owned copy of the helo */
};
/* A copy of req (from prev, may be NULL) for a store call's callback:
 * NULL if memory is short. */
struct dht_pending *dht_pending_new(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *prev);
void dht_pending_free(struct dht_pending *p);
/* Answers req (from prev, may be NULL) with FAIL code. */
void dht_fail(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *prev, uint16_t code);

/* dht_records.c: the records of a topic, at storing peers and for our
 * own RGETs. */
/* Whether an RPUT from from (NULL: ours) may be stored: signed by its
 * signer, not expired, not expiring past RECORD_LIFETIME; refused (a
 * FAIL to its requester) and counted if not. */
bool dht_records_check(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from);
/* Keeps a checked RPUT here and answers with a receipt once durable. */
void dht_records_store(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from);
/* Answers an RGET with the records held here. */
void dht_records_serve(struct dht *d, const struct dhtmsg_req *req,
    const struct dhtkey *from);
/* A RECORDS answer a for attempt i of op (which may end). */
void dht_records_answer(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtmsg_ans *a);
/* A FAIL of a storing peer (responder) for attempt i of op, an RGET:
 * counted once; op ends when every storing peer answered. */
void dht_records_refused(struct dht *d, struct dht_op *op, unsigned i,
    const struct dhtkey *responder);
/* Whether op is an RGET some storing peer answered, which may end with
 * what it has. */
bool dht_records_some(const struct dht_op *op);
/* Ends op, an RGET, with the records merged (status 0) if some storing
 * peer answered, else as failed. */
void dht_records_finish(struct dht *d, struct dht_op *op);
/* An RGET's empty record set; NULL if memory is short. */
struct dht_recset *dht_records_new(void);
/* Frees op's record set (NULL allowed). */
void dht_records_free(struct dht_recset *rs);

/* dht_answer.c */
/* Sends an answer toward a->requester: to ourselves, directly if linked,
 * else back to prev (the hop its request came from; NULL: none) with the
 * requester's helo used to ask for a link for the next time. */
void dht_answer_send(struct dht *d, struct dhtmsg_ans *a,
    const struct dhtkey *prev, const uint8_t *helo, size_t helo_len);
/* An answer from a peer (from) or from ourselves (from NULL). */
void dht_answer_receive(struct dht *d, const struct dhtkey *from,
    uint16_t type, const void *body, size_t len);
/* Delivers the answer kept in op->later (see dht_answer_receive). */
void dht_answer_later(struct dht *d, struct dht_op *op);
/* A link to peer came up: the receipts it signed for our PUTs, held
 * until we could vouch for it, count now. */
void dht_answer_vouch(struct dht *d, const struct dhtkey *peer);
/* Counts (and logs) the receipts op still holds, as it ends. */
void dht_answer_unvouched(struct dht *d, struct dht_op *op);
/* Starts an answer to req from this node, with the fixed fields set. */
void dht_answer_init(const struct dht *d, const struct dhtmsg_req *req,
    uint16_t type, struct dhtmsg_ans *ret);

/* dht_ops.c */
struct dht_op *dht_op_find(struct dht *d, uint64_t req_id);
/* Ends op with r (its status and fields); frees op. */
void dht_op_finish(struct dht *d, struct dht_op *op, struct dht_result *r);
/* Ends op having failed: with the status its answers gave. */
void dht_op_fail(struct dht *d, struct dht_op *op);
/* Ends every request with -ECANCELED. */
void dht_ops_cancel_all(struct dht *d);
/* A FIND of our own for key, whose answer only fills the table. */
void dht_ops_lookup(struct dht *d, const struct dhtkey *key);

/* dht_attempt.c */
/* Encodes req (with its fields but the header's set) into op->msg, the
 * request every attempt sends. 0, -EINVAL or -ENOMEM. */
int dht_attempt_prepare(struct dht *d, struct dht_op *op,
    struct dhtmsg_req *req);
/* Sends op's first attempt: routed as anyone's request, we its first
 * hop (a wide GET asks the holders). op->attempts stays 0 if it could
 * not be made (no memory). */
void dht_attempt_first(struct dht *d, struct dht_op *op);
/* The latest attempt of op waits its timeout from now (the scheme's
 * may have changed: an ACK came). */
void dht_attempt_rearm(struct dht *d, struct dht_op *op);
/* The attempt of op that req_id names, or -1. */
int dht_attempt_of(const struct dht_op *op, uint64_t req_id);
/* Attempt i of op brought n of the answers it may bring (or, n = 0, all
 * it will: it went no further). When no attempt has any left to bring,
 * the next starts (not asking bad, which may be NULL), or at the latest
 * attempt's timeout if its neighbour refused it for now, or op fails if
 * none can: op may be freed. */
void dht_attempt_answered(struct dht *d, struct dht_op *op, unsigned i,
    unsigned n, const struct dhtkey *bad);
/* Attempt i of op was answered FAIL 8 (a hop's queue was at its bound):
 * if it is the latest and the only way it went, and nothing of it came
 * back yet, it is taken back, not counted, and sent again after a short
 * wait that doubles with each such refusal of op, at most the attempt's
 * timeout; true then. False if it stands as an attempt that failed on
 * its path (another went with it, or op's request ids ran out). */
bool dht_attempt_busy_again(struct dht *d, struct dht_op *op, unsigned i);
/* Starts op's next attempt, if it has one left and there is a way to
 * send it: 0 if it did; -EAGAIN or -ENOBUFS if the neighbour it was for
 * refused it for now (no attempt used: one may go later), else another
 * negative errno. bad (may be NULL) is a peer not to ask. */
int dht_attempt_next(struct dht *d, struct dht_op *op,
    const struct dhtkey *bad);
/* A request of ours ended well after started_us: the estimate of its
 * type learns from it. */
void dht_attempt_sample(struct dht *d, const struct dht_op *op);
/* Starts the next attempt of requests whose latest gave up, ends those
 * past their deadline. */
void dht_attempts_tick(struct dht *d);
/* A link came up: requests whose latest attempt was placed here on
 * fewer storing peers than wanted, for want of links, start their next
 * attempt now. */
void dht_attempts_link_up(struct dht *d);

#endif /* FERRY_DHT_DHT_INT_H */
