/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Pure decoders of the client protocol's request frames (<ferry/proto.h>),
 * service layer: stream splitting, one decoder per request and the SEND
 * chunk-sequence rules. No I/O and no allocation, so the daemon, the unit
 * tests and the fuzz target all run exactly this code.
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

/* A decoded request; which union member is valid follows type. */
struct msg_req {
	uint16_t type;   /* FERRY_C_* of the frame */
	uint32_t req_id; /* echoed in the reply */
	union {
		struct msg_send send;    /* FERRY_C_SEND */
		struct msg_register reg; /* FERRY_C_REGISTER */
		struct msg_str uri;      /* FERRY_C_CONNECT */
		struct msg_ping ping;    /* FERRY_C_PING */
	} u;
};

/* Where a SEND piece stands in its message (msgparse_chunk). */
enum msgparse_piece {
	MSGPARSE_WHOLE = 1, /* the whole message in one frame */
	MSGPARSE_FIRST,     /* first of several pieces */
	MSGPARSE_MIDDLE,    /* neither first nor last */
	MSGPARSE_LAST,      /* completes the message */
};

/* The SEND chunk sequence of one connection; zero it to start. */
struct msg_chunks {
	bool active;               /* a message is half received */
	struct ferry_peer_id peer; /* its peer, type and length */
	uint16_t app_type;
	uint32_t total_len;
	uint32_t done; /* bytes received so far */
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
 * size, truncated field, SEND piece outside its message, odd-length type
 * list, empty or NUL-holding URI), or -EMSGSIZE for a SEND whose
 * total_len is above FERRY_APP_MSG_MAX (its fixed part is whole). Both
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
 * empty piece of a longer message, or a continuation whose peer, type or
 * total length differ or whose offset is not where the last one ended.
 */
int msgparse_chunk(struct msg_chunks *st, const struct msg_send *s);

/* True if a frame of the given type may arrive now: while a chunked SEND
 * is in progress, only its pieces may. */
bool msgparse_chunk_allows(const struct msg_chunks *st, uint16_t type);

#endif /* FERRY_SERVICE_MSGPARSE_H */
