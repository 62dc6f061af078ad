/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Internals of the SMTP transport (seed 004, section III), shared by its
 * files:
 *   smtp.c               the TransportAPI face (Fig. 3)
 *   smtp_cfg.c           [transport-smtp] keys and settings
 *   smtp_stats.c         its counters (log lines: plugins/common/plog.h)
 *   smtp_session.c       refcounted sessions, one per destination
 *   smtp_limit.c         the harassment caps of III-C
 *   smtp_send.c          the bounded send queue and submission order
 *   smtp_curl.c          libcurl's multi interface on the daemon's loop
 *   smtp_inbox*.c        the receiving side (declared in smtp_inbox.h)
 * and the pure smtp_addr.c, smtp_mime.c, smtp_mbox.c, smtp_base64.c.
 *
 * Mail is one-way: a session is a destination to send to, never an
 * inbound connection, so receive() gets no session (ts NULL) and the
 * transport has no FERRY_TCAP_INBOUND_REPLY.
 */
#ifndef FERRY_PLUGINS_SMTP_INT_H
#define FERRY_PLUGINS_SMTP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <ferry/transport.h>

#include "lib/ratelimit.h"
#include "plog.h"
#include "smtp_addr.h"
#include "smtp_inbox.h"
#include "smtp_mime.h"

struct event;
struct map;
struct smtp;
struct smtp_curl;

enum smtp_tls {
	SMTP_TLS_NO,  /* plain SMTP (smtps:// URLs are TLS anyway) */
	SMTP_TLS_TRY, /* STARTTLS if the server offers it */
	SMTP_TLS_YES, /* STARTTLS or fail */
};

/* The settings of [transport-smtp]; strings are owned. smtp_cfg.c. */
struct smtp_settings {
	char *server;			 /* smtp:// or smtps:// URL */
	enum smtp_tls tls;		 /* STARTTLS */
	char *username;			 /* "" for none */
	char *password;			 /* "" for none; never logged */
	char *address;			 /* our address; "" sends only */
	char *filter;			 /* our filter line; "" if none */
	struct smtp_mime_filter filter_parts; /* filter split up */
	char domain[SMTP_MIME_DOMAIN_MAX + 1]; /* for our From line */
	char *inbox;			 /* path; "" receives nothing */
	enum smtp_inbox_type inbox_type; /* INBOX_TYPE */
	char *blacklist;		 /* addresses and @domains */
	uint64_t max_mail;		 /* MAX_MAIL_SIZE */
	uint32_t mtu;			 /* largest unit */
	uint32_t cost;			 /* the api's cost */
	uint64_t queue_bytes;		 /* send queue bound, bytes */
	uint32_t queue_mails;		 /* send queue bound, mails */
	uint32_t cap_dest;		 /* mails per destination and hour */
	uint32_t cap_total;		 /* mails per hour */
	uint64_t timeout_us;		 /* SERVER_TIMEOUT */
	uint64_t rescan_us;		 /* RESCAN_INTERVAL */
};

/* A destination: an address and the filter line it asked for. */
struct ferry_tsession {
	struct smtp *s;			   /* owner */
	unsigned refs;			   /* connect + associate - disconnect */
	bool waiting;			   /* on s->waiting for send_ready */
	uint64_t wait_round;		   /* s->ready_round when it began */
	TAILQ_ENTRY(ferry_tsession) wait_link; /* s->waiting */
	struct smtp_addr dest;		   /* decoded address */
	uint16_t key_len;		   /* bytes of key */
	uint8_t key[FERRY_ADDR_MAX];	   /* HELO form: the table key */
};

TAILQ_HEAD(smtp_session_list, ferry_tsession);

/* One composed mail on its way to the MTA. */
struct smtp_mail {
	TAILQ_ENTRY(smtp_mail) link;	  /* s->queue */
	char rcpt[SMTP_ADDR_MAIL_MAX + 1]; /* envelope recipient */
	char *data;			  /* the whole mail, CRLF lines */
	size_t len;			  /* its size */
	size_t off;			  /* bytes handed to libcurl */
	unsigned tries;			  /* submissions that failed softly */
};

TAILQ_HEAD(smtp_mail_list, smtp_mail);

struct smtp_window; /* smtp_limit.c */
TAILQ_HEAD(smtp_window_list, smtp_window);

/* Counters "smtp.<name>" (the core keeps units_in/bytes_in itself). */
struct smtp_stats {
	uint64_t *tx_mails, *tx_bytes, *tx_connects, *tx_failed;
	uint64_t *tx_retries, *tx_eagain, *tx_cap_dest, *tx_cap_total;
	uint64_t *tx_blacklisted;
	uint64_t *rx_mails, *rx_bytes, *drop_foreign, *drop_broken;
	uint64_t *drop_base64, *drop_envelope, *drop_oversize;
	uint64_t *inbox_errors, *inbox_rescans;
};

/* How a submission ended, for smtp_send_finished. */
enum smtp_submit_result {
	SMTP_SUBMIT_OK,	       /* the MTA took the mail */
	SMTP_SUBMIT_REJECTED,  /* 5xx for this mail: drop it */
	SMTP_SUBMIT_TEMPORARY, /* no server, 4xx, timeout: retry later */
};

