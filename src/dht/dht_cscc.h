/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * CSCC's window, dht layer (seed 002, section 2.1): credits at a
 * requester, one per request of its own that is out and not yet
 * acknowledged, with no state per destination, grown by ACKs as a TCP
 * window and cut on loss, and the retransmission timeout from an
 * estimate of the round trip and of its error. Pure arithmetic on the
 * caller's figures, so that a unit test drives it with virtual time;
 * dht_cscc.c also holds the scheme that applies it to the DHT's
 * requests (dht_cc.h).
 *
 * States (c: credits, in: requests out unacknowledged):
 *   SLOW START  c < ssthresh: each ACK c += 1
 *   AVOIDANCE   c >= ssthresh: each ACK c += 1/c
 *   on a loss   ssthresh = DECREASE * c if c > ssthresh, else
 *               DECREASE * ssthresh; c = LOSS_CREDITS (slow start again
 *               while c < ssthresh)
 * A request may go out while in < floor(c); c never passes MAX_CREDITS,
 * which is also the first ssthresh (slow start until the first loss).
 */
#ifndef FERRY_DHT_DHT_CSCC_H
#define FERRY_DHT_DHT_CSCC_H

#include <stdbool.h>
#include <stdint.h>

#include "dht/dht.h"

/* The seed's constants, the defaults of [dht] CSCC_* (section 2.1). */
#define DHT_CSCC_LOSS_CREDITS    5     /* 2.1.1: c := 5 */
#define DHT_CSCC_DECREASE        0.8   /* 2.1.1: ssthresh := 0.8 * ... */
#define DHT_CSCC_RTT_GAIN        0.125 /* 2.1.2: RTT_est's */
#define DHT_CSCC_ERR_GAIN        0.25  /* 2.1.2: errorEst's */
#define DHT_CSCC_RTO_ERR_FACTOR  10    /* 2.1.2: RTT_est + 10 errorEst */
/* Not in the seed: its first window (the size it restarts at after a
 * loss), the bound on c, and the timeout before any round trip was
 * measured (TCP's, RFC 6298). */
#define DHT_CSCC_INITIAL_CREDITS DHT_CSCC_LOSS_CREDITS
#define DHT_CSCC_MAX_CREDITS     1000
#define DHT_CSCC_INITIAL_RTO_US  (1000u * 1000)

struct dht_cscc_window {
	struct dht_cscc_cfg cfg;
	double credits; /* c */
	double ssthresh;
	double rtt_us;      /* RTT_est; 0: no sample yet */
	double err_us;      /* errorEst */
	uint64_t in_flight; /* requests out, unacknowledged */
	uint64_t acks;      /* ACKs taken */
	uint64_t losses;    /* losses taken */
};

/* The seed's values, the documented defaults. */
void dht_cscc_cfg_default(struct dht_cscc_cfg *ret);
/* True if cfg's values make a window (credits >= 1, factors in range). */
bool dht_cscc_cfg_valid(const struct dht_cscc_cfg *cfg);

/* A window at the start: c = INITIAL_CREDITS, ssthresh = MAX_CREDITS. */
void dht_cscc_window_init(struct dht_cscc_window *w,
    const struct dht_cscc_cfg *cfg);
/* Whether a request may go out now (in < floor(c)). */
bool dht_cscc_window_open(const struct dht_cscc_window *w);
/* A request went out: it holds a credit. */
void dht_cscc_window_send(struct dht_cscc_window *w);
/* A request was acknowledged rtt_us after it went out: its credit comes
 * back, c grows, the estimates take the sample. */
void dht_cscc_window_ack(struct dht_cscc_window *w, uint64_t rtt_us);
/* A request gave back its credit without an ACK (it ended otherwise). */
void dht_cscc_window_release(struct dht_cscc_window *w);
/* A loss was detected: ssthresh and c come down. */
void dht_cscc_window_loss(struct dht_cscc_window *w);
/* The retransmission timeout: RTT_est + RTO_ERR_FACTOR * errorEst, or
 * INITIAL_RTO before the first sample. */
uint64_t dht_cscc_window_rto_us(const struct dht_cscc_window *w);

#endif /* FERRY_DHT_DHT_CSCC_H */
