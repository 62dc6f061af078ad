/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's internals, shared by its .c files only: the client state,
 * the blocking I/O engine (conn.c), requests and their replies
 * (request.c) and the queue of received messages (rx.c); the requests
 * themselves are in query.c, control.c, send.c and dht.c.
 */
#ifndef FERRY_LIBFERRY_INT_H
#define FERRY_LIBFERRY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/client.h>

#include "lib/buf.h"

#define LF_DEFAULT_TIMEOUT_MS 10000
/* One read() takes at most this much. */
#define LF_READ_CHUNK         (256u * 1024)
/* ferry_send() writes once this much is buffered, and blocks beyond. */
#define LF_SEND_HIGH          (256u * 1024)
/* Received messages kept while nobody calls ferry_receive(); beyond
 * this they are dropped, as the network would. */
#define LF_QUEUE_MAX          (64u * 1024 * 1024)
/* Data bytes per SEND and RECEIVE frame. */
#define LF_SEND_PIECE         (FERRY_MSG_SIZE_MAX - FERRY_C_SEND_FIXED)
#define LF_RECEIVE_PIECE      (FERRY_MSG_SIZE_MAX - FERRY_C_RECEIVE_FIXED)
/* DHT requests wait this much beyond the client's timeout: the DHT gives
 * up on a request after its own timeout (10 s by default) and the daemon
 * then says so, which tells more than a timeout here. */
#define LF_DHT_EXTRA_MS       5000

struct lf_async_op;

struct ferry_client {
	int fd;               /* non-blocking UNIX stream socket */
	int timeout_ms;       /* per request; -1 waits forever */
	uint32_t next_req_id; /* never 0 */
	int dead;             /* 0, or why the connection is unusable */
	struct buf in;        /* read, not yet parsed */
	struct buf out;       /* frames not yet written */
	struct buf queue;     /* whole messages: lf_rx record format */
	struct buf msg;       /* data of the last ferry_receive() */
	bool rx_active;       /* a chunked RECEIVE is half read */
	struct ferry_peer_id rx_peer;
	uint16_t rx_type;
	uint32_t rx_total;
	struct buf rx_reasm;       /* its pieces so far */
	uint64_t rx_dropped;       /* messages the full queue refused */
	char why[256];             /* the last failed RESULT's message */
	struct lf_async_op *async; /* FERRY_DHT_ASYNC_MAX slots, or NULL */
	unsigned async_n;          /* slots in use (in flight or ended) */
};

/* One frame from the daemon, borrowed from client->in. */
struct lf_frame {
	const uint8_t *p; /* header included */
	uint16_t size;
	uint16_t type;
};

/* conn.c */
/* A monotonic deadline in ms, timeout_ms + extra_ms from now; -1 if the
 * client waits forever. */
int64_t lf_deadline(const struct ferry_client *c, uint64_t extra_ms);
/* Marks the connection broken with r and returns r. */
int lf_fail(struct ferry_client *c, int r);
/* Takes the next whole frame from the input: 1 and *ret (valid until the
 * input is read into again), 0 if none is complete, -EPROTO. */
int lf_next_frame(struct ferry_client *c, struct lf_frame *ret);
/* Drops the frame lf_next_frame() returned last. */
void lf_consume(struct ferry_client *c, const struct lf_frame *f);
/* Waits until the socket is readable (or writable too, if want_write)
 * or the deadline passes, and reads what is there. 0, -ETIMEDOUT, or
 * the error that broke the connection. */
int lf_wait(struct ferry_client *c, bool want_write, int64_t deadline);
/* Writes what the socket takes now, without waiting. 0 or the error that
 * broke the connection. */
int lf_write_nowait(struct ferry_client *c);
/* Writes buffered output until at most keep bytes remain, reading and
 * queueing what arrives meanwhile. 0, -ETIMEDOUT or a connection error. */
int lf_write_until(struct ferry_client *c, size_t keep, int64_t deadline);
/* Queues the received messages in the input and drops other frames
 * (late replies). 0, or the error that broke the connection. Only for
 * when no request waits for a reply. */
