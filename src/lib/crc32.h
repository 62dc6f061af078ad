/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CRC-32 (IEEE 802.3), the paper's plaintext checksum field, layer 0. */
#ifndef FERRY_LIB_CRC32_H
#define FERRY_LIB_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc (start with 0) over len bytes. */
uint32_t crc32_update(uint32_t crc, const void *data, size_t len);

#endif /* FERRY_LIB_CRC32_H */