struct smtp {
	struct ferry_transport_api api;	    /* handed to the core */
	const struct ferry_core_api *core;  /* borrowed until done */
	bool stub;			    /* core->receive == NULL */
	bool serving;			    /* between start and stop_server */
	struct smtp_settings set;	    /* in force */
	char *prev_filter;		    /* FILTER before the last reload */
	struct smtp_mime_filter prev_parts; /* split; name NULL if none */
	struct smtp_stats st;		    /* counters */
	struct plog log;		    /* lines and counters to the core */
	/* sessions */
	struct map *sessions;		    /* HELO form -> session */
	struct smtp_session_list waiting;   /* got -EAGAIN */
	struct event *ready_ev;		    /* runs send_ready for them */
	uint64_t ready_round;		    /* rounds of send_ready so far */
	/* caps */
	struct map *limits;		    /* budget key -> window */
	struct smtp_window_list windows;    /* the same, by last use */
	struct smtp_window *total;	    /* all mails */
	struct event *limit_sweep;	    /* drops idle windows */
	/* sending */
	struct smtp_mail_list queue;	    /* waiting and in flight */
	size_t q_mails;			    /* mails in queue */
	size_t q_bytes;			    /* their bytes */
	struct smtp_mail *active;	    /* being submitted, or NULL */
	bool paused;			    /* backing off after a failure */
	uint64_t backoff_us;		    /* next pause */
	struct event *retry_ev;		    /* ends the pause */
	struct smtp_curl *curl;		    /* libcurl state */
	/* receiving */
	enum smtp_inbox_type inbox_open;    /* kind of the open inbox */
	struct smtp_fifo *fifo;		    /* when a FIFO is open */
	struct smtp_maildir *maildir;	    /* when a Maildir is open */
};

/*
 * smtp_cfg.c
 */

extern const struct ferry_cfg_key smtp_keys[];

/* Reads [transport-smtp] through core->cfg_get into *ret (free it with
 * smtp_settings_done). 0, or -EINVAL / -ENOMEM after logging the key. */
int smtp_settings_load(const struct smtp *s, struct smtp_settings *ret);
/* Frees the strings of set (wiping the password). NULL-safe fields. */
void smtp_settings_done(struct smtp_settings *set);

/*
 * smtp_stats.c
 */

/* Points every member of s->st at its core counter (or the sink). */
void smtp_stats_init(struct smtp *s);

/*
 * smtp_session.c
 */

/* Creates the session table. 0 or -ENOMEM. */
int smtp_session_init(struct smtp *s);
/* Frees every session (no session_gone: the core is going away). */
void smtp_session_done(struct smtp *s);
/* The session for a checked HELO address, with one more reference,
 * created if needed. 0 and *ret, or -ENOMEM. */
int smtp_session_get(struct smtp *s, const void *addr, size_t len,
    const struct smtp_addr *dest, struct ferry_tsession **ret);
/* Takes a reference. */
void smtp_session_ref(struct ferry_tsession *ts);
/* Drops one; the last frees the session. */
void smtp_session_unref(struct ferry_tsession *ts);
/* Puts ts on the list of sessions that get send_ready. */
void smtp_session_wait(struct ferry_tsession *ts);
/* Schedules send_ready for the waiting sessions (from the loop). */
void smtp_session_wake(struct smtp *s);

/*
 * smtp_limit.c
 */

/* Creates the tables and the sweep timer. 0 or -ENOMEM. */
int smtp_limit_init(struct smtp *s);
void smtp_limit_done(struct smtp *s);
/* May one more mail go to the address mail (its budget key) now? 0 and
 * *ret (pass it to smtp_limit_commit once the mail is queued), -EDQUOT
 * over a cap (counted), -ENOMEM. */
int smtp_limit_reserve(struct smtp *s, const char *mail, size_t len,
    struct smtp_window **ret);
/* Counts the mail against its destination's and the total cap. */
void smtp_limit_commit(struct smtp *s, struct smtp_window *w);

/*
 * smtp_send.c
 */

/* send(): checks, caps, composes and queues one unit to ts. 0, -EMSGSIZE,
 * -EPERM (blacklisted), -EDQUOT (over a cap), -EAGAIN (queue full;
 * send_ready follows), -ENOMEM. */
int smtp_send_unit(struct smtp *s, struct ferry_tsession *ts,
    const void *msg, size_t len, bool is_encrypted, uint32_t crc);
/* Starts the next submission if none runs and none is paused. */
void smtp_send_kick(struct smtp *s);
/* The submission of m ended with res (why: a short reason, logged); m
 * leaves libcurl's hands. Called from the loop, never from send(). */
void smtp_send_finished(struct smtp *s, struct smtp_mail *m,
    enum smtp_submit_result res, const char *why);
/* Creates the retry timer. 0 or -ENOMEM. */
int smtp_send_init(struct smtp *s);
/* Frees the queue and the timer. */
void smtp_send_done(struct smtp *s);
/* Whether the queue can take a mail of len bytes (0: of some size). */
bool smtp_send_has_room(const struct smtp *s, size_t len);

/*
 * smtp_curl.c
 */

/* Sets up libcurl's multi and easy handles on core->base. 0, -ENOMEM or
 * -EIO (libcurl refused to start). */
int smtp_curl_init(struct smtp *s);
/* Aborts a running submission (without smtp_send_finished) and frees
 * all. */
void smtp_curl_done(struct smtp *s);
/* Applies SERVER, STARTTLS, USERNAME, PASSWORD, SERVER_TIMEOUT to the
 * submissions that start from now on (a running one keeps what it has).
 * 0 or -ENOMEM. */
int smtp_curl_configure(struct smtp *s);
/* Starts submitting m; smtp_send_finished follows from the loop. 0 or a
 * negative errno (m is then not in libcurl's hands). */
int smtp_curl_submit(struct smtp *s, struct smtp_mail *m);
/* SMTP connections libcurl opened so far. */
uint64_t smtp_curl_connects(const struct smtp *s);

#endif /* FERRY_PLUGINS_SMTP_INT_H */
