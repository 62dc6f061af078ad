/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary a client takes its receipts at, intermediary layer
 * (ferry-intermediary(7) FEDERATION; "B" there): a take is told to the
 * other intermediaries known (HERE, with the client's own Authorization
 * of that take as proof), at most once every HERE_INTERVAL for a
 * client; the entries they forward for that client (ENTRIES) are
 * checked, queued with their cursors (rqueue_push_from, which drops
 * those queued before) and acknowledged (ACK) once durable. Entries for
 * a client that has not taken here within 4 HERE_INTERVALs, or from a
 * peer that is no known intermediary, are refused (ACK unwanted).
 */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/identity.h"
#include "intermediary/fedmsg.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/time.h"

/* A client whose takes here were told. */
struct imd_here {
	uint8_t client[IMDWIRE_KEY_LEN];
	uint64_t told_us;           /* when, monotonic */
	TAILQ_ENTRY(imd_here) link; /* here_lru, least recently told first */
};

/* A forwarded batch being queued. */
struct imd_here_push {
	struct imd *imd;
	uint8_t from[IMDWIRE_ID_LEN];
	uint8_t client[IMDWIRE_KEY_LEN];
	uint64_t top; /* its last cursor, the sender's */
};

static uint64_t
imd_here_hold_us(const struct imd *imd)
{
	return 4 * imd->cfg.fed.here_us;
}

static void
imd_here_forget(struct imd *imd, struct imd_here *h)
{
	struct imd_fed *f = &imd->fed;

	(void)map_remove(f->heres, h->client, IMDWIRE_KEY_LEN);
	TAILQ_REMOVE(&f->here_lru, h, link);
	f->n_heres--;
	free(h);
}

/* client's record, made (the oldest forgotten at FORWARD_CLIENTS) if
 * need be; NULL on OOM. */
static struct imd_here *
imd_here_get(struct imd *imd, const uint8_t client[IMDWIRE_KEY_LEN])
{
	struct imd_fed *f = &imd->fed;
	struct imd_here *h = map_get(f->heres, client, IMDWIRE_KEY_LEN);

	if (h != NULL)
		return h;
	if (f->n_heres >= imd->cfg.fed.clients)
		imd_here_forget(imd, TAILQ_FIRST(&f->here_lru));
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	memcpy(h->client, client, IMDWIRE_KEY_LEN);
	if (map_put(f->heres, h->client, IMDWIRE_KEY_LEN, h) < 0) {
		free(h);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&f->here_lru, h, link);
	f->n_heres++;
	return h;
}

void
imd_here_take(struct imd *imd, const struct imdwire_auth *a, const char *target)
{
	struct imd_fed *f = &imd->fed;
	uint8_t msg[FEDMSG_HERE_FIXED + FEDMSG_TARGET_MAX];
	uint64_t now = time_mono_us();
	struct fedmsg_here here;
	struct imd_here *h;
	size_t len;

	if (strlen(target) > FEDMSG_TARGET_MAX)
		return;
	h = imd_here_get(imd, a->client);
	if (h == NULL)
		return;
	if (h->told_us != 0 && now - h->told_us < imd->cfg.fed.here_us)
		return;
	h->told_us = now;
	TAILQ_REMOVE(&f->here_lru, h, link);
	TAILQ_INSERT_TAIL(&f->here_lru, h, link);
	memset(&here, 0, sizeof(here));
	here.auth = *a;
	memcpy(here.target, target, strlen(target) + 1);
	len = fedmsg_here_encode(&here, msg);
	for (size_t i = 0; i < imd->n_peers; i++) {
		const uint8_t *to = imd->peers[i].id;
		int r =
		    f->net.send(f->net.cls, to, FERRY_MSG_IMD_HERE, msg, len);

		if (r == 0)
			(*imd->c.fed_here_sent)++;
		else if (r == -ENOTCONN)
			(void)f->net.link(f->net.cls, to, NULL, 0);
	}
}

