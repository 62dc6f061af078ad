/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's sending side (seed 004, III-A): send() checks the
 * destination against the blacklist and the caps, turns the unit into a
 * mail at once (the unit is only borrowed) and queues it; mails go to the
 * MTA one after the other over libcurl's one cached connection. The queue
 * is bounded in mails and bytes: a full queue says -EAGAIN and the
 * session hears send_ready when there is room. A failure of the server
 * (none there, 4xx, timeout) pauses the queue with a growing back-off and
 * the mail is tried again, a few times; a mail the server refuses (5xx)
 * is dropped. Delivery stays unreliable, as the transport API says.
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <sodium.h>

#include "lib/log.h"
#include "lib/time.h"
#include "smtp_base64.h"

#define SMTP_BACKOFF_MIN_US	USEC_PER_SEC
#define SMTP_BACKOFF_MAX_US	(60 * USEC_PER_SEC)
#define SMTP_SUBMIT_TRIES	4 /* soft failures before a mail is dropped */

bool
smtp_send_has_room(const struct smtp *s, size_t len)
{
	if (s->q_mails >= s->set.queue_mails)
		return false;
	if (len == 0)
		return s->q_bytes < s->set.queue_bytes;
	return len <= s->set.queue_bytes - s->q_bytes;
}

static void
smtp_send_retry(evutil_socket_t fd, short what, void *arg)
{
	struct smtp *s = arg;

	(void)fd;
	(void)what;
	s->paused = false;
	smtp_send_kick(s);
}

int
smtp_send_init(struct smtp *s)
{
	TAILQ_INIT(&s->queue);
	s->retry_ev = evtimer_new(s->core->base, smtp_send_retry, s);
	return s->retry_ev != NULL ? 0 : -ENOMEM;
}

static void
smtp_mail_free(struct smtp_mail *m)
{
	if (m == NULL)
		return;
	free(m->data);
	free(m);
}

/* Takes m out of the queue and frees it. */
static void
smtp_send_drop(struct smtp *s, struct smtp_mail *m)
{
	TAILQ_REMOVE(&s->queue, m, link);
	s->q_mails--;
	s->q_bytes -= m->len;
	smtp_mail_free(m);
}

void
smtp_send_done(struct smtp *s)
{
	struct smtp_mail *m;

	if (s->retry_ev != NULL)
		event_free(s->retry_ev);
	s->retry_ev = NULL;
	s->active = NULL;
	while ((m = TAILQ_FIRST(&s->queue)) != NULL)
		smtp_send_drop(s, m);
}

/* Composes the mail for a unit to dest. 0 and *ret, or -ENOMEM. */
static int
smtp_send_compose(struct smtp *s, const struct smtp_addr *dest,
    const void *msg, size_t len, bool is_encrypted, uint32_t crc,
    struct smtp_mail **ret)
{
	uint8_t rnd[SMTP_MIME_TOKEN_LEN / 2];
	char token[SMTP_MIME_TOKEN_LEN + 1];
	struct smtp_mime_meta meta;
	struct smtp_mail *m;
	int r;

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	/* A fresh token per mail: the boundary and Message-ID of one mail
	 * say nothing about another. */
	randombytes_buf(rnd, sizeof(rnd));
	(void)sodium_bin2hex(token, sizeof(token), rnd, sizeof(rnd));
	meta.rcpt = dest->mail;
	meta.filter = dest->filter;
	meta.domain = s->set.domain;
	meta.token = token;
	meta.date = time_real_s();
	meta.sender = s->core->my_identity;
	meta.is_encrypted = is_encrypted;
	meta.crc = crc;
	r = smtp_mime_compose(&meta, msg, len, &m->data, &m->len);
	if (r < 0) {
		free(m);
		/* dest and domain were checked: only memory can run out */
		(void)FERRY_BUG(r == -EINVAL);
		return r;
	}
	memcpy(m->rcpt, dest->mail, dest->mail_len + 1);
	*ret = m;
	return 0;
}

