/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What a fuzz target does with the bytes a decoder hands back: reads
 * every one, so that a pointer or length past the input or past an
 * allocation shows under ASan and valgrind, and keeps the result in a
 * volatile sink so that the compiler cannot drop the reads.
 */
#ifndef FERRY_FUZZ_TOUCH_H
#define FERRY_FUZZ_TOUCH_H

#include <stddef.h>
#include <stdint.h>

static volatile uint8_t fuzz_sink;

static inline void
fuzz_touch(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t acc = 0;

	for (size_t i = 0; i < len; i++)
		acc ^= b[i];
	fuzz_sink = acc;
}

#endif /* FERRY_FUZZ_TOUCH_H */
