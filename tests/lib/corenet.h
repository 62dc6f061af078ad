/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Several cores in one process (ferry_testlib): each node is a struct core
 * of src/core with its own state directory, configuration and counters,
 * all on one event loop, linked over the real UDP or TCP transports on
 * 127.0.0.1. For tests of the core.h functions that the layers above use
 * and no client request reaches (the receive holds, send classes and link
 * policy the DHT needs). Every node takes the messages of types
 * FERRY_MSG_DHT_MIN and up and counts them by sender and type. Helpers
 * fail the Check test (logging why) rather than return an error.
 */
#ifndef FERRY_TESTS_CORENET_H
#define FERRY_TESTS_CORENET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

#include "core/core.h"

#define CORENET_MAX 8 /* nodes in one net */

struct cfg;
struct corenet;
struct stats;

struct corenet_node;

/* A message of type from node from arrived at n (after it was counted). */
typedef void corenet_msg_fn(struct corenet_node *n,
    const struct corenet_node *from, uint16_t type);

/* One core. Fields are read-only for tests, but for on_msg. */
struct corenet_node {
	struct corenet *net;	 /* owner */
	unsigned index;		 /* in net, from 0 */
	char dir[PATH_MAX];	 /* its state directory */
	uint16_t port;		 /* for UDP and TCP on 127.0.0.1 */
	struct cfg *cfg;	 /* owned */
	struct stats *stats;	 /* owned; the core's counters */
	struct core *core;	 /* owned */
	struct ferry_peer_id id; /* the core's identity */
	uint64_t rx_msgs;	 /* messages received */
	uint64_t rx_from[CORENET_MAX]; /* of them, from node i */
	uint64_t rx_type_from[CORENET_MAX]; /* of them, of rx_type */
	uint16_t rx_type;	 /* the type rx_type_from counts */
	uint64_t rx_when_type;	 /* rx_msgs when rx_type first came, or 0 */
	uint64_t drains[CORE_NCLASS]; /* drain notifications, by class */
	struct core_sub drain_sub;    /* for them */
	corenet_msg_fn *on_msg;	 /* the test's, or NULL */
};

/* Calls fn(cls) until it is true. */
typedef bool corenet_cond_fn(void *cls);

/* An empty net with its own event loop. */
struct corenet *corenet_new(void);
/* Frees every node (core first) and the loop, and removes the state
 * directories. NULL is ok. */
void corenet_free(struct corenet *net);
/* Adds and starts a node running transports ("udp", "tcp" or both),
 * with extra configuration text (may be NULL) after the net's own. */
struct corenet_node *corenet_add(struct corenet *net, const char *transports,
    const char *extra);
/* a learns b's HELOs as if from its operator (core_add_uri). */
void corenet_introduce(struct corenet_node *a, const struct corenet_node *b);
/* Runs the loop until fn(cls) holds or timeout_ms passed; fn's verdict. */
bool corenet_run_until(struct corenet *net, corenet_cond_fn *fn, void *cls,
    int timeout_ms);
/* Runs the loop for ms milliseconds. */
void corenet_run_ms(struct corenet *net, int ms);
/* True if a has a link up to b. */
bool corenet_linked(const struct corenet_node *a, const struct corenet_node *b);
/* Runs until a and b are linked both ways; fails the test otherwise. */
void corenet_wait_linked(struct corenet_node *a, struct corenet_node *b,
    int timeout_ms);
/* The node's counter name, 0 if absent. */
uint64_t corenet_stat(const struct corenet_node *n, const char *name);
/* A message of len bytes (at most 64 KiB) from a to b in class qclass:
 * its first byte says who sent it. Returns what core_send_class said. */
int corenet_send(struct corenet_node *a, const struct corenet_node *b,
    enum core_class qclass, uint16_t type, size_t len);

#endif /* FERRY_TESTS_CORENET_H */
