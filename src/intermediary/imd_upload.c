/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * POST /v1/blocks (ferry-intermediary(7), UPLOAD), intermediary layer:
 * records read as the body arrives (imdwire.h), each relayed unchanged
 * with dht_put_signed(); at MAX_IN_FLIGHT bytes of relays the DHT has
 * not ended, the body is not read until some end, so that a fast client
 * cannot queue more than that in the daemon. The answer lists every
 * record's fate once the body is read whole.
 */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "dht/dht.h"
#include "intermediary/imd_tamper.h"
#include "intermediary/imdwire.h"
#include "lib/base32.h"
#include "lib/time.h"

struct imd_upload {
	enum imd_job kind; /* IMD_JOB_UPLOAD */
	struct imd *imd;
	struct httpd_req *req;
	uint8_t client[IMDWIRE_KEY_LEN];
	struct evbuffer *body; /* httpd's, valid until on_done */
	struct evbuffer *json; /* the records' answers so far */
	unsigned relayed, refused;
	bool fin;     /* the body is all in */
	bool waiting; /* in imd->waiting: MAX_IN_FLIGHT reached */
	bool paused;  /* its body is not read meanwhile */
	bool ended;   /* answered */
	TAILQ_ENTRY(imd_upload) link;
};

/* One PUT the DHT has not ended. It outlives its upload: its receipts
 * are the client's whether or not the connection is still there. */
struct imd_relay {
	struct imd *imd; /* NULL once the intermediary is gone */
	uint8_t client[IMDWIRE_KEY_LEN];
	struct dhtkey key;
	uint8_t put_hash[DHTMSG_HASH_LEN];
	size_t len;
	TAILQ_ENTRY(imd_relay) link;
};

static void
imd_upload_unwait(struct imd_upload *u)
{
	if (!u->waiting)
		return;
	u->waiting = false;
	TAILQ_REMOVE(&u->imd->waiting, u, link);
}

/* Ends the upload with an error after the records before it. */
static void
imd_upload_fail(struct imd_upload *u, int status, const char *token,
    const char *why)
{
	struct imd *imd = u->imd;
	char extra[32];

	imd_upload_unwait(u);
	u->ended = true;
	if (status == 403)
		(*imd->c.quota)++;
	else if (status == 413)
		(*imd->c.http.too_large)++;
	else
		(*imd->c.http.malformed)++;
	imd_log_refusal(imd, u->req, "%s after %u records", why, u->relayed);
	(void)snprintf(extra, sizeof(extra), "\"relayed\": %u", u->relayed);
	httpd_reply_error_with(u->req, status, token, extra,
	    "%s; the %u records before it were relayed", why, u->relayed);
}

static void
imd_relay_done(void *cls, const struct dht_result *r)
{
	struct imd_relay *rl = cls;
	struct imd *imd = rl->imd;

	if (imd != NULL) {
		TAILQ_REMOVE(&imd->relays, rl, link);
		imd->in_flight -= rl->len;
		(*imd->c.receipts) += r->receipts;
		if (r->receipts > 0)
			(*imd->c.relays_stored)++;
		else
			(*imd->c.relays_failed)++;
		imd_receipts_push(imd, rl->client, &rl->key, rl->put_hash, r);
		if (!TAILQ_EMPTY(&imd->waiting))
			event_active(imd->wake, EV_TIMEOUT, 0);
	}
	free(rl);
}

/* Relays one record: its status word for the answer, or NULL when the
 * request ended (answered). *key is the block's key on return (the block
 * is hashed once, here or in dht_put_signed()), and hash the put_hash of
 * the signed request. */
static const char *
imd_upload_relay(struct imd_upload *u, const struct dhtmsg_put *put,
    struct dhtkey *key, uint8_t hash[DHTMSG_HASH_LEN])
{
	struct imd *imd = u->imd;
	struct imd_client *cl = imd_client_get(imd, u->client);
	const char *status = "relayed";
	struct imd_relay *rl = NULL;
	bool hashed = false;
	int r;

