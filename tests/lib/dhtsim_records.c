/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The records store of the fake network's nodes (see dhtsim.h): in
 * memory, kept by the DHT's own rule (dhtrec_admit) as the daemon's
 * SQLite table is, its calls completing through the queue.
 */
#include "dhtsim_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Drops n's records expired at now. */
static void
sim_rec_expire(struct dhtsim_node *n, uint64_t now)
{
	size_t j = 0;

	for (size_t i = 0; i < n->n_recs; i++) {
		if (n->recs[i].rec.expiry <= now)
			continue;
		if (j != i) {
			n->recs[j] = n->recs[i];
			n->recs[j].rec.value = n->recs[j].value;
		}
		j++;
	}
	n->n_recs = j;
}

/* The place of the earliest expiring record (of topic, if not NULL). */
static size_t
sim_rec_first(const struct dhtsim_node *n, const struct dhtkey *topic)
{
	size_t first = n->n_recs;

	for (size_t i = 0; i < n->n_recs; i++) {
		if (topic != NULL &&
		    !dhtkey_equal(&n->recs[i].rec.topic, topic))
			continue;
		if (first == n->n_recs ||
		    n->recs[i].rec.expiry < n->recs[first].rec.expiry)
			first = i;
	}
	return first;
}

/* What n holds where r is to go, and the place of r's signer's. */
static void
sim_rec_room(const struct dhtsim_node *n, const struct dhtrec *r,
    struct dhtrec_room *room, size_t *ret_at)
{
	size_t t = sim_rec_first(n, &r->topic), a = sim_rec_first(n, NULL);

	memset(room, 0, sizeof(*room));
	*ret_at = n->n_recs;
	for (size_t i = 0; i < n->n_recs; i++) {
		const struct dhtrec *h = &n->recs[i].rec;

		if (!dhtkey_equal(&h->topic, &r->topic))
			continue;
		room->in_topic++;
		if (memcmp(h->signer, r->signer, FERRY_PUBKEY_LEN) == 0) {
			room->has_signer = true;
			room->signer_seq = h->seq;
			room->signer_same = dhtrec_same(h, r);
			*ret_at = i;
		}
	}
	room->topic_first = t < n->n_recs ? n->recs[t].rec.expiry : 0;
	room->total = n->n_recs;
	room->total_first = a < n->n_recs ? n->recs[a].rec.expiry : 0;
}

/* Writes r at place at (n->n_recs: a new one). 0 or -ENOMEM. */
static int
sim_rec_write(struct dhtsim_node *n, size_t at, const struct dhtrec *r)
{
	struct dhtsim_rec *h;

	if (at == n->n_recs && n->n_recs == n->cap_recs) {
		size_t cap = n->cap_recs ? 2 * n->cap_recs : 16;
		struct dhtsim_rec *m = realloc(n->recs, cap * sizeof(*m));

		if (m == NULL)
			return -ENOMEM;
		n->recs = m;
		n->cap_recs = cap;
		for (size_t i = 0; i < n->n_recs; i++)
			n->recs[i].rec.value = n->recs[i].value;
	}
	h = &n->recs[at];
	h->rec = *r;
	if (r->value_len > 0)
		memcpy(h->value, r->value, r->value_len);
	h->rec.value = h->value;
	if (at == n->n_recs)
		n->n_recs++;
	return 0;
}

/* Takes place i out of n's records. */
static void
sim_rec_drop(struct dhtsim_node *n, size_t i)
{
	n->recs[i] = n->recs[--n->n_recs];
	n->recs[i].rec.value = n->recs[i].value;
}

/* The keeping rule applied to n: 0, -ESTALE or -ENOSPC. */
static int
sim_rec_keep(struct dhtsim_node *n, const struct dhtrec *r, uint64_t now,
    uint64_t per_topic, uint64_t total_max)
{
	struct dhtrec_room room;
	size_t at;

	sim_rec_expire(n, now);
	sim_rec_room(n, r, &room, &at);
	switch (dhtrec_admit(&room, r, per_topic, total_max)) {
	case DHTREC_HELD:
		return 0;
	case DHTREC_STALE:
		return -ESTALE;
	case DHTREC_FULL:
		return -ENOSPC;
	case DHTREC_EVICT_TOPIC:
		sim_rec_drop(n, sim_rec_first(n, &r->topic));
		at = n->n_recs;
		break;
	case DHTREC_EVICT_ANY:
		sim_rec_drop(n, sim_rec_first(n, NULL));
		at = n->n_recs;
		break;
	default:
		break;
	}
	return sim_rec_write(n, at, r);
}

int
dhtsim_record_put(void *cls, const struct dhtrec *rec, uint64_t now,
    uint64_t per_topic, uint64_t total_max, dht_store_done_fn *done, void *arg)
{
	struct dhtsim_node *n = cls;
	struct dhtsim_event e = { .kind = SIM_STORED,
		.to = n->idx,
		.done = done,
		.arg = arg };

	e.status = sim_rec_keep(n, rec, now, per_topic, total_max);
	if (e.status == -ENOMEM)
		return -ENOMEM;
	return dhtsim_q_push(n->sim, &e);
}

int
dhtsim_record_list(void *cls, const struct dhtkey *topic, uint64_t now,
    size_t max, dht_records_got_fn *got, void *arg)
{
	struct dhtsim_node *n = cls;
	struct dhtsim_event e = { .kind = SIM_LISTED,
		.to = n->idx,
		.key = *topic,
		.listed = got,
		.now = now,
		.max = max > DHTMSG_RECORDS_MAX ? DHTMSG_RECORDS_MAX : max,
		.arg = arg };

	return dhtsim_q_push(n->sim, &e);
}

void
dhtsim_records_listed(struct dhtsim *s, struct dhtsim_event *e)
{
	struct dhtsim_node *n = &s->nodes[e->to];
	struct dhtrec out[DHTMSG_RECORDS_MAX];
	size_t got = 0;

	/* Any order does: the DHT's answer and its requester do not rely
	 * on the store's. */
	for (size_t i = 0; i < n->n_recs && got < e->max; i++)
		if (dhtkey_equal(&n->recs[i].rec.topic, &e->key) &&
		    n->recs[i].rec.expiry > e->now)
			out[got++] = n->recs[i].rec;
	e->listed(e->arg, 0, out, got);
}

size_t
dhtsim_records(const struct dhtsim *s, int i, const struct dhtkey *topic,
    const uint8_t *signer, struct dhtrec *ret)
{
	const struct dhtsim_node *n = &s->nodes[i];
	size_t count = 0;

	for (size_t j = 0; j < n->n_recs; j++) {
		if (!dhtkey_equal(&n->recs[j].rec.topic, topic))
			continue;
		count++;
		if (ret != NULL && signer != NULL &&
		    memcmp(n->recs[j].rec.signer, signer, FERRY_PUBKEY_LEN) ==
		        0)
			*ret = n->recs[j].rec;
	}
	return count;
}

void
dhtsim_records_clear(struct dhtsim *s, int i)
{
	s->nodes[i].n_recs = 0;
}

void
dhtsim_records_free(struct dhtsim_node *n)
{
	free(n->recs);
	n->recs = NULL;
	n->n_recs = n->cap_recs = 0;
}
