/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CRC-32 with a 256-entry table built on first use (see crc32.h). */
#include "lib/crc32.h"

#include <stdbool.h>

static uint32_t crc32_table[256];
static bool crc32_ready;

static void
crc32_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc32_table[i] = c;
	}
	crc32_ready = true;
}

uint32_t
crc32_update(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (!crc32_ready)
		crc32_init();
	crc = ~crc;
	while (len-- > 0)
		crc = crc32_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
