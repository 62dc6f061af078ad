/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Link emulation for tests and benchmarks ([testing] in ferryd.conf):
 * one-way delay, jitter, random loss and a rate limit applied to the
 * units a transport sends, with libevent timers at the core/transport
 * boundary. The kernels ferry is tested on have no netem, so this is how
 * latency experiments run (DESIGN.md, "Test ground"). Off by default;
 * loudly logged when on. Core layer.
 */
#ifndef FERRY_CORE_LINKEMU_H
#define FERRY_CORE_LINKEMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfg;
struct emu_cfg;
struct event_base;
struct ferry_tsession;
struct linkemu;
struct transport;

/* A new emulator, or NULL when [testing] ENABLE is off (or on OOM, then
 * *ret_err is -ENOMEM). */
struct linkemu *linkemu_new(struct event_base *base, const struct emu_cfg *ec,
    const struct cfg *cfg, uint64_t *drop_counter, int *ret_err);
/* Frees queued units, dropping their session references. NULL is ok. */
void linkemu_free(struct linkemu *e);
/* Whether units of transport t go through the emulator. */
bool linkemu_applies(const struct linkemu *e, const struct transport *t);
/* Takes a unit (copied) to deliver to t later, or drops it by the loss
 * rate or when the emulated queue is full. Always 0: the emulated link
 * accepts everything, as a real network does. */
int linkemu_send(struct linkemu *e, struct transport *t,
    struct ferry_tsession *ts, const uint8_t *unit, size_t len, bool enc,
    uint32_t crc);
/* The transport reported ts gone: forget units queued for it. */
void linkemu_forget(struct linkemu *e, const struct ferry_tsession *ts);
/* The transport is being unloaded: forget its units. */
void linkemu_forget_transport(struct linkemu *e, const struct transport *t);

#endif /* FERRY_CORE_LINKEMU_H */