int lf_drain_input(struct ferry_client *c);
/* Writes everything buffered, then the size bytes at frame with fd as
 * SCM_RIGHTS beside its first byte. 0 or an error. */
int lf_write_fd(struct ferry_client *c, const void *frame, size_t size, int fd,
    int64_t deadline);

/* request.c */
/* A reply frame other than RESULT: 1 done, 0 more to come, or -errno. */
typedef int lf_reply_fn(void *ctx, const struct lf_frame *f);
/* A fresh req_id, never 0. */
uint32_t lf_req_id_new(struct ferry_client *c);
/* Appends a frame of size bytes of the given type with a fresh req_id
 * at bytes 4..8; the caller fills the rest. NULL on OOM. */
uint8_t *lf_request_frame(struct ferry_client *c, uint16_t type, size_t size,
    uint32_t *ret_req_id);
/* Sends what is buffered and collects the replies to req_id: RESULT ends
 * the request with its status, other frames go to fn (may be NULL).
 * extra_ms lengthens the wait (PING). */
int lf_request_wait(struct ferry_client *c, uint32_t req_id, lf_reply_fn *fn,
    void *ctx, uint64_t extra_ms);
/* The status of a RESULT frame: 0, a negative errno, or -EPROTO. */
int lf_result_status(const struct lf_frame *f);
/* A request that is only a header and req_id, answered by RESULT. */
int lf_request_simple(struct ferry_client *c, uint16_t type, lf_reply_fn *fn,
    void *ctx);

/* Handles one frame while a request waits: a RECEIVE is queued, a
 * reply to req_id goes to fn, RESULT ends it. 1 the request is over
 * (*status set), 0 go on, negative: the connection broke. */
int lf_reply(struct ferry_client *c, const struct lf_frame *f, uint32_t req_id,
    lf_reply_fn *fn, void *ctx, int *status);

/* dht.c: the replies of DHT requests, for blocking and asynchronous
 * requests alike. */
/* What a DHT_PUT got back. */
struct lf_dht_stored {
	const struct ferry_dht_key *key;    /* the block's, expected */
	struct ferry_dht_receipt *receipts; /* decoded, malloc'd */
	size_t n;                           /* how many */
	bool got;                           /* DHT_STORED came */
};
/* A block coming in pieces. */
struct lf_dht_block {
	uint8_t *data; /* total bytes, malloc'd at the first piece */
	size_t total;  /* its length */
	size_t have;   /* bytes received so far */
	bool started;  /* the first piece came */
};
/* The peers of a FIND. */
struct lf_dht_nodes {
	struct ferry_peer_id *ids; /* want of them, malloc'd */
	size_t n, want;            /* received, asked for */
};
/* Appends the DHT_PUT frames of a block under req_id. 0 or -ENOMEM. */
int lf_dht_put_append(struct ferry_client *c, uint32_t req_id,
    const uint8_t *data, size_t len, unsigned replication, uint64_t expiry);
/* lf_reply_fn's for DHT_STORED (ctx a struct lf_dht_stored), DHT_BLOCK
 * (struct lf_dht_block) and DHT_NODE (struct lf_dht_nodes). */
int lf_dht_stored_reply(void *ctx, const struct lf_frame *f);
int lf_dht_block_reply(void *ctx, const struct lf_frame *f);
int lf_dht_node_reply(void *ctx, const struct lf_frame *f);

/* dht_async.c */
/* Takes a reply frame (not RECEIVE) that no blocking request waits for:
 * one to an asynchronous request goes to it, any other is dropped (a
 * late reply). Never fails: a malformed reply ends its request with
 * -EPROTO. */
void lf_async_frame(struct ferry_client *c, const struct lf_frame *f);
/* Frees the asynchronous requests' state (at close). */
void lf_async_free(struct ferry_client *c);

/* rx.c */
/* Takes one RECEIVE frame: queues a whole message, or one piece of a
 * chunked one. 0 or -EPROTO (malformed or out of sequence). */
int lf_rx_frame(struct ferry_client *c, const struct lf_frame *f);

/* util.c */
/* A copy of len bytes as a NUL-terminated string. NULL on OOM. */
char *lf_strndup(const void *p, size_t len);

#endif /* FERRY_LIBFERRY_INT_H */