int
smtp_send_unit(struct smtp *s, struct ferry_tsession *ts, const void *msg,
    size_t len, bool is_encrypted, uint32_t crc)
{
	const struct smtp_addr *dest = &ts->dest;
	struct smtp_window *w;
	struct smtp_mail *m;
	size_t estimate;
	int r;

	if (len == 0)
		return -EINVAL;
	if (len > s->api.mtu)
		return -EMSGSIZE;
	/* BLACKLIST may have grown since connect() (a reload). */
	if (smtp_addr_listed(s->set.blacklist, dest->mail, dest->mail_len)) {
		(*s->st.tx_blacklisted)++;
		return -EPERM;
	}
	/* Caps before room: a mail over a cap would be refused after any
	 * wait, so the core hears that at once. */
	r = smtp_limit_reserve(s, dest->mail, dest->mail_len, &w);
	if (r < 0)
		return r;
	estimate = SMTP_MIME_HEAD_MAX +
	    smtp_base64_encoded_size(SMTP_MIME_ENV_LEN + len);
	if (!smtp_send_has_room(s, estimate)) {
		(*s->st.tx_eagain)++;
		smtp_session_wait(ts);
		return -EAGAIN;
	}
	r = smtp_send_compose(s, dest, msg, len, is_encrypted, crc, &m);
	if (r < 0)
		return r;
	TAILQ_INSERT_TAIL(&s->queue, m, link);
	s->q_mails++;
	s->q_bytes += m->len;
	smtp_limit_commit(s, w);
	smtp_send_kick(s);
	return 0;
}

/* Holds the queue for the next back-off step. */
static void
smtp_send_pause(struct smtp *s)
{
	struct timeval tv;

	if (s->backoff_us == 0)
		s->backoff_us = SMTP_BACKOFF_MIN_US;
	else if (s->backoff_us < SMTP_BACKOFF_MAX_US / 2)
		s->backoff_us *= 2;
	else
		s->backoff_us = SMTP_BACKOFF_MAX_US;
	s->paused = true;
	time_us_to_tv(s->backoff_us, &tv);
	(void)evtimer_add(s->retry_ev, &tv);
}

void
smtp_send_kick(struct smtp *s)
{
	struct smtp_mail *m = TAILQ_FIRST(&s->queue);
	int r;

	if (s->active != NULL || s->paused || m == NULL || s->curl == NULL)
		return;
	m->off = 0;
	r = smtp_curl_submit(s, m);
	if (r < 0) {
		(void)plog_errno(&s->log, FERRY_LOG_WARNING, r,
		    "cannot start a submission to %s", m->rcpt);
		smtp_send_pause(s);
		return;
	}
	s->active = m;
}

void
smtp_send_finished(struct smtp *s, struct smtp_mail *m,
    enum smtp_submit_result res, const char *why)
{
	if (FERRY_BUG(m != s->active))
		return;
	s->active = NULL;
	switch (res) {
	case SMTP_SUBMIT_OK:
		(*s->st.tx_mails)++;
		*s->st.tx_bytes += m->len;
		if (s->backoff_us != 0)
			plog(&s->log, FERRY_LOG_NOTICE, "the mail server takes mail again");
		s->backoff_us = 0;
		smtp_send_drop(s, m);
		break;
	case SMTP_SUBMIT_REJECTED:
		(*s->st.tx_failed)++;
		plog_peer(&s->log, "mail to %s refused: %s", m->rcpt, why);
		smtp_send_drop(s, m);
		break;
	case SMTP_SUBMIT_TEMPORARY:
		if (s->backoff_us == 0)
			plog(&s->log, FERRY_LOG_WARNING,
			    "mail server failed (%s); retrying with back-off",
			    why);
		if (++m->tries >= SMTP_SUBMIT_TRIES) {
			(*s->st.tx_failed)++;
			smtp_send_drop(s, m);
		} else {
			(*s->st.tx_retries)++;
		}
		smtp_send_pause(s);
		break;
	}
	if (smtp_send_has_room(s, 0))
		smtp_session_wake(s);
	smtp_send_kick(s);
}
