/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A growable byte buffer with a consumed prefix, for stream framing,
 * layer 0. The owner embeds it and calls buf_done().
 */
#ifndef FERRY_LIB_BUF_H
#define FERRY_LIB_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *data; /* allocation */
	size_t off;    /* bytes already consumed at the front */
	size_t len;    /* end of valid bytes, counted from data */
	size_t cap;    /* allocated size */
};

void buf_init(struct buf *b);
/* Frees the storage; the buffer is empty and reusable afterwards. */
void buf_done(struct buf *b);
/* Unconsumed bytes. */
static inline size_t
buf_size(const struct buf *b)
{
	return b->len - b->off;
}
/* The first unconsumed byte; NULL while nothing was ever allocated
 * (NULL + 0 is undefined behaviour). */
static inline uint8_t *
buf_head(const struct buf *b)
{
	return b->data != NULL ? b->data + b->off : NULL;
}
/* Ensures room for n more bytes; returns where they go, or NULL (OOM). */
uint8_t *buf_reserve(struct buf *b, size_t n);
/* Marks n bytes after the tail (written via buf_reserve) as valid. */
void buf_commit(struct buf *b, size_t n);
/* Appends n bytes. 0 or -ENOMEM. */
int buf_append(struct buf *b, const void *p, size_t n);
/* Drops n bytes from the front. */
void buf_consume(struct buf *b, size_t n);
/* Empties the buffer, keeping its storage. */
void buf_reset(struct buf *b);

#endif /* FERRY_LIB_BUF_H */
