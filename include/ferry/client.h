/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry: the client library applications use to talk to a local ferryd
 * over its UNIX socket (protocol in <ferry/proto.h> and ferry-client(7)).
 * Calls block until the daemon answers; messages that arrive meanwhile
 * are kept for ferry_receive(). A client is not thread-safe: use one per
 * thread. Every function returning int gives 0 on success or a negative
 * errno: -ECONNREFUSED/-ENOENT no daemon on the socket, -ECONNRESET the
 * daemon went away, -ETIMEDOUT, -EPROTO a malformed reply, or the status
 * the daemon sent (for instance -ENOTCONN: peer not connected; for the
 * ferry_dht_* calls, the DHT is not running).
 */
#ifndef FERRY_CLIENT_H
#define FERRY_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ferry_client;

struct ferry_transport_info {
	char *name;	   /* "udp" */
	uint16_t protocol; /* FERRY_PROTO_* */
	uint32_t mtu;	   /* bytes */
	uint32_t cost;	   /* relative; lower is preferred */
};

struct ferry_status {
	struct ferry_peer_id id;	 /* the daemon's identity */
	char *version;			 /* "0.1.0" */
	uint64_t uptime_ms;		 /* since the daemon started */
	size_t n_transports;		 /* entries in transports */
	struct ferry_transport_info *transports; /* loaded transports */
};

struct ferry_peer_info {
	struct ferry_peer_id id; /* the connected peer */
	uint64_t age_ms;	 /* time since the link came up */
	uint16_t protocol;	 /* transport in use, FERRY_PROTO_* */
	char transport[32];	 /* its name */
	char address[256];	 /* the peer's address on it, for humans */
};

struct ferry_stat {
	char *name;	/* "udp.bytes_out" */
	uint64_t value; /* counter value */
};

struct ferry_message {
	struct ferry_peer_id peer; /* sender */
	uint16_t type;		   /* application message type */
	size_t len;		   /* bytes in data */
	const uint8_t *data;	   /* valid until the next ferry_receive() */
};

struct ferry_ping_result {
	uint32_t count;	   /* round trips completed */
	uint64_t total_ns; /* sum of their times */
	uint64_t min_ns;   /* fastest */
	uint64_t max_ns;   /* slowest */
};

/* A DHT key: BLAKE2b-256 of a block's bytes, in the space of peer ids. */
#define FERRY_DHT_KEY_STRLEN	(2 * FERRY_DHT_KEY_LEN) /* lowercase hex */

struct ferry_dht_key {
	uint8_t bytes[FERRY_DHT_KEY_LEN];
};

/* A storing peer's signed promise to keep a block (ferry-protocol(7)). */
struct ferry_dht_receipt {
	struct ferry_peer_id storer;		 /* the peer that holds it */
	uint64_t expiry;			 /* until then, s since epoch */
	uint8_t put_hash[FERRY_DHT_HASH_LEN];	 /* the signed PUT honoured */
	uint8_t storer_pk[FERRY_PUBKEY_LEN];	 /* storer's Ed25519 key */
	uint8_t sig[FERRY_SIG_LEN];		 /* by storer_pk */
};

/* One bucket of the daemon's routing table. */
struct ferry_dht_bucket {
	uint16_t prefix;  /* bits its peers share with the daemon's id */
	uint16_t entries; /* peers in it */
};

/* One neighbour's BPCC queue, or a neighbour the daemon holds. */
struct ferry_dht_bpcc_peer {
	struct ferry_peer_id id; /* the peer */
	uint32_t depth;		/* requests waiting for it */
	uint32_t blocked_ms;	/* since it last took one, if blocked */
	uint8_t flags;		/* FERRY_DHT_BPCC_* of <ferry/proto.h> */
};

/* BPCC ([dht] CONGESTION = bpcc, ferryd.conf(5)). */
struct ferry_dht_bpcc {
	uint32_t queue;		/* BPCC_QUEUE */
	uint32_t block_max_ms;	/* BPCC_BLOCK_MAX */
	uint32_t depth;		/* requests waiting in all queues */
	uint32_t blocked;	/* queues whose neighbour refuses now */
	uint32_t held;		/* neighbours held now */
	uint64_t holds;		/* holds started */
	uint64_t releases;	/* and ended */
	uint64_t block_timeouts; /* queues given up after BPCC_BLOCK_MAX */
	uint64_t failed_over;	/* their requests routed another way */
	uint64_t fails;		/* and answered FAIL */
	uint64_t overflow;	/* requests refused at a queue's hard bound */
	size_t n_peers;
	struct ferry_dht_bpcc_peer *peers; /* deepest queue first */
};

