/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The UDP transport's session table (see udp_int.h): one session per
 * remote address, referenced by the core through connect/associate and
 * released by disconnect (seed 004, II-B). Sessions nobody references
 * are inbound ones waiting to be associated; they live in a least
 * recently used list bounded by MAX_SESSIONS and time out after
 * IDLE_TIMEOUT, so spoofed datagrams cannot grow memory (issue 3).
 */
#define LOG_TAG "udp"
#include "udp_int.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "lib/map.h"
#include "lib/time.h"

static void udp_session_arm(struct udp *u, uint64_t now_us);

/* Takes ts out of every structure of the table; the caller frees it or
 * reuses it. */
static void
udp_session_unlink(struct ferry_tsession *ts)
{
	struct udp *u = ts->u;

	(void)map_remove(u->sessions, ts->key, ts->key_len);
	TAILQ_REMOVE(&u->all, ts, all_link);
	if (ts->refs == 0)
		TAILQ_REMOVE(&u->idle, ts, idle_link);
	udp_io_unwait(ts);
}

static void
udp_session_free(struct ferry_tsession *ts)
{
	udp_session_unlink(ts);
	free(ts);
}

/* Frees idle sessions whose time is up, then waits for the next one. */
static void
udp_session_expire(evutil_socket_t fd, short what, void *arg)
{
	struct udp *u = arg;
	uint64_t now = time_mono_us();
	struct ferry_tsession *ts;

	(void)fd;
	(void)what;
	while ((ts = TAILQ_FIRST(&u->idle)) != NULL &&
	    now - ts->last_us >= u->ipt.cfg.idle_us) {
		udp_session_free(ts);
		(*u->st.sessions_timed_out)++;
	}
	udp_session_arm(u, now);
}

/* Schedules the timer for the oldest idle session, if there is one. */
static void
udp_session_arm(struct udp *u, uint64_t now_us)
{
	struct ferry_tsession *oldest = TAILQ_FIRST(&u->idle);
	uint64_t due, wait = 0;
	struct timeval tv;

	if (oldest == NULL)
		return;
	due = oldest->last_us + u->ipt.cfg.idle_us;
	if (due > now_us)
		wait = due - now_us;
	time_us_to_tv(wait, &tv);
	(void)evtimer_add(u->idle_timer, &tv);
}

int
udp_session_init(struct udp *u)
{
	TAILQ_INIT(&u->all);
	TAILQ_INIT(&u->idle);
	u->sessions = map_new();
	u->idle_timer = evtimer_new(u->ipt.core->base, udp_session_expire, u);
	if (u->sessions == NULL || u->idle_timer == NULL)
		return -ENOMEM;
	return 0;
}

void
udp_session_done(struct udp *u)
{
	struct ferry_tsession *ts;

	if (u->idle_timer != NULL)
		event_free(u->idle_timer);
	u->idle_timer = NULL;
	if (u->sessions == NULL)
		return;
	while ((ts = TAILQ_FIRST(&u->all)) != NULL)
		udp_session_free(ts);
	map_free(u->sessions);
	u->sessions = NULL;
}

struct ferry_tsession *
udp_session_lookup(struct udp *u, const uint8_t *key, size_t key_len)
{
	return map_get(u->sessions, key, key_len);
}

/* Where a new inbound session comes from when the table is at its bound:
 * the least recently used idle one, taken out of the table. */
static struct ferry_tsession *
udp_session_recycle(struct udp *u)
{
	struct ferry_tsession *ts = TAILQ_FIRST(&u->idle);

	if (ts == NULL)
		return NULL;
	udp_session_unlink(ts);
	(*u->st.sessions_evicted)++;
	return ts;
}

int
udp_session_new(struct udp *u, struct udp_sock *sock,
    const struct sockaddr_storage *peer, const uint8_t *key,
    size_t key_len, unsigned refs, struct ferry_tsession **ret)
{
	struct ferry_tsession *ts = NULL;
	uint64_t now = time_mono_us();

	assert(key_len <= sizeof(ts->key));
	if (refs == 0 && map_size(u->sessions) >= u->set.max_sessions) {
		ts = udp_session_recycle(u);
		if (ts == NULL)
			return -ENOBUFS;
	}
	if (ts == NULL && (ts = malloc(sizeof(*ts))) == NULL)
		return -ENOMEM;
	memset(ts, 0, sizeof(*ts));
	ts->u = u;
	ts->sock = sock;
	ts->peer = *peer;
	ts->peer_len = netaddr_socklen(peer);
	memcpy(ts->key, key, key_len);
	ts->key_len = (uint8_t)key_len;
	ts->refs = refs;
	ts->last_us = now;
	if (map_put(u->sessions, ts->key, ts->key_len, ts) < 0) {
		free(ts);
		return -ENOMEM;
	}
	TAILQ_INSERT_TAIL(&u->all, ts, all_link);
	if (refs == 0) {
		TAILQ_INSERT_TAIL(&u->idle, ts, idle_link);
		if (!evtimer_pending(u->idle_timer, NULL))
			udp_session_arm(u, now);
	}
	(*u->st.sessions_created)++;
	*ret = ts;
	return 0;
}

void
udp_session_ref(struct ferry_tsession *ts)
{
	if (ts->refs++ == 0)
		TAILQ_REMOVE(&ts->u->idle, ts, idle_link);
}

void
udp_session_unref(struct ferry_tsession *ts)
{
	assert(ts->refs > 0);
	/* The core lets go: no point keeping state for an address it no
	 * longer uses; a later datagram makes a fresh inbound session. */
	if (ts->refs > 1) {
		ts->refs--;
		return;
	}
	udp_session_free(ts); /* refs still 1: it is not in the idle LRU */
}

void
udp_session_touch(struct ferry_tsession *ts, uint64_t now_us)
{
	struct udp *u = ts->u;

	ts->last_us = now_us;
	if (ts->refs == 0 && TAILQ_NEXT(ts, idle_link) != NULL) {
		TAILQ_REMOVE(&u->idle, ts, idle_link);
		TAILQ_INSERT_TAIL(&u->idle, ts, idle_link);
	}
}

void
udp_session_reconfigure(struct udp *u)
{
	while (map_size(u->sessions) > u->set.max_sessions &&
	    !TAILQ_EMPTY(&u->idle))
		free(udp_session_recycle(u));
	(void)evtimer_del(u->idle_timer);
	udp_session_arm(u, time_mono_us());
}
