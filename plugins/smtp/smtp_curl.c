/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Submission of the SMTP transport's mails with libcurl's multi interface
 * on the daemon's libevent loop (the shape of libcurl's multi-event
 * example): libcurl names the sockets it wants watched and a timeout,
 * libevent reports readiness, curl_multi_socket_action() does the work;
 * nothing blocks. One easy handle submits one mail at a time, and the
 * multi handle's connection cache keeps the SMTP connection between mails
 * (seed 004, III: "this connection will be used to send messages").
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <curl/curl.h>

#include "lib/log.h"
#include "lib/time.h"

struct smtp_curl {
	struct smtp *s;		       /* owner */
	CURLM *multi;		       /* connection cache, sockets */
	CURL *easy;		       /* the one submission */
	struct event *timer;	       /* libcurl's timeout */
	struct curl_slist *rcpt;       /* recipient of the mail in flight */
	struct smtp_mail *mail;	       /* in flight, or NULL */
	uint64_t connects;	       /* connections opened so far */
	bool global;		       /* curl_global_init succeeded */
	bool stale;		       /* settings changed during a transfer */
	char error[CURL_ERROR_SIZE];   /* libcurl's message for a failure */
};

/* A socket libcurl asked us to watch. */
struct smtp_curl_sock {
	struct smtp_curl *c; /* owner */
	struct event *ev;    /* its events, as libcurl wants them */
};

static void smtp_curl_check(struct smtp_curl *c);

static void
smtp_curl_on_socket(evutil_socket_t fd, short what, void *arg)
{
	struct smtp_curl_sock *cs = arg;
	struct smtp_curl *c = cs->c;
	int mask = 0, running;

	if (what & EV_READ)
		mask |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		mask |= CURL_CSELECT_OUT;
	/* cs may be freed in here (CURL_POLL_REMOVE) */
	(void)curl_multi_socket_action(c->multi, fd, mask, &running);
	smtp_curl_check(c);
}

static void
smtp_curl_on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct smtp_curl *c = arg;
	int running;

	(void)fd;
	(void)what;
	(void)curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0,
	    &running);
	smtp_curl_check(c);
}

/* CURLMOPT_SOCKETFUNCTION: watch fd for what, or stop watching it. */
static int
smtp_curl_socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
    void *socketp)
{
	struct smtp_curl *c = userp;
	struct smtp_curl_sock *cs = socketp;
	short events = EV_PERSIST;

	(void)easy;
	if (cs != NULL && cs->ev != NULL) {
		event_free(cs->ev);
		cs->ev = NULL;
	}
	if (what == CURL_POLL_REMOVE) {
		free(cs);
		(void)curl_multi_assign(c->multi, fd, NULL);
		return 0;
	}
	if (cs == NULL) {
		cs = calloc(1, sizeof(*cs));
		if (cs == NULL)
			return -1;
		cs->c = c;
		(void)curl_multi_assign(c->multi, fd, cs);
	}
	if (what & CURL_POLL_IN)
		events |= EV_READ;
	if (what & CURL_POLL_OUT)
		events |= EV_WRITE;
	cs->ev = event_new(c->s->core->base, fd, events, smtp_curl_on_socket,
	    cs);
	if (cs->ev == NULL || event_add(cs->ev, NULL) < 0)
		return -1;
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: run curl_multi_socket_action after timeout_ms
 * (from the loop: libcurl must not be called back from here). */
static int
smtp_curl_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct smtp_curl *c = userp;
	struct timeval tv;

	(void)multi;
	if (timeout_ms < 0) {
		(void)evtimer_del(c->timer);
		return 0;
	}
	time_us_to_tv((uint64_t)timeout_ms * USEC_PER_MSEC, &tv);
	return evtimer_add(c->timer, &tv) == 0 ? 0 : -1;
}

/* CURLOPT_READFUNCTION: the next piece of the mail in flight. */
static size_t
smtp_curl_read_cb(char *buf, size_t size, size_t nitems, void *userp)
{
	struct smtp_mail *m = userp;
	size_t n = size * nitems;

	if (n > m->len - m->off)
		n = m->len - m->off;
	memcpy(buf, m->data + m->off, n);
	m->off += n;
	return n;
}

