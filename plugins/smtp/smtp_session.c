/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Sessions of the SMTP transport (see smtp_int.h): one per destination
 * (address and filter line), shared by every connect() to it and freed
 * with the last reference (seed 004, II-B connect/associate/disconnect).
 * A mail session never dies by itself, so session_gone is never called;
 * the mails a session queued live on after it.
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "lib/map.h"

static void
smtp_session_unwait(struct ferry_tsession *ts)
{
	if (!ts->waiting)
		return;
	TAILQ_REMOVE(&ts->s->waiting, ts, wait_link);
	ts->waiting = false;
}

static void
smtp_session_free(struct ferry_tsession *ts)
{
	smtp_session_unwait(ts);
	(void)map_remove(ts->s->sessions, ts->key, ts->key_len);
	free(ts);
}

/* Tells the waiting sessions, oldest first, that the queue has room.
 * Each leaves the list and is held while the core runs: the core may
 * send (and, told -EAGAIN again, wait anew: at the tail and in the next
 * round) or drop its references to this or any other session. */
static void
smtp_session_ready(evutil_socket_t fd, short what, void *arg)
{
	struct smtp *s = arg;
	uint64_t round = ++s->ready_round;
	struct ferry_tsession *ts;

	(void)fd;
	(void)what;
	while ((ts = TAILQ_FIRST(&s->waiting)) != NULL &&
	    ts->wait_round < round && smtp_send_has_room(s, 0)) {
		smtp_session_unwait(ts);
		smtp_session_ref(ts);
		s->core->send_ready(s->core->cls, ts);
		smtp_session_unref(ts);
	}
}

int
smtp_session_init(struct smtp *s)
{
	TAILQ_INIT(&s->waiting);
	s->sessions = map_new();
	s->ready_ev = event_new(s->core->base, -1, 0, smtp_session_ready, s);
	if (s->sessions == NULL || s->ready_ev == NULL)
		return -ENOMEM;
	return 0;
}

static bool
smtp_session_free_one(void *cls, const void *key, size_t len, void *value)
{
	struct ferry_tsession **victim = cls;

	(void)key;
	(void)len;
	*victim = value;
	return false;
}

void
smtp_session_done(struct smtp *s)
{
	struct ferry_tsession *ts;

	if (s->ready_ev != NULL)
		event_free(s->ready_ev);
	s->ready_ev = NULL;
	if (s->sessions == NULL)
		return;
	/* map_foreach must not change the map: free one per walk. */
	for (;;) {
		ts = NULL;
		map_foreach(s->sessions, smtp_session_free_one, &ts);
		if (ts == NULL)
			break;
		smtp_session_free(ts);
	}
	map_free(s->sessions);
	s->sessions = NULL;
}

int
smtp_session_get(struct smtp *s, const void *addr, size_t len,
    const struct smtp_addr *dest, struct ferry_tsession **ret)
{
	struct ferry_tsession *ts;

	assert(len <= sizeof(ts->key));
	ts = map_get(s->sessions, addr, len);
	if (ts != NULL) {
		smtp_session_ref(ts);
		*ret = ts;
		return 0;
	}
	ts = calloc(1, sizeof(*ts));
	if (ts == NULL)
		return -ENOMEM;
	ts->s = s;
	ts->refs = 1;
	ts->dest = *dest;
	memcpy(ts->key, addr, len);
	ts->key_len = (uint16_t)len;
	if (map_put(s->sessions, ts->key, ts->key_len, ts) < 0) {
		free(ts);
		return -ENOMEM;
	}
	*ret = ts;
	return 0;
}

void
smtp_session_ref(struct ferry_tsession *ts)
{
	ts->refs++;
}

void
smtp_session_unref(struct ferry_tsession *ts)
{
	assert(ts->refs > 0);
	if (--ts->refs == 0)
		smtp_session_free(ts);
}

void
smtp_session_wait(struct ferry_tsession *ts)
{
	if (ts->waiting)
		return;
	TAILQ_INSERT_TAIL(&ts->s->waiting, ts, wait_link);
	ts->waiting = true;
	ts->wait_round = ts->s->ready_round;
}

void
smtp_session_wake(struct smtp *s)
{
	if (!TAILQ_EMPTY(&s->waiting) && s->ready_ev != NULL)
		event_active(s->ready_ev, 0, 0);
}
