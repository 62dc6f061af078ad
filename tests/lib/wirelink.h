/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * An encrypted link from a wirepeer to a daemon, built with the core's own
 * key exchange and frame code (core/link.h): the test peer completes a
 * real handshake over UDP and can then seal ENC frames and send them in
 * any order, cut, flipped or late, which no honest ferryd would do.
 */
#ifndef FERRY_TESTS_WIRELINK_H
#define FERRY_TESTS_WIRELINK_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

struct wirelink;
struct wirepeer;

/* Called for each inner message of a frame the daemon sent (msg points
 * at its {size, type} header; size includes it). */
typedef void wirelink_inner_fn(void *cls, uint16_t type, const uint8_t *msg,
    size_t size);

/* A link of w (borrowed; it must outlive the link) to the daemon whose
 * id is peer and whose UDP address is to (&d->addr; copied). No traffic
 * yet. 0, -ENOMEM. */
int wirelink_new(struct wirepeer *w, const struct ferry_peer_id *peer,
    const struct sockaddr_in *to, struct wirelink **ret);
/* Wipes the keys and frees. NULL is allowed. */
void wirelink_free(struct wirelink *l);
/* Runs the key exchange until both sides hold the keys: ours are
 * current and a frame from the daemon opened under them. 0 or
 * -ETIMEDOUT. */
int wirelink_handshake(struct wirelink *l, int timeout_ms);
/* Sets the function that sees the daemon's inner messages (NULL: none). */
void wirelink_on_inner(struct wirelink *l, wirelink_inner_fn *fn, void *cls);
/* From now on, acknowledges the daemon's frames as a ferryd does (an ACK
 * frame after each datagram that brought ack-eliciting ones, advertising
 * a window of rwnd bytes). Without ACKs the daemon's congestion control
 * soon holds back what it sends over the link: a test peer that stays
 * linked and answers for a while needs them. */
void wirelink_set_acks(struct wirelink *l, uint32_t rwnd);
/* Reads and processes what the daemon sends for ms milliseconds. Returns
 * the number of its frames that opened meanwhile. */
unsigned wirelink_pump(struct wirelink *l, int ms);
/* Frames from the daemon that opened so far. */
uint64_t wirelink_frames_in(const struct wirelink *l);

/* Writes one inner message {size, type, data} at out; returns its size
 * or -ENOSPC. */
int wirelink_msg(uint8_t *out, size_t max, uint16_t type, const void *data,
    size_t len);
/* Seals len bytes of inner messages into an ENC frame at out (room for
 * len + FERRY_ENC_OVERHEAD). Returns the frame size or a negative errno;
 * *ret_counter (may be NULL) gets the frame's counter. */
int wirelink_seal(struct wirelink *l, const void *inner, size_t len,
    uint8_t *out, size_t max, uint64_t *ret_counter);
/* Sends bytes as one datagram to the daemon. 0 or a negative errno. */
int wirelink_send_raw(struct wirelink *l, const void *buf, size_t len);
/* Seals one inner message and sends it. 0 or a negative errno. */
int wirelink_send_msg(struct wirelink *l, uint16_t type, const void *data,
    size_t len);

#endif /* FERRY_TESTS_WIRELINK_H */
