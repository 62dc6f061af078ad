/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Replay window (see replay.h), core layer. */
#include "core/replay.h"

#include <string.h>

void
replay_init(struct replay *r)
{
	memset(r, 0, sizeof(*r));
}

bool
replay_check(const struct replay *r, uint64_t counter)
{
	uint64_t word;

	if (counter == UINT64_MAX)
		return false;
	if (counter >= r->top)
		return true;
	/* top - 1 is the highest accepted: up to REPLAY_WINDOW behind it is
	 * inside the window. */
	if (r->top - 1 - counter > REPLAY_WINDOW)
		return false;
	word = (counter / 64) % REPLAY_WORDS;
	return (r->bits[word] & (1ull << (counter % 64))) == 0;
}

bool
replay_update(struct replay *r, uint64_t counter)
{
	uint64_t word;

	if (!replay_check(r, counter))
		return false;
	if (counter >= r->top) {
		uint64_t cur = r->top == 0 ? 0 : (r->top - 1) / 64;
		uint64_t next = counter / 64;
		uint64_t diff = next - cur;

		/* Clear the words the window slides over; a jump of the whole
		 * ring or more clears it all. */
		if (r->top == 0 || diff >= REPLAY_WORDS)
			memset(r->bits, 0, sizeof(r->bits));
		else
			for (uint64_t i = 1; i <= diff; i++)
				r->bits[(cur + i) % REPLAY_WORDS] = 0;
		r->top = counter + 1;
	}
	word = (counter / 64) % REPLAY_WORDS;
	r->bits[word] |= 1ull << (counter % 64);
	return true;
}
