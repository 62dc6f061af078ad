/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The peer book: validated HELOs kept in <state>/peers.dat so that a
 * restarted daemon finds its peers again. Written atomically (temporary
 * file, fsync, rename); a damaged file is reported and set aside, never
 * trusted. Format: "FERRYPB1", then records {u64 valid_until (seconds
 * since the epoch), u16 length, HELO}. Core layer.
 */
#ifndef FERRY_CORE_PEERBOOK_H
#define FERRY_CORE_PEERBOOK_H

#include <stddef.h>
#include <stdint.h>

struct core;

#define PEERBOOK_FILE "peers.dat"
#define PEERBOOK_MAX_SIZE (16u * 1024 * 1024)

/* Restores the validated addresses on record. Returns how many. */
int peerbook_load(struct core *core);
/* Writes every validated address. 0 or negative errno (logged). */
int peerbook_save(struct core *core);
/*
 * Parses a peer book image: calls fn for each record, stops at the first
 * malformed one. Returns records seen, or -EBADMSG. (Fuzzed.)
 */
typedef int peerbook_record_fn(void *cls, uint64_t valid_until_s,
    const uint8_t *helo, size_t len);
int peerbook_parse(const uint8_t *buf, size_t len, peerbook_record_fn *fn,
    void *cls);

#endif /* FERRY_CORE_PEERBOOK_H */
