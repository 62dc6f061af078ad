/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Token bucket (see ratelimit.h), layer 0. */
#include "lib/ratelimit.h"

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
