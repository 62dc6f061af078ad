/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Congestion and flow control for a peer's traffic over unreliable
 * transports, core layer. The scheme is NewReno in bytes as RFC 9002
 * specifies it for QUIC: slow start doubles the window every round trip,
 * congestion avoidance adds one datagram per window, a loss halves it
 * once per round trip, and probe timeouts replace retransmission timers.
 * The window a new link starts with is a setting (INITIAL_WINDOW, 64 KiB
 * by default: one round trip carries a 64 KiB burst, and a 1 MB transfer
 * needs five). The receiver's advertised window bounds what is in flight,
 * so a slow receiver slows its senders instead of overflowing its socket.
 * Round-trip estimation follows RFC 6298 with RTO = SRTT + 4 * RTTVAR.
 */
#ifndef FERRY_CORE_CC_H
#define FERRY_CORE_CC_H

#include <stdbool.h>
#include <stdint.h>

#define CC_MAX_ACK_DELAY_US 5000 /* we acknowledge within this ... */
#define CC_MAX_ACK_DELAY_SLOW_US 1000000 /* ... or this over mail, where
					  * every ACK is a mail of its own */
#define CC_MIN_RTT_GRANULARITY_US 1000
#define CC_REORDER_SLACK_SLOW_US 2000000 /* a mail may lag its successors */

struct cc {
	uint64_t mss;	      /* bytes of a full frame on the current path */
	uint64_t max_ack_delay_us; /* how long the peer may hold an ACK */
	bool unordered;	      /* the path reorders freely (mail) */
	uint64_t initial;     /* INITIAL_WINDOW */
	uint64_t cwnd;	      /* congestion window, bytes */
	uint64_t ssthresh;    /* slow-start threshold */
	uint64_t peer_rwnd;   /* receiver's window from its last ACK */
	uint64_t recovery_start_us; /* frames sent before this end no window */
	bool have_rtt;
	uint64_t srtt_us, rttvar_us, min_rtt_us, latest_rtt_us;
	unsigned pto_count;   /* probe timeouts without an ACK */
	uint64_t losses;      /* frames declared lost */
};

void cc_init(struct cc *c, uint64_t initial_window, uint64_t mss,
    uint64_t peer_rwnd, uint64_t max_ack_delay_us);
/* Bytes that may still be put in flight given bytes_in_flight. */
uint64_t cc_room(const struct cc *c, uint64_t bytes_in_flight);
/* An RTT sample from an ACK; ack_delay_us as the receiver reported. */
void cc_on_rtt(struct cc *c, uint64_t rtt_us, uint64_t ack_delay_us);
/* A frame of bytes, sent at sent_us, was acknowledged. */
void cc_on_acked(struct cc *c, uint64_t bytes, uint64_t sent_us);
/* A frame sent at sent_us was declared lost at now_us. */
void cc_on_lost(struct cc *c, uint64_t sent_us, uint64_t now_us);
/* The loss-detection time threshold: 9/8 of the larger of SRTT and the
 * latest RTT, at least the timer granularity; on an unordered path at
 * least that RTT plus four RTT variations plus CC_REORDER_SLACK_SLOW_US. */
uint64_t cc_loss_delay(const struct cc *c);
/* The probe timeout for the current backoff. */
uint64_t cc_pto(const struct cc *c);
/* Every frame in flight was lost (path failure): back to the minimum. */
void cc_collapse(struct cc *c);

#endif /* FERRY_CORE_CC_H */
