/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary (imd.h), intermediary layer: its start and reload,
 * the routes of ferry-intermediary(7), and the checks every
 * authenticated request passes, in the page's order: the Authorization
 * header's syntax, its TIME, its signature, its nonce; then the client's
 * CLIENT_RATE.
 */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/core.h"
#include "core/identity.h"
#include "intermediary/nonces.h"
#include "intermediary/rqueue.h"
#include "lib/base32.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/netaddr.h"
#include "lib/stats.h"
#include "lib/time.h"

#define C(f) STATS_SLOT(struct imd_counters, f)
#define H(f)                                                                   \
	{                                                                      \
#f, offsetof(struct imd_counters, http.f)                      \
	}
static const struct stats_slot imd_slots[] = {
	H(connections),
	H(busy),
	H(tls_failed),
	H(requests),
	H(malformed),
	H(too_large),
	H(slow),
	H(address_busy),
	H(address_rate),
	C(unauthorized),
	C(stale),
	C(replayed),
	C(rate),
	C(quota),
	C(not_found),
	C(method),
	C(nonces_full),
	C(uploads),
	C(records_relayed),
	C(records_refused),
	C(bytes_relayed),
	C(relays_stored),
	C(relays_failed),
	C(receipts),
	C(in_flight_waits),
	C(blocks_fetched),
	C(blocks_missing),
	C(fed_announced),
	C(fed_announce_failed),
	C(fed_lookups),
	C(fed_lookup_failed),
	C(fed_records_bad),
	C(fed_withdrawn),
	C(fed_left),
	C(fed_msg_bad),
	C(fed_here_sent),
	C(fed_here_accepted),
	C(fed_here_forged),
	C(fed_here_stale),
	C(fed_here_dropped),
	C(fed_batches_sent),
	C(fed_batches_resent),
	C(fed_entries_forwarded),
	C(fed_batches_received),
	C(fed_entries_received),
	C(fed_entries_unwanted),
	C(fed_receipts_bad),
	C(fed_acks_bad),
	C(fed_forwarding),
};
#undef C
#undef H

void
imd_log_refusal(struct imd *imd, const struct httpd_req *req, const char *fmt,
    ...)
{
	char line[256];
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = ratelog_vformat(&imd->log, time_mono_us(), line, sizeof(line), fmt,
	    ap);
	va_end(ap);
	if (ok)
		log_info("%s %s from %s: %s", httpd_req_method(req),
		    httpd_req_target(req), httpd_req_peer(req), line);
}

/* The checks of AUTHENTICATION and CLIENT_RATE: true, or answered. */
static bool
imd_authorize(struct imd *imd, struct httpd_req *req, struct imdwire_auth *ret)
{
	const char *h = httpd_req_header(req, "Authorization");
	uint64_t now = time_real_s();
	struct imd_client *cl;
	struct imdwire_auth a;
	int r;

	if (h == NULL || imdwire_auth_parse(h, strlen(h), &a) < 0) {
		(*imd->c.unauthorized)++;
		imd_log_refusal(imd, req, "no valid Authorization header");
		httpd_reply_error(req, 401, "unauthorized",
		    "expected Authorization: Ferry CLIENT:TIME:NONCE:SIG");
		return false;
	}
	if (a.time + imd->cfg.skew_s < now || a.time > now + imd->cfg.skew_s ||
	    a.time < imd->start_s) {
		(*imd->c.stale)++;
		imd_log_refusal(imd, req, "stale request (time %llu)",
		    (unsigned long long)a.time);
		httpd_reply_error(req, 401, "stale",
		    "TIME is not within CLOCK_SKEW of the Date header, or before this intermediary started");
		return false;
	}
	r = imdwire_auth_verify(&a, imd->id, httpd_req_method(req),
	    httpd_req_target(req));
	if (r < 0) {
		(*imd->c.unauthorized)++;
		imd_log_refusal(imd, req, "bad request signature");
		httpd_reply_error(req, 401, "unauthorized",
		    "the signature is not the client's over this request");
		return false;
	}
	/* Kept until its TIME can no longer pass the check above. */
	r = nonces_add(imd->nonces, a.client, a.nonce, time_mono_us(),
	    (2 * imd->cfg.skew_s + 1) * 1000000);
	if (r == -EALREADY) {
		(*imd->c.replayed)++;
		imd_log_refusal(imd, req, "replayed request");
		httpd_reply_error(req, 401, "replayed",
		    "this CLIENT and NONCE were used already");
		return false;
	}
	if (r < 0) {
		(*imd->c.nonces_full)++;
		(void)httpd_req_add_header(req, "Retry-After", "1");
		httpd_reply_error(req, 503, "busy",
		    "too many requests in the window");
		return false;
	}
	/* The client is here: what is queued here for it stays here. */
	imd_fwd_local(imd, a.client);
	cl = imd_client_get(imd, a.client);
	if (cl == NULL || !imd_client_take(imd, cl)) {
		(*imd->c.rate)++;
		imd_log_refusal(imd, req, "client over CLIENT_RATE");
		(void)httpd_req_add_header(req, "Retry-After", "1");
		httpd_reply_error(req, 429, "rate", "over CLIENT_RATE");
		return false;
	}
	*ret = a;
	return true;
}

