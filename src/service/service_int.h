/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * State shared by the service layer's .c files (and its unit tests): the
 * listening service, one connected client, and the functions each file
 * offers the others. The layers above see service.h only.
 */
#ifndef FERRY_SERVICE_SERVICE_INT_H
#define FERRY_SERVICE_SERVICE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <sys/un.h>

#include <ferry/proto.h>

#include "lib/buf.h"
#include "core/core.h"
#include "service/conn.h"
#include "service/msgparse.h"
#include "service/policy.h"
#include "service/requests.h"
#include "service/service.h"

/* The client socket's connection bounds (conn.h); CLIENT_BUFFER and
 * STALL_TIMEOUT are configured. One read() takes at most this much; a frame is at most
 * 64 KiB, so the input always holds a whole one. */
#define SERVICE_READ_CHUNK (256u * 1024)
/* Blocked clients retry this often even if no drain callback came. */
#define SERVICE_RETRY_US   (500u * 1000)
/* A client cut off for a protocol violation is closed once the RESULT
 * saying why is written, or after this long. */
#define SERVICE_LINGER_US  (2000u * 1000)
/* Descriptors a client may have sent ahead of the FILE_PUT or FILE_GET
 * frames they go with (each takes one, in order). */
#define SERVICE_FDS_MAX    4

struct dht;
struct registry;
struct requests_dht_conn;
struct requests_storage_conn;
struct svc_ping;
struct xfer;

/* The [service] section, parsed. */
struct svc_cfg {
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* path */
	mode_t mode;            /* SOCKET_MODE */
	bool set_gid;           /* SOCKET_GROUP was given */
	gid_t gid;              /* and names this group */
	uint32_t max_clients;   /* MAX_CLIENTS */
	uint64_t client_buffer; /* CLIENT_BUFFER, bytes */
	uint64_t stall_us;      /* STALL_TIMEOUT */
	struct policy policy;   /* ALLOW_* and ADMIN_*, the socket's group */
};

/* The "service.*" statistics counters; each points into struct stats. */
struct svc_counters {
	uint64_t *clients_connected; /* now */
	uint64_t *clients_accepted;  /* ever */
	uint64_t *clients_refused;   /* by the credential policy */
	uint64_t *requests_denied;   /* SHUTDOWN from a non-admin client */
	uint64_t *accept_paused;     /* at MAX_CLIENTS or out of fds */
	uint64_t *frames_in;
	uint64_t *frames_out;
	uint64_t *bytes_in;
	uint64_t *bytes_out;
	uint64_t *malformed;        /* clients cut off for a bad frame */
	uint64_t *unknown_type;     /* answered with -EOPNOTSUPP */
	uint64_t *send_ok;          /* messages core_send took */
	uint64_t *send_notconn;     /* -ENOTCONN */
	uint64_t *send_again;       /* -EAGAIN reported to the client */
	uint64_t *send_inval;       /* reserved app type */
	uint64_t *send_other;       /* any other error */
	uint64_t *send_blocked;     /* clients paused by back-pressure */
	uint64_t *recv_delivered;   /* message copies queued to clients */
	uint64_t *recv_dropped;     /* copies dropped: client too slow */
	uint64_t *clients_stalled;  /* times a client took nothing for 1 s */
	uint64_t *recv_no_listener; /* messages nobody registered for */
};

struct service {
	struct event_base *base; /* borrowed */
	struct stats *stats;     /* borrowed */
	struct core *core;       /* borrowed */
	struct dht *dht;         /* borrowed; NULL when no DHT runs */
	struct xfer *xfer;       /* borrowed; NULL when no DHT runs */
	service_shutdown_fn *on_shutdown;
	void *on_shutdown_cls;
	struct svc_cfg cfg;
	int listen_fd; /* -1 when closed */
	int lock_fd;   /* holds "<socket>.lock" */
	char lock_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 8];
	bool socket_created;          /* ours to unlink */
	struct event *ev_accept;      /* on listen_fd */
	struct event *ev_retry;       /* fallback retry of blocked clients */
	TAILQ_HEAD(, client) clients; /* all connected */
	TAILQ_HEAD(, client) blocked; /* waiting for a peer's queue */
	uint32_t n_clients;
	bool accept_paused;   /* at MAX_CLIENTS or out of fds */
	struct conn_set conns; /* bounds, counters and backlog of clients */
	struct core_rx_account *rx_acct; /* where the core sees the backlog */
	uint64_t started_us;  /* monotonic, for STATUS uptime */
	bool handler_set;     /* our core handler is installed */
	struct core_sub drain_sub; /* relay_on_drain's subscription */
	struct registry *reg; /* app type -> clients */
	struct svc_counters c;
};