/* Failures of the server or the way to it, as opposed to this mail. */
static bool
smtp_curl_server_failed(CURLcode rc, long code)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_LOGIN_DENIED:
	case CURLE_USE_SSL_FAILED:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_OUT_OF_MEMORY:
		return true;
	default:
		return code < 500 || code > 599;
	}
}

/* Collects finished submissions. */
static void
smtp_curl_check(struct smtp_curl *c)
{
	struct smtp_mail *m;
	CURLMsg *msg;
	long code = 0, connects = 0;
	CURLcode rc;
	int left;

	while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE || msg->easy_handle != c->easy)
			continue;
		rc = msg->data.result;
		(void)curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &code);
		(void)curl_easy_getinfo(c->easy, CURLINFO_NUM_CONNECTS,
		    &connects);
		c->connects += (uint64_t)connects;
		*c->s->st.tx_connects += (uint64_t)connects;
		(void)curl_multi_remove_handle(c->multi, c->easy);
		curl_slist_free_all(c->rcpt);
		c->rcpt = NULL;
		m = c->mail;
		c->mail = NULL;
		if (m == NULL)
			continue;
		if (rc == CURLE_OK)
			smtp_send_finished(c->s, m, SMTP_SUBMIT_OK, "");
		else
			smtp_send_finished(c->s, m,
			    smtp_curl_server_failed(rc, code)
				? SMTP_SUBMIT_TEMPORARY
				: SMTP_SUBMIT_REJECTED,
			    c->error[0] != '\0' ? c->error
						: curl_easy_strerror(rc));
	}
}

static int
smtp_curl_setopt_str(struct smtp_curl *c, CURLoption opt, const char *v)
{
	/* libcurl copies strings; "" means unset */
	return curl_easy_setopt(c->easy, opt, v[0] != '\0' ? v : NULL) ==
		CURLE_OK ? 0 : -ENOMEM;
}

/* Puts SERVER and the rest on the easy handle, which must be idle:
 * libcurl frees the strings it replaces, which a running transfer may
 * still use. */
static int
smtp_curl_apply(struct smtp *s)
{
	struct smtp_curl *c = s->curl;
	const struct smtp_settings *set = &s->set;
	long timeout_s = (long)(set->timeout_us / USEC_PER_SEC);
	long tls = set->tls == SMTP_TLS_YES ? (long)CURLUSESSL_ALL
	    : set->tls == SMTP_TLS_TRY	    ? (long)CURLUSESSL_TRY
					    : (long)CURLUSESSL_NONE;

	if (smtp_curl_setopt_str(c, CURLOPT_URL, set->server) < 0 ||
	    smtp_curl_setopt_str(c, CURLOPT_USERNAME, set->username) < 0 ||
	    smtp_curl_setopt_str(c, CURLOPT_PASSWORD, set->password) < 0)
		return -ENOMEM;
	(void)curl_easy_setopt(c->easy, CURLOPT_USE_SSL, tls);
	(void)curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT, timeout_s);
	/* A stall, not a slow 10 MB mail, is what ends a submission. */
	(void)curl_easy_setopt(c->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
	(void)curl_easy_setopt(c->easy, CURLOPT_LOW_SPEED_TIME, timeout_s);
#if LIBCURL_VERSION_NUM >= 0x080600
	(void)curl_easy_setopt(c->easy, CURLOPT_SERVER_RESPONSE_TIMEOUT_MS,
	    timeout_s * 1000);
#else
	(void)curl_easy_setopt(c->easy, CURLOPT_SERVER_RESPONSE_TIMEOUT,
	    timeout_s);
#endif
	c->stale = false;
	return 0;
}

int
smtp_curl_configure(struct smtp *s)
{
	if (s->curl->mail != NULL) {
		s->curl->stale = true; /* for the next submission */
		return 0;
	}
	return smtp_curl_apply(s);
}