/* Whether the target's path (before any query) is path. */
static bool
imd_path_is(const char *target, const char *path)
{
	size_t n = strlen(path);

	return strncmp(target, path, n) == 0 &&
	    (target[n] == '\0' || target[n] == '?');
}

static void
imd_wrong_method(struct imd *imd, struct httpd_req *req, const char *allow)
{
	(*imd->c.method)++;
	(void)httpd_req_add_header(req, "Allow", allow);
	httpd_reply_error(req, 405, "method", "this path takes %s", allow);
}

static void
imd_on_head(void *cls, struct httpd_req *req)
{
	struct imd *imd = cls;
	const char *m = httpd_req_method(req), *t = httpd_req_target(req);
	bool get = strcmp(m, "GET") == 0, post = strcmp(m, "POST") == 0;
	struct imdwire_auth a;

	if (imd_path_is(t, "/v1/intermediaries")) {
		if (!get)
			imd_wrong_method(imd, req, "GET");
		else
			imd_peers_reply(imd, req);
	} else if (imd_path_is(t, "/v1/blocks")) {
		if (!post)
			imd_wrong_method(imd, req, "POST");
		else if (imd_authorize(imd, req, &a))
			imd_upload_start(imd, req, a.client);
	} else if (imd_path_is(t, "/v1/fetch")) {
		if (!post)
			imd_wrong_method(imd, req, "POST");
		else if (imd_authorize(imd, req, &a))
			imd_fetch_start(imd, req);
	} else if (imd_path_is(t, "/v1/receipts")) {
		if (!get)
			imd_wrong_method(imd, req, "GET");
		else if (imd_authorize(imd, req, &a))
			imd_receipts_start(imd, req, &a);
	} else if (strncmp(t, "/v1/blocks/", 11) == 0) {
		if (!get)
			imd_wrong_method(imd, req, "GET");
		else if (imd_authorize(imd, req, &a))
			imd_fetch_one(imd, req, t + 11);
	} else {
		(*imd->c.not_found)++;
		httpd_reply_error(req, 404, "not-found", "no such request");
	}
}

static void
imd_on_body(void *cls, struct httpd_req *req, struct evbuffer *body, bool fin)
{
	enum imd_job *job = httpd_req_data(req);

	if (job != NULL && *job == IMD_JOB_UPLOAD)
		imd_upload_body(cls, req, body, fin);
	else if (job != NULL && *job == IMD_JOB_FETCH)
		imd_fetch_body(cls, req, body, fin);
}

static void
imd_on_drain(void *cls, struct httpd_req *req)
{
	enum imd_job *job = httpd_req_data(req);

	if (job != NULL && *job == IMD_JOB_FETCH)
		imd_fetch_drain(cls, req);
}

static void
imd_on_done(void *cls, struct httpd_req *req)
{
	enum imd_job *job = httpd_req_data(req);

	if (job != NULL && *job == IMD_JOB_UPLOAD)
		imd_upload_done(cls, req);
	else if (job != NULL && *job == IMD_JOB_FETCH)
		imd_fetch_done(cls, req);
	else if (job != NULL && *job == IMD_JOB_RECEIPTS)
		imd_receipts_done(cls, req);
}

static void
imd_on_wake(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	imd_upload_wake(arg);
}

/* A listening TCP socket on LISTEN. */
static int
imd_listen(const char *listen_addr, int *ret)
{
	struct sockaddr_storage ss;
	int fd, one = 1;

	if (netaddr_parse(listen_addr, strlen(listen_addr), &ss) < 0)
		return -EINVAL;
	fd =
	    socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, netaddr_socklen(&ss)) < 0 ||
	    listen(fd, 128) < 0) {
		int r = -errno;

		(void)close(fd);
		return r;
	}
	*ret = fd;
	return 0;
}

static int
imd_start_http(struct imd *imd)
{
	struct httpd_handler h = { imd, imd_on_head, imd_on_body, imd_on_drain,
		imd_on_done };
	char headers[128];
	SSL_CTX *ctx;
	int fd = -1, r;

	r = httpd_tls_new(imd->cfg.cert, imd->cfg.key, &ctx);
	if (r < 0)
		return r;
	r = imd_listen(imd->cfg.listen, &fd);
	if (r < 0) {
		SSL_CTX_free(ctx);
		return log_err_errno(r, "cannot listen on %s", imd->cfg.listen);
	}
	(void)snprintf(headers, sizeof(headers), "Ferry-Intermediary: %s\r\n",
	    imd->id_str);
	r = httpd_new(imd->base, ctx, fd, &imd->cfg.http, &imd->c.http, &h,
	    headers, &imd->http);
	if (r < 0) {
		SSL_CTX_free(ctx);
		(void)close(fd);
	}
	return r;
}

