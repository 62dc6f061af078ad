/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The JSON bodies an intermediary answers, remote client
 * (ferry-intermediary(7) REQUESTS), parsed with json-c. They are an
 * intermediary's words: every member's type, base32 length and range is
 * checked, and a body that breaks the page is -EBADMSG as a whole.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/base32.h"

#define REMOTE_JSON_LIST_MAX 100000 /* entries of one list we accept */

/* body parsed as one JSON value, or NULL. */
static struct json_object *
remote_json_parse(const char *body, size_t len)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (len > REMOTE_BODY_MAX || len > INT32_MAX)
		return NULL;
	tok = json_tokener_new();
	if (tok == NULL)
		return NULL;
	o = json_tokener_parse_ex(tok, body, (int)len);
	/* Nothing but white space may follow the value. */
	if (o != NULL && json_tokener_get_error(tok) == json_tokener_success) {
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
			if (strchr(" \t\r\n", body[i]) == NULL) {
				json_object_put(o);
				o = NULL;
				break;
			}
	} else if (o != NULL) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static const char *
remote_json_str(struct json_object *o, const char *name)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, name, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* An unsigned integer member into *ret. */
static int
remote_json_uint(struct json_object *o, const char *name, uint64_t *ret)
{
	struct json_object *v;
	int64_t i;

	if (!json_object_object_get_ex(o, name, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -EBADMSG;
	/* json-c keeps integers past INT64_MAX as unsigned. */
	if (json_object_get_int64(v) == INT64_MAX) {
		*ret = json_object_get_uint64(v);
		return 0;
	}
	i = json_object_get_int64(v);
	if (i < 0)
		return -EBADMSG;
	*ret = (uint64_t)i;
	return 0;
}

/* A base32 member of exactly len bytes into out. */
static int
remote_json_b32(struct json_object *o, const char *name, void *out, size_t len)
{
	const char *s = remote_json_str(o, name);

	if (s == NULL || strlen(s) != BASE32_LEN(len))
		return -EBADMSG;
	return base32_decode(s, strlen(s), out, len) < 0 ? -EBADMSG : 0;
}

/* A short string member copied into buf. */
static int
remote_json_copy(struct json_object *o, const char *name, char *buf,
    size_t size)
{
	const char *s = remote_json_str(o, name);

	if (s == NULL || strlen(s) >= size)
		return -EBADMSG;
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

/* The array member name, or NULL. */
static struct json_object *
remote_json_array(struct json_object *o, const char *name, size_t *n)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, name, &v) ||
	    !json_object_is_type(v, json_type_array))
		return NULL;
	*n = json_object_array_length(v);
	return *n <= REMOTE_JSON_LIST_MAX ? v : NULL;
}

static int
remote_json_imd(struct json_object *o, struct remote_imd *imd, bool self)
{
	uint8_t id[32];

	memset(imd, 0, sizeof(*imd));
	if (!json_object_is_type(o, json_type_object) ||
	    remote_json_b32(o, "peer", id, sizeof(id)) < 0 ||
	    remote_json_copy(o, "peer", imd->peer, sizeof(imd->peer)) < 0 ||
	    remote_json_copy(o, "url", imd->url, sizeof(imd->url)) < 0)
		return -EBADMSG;
	/* Another's URL is where this client may go next: HTTPS only. Its
	 * own is only shown (empty when it announces none). */
	if (!self && strncmp(imd->url, "https://", 8) != 0)
		return -EBADMSG;
	imd->self = self;
	return self ? 0 : remote_json_uint(o, "expires", &imd->expires);
}

int
remote_json_imds(const char *body, size_t len, struct remote_imd *self,
    struct remote_imd **ret, size_t *ret_n)
{
	struct json_object *o = remote_json_parse(body, len), *self_o, *arr;
	struct remote_imd *list = NULL;
	size_t n = 0;
	int r = -EBADMSG;

	if (o == NULL || !json_object_object_get_ex(o, "self", &self_o) ||
	    remote_json_imd(self_o, self, true) < 0 ||
	    (arr = remote_json_array(o, "intermediaries", &n)) == NULL)
		goto out;
	list = calloc(n > 0 ? n : 1, sizeof(*list));
	if (list == NULL) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (remote_json_imd(json_object_array_get_idx(arr, i), &list[i],
		        false) < 0)
			goto out;
	*ret = list;
	*ret_n = n;
	list = NULL;
	r = 0;
out:
	free(list);
	json_object_put(o);
	return r;
}

