/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The intermediary's state (imd.h), shared by imd*.c. */
#ifndef FERRY_INTERMEDIARY_IMD_INT_H
#define FERRY_INTERMEDIARY_IMD_INT_H

#include "intermediary/imd.h"

#include <stdbool.h>
#include <sys/queue.h>

#include "dht/dht.h"
#include "intermediary/imdwire.h"
#include "intermediary/httpd.h"
#include "intermediary/rqueue.h"
#include "lib/ratelimit.h"

struct core;
struct event;
struct map;

#define IMD_CLIENTS_MAX    65536 /* clients whose rate and quota are kept */
#define IMD_FETCH_KEYS     4096  /* keys in one POST /v1/fetch */
/* Records in one POST /v1/blocks: its answer, held until the body ends,
 * is about 190 bytes a record. */
#define IMD_UPLOAD_RECORDS 4096
#define IMD_FETCH_WINDOW   16 /* of them fetched at once */
#define IMD_QUOTA_HOURS    24 /* CLIENT_QUOTA's window */

/* The federation's settings ([intermediary] of ferryd.conf(5)). */
struct imd_fed_cfg {
	uint64_t lifetime_s; /* ANNOUNCE_LIFETIME */
	uint64_t lookup_us;  /* LOOKUP_INTERVAL */
	uint64_t here_us;    /* HERE_INTERVAL */
	uint64_t timeout_us; /* FORWARD_TIMEOUT */
	unsigned in_flight;  /* FORWARD_IN_FLIGHT: batches unacknowledged */
	unsigned clients;    /* FORWARD_CLIENTS: clients forwarded, and
				  * clients told of, at once */
	unsigned here_rate;  /* HERE_RATE: HEREs checked a second */
};

struct imd_cfg {
	char listen[128];
	char cert[1024];
	char key[1024];
	char public_url[256];
	uint64_t skew_s;        /* CLOCK_SKEW */
	struct httpd_cfg http;  /* MAX_HEADER_BYTES, MAX_REQUEST_BYTES,
				  * MAX_CONNECTIONS(_PER_ADDRESS),
				  * ADDRESS_RATE, REQUEST_TIMEOUT */
	double client_rate;     /* CLIENT_RATE */
	uint64_t client_quota;  /* CLIENT_QUOTA, bytes per 24 h; 0: none */
	uint64_t max_in_flight; /* MAX_IN_FLIGHT, relayed bytes */
	uint64_t max_nonces;    /* MAX_NONCES */
	uint64_t leave_us;      /* LEAVE_TIMEOUT; 0: leave at once */
	struct imd_fed_cfg fed;
};

