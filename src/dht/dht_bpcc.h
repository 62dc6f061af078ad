/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * BPCC, back-pressure congestion control for routed requests (seed 002,
 * section 2.2), dht layer, internal to src/dht and its unit tests: one
 * bounded queue per neighbour for the requests passed on to it, holds on
 * the neighbours whose requests fill one, the bound on how long a queue
 * may stay blocked. Every request the DHT sends goes through
 * dht_cc_forward() (dht_cc.h), which hands it to dht_bpcc_send() while
 * BPCC runs (the scheme dht_cc_bpcc, at the end of dht_bpcc.c); answers
 * never do (section 3.3: see dht_bpcc.c).
 */
#ifndef FERRY_DHT_DHT_BPCC_H
#define FERRY_DHT_DHT_BPCC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dht;
struct dhtkey;

/* Seed 002, section 3.2: "each peer has four outgoing buffers of either
 * size 25 or 100 messages"; the smaller is the default BPCC_QUEUE. */
#define DHT_BPCC_QUEUE_DEFAULT        25
#define DHT_BPCC_QUEUE_MAX            65535
/* Not in the seed: twice its mean cross-load pause (2 s, section 3.2), so
 * that a neighbour pausing as the seed's do is waited for, and one that
 * stopped is not waited for much longer. */
#define DHT_BPCC_BLOCK_MAX_DEFAULT_US (4u * 1000 * 1000)
/* Requests that arrive after their sender was held (those it had sent
 * already) still queue, up to this many times BPCC_QUEUE of others'
 * requests in one queue; past it they are refused with FAIL 8 (busy),
 * which their requester sends again a little later. One from a sender
 * not held yet is queued and holds it (dht_bpcc.c). */
#define DHT_BPCC_HARD_FACTOR          2
/* This node's own requests hold nobody: they wait, at most this many in
 * all queues together (past it they are refused as above). */
#define DHT_BPCC_OWN_MAX              4096

/* Sets up d->bpcc and its "dht.bpcc_*" counters (after the env is
 * copied). 0 or -ENOMEM; dht_bpcc_free() cleans up either way. */
int dht_bpcc_new(struct dht *d);
/* Lets go of every hold and frees the queued requests unanswered (the
 * DHT is going away). NULL-safe on d->bpcc. */
void dht_bpcc_free(struct dht *d);

/*
 * Sends a request (type, body: its encoding as the neighbour gets it) to
 * the neighbour next, which prev (NULL: this node's own) passed to us.
 * Without BPCC: env.send, whose result it returns. With BPCC: sent if
 * next's queue is empty and the env takes it, else queued behind the
 * others (0 either way); a queue that reaches BPCC_QUEUE holds prev.
 * Errors: -EBUSY (prev is held and the queue holds HARD_FACTOR times
 * BPCC_QUEUE requests of others; counted), -ENOBUFS (ours, and
 * DHT_BPCC_OWN_MAX of ours wait; counted), -EAGAIN (next was given up at BPCC_BLOCK_MAX and
 * still refuses), env.send's other errors, -ENOMEM. The caller answers the
 * requester, as for any request it could not pass on: FAIL 8 (busy) for
 * the first two, which it may send again a little later.
 */
int dht_bpcc_send(struct dht *d, const struct dhtkey *next, uint16_t type,
    const void *body, size_t len, const struct dhtkey *prev);
/* True if next hops should pass peer over: its queue was given up at
 * BPCC_BLOCK_MAX and it has not drained since. */
bool dht_bpcc_stalled(const struct dht *d, const struct dhtkey *peer);
/* The link to peer went down: its queued requests go to another hop, or
 * their requesters are answered FAIL. */
void dht_bpcc_peer_down(struct dht *d, const struct dhtkey *peer);
/* Sends what waits for neighbours that take it again, gives up queues
 * blocked for BPCC_BLOCK_MAX, frees idle queues; from dht_tick(). */
void dht_bpcc_tick(struct dht *d);

#endif /* FERRY_DHT_DHT_BPCC_H */
