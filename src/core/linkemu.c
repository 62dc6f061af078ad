/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Delay, jitter, loss and rate emulation (see linkemu.h), core layer. */
#define LOG_TAG "testing"
#include "core/linkemu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <sodium.h>

#include "core/core_cfg.h"
#include "core/transport.h"
#include "lib/cfg.h"
#include "lib/log.h"
#include "lib/time.h"

#define LINKEMU_QUEUE_DEFAULT (64ull * 1024 * 1024)

struct emu_unit {
	TAILQ_ENTRY(emu_unit) link; /* sorted by at_us */
	struct transport *t;
	struct ferry_tsession *ts;  /* one reference (associate) */
	uint64_t at_us;		    /* delivery time */
	size_t len;
	bool enc;
	uint32_t crc;
	uint8_t data[];
};

struct linkemu {
	struct event_base *base;
	struct emu_cfg cfg;
	char only[256];		/* [testing] TRANSPORTS, or "" for all */
	TAILQ_HEAD(emu_q, emu_unit) queue;
	uint64_t queued;	/* bytes */
	uint64_t limit;		/* bytes the emulated link buffers */
	uint64_t busy_until_us; /* the rate limiter's next free slot */
	uint64_t *dropped;
	struct event *ev;
};

static void linkemu_deliver_cb(evutil_socket_t fd, short what, void *cls);

struct linkemu *
linkemu_new(struct event_base *base, const struct emu_cfg *ec,
    const struct cfg *cfg, uint64_t *drop_counter, int *ret_err)
{
	const char *only = cfg_get(cfg, "testing", "TRANSPORTS");
	struct linkemu *e;

	*ret_err = 0;
	if (!ec->enable)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (e == NULL || (e->ev = evtimer_new(base, linkemu_deliver_cb, e)) ==
			     NULL) {
		free(e);
		*ret_err = -ENOMEM;
		return NULL;
	}
	e->base = base;
	e->cfg = *ec;
	(void)snprintf(e->only, sizeof(e->only), "%s", only ? only : "");
	TAILQ_INIT(&e->queue);
	/* A bottleneck of RATE holds about a second of traffic, as a
	 * router queue might. */
	e->limit = ec->rate > 0 ? ec->rate + 65536 : LINKEMU_QUEUE_DEFAULT;
	e->dropped = drop_counter;
	log_warn("LINK EMULATION ON ([testing]): delay %llu us, jitter %llu us, loss %.4f, rate %llu B/s, transports '%s' — for tests only",
	    (unsigned long long)ec->delay_us, (unsigned long long)ec->jitter_us,
	    ec->loss, (unsigned long long)ec->rate,
	    e->only[0] ? e->only : "all");
	return e;
}

static void
linkemu_drop(struct linkemu *e, struct emu_unit *u, bool release)
{
	TAILQ_REMOVE(&e->queue, u, link);
	e->queued -= u->len;
	if (release)
		(void)u->t->api->disconnect(u->t->api->cls, u->ts);
	free(u);
}

void
linkemu_free(struct linkemu *e)
{
	if (e == NULL)
		return;
	while (!TAILQ_EMPTY(&e->queue))
		linkemu_drop(e, TAILQ_FIRST(&e->queue), true);
	event_free(e->ev);
	free(e);
}

bool
linkemu_applies(const struct linkemu *e, const struct transport *t)
{
	const char *s = e->only, *w;
	size_t len;

	if (e->only[0] == '\0')
		return true;
	while (cfg_next_word(&s, &w, &len))
		if (len == strlen(t->name) && memcmp(w, t->name, len) == 0)
			return true;
	return false;
}

static void
linkemu_arm(struct linkemu *e)
{
	struct emu_unit *u = TAILQ_FIRST(&e->queue);
	uint64_t now = time_mono_us();
	struct timeval tv;

	if (u == NULL)
		return;
	time_us_to_tv(u->at_us > now ? u->at_us - now : 0, &tv);
	(void)evtimer_add(e->ev, &tv);
}

static void
linkemu_deliver_cb(evutil_socket_t fd, short what, void *cls)
{
	struct linkemu *e = cls;
	uint64_t now = time_mono_us();
	struct emu_unit *u;

	(void)fd;
	(void)what;
	while ((u = TAILQ_FIRST(&e->queue)) != NULL && u->at_us <= now) {
		const struct ferry_transport_api *api = u->t->api;

		/* A full socket at delivery time is a loss on the wire. */
		if (api->send(api->cls, u->ts, u->data, u->len, u->enc,
			u->crc) < 0)
			(*e->dropped)++;
		linkemu_drop(e, u, true);
	}
	linkemu_arm(e);
}

int
linkemu_send(struct linkemu *e, struct transport *t,
    struct ferry_tsession *ts, const uint8_t *unit, size_t len, bool enc,
    uint32_t crc)
{
	uint64_t now = time_mono_us(), depart;
	struct emu_unit *u, *pos;

	if (e->cfg.loss > 0 &&
	    randombytes_uniform(1000000) < (uint32_t)(e->cfg.loss * 1e6))
		goto drop;
	if (e->queued + len > e->limit)
		goto drop;
	u = malloc(sizeof(*u) + len);
	if (u == NULL || t->api->associate(t->api->cls, ts) < 0) {
		free(u);
		goto drop;
	}
	depart = now;
	if (e->cfg.rate > 0) {
		if (e->busy_until_us > depart)
			depart = e->busy_until_us;
		e->busy_until_us = depart + len * USEC_PER_SEC / e->cfg.rate;
		depart = e->busy_until_us;
	}
	u->t = t;
	u->ts = ts;
	u->len = len;
	u->enc = enc;
	u->crc = crc;
	u->at_us = depart + e->cfg.delay_us;
	if (e->cfg.jitter_us > 0)
		u->at_us += randombytes_uniform(
		    (uint32_t)(e->cfg.jitter_us > UINT32_MAX - 1
			    ? UINT32_MAX - 1
			    : e->cfg.jitter_us) + 1);
	memcpy(u->data, unit, len);
	/* Sorted insert from the back: without jitter every unit goes
	 * last, and with it reordering happens as on a real link. */
	TAILQ_FOREACH_REVERSE(pos, &e->queue, emu_q, link)
		if (pos->at_us <= u->at_us)
			break;
	if (pos == NULL)
		TAILQ_INSERT_HEAD(&e->queue, u, link);
	else
		TAILQ_INSERT_AFTER(&e->queue, pos, u, link);
	e->queued += len;
	if (TAILQ_FIRST(&e->queue) == u)
		linkemu_arm(e);
	return 0;
drop:
	(*e->dropped)++;
	return 0;
}

void
linkemu_forget(struct linkemu *e, const struct ferry_tsession *ts)
{
	struct emu_unit *u, *tmp;

	for (u = TAILQ_FIRST(&e->queue); u != NULL; u = tmp) {
		tmp = TAILQ_NEXT(u, link);
		if (u->ts == ts)
			linkemu_drop(e, u, false);
	}
}

void
linkemu_forget_transport(struct linkemu *e, const struct transport *t)
{
	struct emu_unit *u, *tmp;

	for (u = TAILQ_FIRST(&e->queue); u != NULL; u = tmp) {
		tmp = TAILQ_NEXT(u, link);
		if (u->t == t)
			linkemu_drop(e, u, true);
	}
}
