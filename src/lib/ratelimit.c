/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Token bucket (see ratelimit.h), layer 0. */
#include "lib/ratelimit.h"

#include <stdio.h>

void
ratelimit_init(struct ratelimit *rl, double rate, double burst)
{
	rl->rate = rate;
	rl->burst = burst;
	rl->tokens = burst;
	rl->last_us = 0;
}

bool
ratelimit_take(struct ratelimit *rl, uint64_t now_us, double n)
{
	if (rl->last_us == 0 || now_us < rl->last_us) {
		rl->last_us = now_us;
	} else {
		rl->tokens += (double)(now_us - rl->last_us) * rl->rate / 1e6;
		if (rl->tokens > rl->burst)
			rl->tokens = rl->burst;
		rl->last_us = now_us;
	}
	if (rl->tokens < n)
		return false;
	rl->tokens -= n;
	return true;
}

void
ratelog_init(struct ratelog *rl, double rate, double burst)
{
	ratelimit_init(&rl->rl, rate, burst);
	rl->held = 0;
}

bool
ratelog_vformat(struct ratelog *rl, uint64_t now_us, char *buf, size_t size,
    const char *fmt, va_list ap)
{
	int n;

	if (!ratelimit_take(&rl->rl, now_us, 1.0)) {
		rl->held++;
		return false;
	}
	n = vsnprintf(buf, size, fmt, ap);
	if (rl->held > 0 && n >= 0 && (size_t)n < size)
		(void)snprintf(buf + n, size - (size_t)n,
		    " (%llu more such lines suppressed)",
		    (unsigned long long)rl->held);
	rl->held = 0;
	return true;
}