/* The congestion control of the daemon's requests ([dht] CONGESTION,
 * ferryd.conf(5)); a scheme's figures it does not keep are 0. */
struct ferry_dht_cc {
	uint8_t scheme;		/* FERRY_DHT_CC_NONE, _CSCC or _BPCC */
	uint32_t waiting;	/* requests waiting for it to start them */
	uint32_t in_flight;	/* CSCC: out and unacknowledged */
	double credits;		/* CSCC's credits */
	double ssthresh;	/* its slow-start threshold */
	uint32_t rtt_us;	/* its round-trip estimate, 0: none yet */
	uint32_t rto_us;	/* its retransmission timeout */
	uint64_t retransmits;	/* attempts sent again: no ACK in time */
	uint64_t losses;	/* losses CSCC took */
	uint64_t drops;		/* requests a full send queue refused */
	uint64_t duplicates;	/* requests answered here more than once */
	uint64_t refused;	/* requests refused: CC_QUEUE were waiting */
};

struct ferry_dht_status {
	uint16_t k;		/* bucket size */
	uint16_t replication;	/* storing peers of a PUT by default */
	uint32_t entries;	/* peers in the routing table */
	uint32_t cached;	/* replacements waiting for a place */
	uint32_t buckets_used;	/* buckets holding a peer */
	uint64_t blocks;	/* blocks the daemon stores */
	uint64_t bytes;		/* their bytes */
	uint64_t quota;		/* the most bytes it stores */
	size_t n_buckets;	/* entries in buckets */
	struct ferry_dht_bucket *buckets; /* the non-empty ones, in order */
	struct ferry_dht_bpcc *bpcc; /* NULL unless the daemon runs BPCC */
	struct ferry_dht_cc *cc; /* NULL from a daemon that sends none */
};

/* Writes the socket path ferryd uses by default (environment variable
 * FERRY_SOCKET, else the runtime directory) into buf. 0 or -ENAMETOOLONG. */
int ferry_default_socket(char *buf, size_t size);

/* Connects to the daemon; path NULL means ferry_default_socket(). */
int ferry_client_open(const char *path, struct ferry_client **ret_client);
/* Closes the connection and frees the client. NULL is allowed. */
void ferry_client_close(struct ferry_client *client);
/* The socket, for poll(); readable means ferry_receive() may not block. */
int ferry_client_fd(const struct ferry_client *client);
/* Sets how long a request waits for its answer (default 10 s; -1: forever). */
void ferry_client_set_timeout(struct ferry_client *client, int timeout_ms);

/* Daemon identity, version, uptime and transports. Free with
 * ferry_status_free(). */
int ferry_status(struct ferry_client *client, struct ferry_status **ret);
void ferry_status_free(struct ferry_status *status);
/* Asks the daemon to shut down; returns once it has agreed. */
int ferry_shutdown(struct ferry_client *client);

/* Subscribes to application message types (>= FERRY_APP_TYPE_MIN). */
int ferry_register(struct ferry_client *client, const uint16_t *types,
    size_t n);
/*
 * Queues one message to a peer. Returns once the bytes are buffered;
 * blocks while the daemon applies back-pressure. Delivery is not
 * confirmed: messages are unreliable, as the network is.
 * -EMSGSIZE above FERRY_APP_MSG_MAX, -EINVAL for a reserved type.
 */
int ferry_send(struct ferry_client *client, const struct ferry_peer_id *peer,
    uint16_t type, const void *data, size_t len);
/* Like ferry_send(), then waits for the daemon's verdict: 0 queued for the
 * peer, -ENOTCONN no link to it, -EAGAIN its queue is full. */
int ferry_send_confirmed(struct ferry_client *client,
    const struct ferry_peer_id *peer, uint16_t type, const void *data,
    size_t len);
