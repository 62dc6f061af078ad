/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Clocks (see time.h), layer 0. */
#include "lib/time.h"

#include <sys/time.h>
#include <time.h>

uint64_t
time_mono_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
time_mono_us(void)
{
	return time_mono_ns() / 1000;
}

uint64_t
time_real_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

void
time_us_to_tv(uint64_t us, struct timeval *tv)
{
	tv->tv_sec = (time_t)(us / USEC_PER_SEC);
	tv->tv_usec = (suseconds_t)(us % USEC_PER_SEC);
}
