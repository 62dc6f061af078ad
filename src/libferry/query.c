/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's questions about the daemon: STATUS, PEERS, STATS and HELLO,
 * each decoded with every length checked before use.
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/wire.h"

void
ferry_status_free(struct ferry_status *st)
{
	if (st == NULL)
		return;
	for (size_t i = 0; i < st->n_transports; i++)
		free(st->transports[i].name);
	free(st->transports);
	free(st->version);
	free(st);
}

/* The transports after the fixed part and version of a STATUS frame. */
static int
lf_status_transports(struct ferry_status *st, const uint8_t *p, size_t left)
{
	for (size_t i = 0; i < st->n_transports; i++) {
		struct ferry_transport_info *ti = &st->transports[i];
		size_t nlen;

		if (left < FERRY_C_STATUS_TRANSPORT_FIXED)
			return -EPROTO;
		nlen = wire_get16(p + 2);
		if (left - FERRY_C_STATUS_TRANSPORT_FIXED < nlen)
			return -EPROTO;
		ti->protocol = wire_get16(p);
		ti->mtu = wire_get32(p + 4);
		ti->cost = wire_get32(p + 8);
		ti->name = lf_strndup(p + FERRY_C_STATUS_TRANSPORT_FIXED, nlen);
		if (ti->name == NULL)
			return -ENOMEM;
		p += FERRY_C_STATUS_TRANSPORT_FIXED + nlen;
		left -= FERRY_C_STATUS_TRANSPORT_FIXED + nlen;
	}
	return left == 0 ? 0 : -EPROTO;
}

/* STATUS: 4 req_id  8 id[32]  40 uptime_ms  48 n_transports
 *        50 version_len  52 version, transports */
static int
lf_status_reply(void *ctx, const struct lf_frame *f)
{
	struct ferry_status **ret = ctx, *st;
	size_t vlen, n;
	int r;

	if (f->type != FERRY_C_STATUS || f->size < FERRY_C_STATUS_FIXED)
		return -EPROTO;
	vlen = wire_get16(f->p + 50);
	n = wire_get16(f->p + 48);
	if ((size_t)f->size - FERRY_C_STATUS_FIXED < vlen)
		return -EPROTO;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return -ENOMEM;
	memcpy(st->id.bytes, f->p + 8, FERRY_PEER_ID_LEN);
	st->uptime_ms = wire_get64(f->p + 40);
	st->version = lf_strndup(f->p + FERRY_C_STATUS_FIXED, vlen);
	st->transports = calloc(n ? n : 1, sizeof(*st->transports));
	if (st->version == NULL || st->transports == NULL) {
		ferry_status_free(st);
		return -ENOMEM;
	}
	st->n_transports = n;
	r = lf_status_transports(st, f->p + FERRY_C_STATUS_FIXED + vlen,
	    f->size - FERRY_C_STATUS_FIXED - vlen);
	if (r < 0) {
		ferry_status_free(st);
		return r;
	}
	*ret = st;
	return 1;
}

int
ferry_status(struct ferry_client *c, struct ferry_status **ret)
{
	struct ferry_status *st = NULL;
	int r;

	if (c == NULL || ret == NULL)
		return -EINVAL;
	r = lf_request_simple(c, FERRY_C_STATUS_REQ, lf_status_reply, &st);
	if (r == 0 && st == NULL)
		r = -EPROTO; /* RESULT 0 instead of STATUS */
	if (r < 0) {
		ferry_status_free(st);
		return r;
	}
	*ret = st;
	return 0;
}

struct lf_list {
	void *items;         /* realloc'd array */
	size_t n, cap, size; /* count, capacity, item size */
};

static void *
lf_list_add(struct lf_list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *p = realloc(l->items, cap * l->size);

		if (p == NULL)
			return NULL;
		l->items = p;
		l->cap = cap;
	}
	return memset((char *)l->items + l->n++ * l->size, 0, l->size);
}

static size_t
lf_copy_str(char *dst, size_t size, const uint8_t *src, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return len;
}

