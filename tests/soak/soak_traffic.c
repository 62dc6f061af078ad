/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The soak's traffic (see soak.h): small messages at a steady rate and an
 * occasional large one that the core fragments, each between a random
 * pair of available daemons, numbered and filled with bytes derived from
 * its number so that the receiver can check every byte.
 */
#include "soak.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#define SOAK_CLIENT_TIMEOUT_MS 5000
#define SOAK_MAX_LAG_MS        1000 /* a late loop skips, never bursts */

static void
soak_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
soak_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* The bytes after the header: a xorshift stream seeded by seq. */
static uint64_t
soak_fill_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void
soak_fill(uint8_t *p, size_t len, uint32_t seq)
{
	uint64_t x = ((uint64_t)seq << 1 | 1) * 0x9E3779B97F4A7C15ULL;
	size_t i = SOAK_HDR;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = soak_fill_next(&x);

		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = soak_fill_next(&x);

		memcpy(p + i, &v, len - i);
	}
}

static bool
soak_fill_ok(const uint8_t *p, size_t len, uint32_t seq)
{
	uint64_t x = ((uint64_t)seq << 1 | 1) * 0x9E3779B97F4A7C15ULL;
	size_t i = SOAK_HDR;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = soak_fill_next(&x);

		if (memcmp(p + i, &v, 8) != 0)
			return false;
	}
	if (i < len) {
		uint64_t v = soak_fill_next(&x);

		return memcmp(p + i, &v, len - i) == 0;
	}
	return true;
}

int
soak_traffic_open(struct soak_daemon *d)
{
	uint16_t type = SOAK_APP_TYPE;
	int r;

	soak_traffic_close(d);
	r = harness_daemon_client(d->hd, &d->tx);
	if (r < 0)
		return r;
	ferry_client_set_timeout(d->tx, SOAK_CLIENT_TIMEOUT_MS);
	r = harness_daemon_client(d->hd, &d->rx);
	if (r == 0) {
		ferry_client_set_timeout(d->rx, SOAK_CLIENT_TIMEOUT_MS);
		r = ferry_register(d->rx, &type, 1);
	}
	if (r < 0)
		soak_traffic_close(d);
	return r;
}

void
soak_traffic_close(struct soak_daemon *d)
{
	ferry_client_close(d->tx);
	ferry_client_close(d->rx);
	d->tx = NULL;
	d->rx = NULL;
}

/* Two distinct available daemons; false if there are not two. */
static bool
soak_pick_pair(struct soak *s, struct soak_daemon **src,
    struct soak_daemon **dst)
{
	unsigned avail[SOAK_MAX_DAEMONS], n = 0, a, b;

	for (unsigned i = 0; i < s->o.n; i++)
		if (soak_available(&s->d[i]))
			avail[n++] = i;
	if (n < 2)
		return false;
	a = (unsigned)soak_rand(s, 0, n - 1);
	b = (unsigned)soak_rand(s, 0, n - 2);
	if (b >= a)
		b++;
	*src = &s->d[avail[a]];
	*dst = &s->d[avail[b]];
	return true;
}

static void
soak_send_one(struct soak *s, uint64_t now, uint32_t len)
{
	struct soak_daemon *src, *dst;
	struct soak_msg *m;
	uint32_t seq;
	int r;

	if (!soak_pick_pair(s, &src, &dst))
		return;
	if (soak_grow((void **)&s->msgs, &s->cap_msgs, s->n_msgs,
	        sizeof(*s->msgs)) < 0) {
		s->failed = true;
		return;
	}
	seq = (uint32_t)s->n_msgs;
	soak_put32(s->buf, SOAK_MAGIC);
	soak_put32(s->buf + 4, seq);
	soak_put32(s->buf + 8, src->idx << 16 | dst->idx);
	soak_put32(s->buf + 12, len);
	soak_fill(s->buf, len, seq);
	m = &s->msgs[s->n_msgs++];
	memset(m, 0, sizeof(*m));
	m->sent_ms = now;
	m->len = len;
	m->src = (uint8_t)src->idx;
	m->dst = (uint8_t)dst->idx;
	r = ferry_send_confirmed(src->tx, &dst->hd->id, SOAK_APP_TYPE, s->buf,
	    len);
	if (r == 0) {
		m->status = SOAK_MSG_SENT;
		return;
	}
	m->status = SOAK_MSG_REFUSED;
	m->send_err = (int8_t)(r < -127 ? -127 : r);
	soak_event(s, now, "send #%u d%u -> d%u (%u bytes) refused: %s", seq,
	    src->idx, dst->idx, len, strerror(-r));
}

