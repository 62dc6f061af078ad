/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The clients' receipts (ferry-intermediary(7), GET /v1/receipts),
 * intermediary layer: each relay's end and the storing peers' receipts
 * pushed to the queue (rqueue.h) under the client key that signed the
 * PUT, and taken by the client with a cursor, long-polled.
 */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "intermediary/imd_tamper.h"
#include "lib/base32.h"
#include "lib/log.h"

#define IMD_WAIT_MAX_S 60

struct imd_receipts {
	enum imd_job kind; /* IMD_JOB_RECEIPTS */
	struct imd *imd;
	struct httpd_req *req;
	struct rqueue_take *take; /* NULL once answered */
	uint64_t after;
};

/* The word of the page for a relay's end. */
static const char *
imd_done_status(const struct dht_result *r)
{
	switch (r->status) {
	case 0:
		return "ok";
	case -EIO:
		return "partial";
	case -ENOSPC:
		return "full";
	case -EDQUOT:
		return "quota";
	case -EHOSTUNREACH:
		return "unreachable";
	case -ETIMEDOUT:
		return "timeout";
	case -EAGAIN:
		return "busy";
	default:
		return "refused";
	}
}

static const char *
imd_done_word(int status)
{
	struct dht_result r;

	memset(&r, 0, sizeof(r));
	r.status = status;
	return imd_done_status(&r);
}

static void
imd_receipts_pushed(void *cls, int status)
{
	(void)cls;
	(void)status; /* counted by the queue (queue_refused, _failed) */
}

void
imd_receipts_push(struct imd *imd, const uint8_t client[IMDWIRE_KEY_LEN],
    const struct dhtkey *key, const uint8_t put_hash[32],
    const struct dht_result *r)
{
	struct rqueue_entry e[DHTMSG_REPL_MAX + 1];
	size_t n = 0;
	int err;

	/* Ended by the intermediary's own going: nothing to say. */
	if (r->status == -ECANCELED)
		return;
	memset(e, 0, sizeof(e));
	for (unsigned i = 0; i < r->receipts && n < DHTMSG_REPL_MAX; i++) {
		e[n].type = RQUEUE_RECEIPT;
		e[n].key = *key;
		memcpy(e[n].put_hash, put_hash, DHTMSG_HASH_LEN);
		e[n].receipt = r->receipt[i];
		n++;
	}
	e[n].type = RQUEUE_DONE;
	e[n].key = *key;
	memcpy(e[n].put_hash, put_hash, DHTMSG_HASH_LEN);
	e[n].status = r->status;
	e[n].receipts = (unsigned)n;
	n++;
	n = imd_tamper_queue(e, n); /* a test build's hostile intermediary */
	if (n == 0)
		return;
	err = rqueue_push(imd->queue, client, e, n, imd_receipts_pushed, NULL);
	if (err < 0) {
		(*imd->c.results_lost)++;
		log_warn_errno(err,
		    "the receipt queue refused a relay's result");
		return;
	}
	/* The queue answers in order: a take asked now sees them. */
	imd_fwd_kick(imd, client);
}

/* One entry as the page writes it. */
static void
imd_receipts_entry(struct evbuffer *b, const struct rqueue_entry *e, bool first)
{
	char k[BASE32_LEN(32) + 1], h[BASE32_LEN(32) + 1];
	char pk[BASE32_LEN(32) + 1], sig[BASE32_LEN(64) + 1];

	base32_encode(e->key.b, sizeof(e->key.b), k);
	base32_encode(e->put_hash, sizeof(e->put_hash), h);
	if (e->type == RQUEUE_RECEIPT) {
		base32_encode(e->receipt.storer_pk, 32, pk);
		base32_encode(e->receipt.sig, 64, sig);
		(void)evbuffer_add_printf(b,
		    "%s\n  {\"cursor\": %llu, \"type\": \"receipt\", "
		    "\"key\": \"%s\", \"put_hash\": \"%s\", \"storer\": \"%s\", "
		    "\"expiry\": %llu, \"sig\": \"%s\"}",
		    first ? "" : ",", (unsigned long long)e->cursor, k, h, pk,
		    (unsigned long long)e->receipt.expiry, sig);
		return;
	}
	(void)evbuffer_add_printf(b,
	    "%s\n  {\"cursor\": %llu, \"type\": \"done\", \"key\": \"%s\", "
	    "\"put_hash\": \"%s\", \"status\": \"%s\", \"receipts\": %u}",
	    first ? "" : ",", (unsigned long long)e->cursor, k, h,
	    imd_done_word(e->status), e->receipts);
}

