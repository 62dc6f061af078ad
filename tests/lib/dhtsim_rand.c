/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The random numbers of the fake DHT network (dhtsim.h): its own, drawn
 * by the tests, and the process's libsodium randombytes while a network
 * exists, which the DHT draws its request ids and refresh targets from
 * and the maps their keys: both from the seed, so that a run can be
 * replayed (issue 19).
 */
#include "dhtsim_int.h"

#include <string.h>

#include <sodium.h>

/* SplitMix64: a Weyl sequence through a 64-bit finaliser. */
static uint64_t
splitmix(uint64_t *state)
{
	uint64_t z;

	*state += 0x9e3779b97f4a7c15ull;
	z = *state;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
splitmix_fill(uint64_t *state, void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = splitmix(state);
		size_t n = len - i < 8 ? len - i : 8;

		memcpy(p + i, &v, n);
	}
}

uint64_t
dhtsim_rand(struct dhtsim *s)
{
	return splitmix(&s->rng);
}

void
dhtsim_random(struct dhtsim *s, void *buf, size_t len)
{
	splitmix_fill(&s->rng, buf, len);
}

/* The process's: one thread runs the networks, so one state serves. */
static uint64_t rb_state;
static unsigned rb_users;
static randombytes_implementation *rb_saved;

static const char *
rb_name(void)
{
	return "dhtsim";
}

static uint32_t
rb_random(void)
{
	return (uint32_t)(splitmix(&rb_state) >> 32);
}

static void
rb_buf(void *const buf, const size_t size)
{
	splitmix_fill(&rb_state, buf, size);
}

/* stir, uniform and close: libsodium's defaults. */
static randombytes_implementation rb_impl = {
	.implementation_name = rb_name,
	.random = rb_random,
	.buf = rb_buf,
};

void
dhtsim_rand_hook(uint64_t seed)
{
	if (rb_users++ == 0) {
		const char *name = randombytes_implementation_name();

		rb_saved = strcmp(name,
		               randombytes_internal_implementation
		                   .implementation_name()) == 0
		    ? &randombytes_internal_implementation
		    : &randombytes_sysrandom_implementation;
		(void)randombytes_set_implementation(&rb_impl);
	}
	/* Another stream than dhtsim_rand()'s of the same seed. */
	rb_state = seed ^ 0x6a09e667f3bcc908ull;
}

void
dhtsim_rand_unhook(void)
{
	if (rb_users > 0 && --rb_users == 0)
		(void)randombytes_set_implementation(rb_saved);
}
