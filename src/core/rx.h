/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The receive side of the core (rx.c): the transport hooks, and the one
 * splitter every {u16 size, u16 type} sequence goes through. Core layer.
 */
#ifndef FERRY_CORE_RX_H
#define FERRY_CORE_RX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Reads the message at *off of buf (len bytes) and advances *off past
 * it. Returns 1 with type, pointer and size (header included) set, 0 at
 * the end, -EBADMSG if what is left is not a whole message (size below 4
 * or beyond the end).
 */
int rx_next(const uint8_t *buf, size_t len, size_t *off, uint16_t *ret_type,
    const uint8_t **ret_msg, size_t *ret_size);

#endif /* FERRY_CORE_RX_H */