/* intermediary.* */
struct imd_counters {
	struct httpd_counters http;
	uint64_t *unauthorized;    /* 401 unauthorized */
	uint64_t *stale;           /* 401 stale */
	uint64_t *replayed;        /* 401 replayed */
	uint64_t *rate;            /* 429 */
	uint64_t *quota;           /* 403 */
	uint64_t *not_found;       /* 404 of a path */
	uint64_t *method;          /* 405 */
	uint64_t *nonces_full;     /* 503: the replay cache is full */
	uint64_t *uploads;         /* POST /v1/blocks answered 200 */
	uint64_t *records_relayed; /* PUTs relayed */
	uint64_t *records_refused; /* records refused alone */
	uint64_t *bytes_relayed;   /* their blocks' bytes */
	uint64_t *relays_stored;   /* relays that ended with receipts */
	uint64_t *relays_failed;   /* relays that ended without */
	uint64_t *receipts;        /* storing peers' receipts relayed */
	uint64_t *in_flight_waits; /* uploads paused at MAX_IN_FLIGHT */
	uint64_t *blocks_fetched;  /* blocks sent to clients */
	uint64_t *blocks_missing;  /* asked and not found, or timed out */
	uint64_t *results_lost;    /* relay results the queue refused at once */
	/* the federation (FEDERATION in ferry-intermediary(7)) */
	uint64_t *fed_announced;         /* announcements stored */
	uint64_t *fed_announce_failed;   /* and not */
	uint64_t *fed_lookups;           /* lookups of the topic answered */
	uint64_t *fed_lookup_failed;     /* and not */
	uint64_t *fed_records_bad;       /* records whose value is no
					* announcement, or a bad URL */
	uint64_t *fed_withdrawn;         /* others' withdrawals taken: an
					  * intermediary forgotten */
	uint64_t *fed_left;              /* our withdrawal stored at
					  * shutdown */
	uint64_t *fed_msg_bad;           /* inner messages malformed */
	uint64_t *fed_here_sent;         /* HEREs sent */
	uint64_t *fed_here_accepted;     /* HEREs taken as proof */
	uint64_t *fed_here_forged;       /* refused: a signature that is not
					* the client's for a take at the
					* sender */
	uint64_t *fed_here_stale;        /* refused: TIME off CLOCK_SKEW */
	uint64_t *fed_here_dropped;      /* over HERE_RATE or FORWARD_CLIENTS */
	uint64_t *fed_batches_sent;      /* ENTRIES sent */
	uint64_t *fed_batches_resent;    /* of them again, unacknowledged */
	uint64_t *fed_entries_forwarded; /* entries the other acknowledged */
	uint64_t *fed_batches_received;  /* ENTRIES taken */
	uint64_t *fed_entries_received;  /* their entries */
	uint64_t *fed_entries_unwanted;  /* ENTRIES for a client that takes
					  * nothing here */
	uint64_t *fed_receipts_bad;      /* forwarded receipts that fail their
					* signature, dropped */
	uint64_t *fed_acks_bad;          /* ACKs of no batch in flight */
	uint64_t *fed_forwarding;        /* gauge: clients being forwarded */
};

/* What the federation needs of the node below (imd_net.c fills it from
 * the core; ids are peer ids). Pointers are borrowed for the call. */
struct imd_net {
	void *cls;
	/* 0, -ENOTCONN (no link), -EAGAIN (its queue is full), ... */
	int (*send)(void *cls, const uint8_t peer[IMDWIRE_ID_LEN],
	    uint16_t type, const void *body, size_t len);
	bool (*linked)(void *cls, const uint8_t peer[IMDWIRE_ID_LEN]);
	/* Asks for a link, learning helos (may be empty) first. */
	int (*link)(void *cls, const uint8_t peer[IMDWIRE_ID_LEN],
	    const void *helos, size_t len);
	/* This node's signed HELOs into buf; their length (0: none). */
	size_t (*own_helos)(void *cls, uint8_t *buf, size_t size);
};

struct imd_fwd;
struct imd_here;
/* A DHT request of the federation; outlives imd when the DHT has not
 * ended it (imd NULL then). */
struct imd_dhtreq {
	struct imd *imd;
};
TAILQ_HEAD(imd_fwd_list, imd_fwd);
TAILQ_HEAD(imd_here_list, imd_here);

/* The federation's state (imd_announce.c, imd_fwd.c, imd_here.c). */
struct imd_fed {
	struct imd_net net;
	struct core *core;   /* whose handler imd_net.c set; NULL: none */
	struct dhtkey topic; /* FEDMSG_TOPIC_NAME's hash */
	struct event *tick;  /* every IMD_FED_TICK_US */
	uint64_t next_announce_us;
	uint64_t next_lookup_us;
	struct imd_dhtreq *announcing; /* the DHT request out, or NULL */
	struct imd_dhtreq *looking;
	struct imd_dhtreq *withdrawing; /* leaving: the withdrawal out */
	bool leaving;                   /* no more announcements, lookups */
	struct map *fwds; /* client -> struct imd_fwd (we forward) */
	struct imd_fwd_list fwd_list;
	struct imd_fwd_list fwd_waiting; /* for an in-flight slot */
	size_t n_fwds;
	unsigned in_flight; /* batches sent, unacknowledged */
	struct map *heres;  /* client -> struct imd_here (takes here) */
	struct imd_here_list here_lru; /* least recently told first */
	size_t n_heres;
	unsigned pushes;          /* forwarded batches being pushed here */
	struct ratelimit here_rl; /* HERE_RATE */
	struct ratelog log;       /* refusals, at a bounded rate */
};
#define IMD_FED_TICK_US 250000
#define IMD_FED_PUSHES  64 /* forwarded batches pushed at once */

