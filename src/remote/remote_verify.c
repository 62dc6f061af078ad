/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A put's blocks fetched back, remote client (issue 15;
 * ferry-intermediary(7) TRUST): receipts prove only that some Ed25519 key
 * signed for a block, and an intermediary can make up the keys and drop
 * the PUTs. So, once the receipts are in, the client fetches the blocks,
 * or a sample of them it chooses then, through another intermediary,
 * which finds them only if the DHT holds them. The sample is every
 * manifest node (one lost node loses the file past it) and
 * REMOTE_VERIFY_K data blocks drawn uniformly (Knuth's selection
 * sampling: one pass, no memory). Memory: one batch of keys and one
 * record, whatever the file's size.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "lib/map.h"

/* Who relayed and vouched for a block are bits of a uint64_t. */
_Static_assert(REMOTE_CAND_MAX <= 64, "candidates are bits of a uint64_t");

#define REMOTE_VERIFY_NONE_YET 0xff /* answer: no record came for it */
#define REMOTE_VERIFY_PAUSE_MS 1000 /* before a block is asked again */

uint64_t
remote_verify_sample_size(enum remote_verify mode, uint64_t n_data)
{
	if (mode == REMOTE_VERIFY_NONE)
		return 0;
	if (mode == REMOTE_VERIFY_ALL || n_data <= REMOTE_VERIFY_K)
		return n_data;
	return REMOTE_VERIFY_K;
}

/* A uniform integer below n, which may exceed randombytes_uniform()'s. */
static uint64_t
remote_verify_uniform(uint64_t n)
{
	uint64_t x, lim;

	if (n <= UINT32_MAX)
		return randombytes_uniform((uint32_t)n);
	lim = UINT64_MAX - UINT64_MAX % n;
	do
		randombytes_buf(&x, sizeof(x));
	while (x >= lim);
	return x % n;
}

size_t
remote_verify_choose(struct remote_block *const *all, size_t n,
    enum remote_verify mode)
{
	uint64_t n_data = 0, seen = 0, k;
	size_t marked = 0;

	for (size_t i = 0; i < n; i++) {
		all[i]->check = false;
		if (!all[i]->held && !all[i]->node)
			n_data++;
	}
	if (mode == REMOTE_VERIFY_NONE)
		return 0;
	k = remote_verify_sample_size(mode, n_data);
	for (size_t i = 0; i < n; i++) {
		struct remote_block *b = all[i];

		if (b->held)
			continue;
		if (b->node) {
			b->check = true;
			marked++;
			continue;
		}
		/* Selection sampling: each of the n_data - seen left is taken
		 * with probability k / (n_data - seen), k the ones still to
		 * take; every k-subset comes out equally likely. */
		if (k > 0 && remote_verify_uniform(n_data - seen) < k) {
			b->check = true;
			marked++;
			k--;
		}
		seen++;
	}
	return marked;
}

double
remote_verify_miss(uint64_t n, uint64_t d, uint64_t k)
{
	double p = 1.0;

	if (d > n || k > n)
		return 0.0;
	if (k > n - d)
		return 0.0;
	for (uint64_t i = 0; i < k && p > 0.0; i++)
		p *= (double)(n - d - i) / (double)(n - i);
	return p;
}

/* One check through cand[v]: its batch and what came. */
struct remote_check {
	struct remote *rc;
	struct map *blocks;
	struct remote_block **batch;
	size_t n_batch;
};

static bool
remote_check_wanted(const struct remote_block *b, uint64_t bit)
{
	return b->check && !b->held && !b->lost &&
	    !((b->relayed | b->vouched) & bit);
}

/* remote_fetch_fn: a record of the stream. */
static int
remote_check_record(void *cls, unsigned status, const struct dhtkey *key,
    const uint8_t *block, size_t len)
{
	struct remote_check *c = cls;
	struct remote_block *b = map_get(c->blocks, key->b, DHTKEY_LEN);

	(void)block;
	(void)len;
	/* Not asked, or asked once; remote_fetch_keys() checked a found
	 * block against its key. */
	if (b == NULL || b->answer != REMOTE_VERIFY_NONE_YET)
		return REMOTE_FETCH_UNASKED;
	b->answer = (uint8_t)status;
	return 0;
}

