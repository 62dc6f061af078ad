/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A token bucket, layer 0: `rate` events per second, bursts of `burst`. */
#ifndef FERRY_LIB_RATELIMIT_H
#define FERRY_LIB_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

struct ratelimit {
	double rate;	  /* tokens per second */
	double burst;	  /* bucket size */
	double tokens;	  /* current fill */
	uint64_t last_us; /* time of the last refill */
};

/* Starts full. */
void ratelimit_init(struct ratelimit *rl, double rate, double burst);
/* Takes n tokens if there are that many at now_us (monotonic). */
bool ratelimit_take(struct ratelimit *rl, uint64_t now_us, double n);

#endif /* FERRY_LIB_RATELIMIT_H */