void
soak_traffic_send(struct soak *s, uint64_t now)
{
	uint64_t step = s->o.small_per_s > 0 ? 1000000 / s->o.small_per_s : 0;
	uint64_t now_us = (now - s->t0_ms) * 1000;

	/* Due times in microseconds keep the average of rates that do not
	 * divide 1000. */
	if (step > 0) {
		if (now_us > s->small_due_us + SOAK_MAX_LAG_MS * 1000)
			s->small_due_us = now_us;
		while (s->small_due_us <= now_us) {
			soak_send_one(s, now,
			    (uint32_t)soak_rand(s, SOAK_HDR, s->o.small_max));
			s->small_due_us += step;
		}
		s->next_small_ms = s->t0_ms + s->small_due_us / 1000;
	} else {
		s->next_small_ms = UINT64_MAX;
	}
	if (s->o.big_every_ms > 0 && now >= s->next_big_ms) {
		soak_send_one(s, now,
		    (uint32_t)soak_rand(s, s->o.big_min, s->o.big_max));
		s->next_big_ms = now + s->o.big_every_ms;
	}
}

/* Checks one arrival at daemon d against what was sent. */
static void
soak_take(struct soak *s, struct soak_daemon *d, const struct ferry_message *m,
    uint64_t now)
{
	struct soak_msg *sm;
	uint32_t seq, ends;

	if (m->type != SOAK_APP_TYPE || m->len < SOAK_HDR ||
	    soak_get32(m->data) != SOAK_MAGIC) {
		s->strays++;
		return;
	}
	seq = soak_get32(m->data + 4);
	ends = soak_get32(m->data + 8);
	if (seq >= s->n_msgs || (ends & 0xffff) != d->idx ||
	    (ends >> 16) >= s->o.n ||
	    memcmp(&m->peer, &s->d[ends >> 16].hd->id, sizeof(m->peer)) != 0) {
		s->strays++;
		return;
	}
	sm = &s->msgs[seq];
	if (sm->status == SOAK_MSG_DELIVERED ||
	    sm->status == SOAK_MSG_CORRUPT) {
		s->dups++;
		soak_event(s, now, "duplicate #%u d%u -> d%u", seq, sm->src,
		    sm->dst);
		return;
	}
	sm->recv_ms = now;
	if (m->len == sm->len && soak_get32(m->data + 12) == sm->len &&
	    soak_fill_ok(m->data, m->len, seq)) {
		sm->status = SOAK_MSG_DELIVERED;
		return;
	}
	sm->status = SOAK_MSG_CORRUPT;
	soak_event(s, now, "CORRUPT #%u d%u -> d%u: %zu bytes, sent %u", seq,
	    sm->src, sm->dst, m->len, sm->len);
}

static void
soak_drain(struct soak *s, struct soak_daemon *d)
{
	struct ferry_message m;
	int r;

	while ((r = ferry_receive(d->rx, &m, 0)) == 0)
		soak_take(s, d, &m, harness_now_ms());
	if (r == -ETIMEDOUT)
		return;
	/* The daemon went away (an exit shows in soak_check_exits) or
	 * broke the protocol: either way, start over with new clients. */
	soak_event(s, harness_now_ms(), "d%u: listener: %s", d->idx,
	    strerror(-r));
	if (soak_traffic_open(d) < 0)
		soak_traffic_close(d);
}

void
soak_traffic_poll(struct soak *s, int timeout_ms)
{
	struct pollfd pfd[SOAK_MAX_DAEMONS];
	unsigned who[SOAK_MAX_DAEMONS], n = 0;

	for (unsigned i = 0; i < s->o.n; i++) {
		if (s->d[i].rx == NULL)
			continue;
		pfd[n].fd = ferry_client_fd(s->d[i].rx);
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		who[n++] = i;
	}
	if (poll(pfd, n, timeout_ms) <= 0)
		return;
	for (unsigned k = 0; k < n; k++)
		if (pfd[k].revents != 0 && s->d[who[k]].rx != NULL)
			soak_drain(s, &s->d[who[k]]);
}

/* True if d was unavailable at some time in [from, to]. */
static bool
soak_was_away(const struct soak_daemon *d, uint64_t from, uint64_t to)
{
	for (size_t i = 0; i < d->n_spans; i++)
		if (d->spans[i].from_ms <= to && d->spans[i].to_ms >= from)
			return true;
	return false;
}

bool
soak_msg_eligible(const struct soak *s, const struct soak_msg *m)
{
	uint64_t to = m->sent_ms + s->o.msg_timeout_ms;

	if (m->status == SOAK_MSG_DELIVERED || m->status == SOAK_MSG_CORRUPT)
		return true;
	return !soak_was_away(&s->d[m->src], m->sent_ms, to) &&
	    !soak_was_away(&s->d[m->dst], m->sent_ms, to);
}
