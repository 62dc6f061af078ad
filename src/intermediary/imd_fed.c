/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The federation of intermediaries (issue 15; ferry-intermediary(7)
 * FEDERATION), intermediary layer: its start and stop, its periodic
 * tick, and the dispatch of the inner messages other intermediaries
 * send (ferry-protocol(7) "INTERMEDIARY MESSAGES"). imd_announce.c
 * announces this intermediary and finds the others; imd_here.c tells
 * them where a client takes its receipts and queues what they forward;
 * imd_fwd.c forwards what is queued here to where the client is.
 */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>
#include <string.h>

#include <event2/event.h>

#include "intermediary/fedmsg.h"
#include "lib/map.h"
#include "lib/time.h"

static void
imd_fed_on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct imd *imd = arg;
	uint64_t now = time_mono_us();

	(void)fd;
	(void)what;
	imd_announce_tick(imd, now);
	imd_fwd_tick(imd, now);
	imd_here_tick(imd, now);
}

int
imd_fed_start(struct imd *imd)
{
	struct imd_fed *f = &imd->fed;
	struct timeval tv = { 0, IMD_FED_TICK_US };

	fedmsg_topic(f->topic.b);
	TAILQ_INIT(&f->fwd_list);
	TAILQ_INIT(&f->fwd_waiting);
	TAILQ_INIT(&f->here_lru);
	ratelimit_init(&f->here_rl, imd->cfg.fed.here_rate,
	    2.0 * imd->cfg.fed.here_rate);
	ratelog_init(&f->log, 5, 20);
	f->fwds = map_new();
	f->heres = map_new();
	f->tick = event_new(imd->base, -1, EV_PERSIST, imd_fed_on_tick, imd);
	if (f->fwds == NULL || f->heres == NULL || f->tick == NULL ||
	    event_add(f->tick, &tv) < 0)
		return -ENOMEM;
	/* The first announcement and lookup at the first tick. */
	f->next_announce_us = time_mono_us();
	f->next_lookup_us = f->next_announce_us;
	return 0;
}

void
imd_fed_stop(struct imd *imd)
{
	struct imd_fed *f = &imd->fed;

	if (f->tick != NULL)
		event_free(f->tick);
	f->tick = NULL;
	/* The DHT ends them later, unheard. */
	if (f->announcing != NULL)
		f->announcing->imd = NULL;
	if (f->looking != NULL)
		f->looking->imd = NULL;
	if (f->withdrawing != NULL)
		f->withdrawing->imd = NULL;
	f->announcing = f->looking = f->withdrawing = NULL;
	imd_fwd_free_all(imd);
	imd_here_free_all(imd);
	map_free(f->fwds);
	map_free(f->heres);
	f->fwds = NULL;
	f->heres = NULL;
}

void
imd_fed_receive(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    uint16_t type, const void *body, size_t len)
{
	switch (type) {
	case FERRY_MSG_IMD_HERE:
		imd_fwd_here(imd, from, body, len);
		break;
	case FERRY_MSG_IMD_ENTRIES:
		imd_here_entries(imd, from, body, len);
		break;
	case FERRY_MSG_IMD_ACK:
		imd_fwd_ack(imd, from, body, len);
		break;
	default:
		(*imd->c.fed_msg_bad)++;
		break;
	}
}