	if (put->replication == 0 || put->replication > DHTMSG_REPL_MAX)
		status = "replication";
	else if (put->expiry <= time_real_s())
		status = "expired";
	else if (cl != NULL && imd_client_over_quota(imd, cl, put->block_len)) {
		imd_upload_fail(u, 403, "quota", "over CLIENT_QUOTA");
		return NULL;
	} else if (!imd_tamper_relay(put)) {
		/* A test build's hostile intermediary: dropped, and answered
		 * with receipts of its own making if it wants. */
		struct dht_result fake;

		dhtkey_of_block(put->block, put->block_len, key);
		dhtmsg_put_hash(key, put, hash);
		if (imd_tamper_fake(key, put, &fake))
			imd_receipts_push(imd, u->client, key, hash, &fake);
		return status;
	} else if ((rl = calloc(1, sizeof(*rl))) == NULL) {
		status = "busy";
	} else {
		r = dht_put_signed(imd->dht, put, imd_relay_done, rl, key);
		/* imdwire_put_decode() bounded the block: it was hashed. */
		hashed = true;
		if (r < 0) {
			free(rl);
			rl = NULL;
			status = r == -EBADMSG ? "bad-signature"
			    : r == -EINVAL     ? "expired"
			                       : "busy";
		}
	}
	if (!hashed)
		dhtkey_of_block(put->block, put->block_len, key);
	dhtmsg_put_hash(key, put, hash);
	if (rl == NULL)
		return status;
	rl->imd = imd;
	memcpy(rl->client, u->client, IMDWIRE_KEY_LEN);
	rl->key = *key;
	memcpy(rl->put_hash, hash, DHTMSG_HASH_LEN);
	rl->len = put->block_len;
	TAILQ_INSERT_TAIL(&imd->relays, rl, link);
	imd->in_flight += rl->len;
	if (cl != NULL)
		imd_client_charge(imd, cl, put->block_len);
	(*imd->c.bytes_relayed) += put->block_len;
	return status;
}

/* One whole record, its PUT signed by the request's client: relayed or
 * refused alone, and said so in the answer. false when the request
 * ended. */
static bool
imd_upload_record(struct imd_upload *u, const struct dhtmsg_put *put)
{
	char k[BASE32_LEN(32) + 1], h[BASE32_LEN(32) + 1];
	uint8_t hash[DHTMSG_HASH_LEN];
	struct dhtkey key;
	const char *status;

	status = imd_upload_relay(u, put, &key, hash);
	if (status == NULL)
		return false;
	if (strcmp(status, "relayed") == 0) {
		u->relayed++;
		(*u->imd->c.records_relayed)++;
	} else {
		u->refused++;
		(*u->imd->c.records_refused)++;
		imd_log_refusal(u->imd, u->req, "record refused: %s", status);
	}
	base32_encode(key.b, sizeof(key.b), k);
	base32_encode(hash, sizeof(hash), h);
	(void)evbuffer_add_printf(u->json,
	    "%s\n  {\"key\": \"%s\", \"put_hash\": \"%s\", \"status\": \"%s\"}",
	    u->relayed + u->refused > 1 ? "," : "", k, h, status);
	return true;
}

