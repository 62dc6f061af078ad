/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Clocks, layer 0: monotonic for timers and ages, real for the wire. */
#ifndef FERRY_LIB_TIME_H
#define FERRY_LIB_TIME_H

#include <stdint.h>

#define USEC_PER_MSEC 1000ull
#define USEC_PER_SEC 1000000ull

uint64_t time_mono_us(void);
uint64_t time_mono_ns(void);
/* Microseconds since the Unix epoch. */
uint64_t time_real_us(void);
static inline uint64_t
time_real_s(void)
{
	return time_real_us() / USEC_PER_SEC;
}

/* Fills a struct timeval for libevent from microseconds. */
struct timeval;
void time_us_to_tv(uint64_t us, struct timeval *tv);

#endif /* FERRY_LIB_TIME_H */