/* What the intermediary keeps of one client key. */
struct imd_client {
	uint8_t key[IMDWIRE_KEY_LEN];
	struct ratelimit rl;               /* CLIENT_RATE */
	uint64_t hour[IMD_QUOTA_HOURS];    /* bytes relayed in that hour */
	uint64_t hour_no[IMD_QUOTA_HOURS]; /* which hour (s / 3600) */
	TAILQ_ENTRY(imd_client) link;      /* least recently seen first */
};

struct imd_upload;
struct imd_relay;
struct imd_fetch;

/* What a request's data (httpd_req_data) is: the first member of struct
 * imd_upload and struct imd_fetch. */
enum imd_job { IMD_JOB_UPLOAD = 1, IMD_JOB_FETCH, IMD_JOB_RECEIPTS };

struct imd {
	struct event_base *base;
	struct stats *stats;
	struct dht *dht;
	uint8_t id[IMDWIRE_ID_LEN]; /* this peer's id */
	char id_str[64];            /* and its base32 */
	uint64_t start_s;           /* requests signed before are stale */
	struct imd_cfg cfg;
	struct imd_counters c;
	struct httpd *http;
	struct rqueue *queue;        /* the clients' receipts */
	struct rqueue_cfg queue_cfg; /* what it was opened with */
	struct nonces *nonces;
	struct map *clients; /* key -> struct imd_client */
	TAILQ_HEAD(, imd_client) client_lru;
	size_t n_clients;
	uint64_t in_flight;               /* bytes of relays not ended */
	TAILQ_HEAD(, imd_upload) waiting; /* paused at MAX_IN_FLIGHT */
	TAILQ_HEAD(, imd_relay) relays;   /* PUTs the DHT has not ended */
	TAILQ_HEAD(, imd_fetch) fetches;  /* fetches with GETs out */
	struct event *wake; /* resumes them outside DHT callbacks */
	struct imd_peer peers[IMD_PEERS_MAX];
	size_t n_peers;
	struct imd_fed fed;
	struct {
		struct event *tick;   /* while leaving (imd_leave.c) */
		uint64_t deadline_us; /* LEAVE_TIMEOUT from its start */
		imd_left_fn *left;
		void *cls;
	} leave;
	struct ratelog log; /* refusals, at a bounded rate */
};

/* imd_cfg.c: reads [intermediary] into ret; logs each problem. 0 or
 * -EINVAL. */
