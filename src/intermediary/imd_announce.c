/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The federation's discovery (ferry-intermediary(7) FEDERATION),
 * intermediary layer: this intermediary announces itself with a signed
 * DHT record at the topic BLAKE2b-256("ferry intermediaries v1"), its
 * PUBLIC_URL and HELOs as the value (fedmsg.h), lasting
 * ANNOUNCE_LIFETIME and made again each third of it; it looks the
 * topic up every LOOKUP_INTERVAL and learns the others
 * (imd_peer_learn), asking the core for a link to each, over which
 * forwarding goes. Leaving (imd_leave.c), it replaces its announcement
 * with an empty record, a withdrawal, and the others forget it when they
 * find that.
 */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/identity.h"
#include "dht/dhtrec.h"
#include "intermediary/fedmsg.h"
#include "lib/log.h"
#include "lib/time.h"

/* A request's holder, or NULL. */
static struct imd_dhtreq *
imd_dhtreq_new(struct imd *imd)
{
	struct imd_dhtreq *q = malloc(sizeof(*q));

	if (q != NULL)
		q->imd = imd;
	return q;
}

/* Its intermediary, or NULL if it went; frees q. */
static struct imd *
imd_dhtreq_end(struct imd_dhtreq *q)
{
	struct imd *imd = q->imd;

	free(q);
	return imd;
}

static void
imd_announce_done(void *cls, const struct dht_result *r)
{
	struct imd *imd = imd_dhtreq_end(cls);
	struct imd_fed *f;
	uint64_t now = time_mono_us();

	if (imd == NULL)
		return;
	f = &imd->fed;
	f->announcing = NULL;
	if (r->status == -ECANCELED)
		return;
	if (r->receipts > 0) {
		(*imd->c.fed_announced)++;
		f->next_announce_us =
		    now + imd->cfg.fed.lifetime_s * 1000000 / 3;
		log_info("announced at %u storing peers until %llu s from now",
		    r->receipts, (unsigned long long)imd->cfg.fed.lifetime_s);
		return;
	}
	(*imd->c.fed_announce_failed)++;
	f->next_announce_us = now + imd->cfg.fed.lookup_us;
	log_info("announcement not stored (%s); again in %llu s",
	    strerror(-r->status),
	    (unsigned long long)(imd->cfg.fed.lookup_us / 1000000));
}

static void
imd_announce_now(struct imd *imd, uint64_t now)
{
	struct imd_fed *f = &imd->fed;
	uint8_t helos[CORE_PEER_HELOS_MAX], value[DHTREC_VALUE_MAX];
	size_t hl = f->net.own_helos(f->net.cls, helos, sizeof(helos));
	struct imd_dhtreq *q;
	int len, r = -ENOMEM;

	len = fedmsg_announce_encode(imd->cfg.public_url, helos, hl, value,
	    sizeof(value));
	if (len < 0) {
		f->next_announce_us = now + imd->cfg.fed.lookup_us;
		return;
	}
	q = imd_dhtreq_new(imd);
	if (q != NULL)
		r = dht_announce(imd->dht, &f->topic, value, (size_t)len,
		    time_real_s() + imd->cfg.fed.lifetime_s, imd_announce_done,
		    q);
	if (r < 0) {
		free(q);
		(*imd->c.fed_announce_failed)++;
		f->next_announce_us = now + imd->cfg.fed.lookup_us;
		return;
	}
	f->announcing = q;
}

static void
imd_withdraw_done(void *cls, const struct dht_result *r)
{
	struct imd *imd = imd_dhtreq_end(cls);

	if (imd == NULL)
		return;
	imd->fed.withdrawing = NULL;
	if (r->receipts > 0) {
		(*imd->c.fed_left)++;
		log_info("announcement withdrawn at %u storing peers",
		    r->receipts);
	} else {
		log_info("announcement not withdrawn (%s)",
		    strerror(-r->status));
	}
}

int
imd_announce_withdraw(struct imd *imd)
{
	struct imd_fed *f = &imd->fed;
	struct imd_dhtreq *q;
	int r;

	if (imd->dht == NULL || f->tick == NULL)
		return -ENOTCONN;
	q = imd_dhtreq_new(imd);
	if (q == NULL)
		return -ENOMEM;
	/* As long as the announcement it replaces may last, so that no
	 * copy of that outlives it at a storing peer. */
	r = dht_announce(imd->dht, &f->topic, NULL, 0,
	    time_real_s() + imd->cfg.fed.lifetime_s, imd_withdraw_done, q);
	if (r < 0) {
		free(q);
		return r;
	}
	f->withdrawing = q;
	return 0;
}

/* One record of the topic: another intermediary, learnt and linked, or
 * forgotten if it is a withdrawal. */
static void
imd_announce_learn(struct imd *imd, const struct dhtrec *rec)
{
	struct imd_fed *f = &imd->fed;
	struct fedmsg_announce a;
	struct ferry_peer_id id;
	struct imd_peer p;

	peer_id_of(rec->signer, &id);
	if (memcmp(id.bytes, imd->id, IMDWIRE_ID_LEN) == 0)
		return;
	if (rec->value_len == 0) {
		if (imd_peer_forget(imd, id.bytes))
			(*imd->c.fed_withdrawn)++;
		return;
	}
	memset(&p, 0, sizeof(p));
	if (fedmsg_announce_decode(rec->value, rec->value_len, &a) < 0 ||
	    strlen(a.url) >= sizeof(p.url)) {
		(*imd->c.fed_records_bad)++;
		return;
	}
	memcpy(p.id, id.bytes, sizeof(p.id));
	memcpy(p.url, a.url, strlen(a.url) + 1);
	p.expires = rec->expiry;
	if (imd_peer_learn(imd, &p) < 0) {
		(*imd->c.fed_records_bad)++;
		return;
	}
	/* Forwarding needs a link; the DHT's choice of links may drop it
	 * while it is idle, and the next lookup asks again. */
	if (!f->net.linked(f->net.cls, p.id))
		(void)f->net.link(f->net.cls, p.id, a.helos, a.helos_len);
}

static void
imd_lookup_done(void *cls, const struct dht_result *r)
{
	struct imd *imd = imd_dhtreq_end(cls);
	struct imd_fed *f;

	if (imd == NULL)
		return;
	f = &imd->fed;
	f->looking = NULL;
	if (r->status == -ECANCELED)
		return;
	f->next_lookup_us = time_mono_us() + imd->cfg.fed.lookup_us;
	if (r->status < 0) {
		(*imd->c.fed_lookup_failed)++;
		return;
	}
	(*imd->c.fed_lookups)++;
	for (size_t i = 0; i < r->n_records; i++)
		imd_announce_learn(imd, &r->records[i]);
}

void
imd_announce_tick(struct imd *imd, uint64_t now)
{
	struct imd_fed *f = &imd->fed;

	if (f->leaving)
		return;
	if (!f->announcing && now >= f->next_announce_us)
		imd_announce_now(imd, now);
	if (f->looking == NULL && now >= f->next_lookup_us) {
		struct imd_dhtreq *q = imd_dhtreq_new(imd);

		if (q != NULL &&
		    dht_records(imd->dht, &f->topic, imd_lookup_done, q) == 0) {
			f->looking = q;
			return;
		}
		free(q);
		(*imd->c.fed_lookup_failed)++;
		f->next_lookup_us = now + imd->cfg.fed.lookup_us;
	}
}
