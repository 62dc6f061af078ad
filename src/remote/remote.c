/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The thin client and its intermediaries, remote client: opening the
 * config directory, key and secret; the intermediaries to try (those of
 * the command line, then those learnt, never one found bad unless named);
 * the one in use, its peer id and clock; signed requests to it.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/aead.h"
#include "core/identity.h"
#include "intermediary/imdwire.h"
#include "lib/base32.h"
#include "lib/time.h"
#include "storage/secret.h"

static char remote_open_why[4096 + 256];

const char *
remote_open_error(void)
{
	return remote_open_why;
}

void
remote_say(const struct remote *rc, bool warn, const char *fmt, ...)
{
	va_list ap;

	if (!warn && !rc->verbose)
		return;
	va_start(ap, fmt);
	fputs("ferry remote: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int
remote_fail(struct remote *rc, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(rc->error, sizeof(rc->error), fmt, ap);
	va_end(ap);
	return r;
}

const char *
remote_error(const struct remote *rc)
{
	return rc->error;
}

static bool
remote_has_cand(const struct remote *rc, const char *url)
{
	for (size_t i = 0; i < rc->n_cand; i++)
		if (strcmp(rc->cand[i], url) == 0)
			return true;
	return false;
}

static int
remote_add_cand(struct remote *rc, const char *url)
{
	if (remote_has_cand(rc, url) || rc->n_cand >= REMOTE_CAND_MAX)
		return 0;
	rc->cand[rc->n_cand] = strdup(url);
	if (rc->cand[rc->n_cand] == NULL)
		return -ENOMEM;
	rc->n_cand++;
	return 0;
}

bool
remote_is_bad(const struct remote *rc, const char *url)
{
	size_t n, ulen = strlen(url);
	char **lines;
	bool bad = false;

	if (remote_dir_lines(rc->dir, REMOTE_BAD_FILE, 1024, &lines, &n) < 0)
		return false;
	for (size_t i = 0; i < n && !bad; i++)
		bad = strncmp(lines[i], url, ulen) == 0 &&
		    (lines[i][ulen] == ' ' || lines[i][ulen] == '\0');
	remote_dir_lines_free(lines, n);
	return bad;
}

/* The order of trial: good named ones, good known ones, then those named
 * on the command line although remembered bad (the user asked). */
static int
remote_candidates(struct remote *rc, const struct remote_opts *o)
{
	char **known = NULL;
	size_t n_known = 0;
	int r;

	r = remote_dir_lines(rc->dir, REMOTE_KNOWN_FILE, REMOTE_CAND_MAX,
	    &known, &n_known);
	for (size_t i = 0; r == 0 && i < o->n_urls; i++)
		if (!remote_is_bad(rc, o->urls[i]))
			r = remote_add_cand(rc, o->urls[i]);
	for (size_t i = 0; r == 0 && i < n_known; i++)
		if (!remote_is_bad(rc, known[i]))
			r = remote_add_cand(rc, known[i]);
	for (size_t i = 0; r == 0 && i < o->n_urls; i++)
		r = remote_add_cand(rc, o->urls[i]);
	remote_dir_lines_free(known, n_known);
	return r;
}

int
remote_open(const struct remote_opts *o, struct remote **ret)
{
	uint8_t secret[STORAGE_SECRET_LEN];
	char path[4096 + 64];
	struct remote *rc;
	int r;

	remote_open_why[0] = '\0';
	if (sodium_init() < 0)
		return -ENOMEM;
	rc = calloc(1, sizeof(*rc));
	if (rc == NULL)
		return -ENOMEM;
	rc->replication =
	    o->replication ? o->replication : REMOTE_REPLICATION_DEFAULT;
	rc->lifetime_s =
	    o->lifetime_s ? o->lifetime_s : REMOTE_LIFETIME_DEFAULT;
	rc->receipt_wait_s =
	    o->receipt_wait_s ? o->receipt_wait_s : REMOTE_RECEIPT_WAIT_DEFAULT;
	rc->verify = o->verify;
	rc->verbose = o->verbose;
	r = remote_dir_open(o->dir, rc->dir, sizeof(rc->dir), remote_open_why,
	    sizeof(remote_open_why));
	if (r < 0)
		goto fail;
	/* The key and secret log their own refusals (modes, format). */
	(void)snprintf(path, sizeof(path), "%s/%s", rc->dir, REMOTE_KEY_FILE);
	r = identity_load_path(path, &rc->key);
	if (r == 0) {
		(void)snprintf(path, sizeof(path), "%s/%s", rc->dir,
		    REMOTE_SECRET_FILE);
		r = storage_secret_load(path, true, secret);
	}
	/* The daemon's defaults ([storage] ITERATIONS, its cipher choice),
	 * so that a file and secret give the URI ferry put gives. */
	if (r == 0)
		r = storage_codec_new(secret, STORAGE_ITERATIONS_DEFAULT,
		    aead_aes_fast(), &rc->codec);
	sodium_memzero(secret, sizeof(secret));
	if (r < 0) {
		(void)snprintf(remote_open_why, sizeof(remote_open_why),
		    "cannot use the client key or secret in %s", rc->dir);
		goto fail;
	}
	r = remote_http_new(o->cacert, o->timeout_s, &rc->http);
	if (r == 0)
		r = remote_candidates(rc, o);
	if (r < 0)
		goto fail;
	*ret = rc;
	return 0;
fail:
	remote_free(rc);
	return r;
}

void
remote_free(struct remote *rc)
{
	if (rc == NULL)
		return;
	remote_ack(rc);
	for (size_t i = 0; i < rc->n_cand; i++)
		free(rc->cand[i]);
	remote_http_free(rc->http);
	storage_codec_free(rc->codec);
	identity_free(rc->key);
	free(rc);
}

/* Adds the intermediaries another named to the known list. */
static void
remote_learn(struct remote *rc, const struct remote_imd *list, size_t n)
{
	char **known = NULL, **all;
	size_t n_known = 0, k;

	if (remote_dir_lines(rc->dir, REMOTE_KNOWN_FILE, REMOTE_CAND_MAX,
	        &known, &n_known) < 0)
		return;
	all = calloc(n_known + n + 1, sizeof(*all));
	if (all == NULL)
		goto out;
	for (k = 0; k < n_known; k++)
		all[k] = known[k];
	/* The one in use first, then what it knows. */
	for (size_t i = 0; i <= n && k < REMOTE_CAND_MAX; i++) {
		const char *url = i == 0 ? rc->url : list[i - 1].url;
		bool have = false;

		for (size_t j = 0; j < k && !have; j++)
			have = strcmp(all[j], url) == 0;
		if (!have)
			all[k++] = (char *)url;
		if (i > 0 && !remote_is_bad(rc, url))
			(void)remote_add_cand(rc, url);
	}
	if (k > n_known)
		(void)remote_dir_write_lines(rc->dir, REMOTE_KNOWN_FILE, all,
		    k);
	free(all);
out:
	remote_dir_lines_free(known, n_known);
}

int
remote_use(struct remote *rc, size_t i)
{
	struct remote_req rq = { .method = "GET",
		.target = "/v1/intermediaries" };
	struct remote_imd self, *list = NULL;
	struct remote_resp resp;
	size_t n = 0;
	int r;

	if (rc->known && rc->url == rc->cand[i])
		return 0;
	remote_ack(rc); /* to the one in use until now */
	rc->url = rc->cand[i];
	rc->known = false;
	r = remote_http_do(rc->http, rc->url, &rq, &resp);
	if (r < 0) {
		r = remote_fail(rc, r, "%s", remote_http_error(rc->http));
		goto out;
	}
	if (resp.status != 200) {
		r = remote_fail_status(rc, "GET /v1/intermediaries", &resp);
		goto out;
	}
	r = remote_json_imds((const char *)buf_head(&resp.body),
	    buf_size(&resp.body), &self, &list, &n);
	if (r < 0 ||
	    base32_decode(self.peer, strlen(self.peer), rc->imd,
	        sizeof(rc->imd)) < 0 ||
	    (resp.imd[0] != '\0' && strcmp(resp.imd, self.peer) != 0)) {
		r = remote_fail(rc, -EBADMSG,
		    "%s: GET /v1/intermediaries: a malformed answer", rc->url);
		goto out;
	}
	memcpy(rc->imd_str, self.peer, sizeof(rc->imd_str));
	rc->clock_off = resp.date >= 0 ? resp.date - (int64_t)time_real_s() : 0;
	remote_say(rc, false, "using %s (%.8s), clock offset %" PRId64 " s",
	    rc->url, rc->imd_str, rc->clock_off);
	remote_learn(rc, list, n);
	rc->known = true;
out:
	free(list);
	remote_resp_done(&resp);
	return r;
}

void
remote_mark_bad(struct remote *rc, const char *why)
{
	remote_mark_bad_url(rc, rc->url, why);
}

void
remote_mark_bad_url(struct remote *rc, const char *url, const char *why)
{
	char **lines = NULL, **all, *line = NULL;
	size_t n = 0;

	remote_say(rc, true, "%s: %s; it is remembered as bad in %s/%s", url,
	    why, rc->dir, REMOTE_BAD_FILE);
	if (remote_is_bad(rc, url) ||
	    remote_dir_lines(rc->dir, REMOTE_BAD_FILE, 1023, &lines, &n) < 0)
		return;
	all = calloc(n + 1, sizeof(*all));
	if (all != NULL &&
	    asprintf(&line, "%s %" PRIu64 " %s", url, time_real_s(), why) >=
	        0) {
		/* lines is NULL when there were none: no memcpy. */
		for (size_t i = 0; i < n; i++)
			all[i] = lines[i];
		all[n] = line;
		(void)remote_dir_write_lines(rc->dir, REMOTE_BAD_FILE, all,
		    n + 1);
	}
	free(line);
	free(all);
	remote_dir_lines_free(lines, n);
}

/* "Authorization: " and the longest value imdwire_auth_format() writes. */
#define REMOTE_AUTH_LINE "Authorization: "
#define REMOTE_AUTH_MAX  (sizeof(REMOTE_AUTH_LINE) - 1 + IMDWIRE_AUTH_MAX)

/* Signs rq for the intermediary in use, at our clock corrected by what
 * its last "stale" answer said, into the header line auth. */
static int
remote_sign(struct remote *rc, struct remote_req *rq, char *auth, size_t size)
{
	const size_t pre = sizeof(REMOTE_AUTH_LINE) - 1;
	uint8_t nonce[IMDWIRE_NONCE_LEN];
	int64_t now = (int64_t)time_real_s() + rc->clock_off;
	struct imdwire_auth a;
	int r;

	if (size <= pre)
		return -ENOSPC;
	randombytes_buf(nonce, sizeof(nonce));
	r = imdwire_auth_sign(rc->key, rc->imd, rq->method, rq->target,
	    now > 0 ? (uint64_t)now : 0, nonce, &a);
	if (r < 0)
		return r;
	memcpy(auth, REMOTE_AUTH_LINE, pre);
	rq->auth = auth;
	return imdwire_auth_format(&a, auth + pre, size - pre);
}

int
remote_request(struct remote *rc, struct remote_req *rq,
    struct remote_resp *resp)
{
	char auth[REMOTE_AUTH_MAX];
	int r;

	r = remote_sign(rc, rq, auth, sizeof(auth));
	if (r == 0)
		r = remote_http_do(rc->http, rc->url, rq, resp);
	if (r < 0 || resp->status != 401 || strcmp(resp->error, "stale") != 0)
		goto out;
	if (resp->date >= 0)
		rc->clock_off = resp->date - (int64_t)time_real_s();
	remote_say(rc, false, "%s: our clock is off by %" PRId64 " s", rc->url,
	    rc->clock_off);
	if (rq->read != NULL)
		goto out;
	remote_resp_done(resp);
	r = remote_sign(rc, rq, auth, sizeof(auth));
	if (r == 0)
		r = remote_http_do(rc->http, rc->url, rq, resp);
out:
	if (r < 0)
		(void)remote_fail(rc, r, "%s", remote_http_error(rc->http));
	rq->auth = NULL;
	return r;
}

int
remote_fail_status(struct remote *rc, const char *what,
    const struct remote_resp *resp)
{
	int r;

	switch (resp->status) {
	case 401:
	case 403:
		r = -EACCES;
		break;
	case 404:
		r = -ENOENT;
		break;
	case 408:
	case 504:
		r = -ETIMEDOUT;
		break;
	case 429:
	case 503:
		r = -EBUSY;
		break;
	default:
		r = -EPROTO;
		break;
	}
	return remote_fail(rc, r, "%s: %s: HTTP %ld%s%s", rc->url, what,
	    resp->status, resp->error[0] != '\0' ? " " : "", resp->error);
}

bool
remote_progress_due(struct remote_progress *pr, bool force)
{
	uint64_t now = time_mono_us();

	if (pr->fn == NULL || pr->ms == 0 ||
	    (!force && now - pr->last_us < pr->ms * 1000ull))
		return false;
	pr->last_us = now;
	return true;
}
