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
#include "lib/ratelimit.h"
#include "core/core.h"
#include "service/msgparse.h"
#include "service/policy.h"
#include "service/requests.h"
#include "service/service.h"

/* One read() takes at most this much; a frame is at most 64 KiB. */
#define SERVICE_READ_CHUNK       (256u * 1024)
/* Blocked clients retry this often even if no drain callback came. */
#define SERVICE_RETRY_US         (500u * 1000)
/* A client whose socket has not taken a byte for this long has stopped
 * reading: its output no longer holds peers back (client_backlog_add). */
#define SERVICE_STALL_US         (1000u * 1000)
/* A client cut off for a protocol violation is closed once the RESULT
 * saying why is written, or after this long. */
#define SERVICE_LINGER_US        (2000u * 1000)
/* Descriptors a client may have sent ahead of the FILE_PUT or FILE_GET
 * frames they go with (each takes one, in order). */
#define SERVICE_FDS_MAX          4
/* Log lines about refused clients and requests and about clients cut off
 * for a protocol violation: a burst, then per second. */
#define SERVICE_POLICY_LOG_BURST 5
#define SERVICE_POLICY_LOG_RATE  1.0

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
	uint64_t backlog;     /* bytes queued for all clients */
	struct core_rx_account *rx_acct; /* where the core sees backlog */
	uint64_t started_us;  /* monotonic, for STATUS uptime */
	bool handler_set;     /* our core handler is installed */
	struct core_sub drain_sub; /* relay_on_drain's subscription */
	struct registry *reg; /* app type -> clients */
	struct svc_counters c;
	struct ratelimit policy_rl; /* log lines about refusals */
	uint64_t policy_suppressed; /* lines it held back since the last */
};

struct client {
	TAILQ_ENTRY(client) link;  /* service->clients */
	TAILQ_ENTRY(client) blink; /* service->blocked while blocked */
	struct service *svc;       /* owner */
	int fd;
	struct policy_cred cred; /* at connect(), owned */
	enum policy_level level; /* what the policy lets it do */
	struct event *ev_read;
	struct event *ev_write;
	bool reading;             /* ev_read is added */
	bool writing;             /* ev_write is added */
	bool stalled;             /* out not counted in svc->backlog */
	struct buf in;            /* unparsed input */
	struct buf out;           /* frames not yet written */
	struct msg_chunks chunks; /* SEND sequence in progress */
	struct buf reasm;         /* its bytes so far */
	uint16_t reasm_flags;     /* flags of its pieces, ORed */
	bool blocked;             /* a message waits for peer's queue */
	bool blocked_reasm;       /* it is in reasm, not at in's head */
	struct ferry_peer_id blocked_peer;
	uint16_t blocked_type;   /* app type of a reassembled one */
	uint32_t blocked_req_id; /* its req_id */
	bool shutdown_requested; /* SHUTDOWN read; nothing more is */
	bool closing;            /* cut off: output drains, then it goes */
	uint64_t closing_until_us; /* monotonic bound on that */
	bool shutdown_done;      /* on_shutdown was called */
	uint64_t *types;         /* bitmap of registered app types (64 Ki
				  * bits), allocated on the first REGISTER */
	LIST_HEAD(, svc_ping) pings; /* echo requests in flight */
	struct requests_dht_conn *dht; /* its DHT requests, from the first */
	struct requests_storage_conn *storage; /* its transfers */
	int fds[SERVICE_FDS_MAX]; /* received (SCM_RIGHTS), not yet used */
	unsigned n_fds;
};

/* client.c */
/* The oldest descriptor c sent and no request took yet (the caller owns
 * it now), or -1. */
int client_take_fd(struct client *c);
/* Adds delta (may be negative) to c's output in the service's backlog,
 * unless c has stalled. */
void client_backlog_add(struct client *c, int64_t delta);

/* service.c */
/* Reads and checks [service]; runtime_dir NULL leaves SOCKET's default
 * unresolved. Logs each problem. 0 or -EINVAL. */
int service_cfg_parse(struct cfg *cfg, const char *runtime_dir,
    struct svc_cfg *ret);
/* A client went away: lets accept() resume if it had paused. */
void service_client_gone(struct service *svc);
/* Adds delta (may be negative) to the bytes queued for clients and tells
 * the core. */
void service_backlog_add(struct service *svc, int64_t delta);
/* Logs a refused client or request, or a client cut off, at notice
 * level, rate-limited across
 * all clients (SERVICE_POLICY_LOG_*), saying how many lines were held
 * back since the last one. */
void service_log_policy(struct service *svc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* listen.c */
/* Takes the single-instance lock and opens the listening socket.
 * -EADDRINUSE (logged with the other pid) if another daemon holds it. */
int listen_open(struct service *svc);
/* Closes the socket and removes it and the lock file. */
void listen_close(struct service *svc);

/* client.c */
/* Takes ownership of fd, a connected, non-blocking socket, and of the
 * groups of cred (also on failure); level is what policy_check() said. */
int client_new(struct service *svc, int fd, struct policy_cred *cred,
    enum policy_level level, struct client **ret);
/* Flushes nothing; frees everything; unlinks from the service. */
void client_free(struct client *c);
/* Cuts a client off for a protocol violation: counts it, logs one
 * rate-limited line, queues RESULT {req_id, status, why} and marks it
 * closing. Returns status, which the caller passes on so that
 * client_end() is reached. */
int client_drop(struct client *c, uint32_t req_id, int status,
    const char *why);
/* Ends a client after client_work() failed: frees it at once, or, when it
 * was cut off by client_drop(), stops everything but its output and frees
 * it once that is written (at most SERVICE_LINGER_US). */
void client_end(struct client *c);
/* Parses and handles buffered frames until they run out or the client
 * blocks. Negative: the client must be freed (already logged). */
int client_process(struct client *c);
/* client_process and client_flush, repeated while flushing frees room
 * for more answers. Negative: the client must be freed. */
int client_work(struct client *c);
/* Starts or stops reading as blocking and output backlog allow. */
void client_update_reading(struct client *c);
/* Writes queued output now, and arms the write event for what remains.
 * Negative: the connection failed and the client must be freed. */
int client_flush(struct client *c);
/* Arms the write event without writing now (batches fan-out). */
void client_flush_later(struct client *c);

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
