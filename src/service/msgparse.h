/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Pure decoders of the client protocol's request frames (<ferry/proto.h>),
 * service layer: stream splitting, one decoder per request layout and
 * the chunk-sequence rules of SEND and DHT_PUT. No I/O and no allocation,
 * so the daemon, the unit tests and the fuzz target all run exactly this
 * code.
 */
#ifndef FERRY_SERVICE_MSGPARSE_H
#define FERRY_SERVICE_MSGPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

/* Most data bytes one SEND or RECEIVE frame carries. */
#define MSGPARSE_SEND_DATA_MAX    (FERRY_MSG_SIZE_MAX - FERRY_C_SEND_FIXED)
#define MSGPARSE_RECEIVE_DATA_MAX (FERRY_MSG_SIZE_MAX - FERRY_C_RECEIVE_FIXED)
/* Size of the requests that carry nothing but a req_id. */
#define MSGPARSE_REQ_ID_SIZE      8
/* Most data bytes one DHT_PUT or DHT_BLOCK frame carries. */
#define MSGPARSE_PUT_DATA_MAX     (FERRY_MSG_SIZE_MAX - FERRY_C_DHT_PUT_FIXED)
#define MSGPARSE_BLOCK_DATA_MAX   (FERRY_MSG_SIZE_MAX - FERRY_C_DHT_BLOCK_FIXED)

/* One frame in a stream buffer; p points at its header, borrowed. */
struct msg_frame {
	const uint8_t *p; /* size bytes, header included */
	uint16_t size;    /* from the header, >= FERRY_HDR_SIZE */
	uint16_t type;    /* FERRY_C_* */
};

struct msg_send {
	uint32_t req_id;           /* 0: no RESULT wanted */
	struct ferry_peer_id peer; /* destination */
	uint16_t app_type;         /* application message type */
	uint16_t flags;            /* reserved, ignored */
	uint32_t total_len;        /* whole message, <= FERRY_APP_MSG_MAX */
	uint32_t offset;           /* of this piece in the message */
	const uint8_t *data;       /* this piece, borrowed from the frame */
	size_t len;                /* its length; offset + len <= total_len */
};

struct msg_register {
	const uint8_t *types; /* n big-endian u16, borrowed */
	size_t n;             /* may be 0 */
};

struct msg_str {
	const char *s; /* not NUL-terminated, no NUL inside, borrowed */
	size_t len;    /* >= 1 */
};

struct msg_ping {
	struct ferry_peer_id peer; /* whom to ping */
	uint32_t count;            /* round trips */
	uint16_t payload_len;      /* bytes each */
	uint16_t reserved;         /* must be 0 (the handler checks) */
	uint32_t timeout_ms;       /* per round trip */
};

/* One piece of a DHT_PUT; the ranges of replication and expiry and the
 * reserved fields are the handler's to judge. */
struct msg_dht_put {
	uint8_t replication; /* storing peers, 0: the daemon's default */
	uint8_t reserved8;   /* byte 9, must be 0 */
	uint16_t reserved16; /* bytes 10-11, must be 0 */
	uint64_t expiry;     /* seconds since the epoch, 0: the default */
	uint32_t total_len;  /* whole block, <= FERRY_DHT_BLOCK_MAX */
	uint32_t offset;     /* of this piece in the block */
	const uint8_t *data; /* this piece, borrowed from the frame */
	size_t len;          /* its length; offset + len <= total_len */
};

struct msg_dht_get {
	uint8_t key[FERRY_DHT_KEY_LEN]; /* of the block wanted */
};

struct msg_dht_find {
	uint8_t key[FERRY_DHT_KEY_LEN]; /* peers closest to this */
	uint16_t want;                  /* how many (the handler checks) */
	uint16_t reserved;              /* must be 0 (the handler checks) */
};

/* FILE_PUT: the file comes as a descriptor beside the frame. */
struct msg_file_put {
	uint8_t replication;  /* 0: the daemon's (the handler checks) */
	uint8_t reserved8;    /* must be 0 (the handler checks) */
	uint16_t reserved16;  /* must be 0 (the handler checks) */
	uint32_t progress_ms; /* 0: no progress frames */
	const char *label;    /* not NUL-terminated, borrowed; may be "" */
	size_t label_len;     /* <= FERRY_C_FILE_LABEL_MAX */
};

/* FILE_GET: the file to fill comes as a descriptor beside the frame. */
struct msg_file_get {
	uint32_t progress_ms;
	uint32_t reserved;    /* must be 0 (the handler checks) */
	const char *uri;      /* not NUL-terminated, borrowed */
	size_t uri_len;       /* 1..FERRY_C_FILE_URI_MAX */
};

struct msg_cancel {
	uint64_t id; /* the transfer */
};

/* A decoded request; which union member is valid follows type. */
struct msg_req {
	uint16_t type;   /* FERRY_C_* of the frame */
	uint32_t req_id; /* echoed in the reply */
	union {
		struct msg_send send;         /* FERRY_C_SEND */
		struct msg_register reg;      /* FERRY_C_REGISTER */
		struct msg_str uri;           /* FERRY_C_CONNECT */
		struct msg_ping ping;         /* FERRY_C_PING */
		struct msg_dht_put dht_put;   /* FERRY_C_DHT_PUT */
		struct msg_dht_get dht_get;   /* FERRY_C_DHT_GET */
		struct msg_dht_find dht_find; /* FERRY_C_DHT_FIND */
		struct msg_file_put file_put; /* FERRY_C_FILE_PUT */
		struct msg_file_get file_get; /* FERRY_C_FILE_GET */
		struct msg_cancel cancel;     /* FERRY_C_CANCEL */
	} u;
};