static void
imd_here_ack(struct imd *imd, const uint8_t to[IMDWIRE_ID_LEN],
    const uint8_t client[IMDWIRE_KEY_LEN], enum fedmsg_ack_status status,
    uint64_t cursor)
{
	struct fedmsg_ack a = { .status = status, .cursor = cursor };
	uint8_t msg[FEDMSG_ACK_LEN];

	if (imd->fed.core == NULL)
		return; /* going: the sender sends again to whoever is there */
	memcpy(a.client, client, IMDWIRE_KEY_LEN);
	fedmsg_ack_encode(&a, msg);
	/* A lost ACK costs the sender a batch sent again, which the queue
	 * does not take twice. */
	(void)imd->fed.net.send(imd->fed.net.cls, to, FERRY_MSG_IMD_ACK, msg,
	    sizeof(msg));
}

static void
imd_here_pushed(void *cls, int status)
{
	struct imd_here_push *p = cls;
	struct imd *imd = p->imd;

	imd->fed.pushes--;
	if (status != -ECANCELED)
		imd_here_ack(imd, p->from, p->client,
		    status == 0             ? FEDMSG_ACK_HELD
		        : status == -ENOSPC ? FEDMSG_ACK_FULL
		                            : FEDMSG_ACK_FAILED,
		    p->top);
	free(p);
}

/* Drops the receipts whose signature is not their storer's; how many
 * are left. */
static size_t
imd_here_check(struct imd *imd, struct rqueue_entry *e, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		struct ferry_peer_id id;
		struct dhtkey storer;

		if (e[i].type == RQUEUE_RECEIPT) {
			peer_id_of(e[i].receipt.storer_pk, &id);
			memcpy(storer.b, id.bytes, sizeof(storer.b));
			if (dhtmsg_receipt_verify(&e[i].key, &storer,
			        e[i].put_hash, &e[i].receipt) < 0) {
				(*imd->c.fed_receipts_bad)++;
				continue;
			}
		}
		e[o++] = e[i];
	}
	return o;
}

void
imd_here_entries(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    const uint8_t *body, size_t len)
{
	struct imd_fed *f = &imd->fed;
	struct rqueue_entry e[FEDMSG_ENTRIES_MAX];
	uint8_t client[IMDWIRE_KEY_LEN];
	struct imd_here_push *p;
	struct imd_here *h;
	uint64_t top;
	size_t n;

	if (fedmsg_entries_decode(body, len, client, e, &n) < 0) {
		(*imd->c.fed_msg_bad)++;
		return;
	}
	(*imd->c.fed_batches_received)++;
	*imd->c.fed_entries_received += n;
	top = e[n - 1].cursor;
	h = map_get(f->heres, client, IMDWIRE_KEY_LEN);
	if (h == NULL || time_mono_us() - h->told_us > imd_here_hold_us(imd) ||
	    !imd_peer_is_known(imd, from)) {
		(*imd->c.fed_entries_unwanted)++;
		imd_here_ack(imd, from, client, FEDMSG_ACK_UNWANTED, 0);
		return;
	}
	n = imd_here_check(imd, e, n);
	if (n == 0) {
		/* Nothing a client could use: taken as held. */
		imd_here_ack(imd, from, client, FEDMSG_ACK_HELD, top);
		return;
	}
	p = f->pushes < IMD_FED_PUSHES ? malloc(sizeof(*p)) : NULL;
	if (p == NULL) {
		imd_here_ack(imd, from, client, FEDMSG_ACK_FAILED, 0);
		return;
	}
	p->imd = imd;
	memcpy(p->from, from, IMDWIRE_ID_LEN);
	memcpy(p->client, client, IMDWIRE_KEY_LEN);
	p->top = top;
	if (rqueue_push_from(imd->queue, client, from, e, n, imd_here_pushed,
	        p) < 0) {
		free(p);
		imd_here_ack(imd, from, client, FEDMSG_ACK_FAILED, 0);
		return;
	}
	f->pushes++;
}

void
imd_here_tick(struct imd *imd, uint64_t now)
{
	struct imd_here *h;

	while ((h = TAILQ_FIRST(&imd->fed.here_lru)) != NULL &&
	    now - h->told_us > imd_here_hold_us(imd))
		imd_here_forget(imd, h);
}

void
imd_here_free_all(struct imd *imd)
{
	struct imd_here *h;

	while ((h = TAILQ_FIRST(&imd->fed.here_lru)) != NULL)
		imd_here_forget(imd, h);
}
