/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Forwarding a client's queued receipts to the intermediary it takes
 * them at, intermediary layer (ferry-intermediary(7) FEDERATION; "A"
 * there). A HERE from intermediary B is taken only if it carries the
 * client's own signature of a take of its receipts at B (the peer the
 * link authenticated), with a TIME within CLOCK_SKEW; then this
 * intermediary is the taker of the client's queue here (rqueue_take),
 * with its own cursor, acked:
 *
 *   IDLE --run--> TAKING --entries--> SENT --ACK held--> TAKING ...
 *                   |  none               |  timeout: TAKING again
 *                   v                     |  (the same entries)
 *                  IDLE                   v ACK full/failed: IDLE, later
 *
 * The take after an ACK names the acknowledged cursor, which deletes
 * the entries B holds (durably: B acknowledges after its write); the
 * ends of relays, which are not forwarded, go with the receipts. One
 * batch of at most FEDMSG_ENTRIES_MAX entries is out per client, and
 * FORWARD_IN_FLIGHT takes and batches in all; clients that find none
 * free wait in turn. A client is forwarded until no HERE came for 4
 * HERE_INTERVALs and nothing is out, or once the client makes a
 * request here itself: then it is here, and its entries stay (a
 * relay's receipts pushed just after the client's upload here would
 * otherwise go to where it was before).
 */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "intermediary/fedmsg.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/time.h"

#define IMD_FWD_RETRY_US 1000000 /* a take or send that failed */

struct imd_fwd {
	struct imd *imd;
	uint8_t client[IMDWIRE_KEY_LEN];
	uint8_t to[IMDWIRE_ID_LEN];      /* where the client takes now */
	uint8_t sent_to[IMDWIRE_ID_LEN]; /* where the batch out went */
	uint64_t claimed_us;             /* the last HERE taken */
	uint64_t acked;                  /* our cursor the others hold up to */
	uint64_t sent_top;               /* the batch out's last cursor; 0 */
	size_t sent_n;                   /* and its entries */
	uint64_t due_us;                 /* its deadline, or a retry's; 0 */
	struct rqueue_take *take;        /* a take out */
	bool slot;                       /* holds one of FORWARD_IN_FLIGHT */
	bool again;                      /* entries came while busy */
	bool resend;                     /* the next batch is one sent again */
	bool waiting;                    /* in fwd_waiting */
	bool local;                      /* the client came here: end once
					  * nothing is out */
	TAILQ_ENTRY(imd_fwd) link;       /* fwd_list */
	TAILQ_ENTRY(imd_fwd) wlink;      /* fwd_waiting */
};

static void imd_fwd_run(struct imd_fwd *w);

