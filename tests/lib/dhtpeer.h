/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A DHT peer written for the tests (issue 12, "Bad input"): one identity
 * that links to real daemons over the wire (a wirepeer and a wirelink
 * per daemon, acknowledging their frames so that they keep sending) and
 * whose thread hands every DHT request they send it to a function of the
 * test's, which answers as no honest ferryd would: wrong blocks, forged
 * receipts, floods. The daemons see an ordinary neighbour: it linked to
 * them (so [core] LINK_POLICY = manual takes it), it is in their routing
 * tables, and it is the next hop toward keys close to its id.
 *
 *	ck_assert_int_eq(dhtpeer_new(seed, &p), 0);
 *	for (...) dhtpeer_link(p, d[i]);   (handshakes, before the thread)
 *	dhtpeer_start(p, on_request, cls);
 *	... the test's requests, answered in on_request by dhtpeer_send ...
 *	dhtpeer_free(p);                   (stops the thread first)
 */
#ifndef FERRY_TESTS_DHTPEER_H
#define FERRY_TESTS_DHTPEER_H

#include <stddef.h>
#include <stdint.h>

#include "dht/dhtmsg.h"
#include "harness.h"

#define DHTPEER_LINKS_MAX 16

struct dhtpeer;
struct identity;

/* A DHT request daemon number i (in the order of dhtpeer_link) sent:
 * its body decoded (pointers into the frame, valid for the call only).
 * Runs on the peer's thread, with its lock held: dhtpeer_send and
 * friends may be called from it. */
typedef void dhtpeer_req_fn(void *cls, struct dhtpeer *p, unsigned i,
    const struct dhtmsg_req *req);

/* A peer whose identity derives from seed (as wirepeer_new's). */
int dhtpeer_new(uint64_t seed, struct dhtpeer **ret);
/* Stops the thread, drops the links, frees. NULL is allowed. */
void dhtpeer_free(struct dhtpeer *p);
/* Its identity (keys and id). */
const struct identity *dhtpeer_ident(const struct dhtpeer *p);
/* Links to d (a running daemon with UDP) and waits for the key exchange
 * to complete: 0, -ENOSPC past DHTPEER_LINKS_MAX, -ETIMEDOUT. Before
 * dhtpeer_start only. */
int dhtpeer_link(struct dhtpeer *p, struct harness_daemon *d);
/* Starts the thread that reads every link, acknowledges, keeps the links
 * alive and calls fn (may be NULL: requests are dropped) for each DHT
 * request. 0 or a negative errno. */
int dhtpeer_start(struct dhtpeer *p, dhtpeer_req_fn *fn, void *cls);
/* Link number of the daemon whose id is key, or -1. */
int dhtpeer_link_of(const struct dhtpeer *p, const struct dhtkey *key);
/* Sends one DHT message (type, body) to daemon number i. Thread-safe. */
int dhtpeer_send(struct dhtpeer *p, unsigned i, uint16_t type, const void *body,
    size_t len);
/* Sends inner messages (wirelink_msg's, back to back, at most 1400 bytes)
 * in one frame to daemon number i. Thread-safe. */
int dhtpeer_send_inner(struct dhtpeer *p, unsigned i, const void *inner,
    size_t len);
/* Answers req with a (its type and the fields of its kind set): fills
 * the header from req, with this peer as the responder, and sends it to
 * the requester directly when it is linked to it, else to daemon i, the
 * hop it came from, marked ROUTED. */
int dhtpeer_answer(struct dhtpeer *p, unsigned i, const struct dhtmsg_req *req,
    struct dhtmsg_ans *a);
/* As dhtpeer_answer, naming responder as the answering peer (a peer that
 * does not exist, say, whose key the test made up). */
int dhtpeer_answer_as(struct dhtpeer *p, unsigned i,
    const struct dhtmsg_req *req, struct dhtmsg_ans *a,
    const struct dhtkey *responder);
/* DHT requests received so far, from all daemons. Thread-safe. */
uint64_t dhtpeer_requests(struct dhtpeer *p, uint16_t type);

#endif /* FERRY_TESTS_DHTPEER_H */