/* Writes out everything buffered by ferry_send(). */
int ferry_flush(struct ferry_client *client);
/* Waits up to timeout_ms (-1: forever, 0: poll) for a message. 0 with
 * *ret filled, or -ETIMEDOUT. */
int ferry_receive(struct ferry_client *client, struct ferry_message *ret,
    int timeout_ms);

/* Connected peers. Free with ferry_peers_free(). */
int ferry_peers(struct ferry_client *client, struct ferry_peer_info **ret,
    size_t *ret_n);
void ferry_peers_free(struct ferry_peer_info *peers);
/* The daemon's own HELOs as a "ferry://" string. Free with free(). */
int ferry_hello(struct ferry_client *client, char **ret_uri);
/* Hands the daemon a "ferry://" string to validate and connect to. */
int ferry_connect_uri(struct ferry_client *client, const char *uri);
/* count sequential core round trips with payload_len bytes each. */
int ferry_ping(struct ferry_client *client, const struct ferry_peer_id *peer,
    uint32_t count, uint16_t payload_len, uint32_t timeout_ms,
    struct ferry_ping_result *ret);
/* All statistics counters. Free with ferry_stats_free(). */
int ferry_stats(struct ferry_client *client, struct ferry_stat **ret,
    size_t *ret_n);
void ferry_stats_free(struct ferry_stat *stats, size_t n);

/*
 * The DHT. Its requests wait the client's timeout plus 5 s, so that the
 * daemon's verdict when the DHT gives up comes first. Besides the errors
 * above, each may return what the DHT said: -ENOTCONN the daemon runs no
 * DHT, -ETIMEDOUT no answer in time, -EHOSTUNREACH no route toward the
 * key, -EAGAIN too many requests in flight on this connection or a peer
 * over its limit, -ECANCELED the daemon is shutting down.
 */
/*
 * Stores len bytes (1 to FERRY_DHT_BLOCK_MAX; the daemon may refuse
 * more than its own largest with -EMSGSIZE) at replication peers (0: the
 * daemon's default, at most FERRY_DHT_REPL_MAX) until expiry (seconds
 * since the epoch; 0: the daemon's default lifetime, a day). 0 when every
 * storing peer sent its receipt: *ret_key is the block's key, and
 * *ret_receipts (free it with free(); may be NULL, then so may ret_n)
 * the *ret_n receipts as the DHT checked them. -EIO when fewer came back,
 * with the outputs written all the same (the receipts that came, maybe
 * none). When none came and the storing peers said why: -ENOSPC they
 * are full, -EDQUOT they hold all they take from this daemon's key,
 * -EREMOTEIO their disks failed to take it (an I/O error, a read-only
 * disk).
 * -EINVAL for a bad argument or a value the daemon refuses (expiry in
 * the past), -EMSGSIZE.
 */
int ferry_dht_put(struct ferry_client *client, const void *data, size_t len,
    unsigned replication, uint64_t expiry, struct ferry_dht_key *ret_key,
    struct ferry_dht_receipt **ret_receipts, size_t *ret_n);
/* Fetches the block of key, checks that it hashes to key (-EBADMSG if
 * not) and returns a copy in *ret_data (free it with free()). -ENOENT
 * when no peer holds it, -ENOBUFS when the daemon holds too many answers
 * for this connection to queue it (read them first). */
int ferry_dht_get(struct ferry_client *client, const struct ferry_dht_key *key,
    uint8_t **ret_data, size_t *ret_len);
/* The want (1 to FERRY_DHT_FIND_MAX) peers closest to key, closest
 * first, maybe fewer; free *ret with free(). */
int ferry_dht_find(struct ferry_client *client, const struct ferry_dht_key *key,
    unsigned want, struct ferry_peer_id **ret, size_t *ret_n);
/* The routing table and the block store. Free with
 * ferry_dht_status_free(). */
int ferry_dht_status(struct ferry_client *client,
    struct ferry_dht_status **ret);
void ferry_dht_status_free(struct ferry_dht_status *status);

