/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A token bucket, layer 0: `rate` events per second, bursts of `burst`;
 * and one for log lines that says how many it held back. */
#ifndef FERRY_LIB_RATELIMIT_H
#define FERRY_LIB_RATELIMIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
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

/* A bucket of log lines that counts those it holds back, so that the
 * next line let through can say how many there were. */
struct ratelog {
	struct ratelimit rl; /* one token a line */
	uint64_t held;       /* lines held back since the last let through */
};

/* Starts full, with nothing held back. */
void ratelog_init(struct ratelog *rl, double rate, double burst);
/* Whether a line may be written at now_us. If so, formats it into buf
 * (size bytes, truncated to fit) followed by " (N more such lines
 * suppressed)" when N were held back since the last, and true; else
 * counts it held back, and false. */
bool ratelog_vformat(struct ratelog *rl, uint64_t now_us, char *buf,
    size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

#endif /* FERRY_LIB_RATELIMIT_H */
