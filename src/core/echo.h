/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Core-level round trips (ECHO_REQ / ECHO_RESP): `ferry ping` and the
 * round-trip benchmark measure the message layer with them. Core layer.
 */
#ifndef FERRY_CORE_ECHO_H
#define FERRY_CORE_ECHO_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

struct core;
struct peer;

/* Starts count sequential round trips; fn is called once, later. 0 or
 * -ENOMEM. */
int echo_start(struct peer *p, uint32_t count, uint16_t payload_len,
    uint32_t timeout_ms, core_echo_fn *fn, void *cls);
/* An ECHO_RESP body (nonce, payload) arrived from p. */
void echo_on_resp(struct peer *p, const uint8_t *body, size_t len);
/* Ends p's runs with status (they report what completed so far). */
void echo_cancel_peer(struct peer *p, int status);
/* Reports every run at once (-ECANCELED if unfinished) and frees them. */
void echo_shutdown(struct core *core);

#endif /* FERRY_CORE_ECHO_H */