/*
 * Asynchronous DHT requests: many in flight on one client, each named by
 * the req_id its start call gives, their ends collected with
 * ferry_dht_next() in the order they come. A start call queues the
 * request and writes what the socket takes without waiting;
 * ferry_dht_next() writes the rest. At most FERRY_DHT_ASYNC_MAX (the
 * daemon's bound for one connection) are in flight or ended and not
 * collected: another start gives -EAGAIN. Each gives up, -ETIMEDOUT, as
 * its blocking form does (the client's timeout plus 5 s). Other calls
 * may be made on the same client meanwhile: the replies to the
 * asynchronous requests that come during them are kept.
 */
#define FERRY_DHT_ASYNC_MAX 64

/* How an asynchronous request ended. */
struct ferry_dht_end {
	uint32_t req_id;             /* what its start call gave */
	uint16_t op;                 /* FERRY_C_DHT_PUT, _GET or _FIND */
	int status;                  /* what the blocking call returns */
	struct ferry_dht_key key;    /* the block's (PUT), the one asked */
	uint8_t *data;               /* GET: the block, checked, or NULL */
	size_t len;                  /* its bytes */
	struct ferry_peer_id *peers; /* FIND: closest first, or NULL */
	size_t n_peers;
	size_t receipts; /* PUT: the receipts that came */
	struct ferry_dht_receipt *receipt_list; /* PUT: those receipts, as
	                                         * the DHT checked them, or
	                                         * NULL when none came */
};
/* Starts a PUT as ferry_dht_put() does; the key is in the end. */
int ferry_dht_put_start(struct ferry_client *client, const void *data,
    size_t len, unsigned replication, uint64_t expiry, uint32_t *ret_req_id);
/* Starts a GET as ferry_dht_get() does. */
int ferry_dht_get_start(struct ferry_client *client,
    const struct ferry_dht_key *key, uint32_t *ret_req_id);
/* Starts a FIND as ferry_dht_find() does. */
int ferry_dht_find_start(struct ferry_client *client,
    const struct ferry_dht_key *key, unsigned want, uint32_t *ret_req_id);
/* Waits up to timeout_ms (0: not at all, -1: forever) for an
 * asynchronous request to end: 0 with *ret filled (free it with
 * ferry_dht_end_free()), -ETIMEDOUT none has ended yet, -ENOENT none is
 * in flight. When the connection breaks, each request in flight ends
 * with its error. */
int ferry_dht_next(struct ferry_client *client, int timeout_ms,
    struct ferry_dht_end *ret);
/* Frees what an end holds (not the struct). NULL is allowed. */
void ferry_dht_end_free(struct ferry_dht_end *end);
/* Asynchronous requests in flight or ended and not collected. */
unsigned ferry_dht_pending(const struct ferry_client *client);

/* The key of a block: BLAKE2b-256 of its bytes. 0, or -EINVAL. */
int ferry_dht_key_of(const void *data, size_t len, struct ferry_dht_key *ret);
/* 0 if r is a receipt by r->storer (the peer id of r->storer_pk) for the
 * block key, else -EBADMSG (-EINVAL for NULL). */
int ferry_dht_receipt_verify(const struct ferry_dht_key *key,
    const struct ferry_dht_receipt *r);
/* Printable keys: FERRY_DHT_KEY_STRLEN lowercase hex digits. */
void ferry_dht_key_format(const struct ferry_dht_key *key,
    char buf[FERRY_DHT_KEY_STRLEN + 1]);
/* Parses a key in hex (either case) or a peer id in its base32 form (the
 * key of the same bits). 0, or -EINVAL. */
int ferry_dht_key_parse(const char *s, struct ferry_dht_key *ret);

/*
 * Files (ferry-client(7), "Files"): a file put into the DHT as sealed
 * chunks under a manifest, named by a URI "ferry:f1....", got back from
 * it anywhere. The daemon never opens a path: these calls hand it an
 * open descriptor. They wait as long as the transfer runs, and fail with
 * -ETIMEDOUT only when the daemon says nothing (not even progress) for
 * the client's timeout. Besides the errors above: -ENOTCONN the daemon
 * runs no DHT; -ECONNRESET it went away (the transfer is resumable:
 * call again with the same file); -ECANCELED cancelled. After a
 * failure ferry_last_error() says why in a sentence.
 */
#define FERRY_FILE_URI_MAX 256 /* room for a URI and its NUL */