/* PEER: 4 req_id  8 id[32]  40 age_ms  48 protocol  50 transport_len
 *      52 transport  address[] */
static int
lf_peer_reply(void *ctx, const struct lf_frame *f)
{
	struct ferry_peer_info *pi;
	size_t tlen;

	if (f->type != FERRY_C_PEER || f->size < FERRY_C_PEER_FIXED)
		return -EPROTO;
	tlen = wire_get16(f->p + 50);
	if ((size_t)f->size - FERRY_C_PEER_FIXED < tlen)
		return -EPROTO;
	pi = lf_list_add(ctx);
	if (pi == NULL)
		return -ENOMEM;
	memcpy(pi->id.bytes, f->p + 8, FERRY_PEER_ID_LEN);
	pi->age_ms = wire_get64(f->p + 40);
	pi->protocol = wire_get16(f->p + 48);
	(void)lf_copy_str(pi->transport, sizeof(pi->transport), f->p + 52,
	    tlen);
	(void)lf_copy_str(pi->address, sizeof(pi->address), f->p + 52 + tlen,
	    f->size - FERRY_C_PEER_FIXED - tlen);
	return 0;
}

int
ferry_peers(struct ferry_client *c, struct ferry_peer_info **ret, size_t *ret_n)
{
	struct lf_list l = { NULL, 0, 0, sizeof(struct ferry_peer_info) };
	int r;

	if (c == NULL || ret == NULL || ret_n == NULL)
		return -EINVAL;
	r = lf_request_simple(c, FERRY_C_PEERS_REQ, lf_peer_reply, &l);
	if (r < 0) {
		free(l.items);
		return r;
	}
	*ret = l.items;
	*ret_n = l.n;
	return 0;
}

void
ferry_peers_free(struct ferry_peer_info *peers)
{
	free(peers);
}

/* STAT: 4 req_id  8 value  16 name[] */
static int
lf_stat_reply(void *ctx, const struct lf_frame *f)
{
	struct ferry_stat *st;
	char *name;

	if (f->type != FERRY_C_STAT || f->size < FERRY_C_STAT_FIXED)
		return -EPROTO;
	name =
	    lf_strndup(f->p + FERRY_C_STAT_FIXED, f->size - FERRY_C_STAT_FIXED);
	if (name == NULL)
		return -ENOMEM;
	st = lf_list_add(ctx);
	if (st == NULL) {
		free(name);
		return -ENOMEM;
	}
	st->name = name;
	st->value = wire_get64(f->p + 8);
	return 0;
}

int
ferry_stats(struct ferry_client *c, struct ferry_stat **ret, size_t *ret_n)
{
	struct lf_list l = { NULL, 0, 0, sizeof(struct ferry_stat) };
	int r;

	if (c == NULL || ret == NULL || ret_n == NULL)
		return -EINVAL;
	r = lf_request_simple(c, FERRY_C_STATS_REQ, lf_stat_reply, &l);
	if (r < 0) {
		ferry_stats_free(l.items, l.n);
		return r;
	}
	*ret = l.items;
	*ret_n = l.n;
	return 0;
}

void
ferry_stats_free(struct ferry_stat *stats, size_t n)
{
	if (stats == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(stats[i].name);
	free(stats);
}

/* HELLO: 4 req_id  8 uri[] */
static int
lf_hello_reply(void *ctx, const struct lf_frame *f)
{
	char **ret = ctx;

	if (f->type != FERRY_C_HELLO || *ret != NULL)
		return -EPROTO;
	*ret = lf_strndup(f->p + 8, f->size - 8);
	return *ret != NULL ? 1 : -ENOMEM;
}

int
ferry_hello(struct ferry_client *c, char **ret_uri)
{
	char *uri = NULL;
	int r;

	if (c == NULL || ret_uri == NULL)
		return -EINVAL;
	r = lf_request_simple(c, FERRY_C_HELLO_REQ, lf_hello_reply, &uri);
	if (r == 0 && uri == NULL)
		r = -EPROTO;
	if (r < 0) {
		free(uri);
		return r;
	}
	*ret_uri = uri;
	return 0;
}
