/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Growable byte buffer (see buf.h), layer 0. */
#include "lib/buf.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
buf_init(struct buf *b)
{
	memset(b, 0, sizeof(*b));
}

void
buf_done(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

uint8_t *
buf_reserve(struct buf *b, size_t n)
{
	size_t live = b->len - b->off;
	size_t cap;
	uint8_t *p;

	if (b->cap - b->len >= n)
		return b->data + b->len;
	/* Slide the live bytes down before growing: framing loops consume
	 * from the front and append at the back. */
	if (b->off > 0 && b->cap - live >= n) {
		memmove(b->data, b->data + b->off, live);
		b->off = 0;
		b->len = live;
		return b->data + b->len;
	}
	if (n > SIZE_MAX / 2 - live)
		return NULL;
	cap = b->cap ? b->cap : 256;
	while (cap < live + n)
		cap *= 2;
	p = malloc(cap);
	if (p == NULL)
		return NULL;
	if (live > 0)
		memcpy(p, b->data + b->off, live);
	free(b->data);
	b->data = p;
	b->cap = cap;
	b->off = 0;
	b->len = live;
	return b->data + b->len;
}

void
buf_commit(struct buf *b, size_t n)
{
	assert(b->cap - b->len >= n);
	b->len += n;
}

int
buf_append(struct buf *b, const void *p, size_t n)
{
	uint8_t *dst;

	if (n == 0)
		return 0;
	dst = buf_reserve(b, n);
	if (dst == NULL)
		return -ENOMEM;
	memcpy(dst, p, n);
	b->len += n;
	return 0;
}

void
buf_consume(struct buf *b, size_t n)
{
	assert(n <= b->len - b->off);
	b->off += n;
	if (b->off == b->len)
		b->off = b->len = 0;
}

void
buf_reset(struct buf *b)
{
	b->off = b->len = 0;
}
