/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry: the client library applications use to talk to a local ferryd
 * over its UNIX socket (protocol in <ferry/proto.h> and ferry-client(7)).
 * Calls block until the daemon answers; messages that arrive meanwhile
 * are kept for ferry_receive(). A client is not thread-safe: use one per
 * thread. Every function returning int gives 0 on success or a negative
 * errno: -ECONNREFUSED/-ENOENT no daemon on the socket, -ECONNRESET the
 * daemon went away, -ETIMEDOUT, -EPROTO a malformed reply, or the status
 * the daemon sent (for instance -ENOTCONN: peer not connected).
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