struct client {
	TAILQ_ENTRY(client) link;  /* service->clients */
	TAILQ_ENTRY(client) blink; /* service->blocked while blocked */
	struct service *svc;       /* owner */
	struct conn conn;          /* the socket, its input and output */
	struct policy_cred cred; /* at connect(), owned */
	enum policy_level level; /* what the policy lets it do */
	struct msg_chunks chunks; /* SEND sequence in progress */
	struct buf reasm;         /* its bytes so far */
	uint16_t reasm_flags;     /* flags of its pieces, ORed */
	bool blocked;             /* a message waits for peer's queue */
	bool blocked_reasm;       /* it is in reasm, not at in's head */
	struct ferry_peer_id blocked_peer;
	uint16_t blocked_type;   /* app type of a reassembled one */
	uint32_t blocked_req_id; /* its req_id */
	bool shutdown_requested; /* SHUTDOWN read; nothing more is */
	bool shutdown_done;      /* on_shutdown was called */
	uint64_t *types;         /* bitmap of registered app types (64 Ki
				  * bits), allocated on the first REGISTER */
	LIST_HEAD(, svc_ping) pings; /* echo requests in flight */
	struct requests_dht_conn *dht; /* its DHT requests, from the first */
	struct requests_storage_conn *storage; /* its transfers */
	int fds[SERVICE_FDS_MAX]; /* received (SCM_RIGHTS), not yet used */
	unsigned n_fds;
};

/* service.c */
/* Reads and checks [service]; runtime_dir NULL leaves SOCKET's default
 * unresolved. Logs each problem. 0 or -EINVAL. */
int service_cfg_parse(struct cfg *cfg, const char *runtime_dir,
    struct svc_cfg *ret);
/* A client went away: lets accept() resume if it had paused. */
void service_client_gone(struct service *svc);

/* listen.c */
/* Takes the single-instance lock and opens the listening socket.
 * -EADDRINUSE (logged with the other pid) if another daemon holds it. */
int listen_open(struct service *svc);
/* Closes the socket and removes it and the lock file. */
void listen_close(struct service *svc);

/* client.c */
/* The oldest descriptor c sent and no request took yet (the caller owns
 * it now), or -1. */
int client_take_fd(struct client *c);
/* Takes ownership of fd, a connected, non-blocking socket, and of the
 * groups of cred (also on failure); level is what policy_check() said. */
int client_new(struct service *svc, int fd, struct policy_cred *cred,
    enum policy_level level, struct client **ret);
/* Flushes nothing; frees everything; unlinks from the service. The one
 * way a client goes, also when its connection ends (conn.h, gone). */
void client_free(struct client *c);
/* Cuts a client off for a protocol violation: counts it, logs one
 * rate-limited line, queues RESULT {req_id, status, why} and lets its
 * connection linger (conn_linger). Returns status, which the caller
 * passes on so that conn_end() is reached. */
int client_drop(struct client *c, uint32_t req_id, int status,
    const char *why);

/* reply.c */
/* Appends a frame of size bytes with its header written; the caller
 * fills bytes 4..size before anything else is appended. NULL on OOM. */
uint8_t *reply_frame(struct client *c, uint16_t type, size_t size);
/* Appends RESULT {req_id, status, msg}. 0 or -ENOMEM. */
int reply_result(struct client *c, uint32_t req_id, int status,
    const char *msg);

/* requests.c */
/* Answers a request the client's policy level does not allow: -EPERM,
 * counted and logged (rate-limited). 0 or -ENOMEM. */
int requests_refuse(struct client *c, const struct request_kind *kind,
    const struct msg_req *req);

/* relay.c */
/* Installs the core handler and subscribes to drain events. 0 or
 * negative errno. */
int relay_init(struct service *svc);
/* Removes the handler and the subscription. */
void relay_done(struct service *svc);
int relay_register(struct client *c, const struct msg_req *req);
/* SEND: a requests_fn (requests.h). */
int relay_send(struct client *c, const struct msg_req *req);
/* Retries a client's blocked message; 0 also when it stays blocked. */
int relay_retry(struct client *c);
/* Forgets a client's registrations and blocked state. */
void relay_client_gone(struct client *c);

/* ping.c */
int ping_request(struct client *c, const struct msg_req *req);
/* Detaches the client's pings; their answers are then discarded. */
void ping_client_gone(struct client *c);

/* requests_dht.c */
/* Detaches the client's DHT requests (their answers are then discarded)
 * and frees its DHT state. Safe to call twice. */
void requests_dht_client_gone(struct client *c);

/* requests_storage.c */
/* Detaches the client's transfers: they stop and stay resumable. Safe
 * to call twice. */
void requests_storage_client_gone(struct client *c);

#endif /* FERRY_SERVICE_SERVICE_INT_H */
