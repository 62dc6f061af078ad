/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Leaving (imd.h imd_leave), intermediary layer: what the intermediary
 * does between the daemon's SIGTERM and its end, bounded by
 * LEAVE_TIMEOUT. Without it the others learnt that it was gone only when
 * its announcement expired (ANNOUNCE_LIFETIME, an hour by default), and
 * sent clients and forwarded receipts to it all that time; and the
 * relays it had in flight ended unheard, so that their clients had to
 * put those blocks again elsewhere. So it takes no new connection,
 * replaces its announcement with a withdrawal (an empty record of the
 * same signer and topic, newer: the storing peers keep the newest of a
 * signer, and a lookup takes the newest it finds), and waits for that
 * to be stored and for its relays to end, whose receipts go into the
 * queue on disk for their clients' next take.
 */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>

#include <event2/event.h>

#include "lib/log.h"
#include "lib/time.h"

#define IMD_LEAVE_TICK_US 50000

/* Whether what leaving waits for is over. */
static bool
imd_leave_over(const struct imd *imd)
{
	return imd->fed.withdrawing == NULL && TAILQ_EMPTY(&imd->relays);
}

static void
imd_leave_on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct imd *imd = arg;
	imd_left_fn *left = imd->leave.left;

	(void)fd;
	(void)what;
	if (!imd_leave_over(imd) && time_mono_us() < imd->leave.deadline_us)
		return;
	if (imd_leave_over(imd))
		log_info("left: the others are told, no relay is in flight");
	else
		log_notice("LEAVE_TIMEOUT passed: %s, %llu bytes of relays in "
		           "flight",
		    imd->fed.withdrawing != NULL ? "the withdrawal not stored"
		                                 : "the withdrawal ended",
		    (unsigned long long)imd->in_flight);
	event_free(imd->leave.tick);
	imd->leave.tick = NULL;
	imd->leave.left = NULL;
	/* Last: left may free imd. */
	left(imd->leave.cls);
}

int
imd_leave(struct imd *imd, imd_left_fn *left, void *cls)
{
	struct timeval tv = { 0, IMD_LEAVE_TICK_US };

	if (imd->fed.leaving)
		return -EALREADY;
	if (imd->cfg.leave_us == 0 || left == NULL)
		return -ENOENT;
	imd->leave.tick =
	    event_new(imd->base, -1, EV_PERSIST, imd_leave_on_tick, imd);
	if (imd->leave.tick == NULL || event_add(imd->leave.tick, &tv) < 0) {
		if (imd->leave.tick != NULL)
			event_free(imd->leave.tick);
		imd->leave.tick = NULL;
		return -ENOMEM;
	}
	imd->fed.leaving = true;
	imd->leave.left = left;
	imd->leave.cls = cls;
	imd->leave.deadline_us = time_mono_us() + imd->cfg.leave_us;
	httpd_stop_accepting(imd->http);
	if (imd_announce_withdraw(imd) < 0)
		log_info("cannot withdraw the announcement; the others forget "
		         "this intermediary when it expires");
	log_notice("leaving: no new connections, the federation told, "
	           "relays in flight ending (at most %llu ms)",
	    (unsigned long long)(imd->cfg.leave_us / 1000));
	return 0;
}

void
imd_leave_stop(struct imd *imd)
{
	if (imd->leave.tick != NULL)
		event_free(imd->leave.tick);
	imd->leave.tick = NULL;
	imd->leave.left = NULL;
}
