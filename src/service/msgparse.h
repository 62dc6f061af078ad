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
 * Decodes any request frame. 0 with *ret filled; -EOPNOTSUPP for a type
 * that is not a request (answer with RESULT); -EMSGSIZE for a SEND whose
 * total_len is above FERRY_APP_MSG_MAX (its fixed part is whole);
 * -EBADMSG for a frame whose layout is wrong: fixed-size request of
 * another size, truncated field, SEND piece outside its message, an
 * odd-length type list, an empty or NUL-holding URI. Both negative
 * verdicts cut the client off.
 */
int msgparse_request(const struct msg_frame *f, struct msg_req *ret);

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