/* Options that never change. */
static int
smtp_curl_fixed_options(struct smtp_curl *c)
{
	CURLcode rc;

	/* The bounce shape of III-C: an empty envelope sender. */
	rc = curl_easy_setopt(c->easy, CURLOPT_MAIL_FROM, "<>");
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(c->easy, CURLOPT_UPLOAD, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(c->easy, CURLOPT_PROTOCOLS_STR,
		    "smtp,smtps");
#else
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(c->easy, CURLOPT_PROTOCOLS,
		    (long)(CURLPROTO_SMTP | CURLPROTO_SMTPS));
#endif
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(c->easy, CURLOPT_READFUNCTION,
		    smtp_curl_read_cb);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, c->error);
	if (rc == CURLE_OK)
		rc = curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION,
		    smtp_curl_socket_cb) == CURLM_OK ? CURLE_OK
						      : CURLE_FAILED_INIT;
	if (rc == CURLE_OK)
		(void)curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	if (rc == CURLE_OK)
		rc = curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION,
		    smtp_curl_timer_cb) == CURLM_OK ? CURLE_OK
						     : CURLE_FAILED_INIT;
	if (rc == CURLE_OK)
		(void)curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	/* one connection is all the cache has to keep */
	if (rc == CURLE_OK)
		(void)curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, 1L);
	return rc == CURLE_OK ? 0 : -EIO;
}

int
smtp_curl_init(struct smtp *s)
{
	struct smtp_curl *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->s = s;
	s->curl = c;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -EIO;
	c->global = true;
	c->multi = curl_multi_init();
	c->easy = curl_easy_init();
	c->timer = evtimer_new(s->core->base, smtp_curl_on_timer, c);
	if (c->multi == NULL || c->easy == NULL || c->timer == NULL)
		return -ENOMEM;
	r = smtp_curl_fixed_options(c);
	if (r < 0)
		return r;
	return smtp_curl_apply(s);
}

void
smtp_curl_done(struct smtp *s)
{
	struct smtp_curl *c = s->curl;

	if (c == NULL)
		return;
	if (c->mail != NULL)
		(void)curl_multi_remove_handle(c->multi, c->easy);
	/* Closing the cached connection says QUIT (and waits for the answer:
	 * a stuck server can hold this up to SERVER_TIMEOUT) and calls the
	 * socket callback to remove its watcher. */
	if (c->multi != NULL)
		(void)curl_multi_cleanup(c->multi);
	if (c->easy != NULL)
		curl_easy_cleanup(c->easy);
	curl_slist_free_all(c->rcpt);
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->global)
		curl_global_cleanup();
	free(c);
	s->curl = NULL;
}

int
smtp_curl_submit(struct smtp *s, struct smtp_mail *m)
{
	struct smtp_curl *c = s->curl;
	CURLMcode mc;

	if (FERRY_BUG(c->mail != NULL))
		return -EBUSY;
	if (c->stale && smtp_curl_apply(s) < 0)
		return -ENOMEM;
	c->rcpt = curl_slist_append(NULL, m->rcpt);
	if (c->rcpt == NULL)
		return -ENOMEM;
	c->error[0] = '\0';
	(void)curl_easy_setopt(c->easy, CURLOPT_MAIL_RCPT, c->rcpt);
	(void)curl_easy_setopt(c->easy, CURLOPT_READDATA, m);
	(void)curl_easy_setopt(c->easy, CURLOPT_INFILESIZE_LARGE,
	    (curl_off_t)m->len);
	mc = curl_multi_add_handle(c->multi, c->easy);
	if (mc != CURLM_OK) {
		curl_slist_free_all(c->rcpt);
		c->rcpt = NULL;
		return mc == CURLM_OUT_OF_MEMORY ? -ENOMEM : -EIO;
	}
	c->mail = m;
	return 0;
}

uint64_t
smtp_curl_connects(const struct smtp *s)
{
	return s->curl != NULL ? s->curl->connects : 0;
}
