/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry remote receipts and ferry remote intermediaries, remote client:
 * the client's receipt queue taken from an intermediary (each entry
 * shown once: the cursor is remembered, and acknowledged by the next
 * request), and the intermediaries of the federation.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* The first intermediary that answers. */
static int
remote_queue_use(struct remote *rc)
{
	int r = -EHOSTUNREACH;

	if (rc->n_cand == 0)
		return remote_fail(rc, -EHOSTUNREACH,
		    "no intermediary known: name one with --intermediary URL");
	for (size_t i = 0; i < rc->n_cand; i++) {
		r = remote_use(rc, i);
		if (r == 0)
			return 0;
		if (i + 1 < rc->n_cand)
			remote_say(rc, true, "%s; trying the next intermediary",
			    rc->error);
	}
	return r;
}

int
remote_take(struct remote *rc, uint64_t *cursor, unsigned wait, unsigned max,
    struct remote_entry **ret, size_t *ret_n, bool *more)
{
	char target[128];
	struct remote_req rq = { .method = "GET", .target = target };
	struct remote_resp resp;
	int r, n;

	for (int tries = 0;; tries++) {
		n = snprintf(target, sizeof(target),
		    "/v1/receipts?after=%" PRIu64 "&wait=%u", *cursor, wait);
		if (max > 0)
			(void)snprintf(target + n, sizeof(target) - (size_t)n,
			    "&max=%u", max);
		rq.timeout_s = wait + 30;
		r = remote_request(rc, &rq, &resp);
		if (r < 0)
			return r;
		if (resp.status != 400 || *cursor == 0 || tries > 0)
			break;
		remote_say(rc, true,
		    "%s does not know cursor %" PRIu64
		    " (its queue was lost?); taking it from the start",
		    rc->url, *cursor);
		remote_resp_done(&resp);
		*cursor = 0;
		(void)remote_dir_set_cursor(rc->dir, rc->imd_str, 0);
	}
	if (resp.status == 200)
		rc->ack_pending = false; /* after= acknowledged them */
	if (resp.status != 200)
		r = remote_fail_status(rc, "GET /v1/receipts", &resp);
	else if (remote_json_receipts((const char *)buf_head(&resp.body),
	             buf_size(&resp.body), cursor, more, ret, ret_n) < 0)
		r = remote_fail(rc, -EPROTO,
		    "%s: GET /v1/receipts: a malformed answer", rc->url);
	remote_resp_done(&resp);
	return r;
}

void
remote_ack(struct remote *rc)
{
	struct remote_entry *list = NULL;
	uint64_t cursor;
	bool more;
	size_t n;

	if (!rc->ack_pending)
		return;
	rc->ack_pending = false;
	/* One entry at most: the answer is the acknowledgement's cost. */
	cursor = remote_dir_cursor(rc->dir, rc->imd_str);
	if (remote_take(rc, &cursor, 0, 1, &list, &n, &more) == 0)
		free(list);
}

int
remote_receipts(struct remote *rc, remote_entry_fn *fn, void *cls)
{
	struct remote_entry *list = NULL;
	struct dhtkey storer;
	uint64_t cursor;
	bool more;
	size_t n = 1;
	int r;

	rc->error[0] = '\0';
	r = remote_queue_use(rc);
	if (r < 0)
		return r;
	cursor = remote_dir_cursor(rc->dir, rc->imd_str);
	/* Until a take that acknowledges all returns nothing. */
	while (n > 0) {
		r = remote_take(rc, &cursor, 0, 0, &list, &n, &more);
		if (r < 0)
			return r;
		/* Valid: an end of relay (the intermediary's word, not
		 * signed), or a receipt its storer signed. */
		for (size_t i = 0; i < n; i++)
			fn(cls, rc->url, &list[i],
			    list[i].done ||
			        remote_receipt_verify(&list[i], &storer) == 0);
		free(list);
		list = NULL;
		(void)remote_dir_set_cursor(rc->dir, rc->imd_str, cursor);
	}
	return 0;
}

/* Those remembered as bad that the answer did not list. */
static void
remote_queue_bad(struct remote *rc, const struct remote_imd *list, size_t n,
    remote_imd_fn *fn, void *cls)
{
	char **lines;
	size_t n_bad;

	if (remote_dir_lines(rc->dir, REMOTE_BAD_FILE, 1024, &lines, &n_bad) <
	    0)
		return;
	for (size_t i = 0; i < n_bad; i++) {
		struct remote_imd bad = { .bad = true };
		bool listed;

		lines[i][strcspn(lines[i], " ")] = '\0';
		listed = strcmp(lines[i], rc->url) == 0;
		for (size_t j = 0; j < n && !listed; j++)
			listed = strcmp(list[j].url, lines[i]) == 0;
		if (listed)
			continue;
		(void)snprintf(bad.url, sizeof(bad.url), "%s", lines[i]);
		fn(cls, &bad);
	}
	remote_dir_lines_free(lines, n_bad);
}

int
remote_intermediaries(struct remote *rc, remote_imd_fn *fn, void *cls)
{
	struct remote_req rq = { .method = "GET",
		.target = "/v1/intermediaries" };
	struct remote_imd self, *list = NULL;
	struct remote_resp resp;
	size_t n = 0;
	int r;

	rc->error[0] = '\0';
	r = remote_queue_use(rc);
	if (r < 0)
		return r;
	r = remote_http_do(rc->http, rc->url, &rq, &resp);
	if (r == 0 && resp.status == 200)
		r = remote_json_imds((const char *)buf_head(&resp.body),
		    buf_size(&resp.body), &self, &list, &n);
	else if (r == 0)
		r = remote_fail_status(rc, "GET /v1/intermediaries", &resp);
	remote_resp_done(&resp);
	if (r < 0)
		return r == -EBADMSG
		    ? remote_fail(rc, r, "%s: a malformed answer", rc->url)
		    : r;
	(void)snprintf(self.url, sizeof(self.url), "%s", rc->url);
	fn(cls, &self);
	for (size_t i = 0; i < n; i++) {
		list[i].bad = remote_is_bad(rc, list[i].url);
		fn(cls, &list[i]);
	}
	remote_queue_bad(rc, list, n, fn, cls);
	free(list);
	return 0;
}
