/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The TCP transport's stream format, as a pure parser over a byte buffer
 * (no I/O, no allocation) so that it can be tested and fuzzed alone.
 *
 * The connecting side sends its identity once when the connection opens
 * (seed 004, II-A: "the client sends its identity only when the
 * connection is established"), then units:
 *
 *   welcome: u8 magic[8] = "FERRYTCP", u16 version = 1, u16 reserved
 *            (sent as 0, ignored), u8 peer_id[32]
 *   unit:    u32 length (1..MTU), u8 bytes[length]
 */
#ifndef FERRY_PLUGINS_TCP_FRAME_H
#define FERRY_PLUGINS_TCP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

#define TCP_FRAME_MAGIC		"FERRYTCP"
#define TCP_FRAME_MAGIC_LEN	8
#define TCP_FRAME_VERSION	1
#define TCP_FRAME_WELCOME_LEN	(TCP_FRAME_MAGIC_LEN + 4 + FERRY_PEER_ID_LEN)
#define TCP_FRAME_HDR_LEN	4

enum tcp_frame_kind {
	TCP_FRAME_NEED,	   /* incomplete: `need` bytes from buf are wanted */
	TCP_FRAME_WELCOME, /* data = the claimed peer id (32 bytes) */
	TCP_FRAME_UNIT,	   /* data, len = one unit */
	TCP_FRAME_ERROR,   /* the stream is unusable; see error */
};

enum tcp_frame_error {
	TCP_FRAME_EMAGIC,   /* not a ferry stream */
	TCP_FRAME_EVERSION, /* a welcome of another version */
	TCP_FRAME_EEMPTY,   /* a unit of length 0 */
	TCP_FRAME_ETOOBIG,  /* a unit over the MTU */
};

/* What one step of the parser found. Pointers point into the buffer. */
struct tcp_frame_event {
	enum tcp_frame_kind kind;
	const uint8_t *data;	   /* WELCOME, UNIT */
	size_t len;		   /* UNIT */
	size_t need;		   /* NEED: total bytes the event takes */
	enum tcp_frame_error error; /* ERROR */
};

/* The state kept between steps. */
struct tcp_frame {
	uint32_t mtu;	/* largest unit accepted */
	bool welcomed;	/* the welcome was seen, or none is expected */
	bool failed;	/* an error was reported; it stays */
	enum tcp_frame_error error; /* which, once failed */
};

/* Starts a parser for one direction of a connection: expect_welcome for
 * the accepting side. mtu may change later by assignment. */
void tcp_frame_init(struct tcp_frame *f, uint32_t mtu, bool expect_welcome);
/* Parses the next event at the start of buf[0..len). Returns the bytes the
 * event used, which the caller drops before the next call (0 for NEED and
 * ERROR). An error is sticky. Length and magic are judged as soon as their
 * bytes are there, before the rest of the frame arrives. */
size_t tcp_frame_next(struct tcp_frame *f, const uint8_t *buf, size_t len,
    struct tcp_frame_event *ev);
/* Writes the welcome for id to out (TCP_FRAME_WELCOME_LEN bytes). */
void tcp_frame_put_welcome(uint8_t *out, const struct ferry_peer_id *id);
/* Writes the header of a unit of len bytes (TCP_FRAME_HDR_LEN bytes). */
void tcp_frame_put_header(uint8_t *out, uint32_t len);
/* A short text for an error, for log lines. */
const char *tcp_frame_strerror(enum tcp_frame_error e);

#endif /* FERRY_PLUGINS_TCP_FRAME_H */