/* The receipt queue's database in state_dir. */
static int
imd_open_queue(struct imd *imd, struct cfg *cfg, const char *state_dir)
{
	struct rqueue_cfg qc;
	char path[4096];

	if (rqueue_cfg_parse(cfg, &qc) < 0)
		return -EINVAL;
	qc.stats = imd->stats;
	imd->queue_cfg = qc;
	if (snprintf(path, sizeof(path), "%s/%s", state_dir, RQUEUE_DB_FILE) >=
	    (int)sizeof(path))
		return log_err_errno(-ENAMETOOLONG, "%s", state_dir);
	return rqueue_open(imd->base, path, &qc, &imd->queue);
}

int
imd_new(struct event_base *base, struct cfg *cfg, struct stats *stats,
    const char *state_dir, struct core *core, struct dht *dht, struct imd **ret)
{
	const struct identity *ident = core_ident(core);
	struct imd_cfg c;
	struct imd *imd;
	int r;

	*ret = NULL;
	if (imd_cfg_read(cfg, &c) < 0)
		return -EINVAL;
	if (c.listen[0] == '\0')
		return 0;
	if (dht == NULL) {
		log_err(
		    "[intermediary] LISTEN needs the DHT ([dht] ENABLE = yes)");
		return -EINVAL;
	}
	imd = calloc(1, sizeof(*imd));
	if (imd == NULL)
		return -ENOMEM;
	imd->base = base;
	imd->stats = stats;
	imd->dht = dht;
	imd->cfg = c;
	imd->start_s = time_real_s();
	memcpy(imd->id, ident->id.bytes, sizeof(imd->id));
	base32_encode(imd->id, sizeof(imd->id), imd->id_str);
	TAILQ_INIT(&imd->client_lru);
	TAILQ_INIT(&imd->waiting);
	TAILQ_INIT(&imd->relays);
	TAILQ_INIT(&imd->fetches);
	ratelog_init(&imd->log, 5, 20);
	r = stats_bind_prefix(stats, "intermediary", &imd->c, imd_slots,
	    sizeof(imd_slots) / sizeof(imd_slots[0]));
	imd->nonces = nonces_new(c.max_nonces);
	imd->clients = map_new();
	imd->wake = event_new(base, -1, 0, imd_on_wake, imd);
	if (r < 0 || imd->nonces == NULL || imd->clients == NULL ||
	    imd->wake == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	r = imd_open_queue(imd, cfg, state_dir);
	if (r < 0)
		goto fail;
	r = imd_start_http(imd);
	if (r < 0)
		goto fail;
	r = imd_net_attach(imd, core);
	if (r == 0)
		r = imd_fed_start(imd);
	if (r < 0) {
		log_err_errno(r, "cannot start the federation");
		goto fail;
	}
	log_notice("intermediary listening on %s (%s)", c.listen, c.public_url);
	*ret = imd;
	return 0;
fail:
	imd_free(imd);
	return r;
}

int
imd_reload(struct imd *imd, struct cfg *cfg)
{
	struct rqueue_cfg qc;
	struct imd_cfg c;

	if (imd_cfg_read(cfg, &c) < 0 || rqueue_cfg_parse(cfg, &qc) < 0)
		return -EINVAL;
	if (imd == NULL) {
		if (c.listen[0] != '\0')
			log_notice(
			    "[intermediary] LISTEN takes effect at the next start");
		return 0;
	}
	if (strcmp(c.listen, imd->cfg.listen) != 0 ||
	    strcmp(c.cert, imd->cfg.cert) != 0 ||
	    strcmp(c.key, imd->cfg.key) != 0 ||
	    strcmp(c.public_url, imd->cfg.public_url) != 0)
		log_notice(
		    "[intermediary] LISTEN, CERTIFICATE, PRIVATE_KEY and PUBLIC_URL take effect at the next start");
	/* What needs no restart. MAX_NONCES too: the cache is only ever
	 * checked against it. */
	imd->cfg.skew_s = c.skew_s;
	imd->cfg.http = c.http;
	imd->cfg.client_rate = c.client_rate;
	imd->cfg.client_quota = c.client_quota;
	imd->cfg.max_in_flight = c.max_in_flight;
	imd->cfg.max_nonces = c.max_nonces;
	imd->cfg.leave_us = c.leave_us;
	imd->cfg.fed = c.fed;
	ratelimit_init(&imd->fed.here_rl, c.fed.here_rate,
	    2.0 * c.fed.here_rate);
	httpd_set_cfg(imd->http, &c.http);
	nonces_set_max(imd->nonces, c.max_nonces);
	/* More room may let waiting uploads go on. */
	event_active(imd->wake, EV_TIMEOUT, 0);
	return 0;
}

void
imd_free(struct imd *imd)
{
	if (imd == NULL)
		return;
	imd_leave_stop(imd);
	imd_net_detach(imd);
	httpd_free(imd->http);
	imd_upload_detach(imd);
	imd_fetch_detach(imd);
	/* Its callbacks (pushes ending, forwarding takes cancelled) use
	 * only counters and imd, and send nothing once detached. */
	rqueue_free(imd->queue);
	imd_fed_stop(imd);
	if (imd->wake != NULL)
		event_free(imd->wake);
	nonces_free(imd->nonces);
	imd_clients_free(imd);
	map_free(imd->clients);
	free(imd);
}
