/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's caps against harassment (seed 004, III-C): at most
 * MAX_MAILS_PER_DEST_HOUR mails to one destination and MAX_MAILS_HOUR in
 * all, in any hour. send() asks here before it queues a mail; nothing
 * passes around it, and a mail counts when it is queued, whether the MTA
 * later takes it or not.
 *
 * A window counts mails per minute in 61 slots: the sum over the current
 * minute and the 60 before covers every hour that ends now, so the cap
 * holds for any hour (at the price of up to a minute of extra caution).
 * Windows are kept per budget key (smtp_addr_budget_key: case and
 * "+extension" folded) and outlive the sessions, so dropping and
 * re-opening a session does not reset a budget. Only queued mail creates
 * a window, so the table holds at most MAX_MAILS_HOUR windows that are
 * not idle; idle ones are swept from the head of a list in order of last
 * use.
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "lib/map.h"
#include "lib/time.h"

#define SMTP_WINDOW_SLOTS	61
#define SMTP_LIMIT_SWEEP_US	(5 * 60 * USEC_PER_SEC)
#define SMTP_LIMIT_WINDOWS_MAX	65536 /* destinations tracked at once */

struct smtp_window {
	uint32_t minute[SMTP_WINDOW_SLOTS]; /* minute a slot counts */
	uint32_t count[SMTP_WINDOW_SLOTS];  /* mails in it */
	uint32_t last;			    /* minute of the last mail */
	TAILQ_ENTRY(smtp_window) link;	    /* s->windows, by last */
	uint16_t key_len;		    /* bytes of key */
	char key[SMTP_ADDR_MAIL_MAX + 1];   /* budget key; the map's key */
};

static uint32_t
smtp_limit_minute(void)
{
	return (uint32_t)(time_mono_us() / (60 * USEC_PER_SEC));
}

static uint64_t
smtp_window_sum(const struct smtp_window *w, uint32_t now)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < SMTP_WINDOW_SLOTS; i++)
		if (now - w->minute[i] < SMTP_WINDOW_SLOTS)
			sum += w->count[i];
	return sum;
}

static void
smtp_window_add(struct smtp_window *w, uint32_t now)
{
	size_t i = now % SMTP_WINDOW_SLOTS;

	if (w->minute[i] != now) {
		w->minute[i] = now;
		w->count[i] = 0;
	}
	w->count[i]++;
	w->last = now;
}

static bool
smtp_window_idle(const struct smtp_window *w, uint32_t now)
{
	return now - w->last >= SMTP_WINDOW_SLOTS;
}

/* A fresh window: every slot counts a minute long gone. */
static void
smtp_window_init(struct smtp_window *w, uint32_t now)
{
	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < SMTP_WINDOW_SLOTS; i++)
		w->minute[i] = now - SMTP_WINDOW_SLOTS;
	w->last = now - SMTP_WINDOW_SLOTS;
}

/* Frees the windows nobody mailed for an hour: the oldest come first. */
static void
smtp_limit_sweep_now(struct smtp *s)
{
	uint32_t now = smtp_limit_minute();
	struct smtp_window *w;

	while ((w = TAILQ_FIRST(&s->windows)) != NULL &&
	    smtp_window_idle(w, now)) {
		TAILQ_REMOVE(&s->windows, w, link);
		(void)map_remove(s->limits, w->key, w->key_len);
		free(w);
	}
}

static void
smtp_limit_sweep_ev(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	smtp_limit_sweep_now(arg);
}

int
smtp_limit_init(struct smtp *s)
{
	struct timeval tv;

	TAILQ_INIT(&s->windows);
	s->limits = map_new();
	s->total = malloc(sizeof(*s->total));
	s->limit_sweep = event_new(s->core->base, -1, EV_PERSIST,
	    smtp_limit_sweep_ev, s);
	if (s->limits == NULL || s->total == NULL || s->limit_sweep == NULL)
		return -ENOMEM;
	smtp_window_init(s->total, smtp_limit_minute());
	time_us_to_tv(SMTP_LIMIT_SWEEP_US, &tv);
	(void)event_add(s->limit_sweep, &tv);
	return 0;
}

void
smtp_limit_done(struct smtp *s)
{
	struct smtp_window *w;

	if (s->limit_sweep != NULL)
		event_free(s->limit_sweep);
	s->limit_sweep = NULL;
	free(s->total);
	s->total = NULL;
	while ((w = TAILQ_FIRST(&s->windows)) != NULL) {
		TAILQ_REMOVE(&s->windows, w, link);
		free(w);
	}
	map_free(s->limits);
	s->limits = NULL;
}

/* The window of a budget key, created if needed; NULL on -ENOMEM or
 * when the table is full of busy windows (*ret_full). */
static struct smtp_window *
smtp_limit_window(struct smtp *s, const char *key, size_t len, uint32_t now,
    bool *ret_full)
{
	struct smtp_window *w = map_get(s->limits, key, len);

	*ret_full = false;
	if (w != NULL)
		return w;
	if (map_size(s->limits) >= SMTP_LIMIT_WINDOWS_MAX) {
		smtp_limit_sweep_now(s);
		if (map_size(s->limits) >= SMTP_LIMIT_WINDOWS_MAX) {
			*ret_full = true;
			return NULL;
		}
	}
	w = malloc(sizeof(*w));
	if (w == NULL)
		return NULL;
	smtp_window_init(w, now);
	memcpy(w->key, key, len);
	w->key[len] = '\0';
	w->key_len = (uint16_t)len;
	if (map_put(s->limits, w->key, w->key_len, w) < 0) {
		free(w);
		return NULL;
	}
	TAILQ_INSERT_HEAD(&s->windows, w, link); /* idle until it is used */
	return w;
}

int
smtp_limit_reserve(struct smtp *s, const char *mail, size_t len,
    struct smtp_window **ret)
{
	char key[SMTP_ADDR_MAIL_MAX + 1];
	uint32_t now = smtp_limit_minute();
	struct smtp_window *w;
	size_t klen;
	bool full;

	if (len > SMTP_ADDR_MAIL_MAX)
		return -EINVAL;
	if (smtp_window_sum(s->total, now) >= s->set.cap_total) {
		(*s->st.tx_cap_total)++;
		return -EDQUOT;
	}
	klen = smtp_addr_budget_key(mail, len, key);
	w = smtp_limit_window(s, key, klen, now, &full);
	if (w == NULL && full) {
		(*s->st.tx_cap_total)++;
		return -EDQUOT;
	}
	if (w == NULL)
		return -ENOMEM;
	if (smtp_window_sum(w, now) >= s->set.cap_dest) {
		(*s->st.tx_cap_dest)++;
		return -EDQUOT;
	}
	*ret = w;
	return 0;
}

void
smtp_limit_commit(struct smtp *s, struct smtp_window *w)
{
	uint32_t now = smtp_limit_minute();

	smtp_window_add(w, now);
	smtp_window_add(s->total, now);
	TAILQ_REMOVE(&s->windows, w, link);
	TAILQ_INSERT_TAIL(&s->windows, w, link);
}