static int
remote_json_entry(struct json_object *o, struct remote_entry *e)
{
	const char *type;
	uint64_t n;

	memset(e, 0, sizeof(*e));
	if (!json_object_is_type(o, json_type_object) ||
	    (type = remote_json_str(o, "type")) == NULL ||
	    remote_json_uint(o, "cursor", &e->cursor) < 0 ||
	    remote_json_b32(o, "key", e->key, sizeof(e->key)) < 0 ||
	    remote_json_b32(o, "put_hash", e->put_hash, sizeof(e->put_hash)) <
	        0)
		return -EBADMSG;
	if (strcmp(type, "receipt") == 0)
		return remote_json_b32(o, "storer", e->storer_pk,
		           sizeof(e->storer_pk)) < 0 ||
		        remote_json_b32(o, "sig", e->sig, sizeof(e->sig)) < 0 ||
		        remote_json_uint(o, "expiry", &e->expiry) < 0
		    ? -EBADMSG
		    : 0;
	if (strcmp(type, "done") != 0 ||
	    remote_json_copy(o, "status", e->status, sizeof(e->status)) < 0 ||
	    remote_json_uint(o, "receipts", &n) < 0 || n > UINT32_MAX)
		return -EBADMSG;
	e->done = true;
	e->receipts = (uint32_t)n;
	return 0;
}

int
remote_json_receipts(const char *body, size_t len, uint64_t *cursor, bool *more,
    struct remote_entry **ret, size_t *ret_n)
{
	struct json_object *o = remote_json_parse(body, len), *arr, *m;
	struct remote_entry *list = NULL;
	uint64_t c, prev;
	size_t n = 0;
	int r = -EBADMSG;

	if (o == NULL || remote_json_uint(o, "cursor", &c) < 0 ||
	    !json_object_object_get_ex(o, "more", &m) ||
	    !json_object_is_type(m, json_type_boolean) ||
	    (arr = remote_json_array(o, "entries", &n)) == NULL)
		goto out;
	list = calloc(n > 0 ? n : 1, sizeof(*list));
	if (list == NULL) {
		r = -ENOMEM;
		goto out;
	}
	/* Oldest first, each cursor past the one before, the page's cursor
	 * the last one's: what the client acknowledges is what it saw. */
	prev = 0;
	for (size_t i = 0; i < n; i++) {
		if (remote_json_entry(json_object_array_get_idx(arr, i),
		        &list[i]) < 0 ||
		    list[i].cursor <= prev)
			goto out;
		prev = list[i].cursor;
	}
	if (n > 0 && c != prev)
		goto out;
	*cursor = c;
	*more = json_object_get_boolean(m);
	*ret = list;
	*ret_n = n;
	list = NULL;
	r = 0;
out:
	free(list);
	json_object_put(o);
	return r;
}

int
remote_json_relays(const char *body, size_t len, struct remote_relay **ret,
    size_t *ret_n)
{
	struct json_object *o = remote_json_parse(body, len), *arr, *e;
	struct remote_relay *list = NULL;
	size_t n = 0;
	int r = -EBADMSG;

	if (o == NULL || (arr = remote_json_array(o, "records", &n)) == NULL)
		goto out;
	list = calloc(n > 0 ? n : 1, sizeof(*list));
	if (list == NULL) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		e = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(e, json_type_object) ||
		    remote_json_b32(e, "key", list[i].key, 32) < 0 ||
		    remote_json_b32(e, "put_hash", list[i].put_hash, 32) < 0 ||
		    remote_json_copy(e, "status", list[i].status,
		        sizeof(list[i].status)) < 0)
			goto out;
	}
	*ret = list;
	*ret_n = n;
	list = NULL;
	r = 0;
out:
	free(list);
	json_object_put(o);
	return r;
}

void
remote_json_error(const char *body, size_t len, char *token, size_t size)
{
	struct json_object *o = remote_json_parse(body, len);

	*token = '\0';
	if (o != NULL && json_object_is_type(o, json_type_object) &&
	    remote_json_copy(o, "error", token, size) < 0)
		*token = '\0';
	json_object_put(o);
}
