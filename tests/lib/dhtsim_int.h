/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the files of the fake DHT network (dhtsim*.c) share: its events,
 * its queue and the calls between the network (dhtsim.c), its links
 * (dhtsim_link.c), the env of its nodes (dhtsim_env.c) and its random
 * numbers (dhtsim_rand.c).
 */
#ifndef FERRY_TESTS_DHTSIM_INT_H
#define FERRY_TESTS_DHTSIM_INT_H

#include "dhtsim.h"

enum dhtsim_kind {
	SIM_MSG,
	SIM_UP,
	SIM_DOWN,
	SIM_STORED,
	SIM_GOT,
	SIM_WAKE,
	SIM_LISTED, /* a list of records (dhtsim_records.c) */
};

/* An event of the queue. A SIM_MSG there is a turn of the way from ->from
 * to ->to: its peer takes the message at its head. One held aside by the
 * filter carries its message. */
struct dhtsim_event {
	enum dhtsim_kind kind;
	int from, to;  /* nodes; a store's and a wake's: to */
	uint16_t type; /* a held message's */
	uint8_t *body; /* a held message's, owned */
	size_t len;
	struct dhtkey key; /* a get's */
	dht_store_done_fn *done;
	dht_store_got_fn *got;
	dht_records_got_fn *listed; /* SIM_LISTED's */
	uint64_t now;               /* SIM_LISTED's clock */
	size_t max;                 /* SIM_LISTED's bound */
	int status;                 /* SIM_STORED's */
	void *arg;
};

/* A turn of a way whose message is not due yet. */
struct dhtsim_due {
	uint64_t at_us; /* when it is */
	uint64_t seq;   /* the order of the sends, for ties */
	int from, to;
};

/* Appends e to the queue. 0 or -ENOMEM. */
int dhtsim_q_push(struct dhtsim *s, const struct dhtsim_event *e);
/* Appends e to a side list (held, parked or paused). 0 or -ENOMEM. */
int dhtsim_keep(struct dhtsim_event **list, size_t *n, size_t *cap,
    const struct dhtsim_event *e);

/* a's record of b; made if create (NULL then on OOM). */
struct dhtsim_link *dhtsim_link_rec(const struct dhtsim *s, int a, int b,
    bool create);
/* The turn of the way from a to b in the queue came: b takes the
 * message at its head, unless b is dead (it is lost), holds a or is
 * stopped (it stays). */
void dhtsim_link_turn(struct dhtsim *s, int a, int b);
/* The turns of the messages that fell due by now go to the queue. */
void dhtsim_link_due(struct dhtsim *s);
/* When the next message falls due; UINT64_MAX if none waits. */
uint64_t dhtsim_link_next_us(const struct dhtsim *s);
/* Node i goes on: the messages it left are taken, in order, and the
 * drains owed to it come. */
void dhtsim_link_resume(struct dhtsim *s, int i);
/* Frees node n's records and the messages on their ways. */
void dhtsim_links_free(struct dhtsim_node *n);

/* Fills env for node n: every field not set NULL. */
void dhtsim_env_fill(struct dhtsim_node *n, struct dht_env *env);
/* Completes e, a get of node e->to's store (SIM_GOT). */
void dhtsim_store_got(struct dhtsim *s, struct dhtsim_event *e);
/* Frees the blocks of node n's store. */
void dhtsim_store_free(struct dhtsim_node *n);
/* dhtsim_records.c: the env's records store of node n. */
int dhtsim_record_put(void *cls, const struct dhtrec *rec, uint64_t now,
    uint64_t per_topic, uint64_t total_max, dht_store_done_fn *done,
    void *arg);
int dhtsim_record_list(void *cls, const struct dhtkey *topic, uint64_t now,
    size_t max, dht_records_got_fn *got, void *arg);
/* Completes e, a list of node e->to's records (SIM_LISTED). */
void dhtsim_records_listed(struct dhtsim *s, struct dhtsim_event *e);
/* Frees node n's records. */
void dhtsim_records_free(struct dhtsim_node *n);

/* From now on libsodium's randombytes give the numbers of seed (the
 * DHT's request ids and refresh targets, the maps' keys); called once by
 * each new network, which starts them again. */
void dhtsim_rand_hook(uint64_t seed);
/* A network that hooked them is gone: once the last is, randombytes are
 * libsodium's own again. */
void dhtsim_rand_unhook(void);

#endif /* FERRY_TESTS_DHTSIM_INT_H */
