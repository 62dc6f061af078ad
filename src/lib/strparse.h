/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Parsers for config values, layer 0. Each returns 0 and writes *ret, or
 * -EINVAL (malformed) / -ERANGE (outside [min, max]) and leaves it alone.
 */
#ifndef FERRY_LIB_STRPARSE_H
#define FERRY_LIB_STRPARSE_H

#include <stdbool.h>
#include <stdint.h>

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret);
/* yes/no, true/false, on/off, 1/0; any case. */
int parse_bool(const char *s, bool *ret);
/* "1500", "64 KiB", "4MiB", "1 GB" (KB=1000, KiB=1024). */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *ret);
/* "250 us", "100 ms", "5 s", "2 min", "1 h", "1 d"; a bare number is
 * seconds (systemd's rule). Result in microseconds. */
int parse_duration(const char *s, uint64_t min, uint64_t max, uint64_t *ret);
/* "0.05" or "5%"; a fraction in [min, max]. */
int parse_fraction(const char *s, double min, double max, double *ret);

#endif /* FERRY_LIB_STRPARSE_H */