static void imd_fwd_refuse(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A refusal logged at a bounded rate, with the sender's id prefix. */
static void
imd_fwd_refuse(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    const char *fmt, ...)
{
	char line[160];
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = ratelog_vformat(&imd->fed.log, time_mono_us(), line, sizeof(line),
	    fmt, ap);
	va_end(ap);
	if (ok)
		log_info("peer %02x%02x%02x%02x: %s", from[0], from[1], from[2],
		    from[3], line);
}

/* Gives the slot back; the first client waiting for one goes on. */
static void
imd_fwd_release(struct imd_fwd *w, bool wake)
{
	struct imd_fed *f = &w->imd->fed;
	struct imd_fwd *next;

	if (!w->slot)
		return;
	w->slot = false;
	f->in_flight--;
	if (!wake || (next = TAILQ_FIRST(&f->fwd_waiting)) == NULL)
		return;
	TAILQ_REMOVE(&f->fwd_waiting, next, wlink);
	next->waiting = false;
	imd_fwd_run(next);
}

static void
imd_fwd_free(struct imd_fwd *w, bool wake)
{
	struct imd_fed *f = &w->imd->fed;

	if (w->take != NULL)
		rqueue_cancel(w->take);
	w->take = NULL;
	if (w->waiting)
		TAILQ_REMOVE(&f->fwd_waiting, w, wlink);
	(void)map_remove(f->fwds, w->client, IMDWIRE_KEY_LEN);
	TAILQ_REMOVE(&f->fwd_list, w, link);
	f->n_fwds--;
	(*w->imd->c.fed_forwarding)--;
	imd_fwd_release(w, wake);
	free(w);
}

/* Sends the entries taken to where the client is. */
static void
imd_fwd_send(struct imd_fwd *w, const struct rqueue_entry *e, size_t n)
{
	struct imd *imd = w->imd;
	struct imd_net *net = &imd->fed.net;
	uint8_t msg[FEDMSG_ENTRIES_SIZE_MAX];
	size_t len = fedmsg_entries_encode(w->client, e, n, msg);
	uint64_t now = time_mono_us();
	int r;

	r = net->send(net->cls, w->to, FERRY_MSG_IMD_ENTRIES, msg, len);
	if (r < 0) {
		if (r == -ENOTCONN)
			(void)net->link(net->cls, w->to, NULL, 0);
		imd_fwd_release(w, true);
		w->due_us = now + IMD_FWD_RETRY_US;
		return;
	}
	(*imd->c.fed_batches_sent)++;
	if (w->resend)
		(*imd->c.fed_batches_resent)++;
	w->resend = false;
	memcpy(w->sent_to, w->to, IMDWIRE_ID_LEN);
	w->sent_top = e[n - 1].cursor;
	w->sent_n = n;
	w->due_us = now + imd->cfg.fed.timeout_us;
}

static void
imd_fwd_got(void *cls, int status, const struct rqueue_entry *e, size_t n,
    bool more)
{
	struct imd_fwd *w = cls;
	struct rqueue_entry r[FEDMSG_ENTRIES_MAX];
	size_t m = 0;

	(void)more; /* the take after the ACK reads them */
	w->take = NULL;
	if (status == -ECANCELED)
		return; /* the intermediary is going */
	if (status == -ERANGE) {
		/* Our cursor is past what the queue gave: a queue that was
		 * replaced. Start from its beginning. */
		w->acked = 0;
		status = -EIO;
	}
	if (status < 0 || n == 0) {
		imd_fwd_release(w, true);
		if (status < 0)
			w->due_us = time_mono_us() + IMD_FWD_RETRY_US;
		else if (w->again)
			imd_fwd_run(w);
		return;
	}
	/* The storing peers' receipts only: an end of a relay is this
	 * intermediary's word on its own relay, which the client hears
	 * here; elsewhere it would read as the end of that one's. */
	for (size_t i = 0; i < n && m < FEDMSG_ENTRIES_MAX; i++)
		if (e[i].type == RQUEUE_RECEIPT)
			r[m++] = e[i];
	if (m == 0) {
		/* Nothing to send: the next take deletes them. */
		w->acked = e[n - 1].cursor;
		imd_fwd_release(w, false);
		imd_fwd_run(w);
		return;
	}
	imd_fwd_send(w, r, m);
}

/* Takes the next entries past acked, when nothing is out. */
static void
imd_fwd_run(struct imd_fwd *w)
{
	struct imd *imd = w->imd;
	struct imd_fed *f = &imd->fed;
	int r;

	if (w->take != NULL || w->sent_top != 0 || w->waiting) {
		w->again = true;
		return;
	}
	if (w->local) {
		imd_fwd_free(w, true);
		return;
	}
	if (w->due_us != 0 && time_mono_us() < w->due_us)
		return; /* a retry waits for its time; the tick runs it */
	w->again = false;
	w->due_us = 0;
	if (!w->slot) {
		if (f->in_flight >= imd->cfg.fed.in_flight) {
			TAILQ_INSERT_TAIL(&f->fwd_waiting, w, wlink);
			w->waiting = true;
			return;
		}
		w->slot = true;
		f->in_flight++;
	}
	r = rqueue_take(imd->queue, w->client, w->acked, FEDMSG_ENTRIES_MAX, 0,
	    imd_fwd_got, w, &w->take);
	if (r < 0) {
		w->take = NULL;
		imd_fwd_release(w, false);
		w->due_us = time_mono_us() + IMD_FWD_RETRY_US;
	}
}

/* The client's record, made if need be; NULL at FORWARD_CLIENTS. */
static struct imd_fwd *
imd_fwd_get(struct imd *imd, const uint8_t client[IMDWIRE_KEY_LEN])
{
	struct imd_fed *f = &imd->fed;
	struct imd_fwd *w = map_get(f->fwds, client, IMDWIRE_KEY_LEN);

	if (w != NULL)
		return w;
	if (f->n_fwds >= imd->cfg.fed.clients)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->imd = imd;
	memcpy(w->client, client, IMDWIRE_KEY_LEN);
	if (map_put(f->fwds, w->client, IMDWIRE_KEY_LEN, w) < 0) {
		free(w);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&f->fwd_list, w, link);
	f->n_fwds++;
	(*imd->c.fed_forwarding)++;
	return w;
}

void
imd_fwd_here(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    const uint8_t *body, size_t len)
{
	uint64_t now = time_real_s(), skew = imd->cfg.skew_s;
	struct fedmsg_here h;
	struct imd_fwd *w;

	if (fedmsg_here_decode(body, len, &h) < 0) {
		(*imd->c.fed_msg_bad)++;
		return;
	}
	/* Before the signature, which costs. */
	if (!ratelimit_take(&imd->fed.here_rl, time_mono_us(), 1)) {
		(*imd->c.fed_here_dropped)++;
		return;
	}
	if (h.auth.time + skew < now || h.auth.time > now + skew) {
		(*imd->c.fed_here_stale)++;
		imd_fwd_refuse(imd, from, "a stale HERE");
		return;
	}
	/* The client signed a take at the peer the link authenticated:
	 * nobody else can divert its receipts with it. */
	if (imdwire_auth_verify(&h.auth, from, "GET", h.target) < 0) {
		(*imd->c.fed_here_forged)++;
		imd_fwd_refuse(imd, from,
		    "a HERE the client did not sign for that intermediary");
		return;
	}
	(*imd->c.fed_here_accepted)++;
	w = imd_fwd_get(imd, h.auth.client);
	if (w == NULL) {
		(*imd->c.fed_here_dropped)++;
		return;
	}
	memcpy(w->to, from, IMDWIRE_ID_LEN);
	w->claimed_us = time_mono_us();
	w->local = false;
	imd_fwd_run(w);
}

void
imd_fwd_ack(struct imd *imd, const uint8_t from[IMDWIRE_ID_LEN],
    const uint8_t *body, size_t len)
{
	struct fedmsg_ack a;
	struct imd_fwd *w;

	if (fedmsg_ack_decode(body, len, &a) < 0) {
		(*imd->c.fed_msg_bad)++;
		return;
	}
	w = map_get(imd->fed.fwds, a.client, IMDWIRE_KEY_LEN);
	if (w == NULL || w->sent_top == 0 ||
	    memcmp(from, w->sent_to, IMDWIRE_ID_LEN) != 0 ||
	    (a.status == FEDMSG_ACK_HELD && a.cursor != w->sent_top)) {
		(*imd->c.fed_acks_bad)++;
		return;
	}
	w->sent_top = 0;
	imd_fwd_release(w, true);
	switch (a.status) {
	case FEDMSG_ACK_HELD:
		*imd->c.fed_entries_forwarded += w->sent_n;
		w->acked = a.cursor;
		w->due_us = 0;
		imd_fwd_run(w); /* deletes them, and reads on */
		break;
	case FEDMSG_ACK_UNWANTED:
		imd_fwd_free(w, true);
		break;
	default: /* full, failed: later */
		w->resend = true;
		w->due_us = time_mono_us() + imd->cfg.fed.timeout_us;
		break;
	}
}

void
imd_fwd_local(struct imd *imd, const uint8_t client[IMDWIRE_KEY_LEN])
{
	struct imd_fwd *w = imd->fed.fwds != NULL
	    ? map_get(imd->fed.fwds, client, IMDWIRE_KEY_LEN)
	    : NULL;

	if (w == NULL)
		return;
	/* A batch out is let end (its entries are the other's now, or come
	 * again); nothing more goes. */
	w->local = true;
	if (w->take == NULL && w->sent_top == 0)
		imd_fwd_free(w, true);
}

void
imd_fwd_kick(struct imd *imd, const uint8_t client[IMDWIRE_KEY_LEN])
{
	struct imd_fwd *w = imd->fed.fwds != NULL
	    ? map_get(imd->fed.fwds, client, IMDWIRE_KEY_LEN)
	    : NULL;

	if (w != NULL)
		imd_fwd_run(w);
}

void
imd_fwd_tick(struct imd *imd, uint64_t now)
{
	uint64_t hold = 4 * imd->cfg.fed.here_us;
	struct imd_fwd *w, *next;

	for (w = TAILQ_FIRST(&imd->fed.fwd_list); w != NULL; w = next) {
		next = TAILQ_NEXT(w, link);
		if (w->take != NULL || w->waiting)
			continue;
		if (w->sent_top != 0) {
			if (now < w->due_us)
				continue;
			/* Unacknowledged: the same entries again. */
			w->sent_top = 0;
			w->due_us = 0;
			w->resend = true;
			imd_fwd_release(w, true);
			imd_fwd_run(w);
		} else if (now - w->claimed_us > hold) {
			imd_fwd_free(w, true);
		} else if (w->due_us != 0 && now >= w->due_us) {
			w->due_us = 0;
			imd_fwd_run(w);
		}
	}
}

void
imd_fwd_free_all(struct imd *imd)
{
	struct imd_fwd *w;

	while ((w = TAILQ_FIRST(&imd->fed.fwd_list)) != NULL)
		imd_fwd_free(w, false);
}