/* One POST /v1/fetch of the batch's blocks still to ask (answer not
 * FOUND), at the intermediary in use. */
static int
remote_check_fetch(struct remote_check *c, uint8_t *keys)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_batch; i++) {
		struct remote_block *b = c->batch[i];

		if (b->answer == REMOTE_FETCH_FOUND)
			continue;
		b->answer = REMOTE_VERIFY_NONE_YET;
		memcpy(keys + DHTKEY_LEN * n++, b->key.b, DHTKEY_LEN);
	}
	return n == 0
	    ? 0
	    : remote_fetch_keys(c->rc, keys, n, remote_check_record, c);
}

static void
remote_check_pause(void)
{
	struct timespec ts = { .tv_sec = REMOTE_VERIFY_PAUSE_MS / 1000,
		.tv_nsec = (REMOTE_VERIFY_PAUSE_MS % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Asks for the batch up to REMOTE_VERIFY_TRIES times, then settles each
 * block: held, lost, or left unchecked (busy, or no answer). */
static int
remote_check_batch(struct remote_check *c, uint8_t *keys,
    struct remote_verify_result *ret)
{
	size_t left;
	int r = 0;

	for (size_t i = 0; i < c->n_batch; i++)
		c->batch[i]->answer = REMOTE_VERIFY_NONE_YET;
	for (int t = 0; t < REMOTE_VERIFY_TRIES; t++) {
		if (t > 0)
			remote_check_pause();
		r = remote_check_fetch(c, keys);
		if (r < 0)
			break;
		left = 0;
		for (size_t i = 0; i < c->n_batch; i++)
			left += c->batch[i]->answer != REMOTE_FETCH_FOUND;
		if (left == 0)
			break;
		remote_say(c->rc, false, "%s: %zu of %zu blocks not found yet",
		    c->rc->url, left, c->n_batch);
	}
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->n_batch; i++) {
		struct remote_block *b = c->batch[i];

		ret->asked++;
		if (b->answer == REMOTE_FETCH_FOUND) {
			b->held = true;
			ret->held++;
		} else if (b->answer == REMOTE_FETCH_NOT_FOUND ||
		    b->answer == REMOTE_FETCH_TIMEOUT) {
			b->lost = true;
			ret->lost++;
			ret->blamed |= b->vouched;
		}
	}
	return 0;
}

/* Checks, through the intermediary in use (cand[v]), every block it may
 * check, a batch at a time. */
static int
remote_check_through(struct remote_check *c, struct remote_block *const *all,
    size_t n, size_t v, uint8_t *keys, struct remote_verify_result *ret)
{
	uint64_t bit = UINT64_C(1) << v;
	size_t i = 0;
	int r;

	while (i < n) {
		c->n_batch = 0;
		for (; i < n && c->n_batch < REMOTE_VERIFY_BATCH; i++)
			if (remote_check_wanted(all[i], bit))
				c->batch[c->n_batch++] = all[i];
		if (c->n_batch == 0)
			break;
		r = remote_check_batch(c, keys, ret);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The first candidate not yet tried that may check a block left. */
static bool
remote_verify_next(struct remote *rc, struct remote_block *const *all, size_t n,
    uint64_t tried, size_t *ret)
{
	for (size_t v = 0; v < rc->n_cand && v < 64; v++) {
		uint64_t bit = UINT64_C(1) << v;

		if ((tried & bit) || remote_is_bad(rc, rc->cand[v]))
			continue;
		for (size_t i = 0; i < n; i++)
			if (remote_check_wanted(all[i], bit)) {
				*ret = v;
				return true;
			}
	}
	return false;
}

int
remote_verify(struct remote *rc, struct map *blocks,
    struct remote_block *const *all, size_t n, uint64_t skip,
    struct remote_verify_result *ret)
{
	struct remote_check c = { .rc = rc, .blocks = blocks };
	uint64_t tried = skip;
	uint8_t *keys = malloc(REMOTE_VERIFY_BATCH * DHTKEY_LEN);
	size_t v;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	c.batch = malloc(REMOTE_VERIFY_BATCH * sizeof(*c.batch));
	if (keys == NULL || c.batch == NULL) {
		r = -ENOMEM;
		goto out;
	}
	while (remote_verify_next(rc, all, n, tried, &v)) {
		tried |= UINT64_C(1) << v;
		if (remote_use(rc, v) < 0) {
			remote_say(rc, false, "%s; checking through another",
			    rc->error);
			continue;
		}
		ret->used |= UINT64_C(1) << v;
		r = remote_check_through(&c, all, n, v, keys, ret);
		if (r == -ENOMEM)
			goto out;
		/* The batch that failed is left to the next candidate. */
		if (r == -EBADMSG)
			remote_mark_bad(rc, "it sent blocks not asked for");
		else if (r < 0)
			remote_say(rc, false, "%s; checking through another",
			    rc->error);
		r = 0;
	}
	for (size_t i = 0; i < n; i++)
		if (all[i]->check && !all[i]->held && !all[i]->lost)
			ret->unchecked++;
out:
	free(c.batch);
	free(keys);
	return r;
}

/* How many lost blocks cand[i] vouched for. */
static size_t
remote_verify_lost_by(struct remote_block *const *all, size_t n, size_t i)
{
	size_t lost = 0;

	for (size_t j = 0; j < n; j++)
		lost += all[j]->lost && (all[j]->vouched >> i & 1);
	return lost;
}

/* The URL of the first candidate in mask, for what is said. */
static const char *
remote_verify_url(const struct remote *rc, uint64_t mask)
{
	for (size_t i = 0; i < rc->n_cand && i < 64; i++)
		if (mask >> i & 1)
			return rc->cand[i];
	return "another intermediary";
}

int
remote_verify_put(struct remote *rc, struct map *blocks,
    struct remote_block *const *all, size_t n, uint64_t skip,
    uint64_t *ret_blamed)
{
	struct remote_verify_result res;
	size_t marked, again = 0;
	int r;

	marked = remote_verify_choose(all, n, rc->verify);
	if (marked == 0)
		return 0;
	r = remote_verify(rc, blocks, all, n, skip, &res);
	if (r < 0)
		return r;
	for (size_t i = 0; i < rc->n_cand && i < 64; i++) {
		if (!(res.blamed >> i & 1))
			continue;
		remote_say(rc, true,
		    "%s passed receipts for %zu blocks not found when fetched back through %s: its storers are made up, or it dropped the PUTs",
		    rc->cand[i], remote_verify_lost_by(all, n, i),
		    remote_verify_url(rc, res.used));
		remote_mark_bad_url(rc, rc->cand[i],
		    "its receipts named blocks not found when fetched back through another intermediary");
	}
	if (res.blamed != 0) {
		/* None of its receipts can be believed: every block it
		 * vouched for is put again, found or not. */
		for (size_t i = 0; i < n; i++) {
			struct remote_block *b = all[i];

			if (!(b->vouched & res.blamed))
				continue;
			b->n_storers = 0;
			b->vouched = 0;
			b->lost = b->check = false;
			again++;
		}
		remote_say(rc, true,
		    "putting %zu blocks again through another intermediary",
		    again);
		*ret_blamed = res.blamed;
		return -EAGAIN;
	}
	if (res.unchecked > 0 && rc->verify == REMOTE_VERIFY_ALL)
		return remote_fail(rc, -ENOLINK,
		    "%zu of %zu blocks could not be checked: no intermediary but the one that relayed them answered (name another with --intermediary)",
		    res.unchecked, marked);
	if (res.unchecked > 0)
		remote_say(rc, true,
		    "the put could not be checked independently: %zu of %zu blocks were fetched back through no intermediary but the one that relayed them (name another with --intermediary)",
		    res.unchecked, marked);
	if (res.held > 0)
		remote_say(rc, false,
		    "%zu blocks fetched back through %s: all found", res.held,
		    remote_verify_url(rc, res.used));
	return 0;
}