struct ferry_file_progress {
	uint64_t id;           /* the transfer */
	uint64_t bytes_done;   /* file bytes done */
	uint64_t bytes_total;  /* the file's size */
	uint64_t blocks_done;  /* chunks and manifest nodes */
	uint64_t blocks_total; /* as far as known yet */
	uint64_t rate;         /* bytes a second, lately */
	uint32_t in_flight;    /* blocks asked of the DHT now */
	uint32_t window;       /* the most it may have in flight now */
	uint32_t peers;        /* peers in use: distinct peers its blocks
				* went to (put) or came from (get) in
				* the last 10 s, the daemon not counted */
};
typedef void ferry_file_progress_fn(void *cls,
    const struct ferry_file_progress *p);

struct ferry_file_result {
	uint64_t id;                  /* the transfer */
	uint64_t size;                /* the file's bytes */
	uint64_t blocks_sent;         /* put: blocks put now */
	uint64_t blocks_skipped;      /* done by an interrupted run */
	uint8_t xxh128[16];           /* XXH128 of the file, checked */
	char uri[FERRY_FILE_URI_MAX]; /* the file's URI */
};

/*
 * Puts the file open for reading at fd (not closed; the daemon gets its
 * own copy) into the DHT. label names it in ferry_transfers() (may be
 * NULL; it never leaves this machine). replication 0: the daemon's.
 * fn (may be NULL) is called with progress every progress_ms (0: never).
 * 0 with *ret filled (its uri names the file). -EINVAL: not a regular
 * file, not readable; -ESTALE: the file changed while it was put.
 */
int ferry_file_put(struct ferry_client *client, int fd, const char *label,
    unsigned replication, uint32_t progress_ms, ferry_file_progress_fn *fn,
    void *cls, struct ferry_file_result *ret);
/*
 * Gets the file of uri into fd, a regular file open for reading and
 * writing (O_RDWR, not O_APPEND; the caller's "NAME.part", which it
 * renames once this returns 0: the daemon has then written, synced and
 * checked every byte against the file's XXH128). Called again into the
 * same file after a failure, it skips what was written. -EINVAL: a
 * malformed URI; -ENOENT: a block no peer holds; -EBADMSG: the file does
 * not match its checksum (then the file is damaged: remove it);
 * -ENOSPC: the disk is full.
 */
int ferry_file_get(struct ferry_client *client, const char *uri, int fd,
    uint32_t progress_ms, ferry_file_progress_fn *fn, void *cls,
    struct ferry_file_result *ret);

#define FERRY_TRANSFER_PUT       1
#define FERRY_TRANSFER_GET       2
#define FERRY_TRANSFER_RUNNING   1
#define FERRY_TRANSFER_RESUMABLE 2

struct ferry_transfer {
	uint64_t id;
	uint8_t kind;         /* FERRY_TRANSFER_PUT or _GET */
	uint8_t state;        /* FERRY_TRANSFER_RUNNING or _RESUMABLE */
	uint32_t uid;         /* whose */
	uint64_t bytes_done;
	uint64_t bytes_total;
	uint64_t updated;     /* s since the epoch */
	char *label;          /* put: its label; get: the URI */
};
/* The transfers of this user (every user's for an admin), running and
 * resumable. Free with ferry_transfers_free(). */
int ferry_transfers(struct ferry_client *client, struct ferry_transfer **ret,
    size_t *ret_n);
void ferry_transfers_free(struct ferry_transfer *t, size_t n);
/* Stops a transfer and forgets what it did. -ENOENT: none of this
 * user's has that id. */
int ferry_transfer_cancel(struct ferry_client *client, uint64_t id);

/* The sentence the daemon gave with the last failed request, or "". */
const char *ferry_last_error(const struct ferry_client *client);

/* Printable peer ids (Crockford base32, FERRY_PEER_ID_STRLEN chars). */
void ferry_peer_id_to_string(const struct ferry_peer_id *id,
    char buf[FERRY_PEER_ID_STRLEN + 1]);
/* 0, or -EINVAL if s is not a peer id. */
int ferry_peer_id_from_string(const char *s, struct ferry_peer_id *ret);

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *ferry_version(void);

#ifdef __cplusplus
}
#endif

#endif /* FERRY_CLIENT_H */