/* Takes the whole records of the body while there is room in flight. */
static void
imd_upload_pump(struct imd_upload *u)
{
	struct imd *imd = u->imd;
	size_t max_block = dht_config(imd->dht)->max_block, total;
	struct dhtmsg_put put;
	uint8_t head[4];
	int r;

	/* origin_pk is not in a record: it is the Authorization's key. */
	memset(&put, 0, sizeof(put));
	memcpy(put.origin_pk, u->client, sizeof(put.origin_pk));

	while (!u->ended) {
		if (imd->in_flight >= imd->cfg.max_in_flight) {
			if (!u->waiting) {
				u->waiting = true;
				TAILQ_INSERT_TAIL(&imd->waiting, u, link);
				(*imd->c.in_flight_waits)++;
			}
			if (!u->paused) {
				u->paused = true;
				httpd_req_pause(u->req, true);
			}
			return;
		}
		if (evbuffer_copyout(u->body, head, 4) < 4)
			break;
		r = imdwire_put_size(head, 4, max_block, &total);
		if (r == 0 && evbuffer_get_length(u->body) < total)
			break;
		if (r == 0 && u->relayed + u->refused == IMD_UPLOAD_RECORDS)
			r = -E2BIG;
		if (r == 0)
			r = imdwire_put_decode(evbuffer_pullup(u->body,
			                           (ssize_t)total),
			    total, max_block, &put);
		if (r == -E2BIG) {
			imd_upload_fail(u, 413, "too-large",
			    "more than 4096 records");
			return;
		}
		if (r < 0) {
			imd_upload_fail(u, r == -EMSGSIZE ? 413 : 400,
			    r == -EMSGSIZE ? "too-large" : "malformed",
			    r == -EMSGSIZE ? "a record over MAX_BLOCK"
			                   : "a malformed record");
			return;
		}
		if (!imd_upload_record(u, &put))
			return;
		(void)evbuffer_drain(u->body, total);
	}
	if (u->ended)
		return;
	if (u->paused) {
		u->paused = false;
		httpd_req_pause(u->req, false);
	}
	if (!u->fin)
		return;
	if (evbuffer_get_length(u->body) > 0) {
		imd_upload_fail(u, 400, "malformed",
		    "the body ends inside a record");
		return;
	}
	u->ended = true;
	(*imd->c.uploads)++;
	(void)evbuffer_add_printf(u->json, "]}\n");
	{
		char head_json[96];
		int n = snprintf(head_json, sizeof(head_json),
		    "{\"relayed\": %u, \"refused\": %u, \"records\": [",
		    u->relayed, u->refused);

		(void)evbuffer_prepend(u->json, head_json, (size_t)n);
	}
	httpd_reply(u->req, 200, "application/json",
	    evbuffer_pullup(u->json, -1), evbuffer_get_length(u->json));
}

void
imd_upload_start(struct imd *imd, struct httpd_req *req,
    const uint8_t client[IMDWIRE_KEY_LEN])
{
	struct imd_upload *u = calloc(1, sizeof(*u));

	if (u == NULL || (u->json = evbuffer_new()) == NULL) {
		free(u);
		httpd_reply_error(req, 503, "busy", "out of memory");
		return;
	}
	u->kind = IMD_JOB_UPLOAD;
	u->imd = imd;
	u->req = req;
	memcpy(u->client, client, IMDWIRE_KEY_LEN);
	httpd_req_set_data(req, u);
	httpd_req_read_body(req);
}

void
imd_upload_body(struct imd *imd, struct httpd_req *req, struct evbuffer *body,
    bool fin)
{
	struct imd_upload *u = httpd_req_data(req);

	(void)imd;
	u->body = body;
	u->fin = fin;
	if (!u->waiting)
		imd_upload_pump(u);
}

void
imd_upload_done(struct imd *imd, struct httpd_req *req)
{
	struct imd_upload *u = httpd_req_data(req);

	(void)imd;
	imd_upload_unwait(u);
	evbuffer_free(u->json);
	free(u);
}

void
imd_upload_wake(struct imd *imd)
{
	struct imd_upload *u;

	/* Oldest first, while there is room; each may fill it again. */
	while ((u = TAILQ_FIRST(&imd->waiting)) != NULL &&
	    imd->in_flight < imd->cfg.max_in_flight) {
		imd_upload_unwait(u);
		imd_upload_pump(u);
		if (u->waiting)
			break;
	}
}

void
imd_upload_detach(struct imd *imd)
{
	struct imd_relay *rl;

	while ((rl = TAILQ_FIRST(&imd->relays)) != NULL) {
		TAILQ_REMOVE(&imd->relays, rl, link);
		rl->imd = NULL;
	}
}