static void
imd_receipts_got(void *cls, int status, const struct rqueue_entry *e, size_t n,
    bool more)
{
	struct imd_receipts *t = cls;
	struct evbuffer *b;

	t->take = NULL;
	if (status == -ERANGE) {
		(*t->imd->c.http.malformed)++;
		imd_log_refusal(t->imd, t->req, "a cursor never given");
		httpd_reply_error(t->req, 400, "malformed",
		    "after is no cursor this intermediary gave");
		return;
	}
	if (status < 0) {
		(void)httpd_req_add_header(t->req, "Retry-After", "1");
		httpd_reply_error(t->req, 503, "busy",
		    "the receipt queue cannot be read now");
		return;
	}
	b = evbuffer_new();
	if (b == NULL) {
		httpd_reply_error(t->req, 503, "busy", "out of memory");
		return;
	}
	(void)evbuffer_add_printf(b,
	    "{\"cursor\": %llu, \"more\": %s, "
	    "\"entries\": [",
	    (unsigned long long)(n > 0 ? e[n - 1].cursor : t->after),
	    more ? "true" : "false");
	for (size_t i = 0; i < n; i++)
		imd_receipts_entry(b, &e[i], i == 0);
	(void)evbuffer_add_printf(b, "]}\n");
	httpd_reply(t->req, 200, "application/json", evbuffer_pullup(b, -1),
	    evbuffer_get_length(b));
	evbuffer_free(b);
}

/* after, wait and max of the query: 0, or -EBADMSG. */
static int
imd_receipts_query(const char *target, uint64_t v[3])
{
	static const char *const names[3] = { "after", "wait", "max" };
	static const uint64_t max[3] = { INT64_MAX, IMD_WAIT_MAX_S,
		RQUEUE_TAKE_MAX };
	const char *q = strchr(target, '?');
	bool seen[3] = { false, false, false };

	v[0] = 0;
	v[1] = 0;
	v[2] = RQUEUE_TAKE_MAX;
	if (q == NULL)
		return 0;
	for (q++; *q != '\0';) {
		size_t len = strcspn(q, "&"), nl = strcspn(q, "=&");
		uint64_t x = 0;
		int i;

		for (i = 0; i < 3; i++)
			if (strlen(names[i]) == nl &&
			    strncmp(q, names[i], nl) == 0)
				break;
		if (i == 3 || seen[i] || nl == len || nl + 1 == len ||
		    len - nl - 1 > 19)
			return -EBADMSG;
		for (size_t j = nl + 1; j < len; j++) {
			if (q[j] < '0' || q[j] > '9')
				return -EBADMSG;
			x = x * 10 + (uint64_t)(q[j] - '0');
		}
		if (x > max[i] || (i == 2 && x == 0))
			return -EBADMSG;
		seen[i] = true;
		v[i] = x;
		q += len;
		if (*q == '&')
			q++;
	}
	return 0;
}

void
imd_receipts_start(struct imd *imd, struct httpd_req *req,
    const struct imdwire_auth *a)
{
	const uint8_t *client = a->client;
	struct imd_receipts *t;
	uint64_t v[3];
	int r;

	if (imd_receipts_query(httpd_req_target(req), v) < 0) {
		(*imd->c.http.malformed)++;
		httpd_reply_error(req, 400, "malformed",
		    "expected after=CURSOR, wait=0..60 and max=1..1000");
		return;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		httpd_reply_error(req, 503, "busy", "out of memory");
		return;
	}
	t->kind = IMD_JOB_RECEIPTS;
	t->imd = imd;
	t->req = req;
	t->after = v[0];
	httpd_req_set_data(req, t);
	/* The other intermediaries forward what they hold for the client
	 * here (FEDERATION). */
	imd_here_take(imd, a, httpd_req_target(req));
	r = rqueue_take(imd->queue, client, v[0], (unsigned)v[2],
	    v[1] * 1000000, imd_receipts_got, t, &t->take);
	if (r < 0) {
		t->take = NULL;
		(void)httpd_req_add_header(req, "Retry-After", "1");
		httpd_reply_error(req, 503, "busy",
		    "the receipt queue holds too much work");
	}
}

void
imd_receipts_done(struct imd *imd, struct httpd_req *req)
{
	struct imd_receipts *t = httpd_req_data(req);

	(void)imd;
	/* The client went while its take waited: what it acknowledged
	 * stays deleted, as it asked. */
	if (t->take != NULL)
		rqueue_cancel(t->take);
	free(t);
}
