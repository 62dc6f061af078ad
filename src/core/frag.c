/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fragment codec and reassembly (see frag.h), core layer. */
#include "core/frag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ferry/proto.h>

#include "lib/wire.h"

int
frag_decode(const void *msg, size_t len, struct frag *ret)
{
	const uint8_t *p = msg;

	if (len <= FRAG_HDR || wire_get16(p) != len ||
	    wire_get16(p + 2) != FERRY_MSG_FRAG)
		return -EBADMSG;
	ret->msg_id = wire_get32(p + 4);
	ret->total = wire_get32(p + 8);
	ret->off = wire_get32(p + 12);
	ret->type = wire_get16(p + 16);
	ret->data = p + FRAG_HDR;
	ret->len = (uint32_t)(len - FRAG_HDR);
	if (ret->total == 0 || ret->total > FERRY_APP_MSG_MAX ||
	    ret->off >= ret->total || ret->len > ret->total - ret->off ||
	    wire_get16(p + 18) != 0)
		return -EBADMSG;
	return 0;
}

void
frag_write_header(uint8_t *out, uint32_t msg_id, uint32_t total, uint32_t off,
    uint16_t type, uint32_t len)
{
	wire_put_hdr(out, (uint16_t)(FRAG_HDR + (size_t)len), FERRY_MSG_FRAG);
	wire_put32(out + 4, msg_id);
	wire_put32(out + 8, total);
	wire_put32(out + 12, off);
	wire_put16(out + 16, type);
	wire_put16(out + 18, 0);
}

size_t
frag_write(uint8_t *out, uint32_t msg_id, uint32_t total, uint32_t off,
    uint16_t type, const uint8_t *data, uint32_t len)
{
	frag_write_header(out, msg_id, total, off, type, len);
	memcpy(out + FRAG_HDR, data, len);
	return FRAG_HDR + (size_t)len;
}

void
reasm_init(struct reasm_set *rs)
{
	memset(rs, 0, sizeof(*rs));
	TAILQ_INIT(&rs->list);
}

static void
reasm_drop(struct reasm_set *rs, struct reasm_budget *b, struct reasm *m)
{
	TAILQ_REMOVE(&rs->list, m, link);
	rs->bytes -= m->total;
	b->used -= m->total;
	free(m->buf);
	free(m->ranges);
	free(m);
}

void
reasm_clear(struct reasm_set *rs, struct reasm_budget *b)
{
	while (!TAILQ_EMPTY(&rs->list))
		reasm_drop(rs, b, TAILQ_FIRST(&rs->list));
}

static bool
reasm_was_done(const struct reasm_set *rs, uint32_t msg_id)
{
	for (unsigned i = 0; i < rs->done_n; i++)
		if (rs->done[i] == msg_id)
			return true;
	return false;
}

static struct reasm *
reasm_start(struct reasm_set *rs, struct reasm_budget *b,
    uint64_t per_peer_limit, const struct frag *f, uint64_t now_us)
{
	struct reasm *m;

	if (rs->bytes + f->total > per_peer_limit ||
	    b->used + f->total > b->limit)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->buf = malloc(f->total);
	m->cap_ranges = 8;
	m->ranges = malloc(m->cap_ranges * sizeof(*m->ranges));
	if (m->buf == NULL || m->ranges == NULL) {
		free(m->buf);
		free(m->ranges);
		free(m);
		return NULL;
	}
	m->msg_id = f->msg_id;
	m->type = f->type;
	m->total = f->total;
	m->last_us = now_us;
	TAILQ_INSERT_TAIL(&rs->list, m, link);
	rs->bytes += f->total;
	b->used += f->total;
	return m;
}

/*
 * Merges [lo, hi) into the sorted range list and returns how many bytes
 * were new, or -ERANGE if the list would grow past REASM_MAX_RANGES.
 */