int imd_cfg_read(struct cfg *cfg, struct imd_cfg *ret);
/* imd.c: a refusal logged at a bounded rate. */
void imd_log_refusal(struct imd *imd, const struct httpd_req *req,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* imd_clients.c */
struct imd_client *imd_client_get(struct imd *imd,
    const uint8_t key[IMDWIRE_KEY_LEN]);
bool imd_client_take(struct imd *imd, struct imd_client *cl);
bool imd_client_over_quota(struct imd *imd, struct imd_client *cl,
    uint64_t add);
void imd_client_charge(struct imd *imd, struct imd_client *cl, uint64_t n);
void imd_clients_free(struct imd *imd);
/* imd_upload.c: POST /v1/blocks of an authenticated client. */
void imd_upload_start(struct imd *imd, struct httpd_req *req,
    const uint8_t client[IMDWIRE_KEY_LEN]);
void imd_upload_body(struct imd *imd, struct httpd_req *req,
    struct evbuffer *body, bool fin);
void imd_upload_done(struct imd *imd, struct httpd_req *req);
/* Relays ended: uploads waiting for room go on. */
void imd_upload_wake(struct imd *imd);
/* The intermediary goes: relays and fetches still out end unheard. */
void imd_upload_detach(struct imd *imd);
void imd_fetch_detach(struct imd *imd);
/* imd_fetch.c: POST /v1/fetch and GET /v1/blocks/KEY. */
void imd_fetch_start(struct imd *imd, struct httpd_req *req);
void imd_fetch_body(struct imd *imd, struct httpd_req *req,
    struct evbuffer *body, bool fin);
void imd_fetch_one(struct imd *imd, struct httpd_req *req, const char *key);
void imd_fetch_drain(struct imd *imd, struct httpd_req *req);
void imd_fetch_done(struct imd *imd, struct httpd_req *req);
/* imd_receipts.c: GET /v1/receipts of an authenticated client. */
void imd_receipts_start(struct imd *imd, struct httpd_req *req,
    const struct imdwire_auth *a);
void imd_receipts_done(struct imd *imd, struct httpd_req *req);
/* Queues the end of a relay and its receipts for client. */
void imd_receipts_push(struct imd *imd, const uint8_t client[IMDWIRE_KEY_LEN],
    const struct dhtkey *key, const uint8_t put_hash[32],
    const struct dht_result *r);
/* imd_peers.c: GET /v1/intermediaries. */
void imd_peers_reply(struct imd *imd, struct httpd_req *req);
/* Whether id is an intermediary known now. */
bool imd_peer_is_known(struct imd *imd, const uint8_t id[IMDWIRE_ID_LEN]);

/* imd_cfg.c: the federation's keys into ret. 0 or -EINVAL (logged). */
int imd_cfg_fed(struct cfg *cfg, struct imd_fed_cfg *ret);
/* imd_net.c: the core below as struct imd_net, and its messages of
 * FERRY_MSG_IMD_MIN..MAX to imd_fed_receive(). 0 or -ENOMEM, -EEXIST. */
int imd_net_attach(struct imd *imd, struct core *core);
void imd_net_detach(struct imd *imd);
/* imd_fed.c: starts the federation (timers, maps); 0 or -ENOMEM. */
int imd_fed_start(struct imd *imd);
void imd_fed_stop(struct imd *imd);
/* A message of another intermediary (or any peer) from over a link. */
void imd_fed_receive(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    uint16_t type, const void *body, size_t len);
/* imd_announce.c: the announcement and the lookups, when due. */
void imd_announce_tick(struct imd *imd, uint64_t now_us);
/* Replaces the announcement with a withdrawal (an empty record), in
 * fed.withdrawing until the DHT ends it. 0 or a negative errno. */
int imd_announce_withdraw(struct imd *imd);
/* imd_peers.c: forgets intermediary id; whether it was known. */
bool imd_peer_forget(struct imd *imd, const uint8_t id[IMDWIRE_ID_LEN]);
/* imd_leave.c: ends leaving, unheard (the intermediary goes). */
void imd_leave_stop(struct imd *imd);
/* imd_here.c: B's side. A take of client at this intermediary (its
 * Authorization a and the target it signed) is told to the others. */
void imd_here_take(struct imd *imd, const struct imdwire_auth *a,
    const char *target);
void imd_here_entries(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    const uint8_t *body, size_t len);
void imd_here_tick(struct imd *imd, uint64_t now_us);
void imd_here_free_all(struct imd *imd);
/* imd_fwd.c: A's side. */
void imd_fwd_here(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    const uint8_t *body, size_t len);
void imd_fwd_ack(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    const uint8_t *body, size_t len);
/* client made an authenticated request here: its entries are no longer
 * forwarded elsewhere (until another HERE). */
void imd_fwd_local(struct imd *imd, const uint8_t client[IMDWIRE_KEY_LEN]);
/* Entries were queued for client: a forward of them goes on. */
void imd_fwd_kick(struct imd *imd, const uint8_t client[IMDWIRE_KEY_LEN]);
void imd_fwd_tick(struct imd *imd, uint64_t now_us);
void imd_fwd_free_all(struct imd *imd);

#endif /* FERRY_INTERMEDIARY_IMD_INT_H */