/* Where a SEND or DHT_PUT piece stands in its message (msgparse_chunk,
 * msgparse_put_chunk). */
enum msgparse_piece {
	MSGPARSE_WHOLE = 1, /* the whole message in one frame */
	MSGPARSE_FIRST,     /* first of several pieces */
	MSGPARSE_MIDDLE,    /* neither first nor last */
	MSGPARSE_LAST,      /* completes the message */
};

/* The chunk sequence of one connection: a SEND or a DHT_PUT in pieces.
 * Zero it to start. */
struct msg_chunks {
	bool active;               /* a message is half received */
	uint16_t type;             /* FERRY_C_SEND or FERRY_C_DHT_PUT */
	struct ferry_peer_id peer; /* SEND: its peer and type */
	uint16_t app_type;
	uint8_t replication;       /* DHT_PUT: its replication and expiry */
	uint64_t expiry;
	uint32_t total_len;        /* length of the whole message */
	uint32_t done;             /* bytes received so far */
};

/*
 * Finds the frame at the start of len stream bytes. 1 with *ret filled
 * when all of it is there, 0 when more bytes are needed, -EBADMSG when
 * the size field is below FERRY_HDR_SIZE (the stream cannot be resynced).
 */
int msgparse_frame(const void *buf, size_t len, struct msg_frame *ret);

/* Bytes 4..8 of a frame, or 0 if it is shorter: the req_id to answer an
 * unknown or refused request with. */
uint32_t msgparse_req_id(const struct msg_frame *f);

/*
 * A decoder of one request layout: checks f and fills the union member
 * of req its type uses (type and req_id are set already). 0, -EBADMSG
 * for a frame whose layout is wrong (fixed-size request of another
 * size, truncated field, SEND or DHT_PUT piece outside its message,
 * odd-length type list, empty or NUL-holding URI), or -EMSGSIZE for a
 * SEND whose total_len is above FERRY_APP_MSG_MAX or a DHT_PUT whose
 * total_len is above FERRY_DHT_BLOCK_MAX (their fixed parts whole). Both
 * negative verdicts cut the client off. Which decoder a type uses is in
 * the request table (service/requests.h).
 */
typedef int msgparse_decode_fn(const struct msg_frame *f,
    struct msg_req *req);
msgparse_decode_fn msgparse_req_only; /* nothing but a req_id */
msgparse_decode_fn msgparse_send;     /* SEND: req->u.send */
msgparse_decode_fn msgparse_register; /* REGISTER: req->u.reg */
msgparse_decode_fn msgparse_uri;      /* CONNECT: req->u.uri */
msgparse_decode_fn msgparse_ping;     /* PING: req->u.ping */
msgparse_decode_fn msgparse_dht_put;  /* DHT_PUT: req->u.dht_put */
msgparse_decode_fn msgparse_dht_get;  /* DHT_GET: req->u.dht_get */
msgparse_decode_fn msgparse_dht_find; /* DHT_FIND: req->u.dht_find */
/* FILE_PUT: a label of at most FERRY_C_FILE_LABEL_MAX bytes without a
 * NUL; FILE_GET: a URI of 1..FERRY_C_FILE_URI_MAX bytes without a NUL. */
msgparse_decode_fn msgparse_file_put; /* FILE_PUT: req->u.file_put */
msgparse_decode_fn msgparse_file_get; /* FILE_GET: req->u.file_get */
msgparse_decode_fn msgparse_cancel;   /* CANCEL: req->u.cancel */

/* Runs decode on f; 0 with *ret filled (type, req_id and the decoded
 * member, the rest zero), or what decode returned (*ret untouched). */
int msgparse_decode(msgparse_decode_fn *decode, const struct msg_frame *f,
    struct msg_req *ret);

/* The i-th type of a REGISTER request; i < reg->n. */
uint16_t msgparse_register_type(const struct msg_register *reg, size_t i);

/*
 * Checks that a SEND piece may come next on the connection and advances
 * st. Returns an enum msgparse_piece, or -EBADMSG (st unchanged) if the
 * piece breaks the rules of proto.h: a first piece not at offset 0, an
 * empty piece of a longer message, a piece of another kind of message
 * than the one in progress, or a continuation whose peer, type or total
 * length differ or whose offset is not where the last one ended.
 */
int msgparse_chunk(struct msg_chunks *st, const struct msg_send *s);
/* The same for a DHT_PUT piece, whose replication, expiry and total
 * length must not change from piece to piece. */
int msgparse_put_chunk(struct msg_chunks *st, const struct msg_dht_put *p);

/* True if a frame of the given type may arrive now: while a chunked SEND
 * or DHT_PUT is in progress, only its pieces may. */
bool msgparse_chunk_allows(const struct msg_chunks *st, uint16_t type);

#endif /* FERRY_SERVICE_MSGPARSE_H */