static long
reasm_merge(struct reasm *m, uint32_t lo, uint32_t hi)
{
	unsigned i = 0, j;
	uint32_t nlo = lo, nhi = hi;
	uint64_t covered = 0;

	while (i < m->n_ranges && m->ranges[i][1] < lo)
		i++;
	/* Ranges i..j-1 touch or overlap [lo, hi): fold them in. */
	for (j = i; j < m->n_ranges && m->ranges[j][0] <= hi; j++) {
		uint32_t olo = m->ranges[j][0] > lo ? m->ranges[j][0] : lo;
		uint32_t ohi = m->ranges[j][1] < hi ? m->ranges[j][1] : hi;

		if (ohi > olo)
			covered += ohi - olo;
		if (m->ranges[j][0] < nlo)
			nlo = m->ranges[j][0];
		if (m->ranges[j][1] > nhi)
			nhi = m->ranges[j][1];
	}
	if (j == i) {
		if (m->n_ranges == REASM_MAX_RANGES)
			return -ERANGE;
		if (m->n_ranges == m->cap_ranges) {
			unsigned cap = m->cap_ranges * 2;
			uint32_t(*r)[2] = realloc(m->ranges, cap * sizeof(*r));

			if (r == NULL)
				return -ENOMEM;
			m->ranges = r;
			m->cap_ranges = cap;
		}
		memmove(&m->ranges[i + 1], &m->ranges[i],
		    (m->n_ranges - i) * sizeof(*m->ranges));
		m->n_ranges++;
	} else if (j > i + 1) {
		memmove(&m->ranges[i + 1], &m->ranges[j],
		    (m->n_ranges - j) * sizeof(*m->ranges));
		m->n_ranges -= j - i - 1;
	}
	m->ranges[i][0] = nlo;
	m->ranges[i][1] = nhi;
	return (long)((hi - lo) - covered);
}

int
reasm_add(struct reasm_set *rs, struct reasm_budget *b,
    uint64_t per_peer_limit, const struct frag *f, uint64_t now_us,
    uint8_t **ret_buf, size_t *ret_len, uint16_t *ret_type)
{
	struct reasm *m;
	long fresh;

	if (reasm_was_done(rs, f->msg_id))
		return 0;
	TAILQ_FOREACH(m, &rs->list, link)
		if (m->msg_id == f->msg_id)
			break;
	if (m == NULL) {
		m = reasm_start(rs, b, per_peer_limit, f, now_us);
		if (m == NULL)
			return -ENOSPC;
	} else if (m->total != f->total || m->type != f->type) {
		reasm_drop(rs, b, m);
		return -EBADMSG;
	}
	fresh = reasm_merge(m, f->off, f->off + f->len);
	if (fresh < 0) {
		reasm_drop(rs, b, m);
		return (int)fresh;
	}
	/* Copy every byte even if some were seen: a duplicate carries the
	 * same bytes (frames authenticate), so this is only simpler. */
	memcpy(m->buf + f->off, f->data, f->len);
	m->got += (uint32_t)fresh;
	if (fresh > 0)
		m->last_us = now_us;
	if (m->got < m->total)
		return 0;
	*ret_buf = m->buf;
	*ret_len = m->total;
	*ret_type = m->type;
	m->buf = NULL;
	rs->done[rs->done_pos] = m->msg_id;
	rs->done_pos = (rs->done_pos + 1) % REASM_DONE_RING;
	if (rs->done_n < REASM_DONE_RING)
		rs->done_n++;
	reasm_drop(rs, b, m);
	return 1;
}

unsigned
reasm_expire(struct reasm_set *rs, struct reasm_budget *b, uint64_t now_us,
    uint64_t timeout_us)
{
	struct reasm *m, *tmp;
	unsigned n = 0;

	for (m = TAILQ_FIRST(&rs->list); m != NULL; m = tmp) {
		tmp = TAILQ_NEXT(m, link);
		if (now_us - m->last_us > timeout_us) {
			reasm_drop(rs, b, m);
			n++;
		}
	}
	return n;
}

