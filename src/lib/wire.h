/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Big-endian integer access for wire formats, layer 0. Never cast a
 * buffer to a struct: read fields with these, after checking the length.
 */
#ifndef FERRY_LIB_WIRE_H
#define FERRY_LIB_WIRE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t
wire_get16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)((uint16_t)b[0] << 8 | b[1]);
}

static inline uint32_t
wire_get32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	    (uint32_t)b[2] << 8 | b[3];
}

static inline uint64_t
wire_get64(const void *p)
{
	const uint8_t *b = p;

	return (uint64_t)wire_get32(b) << 32 | wire_get32(b + 4);
}

static inline void
wire_put16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static inline void
wire_put32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static inline void
wire_put64(void *p, uint64_t v)
{
	uint8_t *b = p;

	wire_put32(b, (uint32_t)(v >> 32));
	wire_put32(b + 4, (uint32_t)v);
}

/* Writes the common {u16 size, u16 type} header. */
static inline void
wire_put_hdr(void *p, uint16_t size, uint16_t type)
{
	uint8_t *b = p;

	wire_put16(b, size);
	wire_put16(b + 2, type);
}

#endif /* FERRY_LIB_WIRE_H */
