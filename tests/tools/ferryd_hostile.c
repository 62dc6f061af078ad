/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferryd_hostile: a hostile intermediary for tests (issue 15, "a test
 * build that drops PUTs, or forges receipts"): the real daemon,
 * ferryd_main(), with the intermediary's test seam (imd_tamper.h) set as
 * $FERRY_HOSTILE says, and its command line as ferryd's:
 *   drop      every PUT is answered "relayed" and not relayed
 *   withhold  PUTs are relayed, nothing is queued for the client
 *   forge     each receipt's signature is replaced with random bytes
 *   replay    each receipt is another block's, a storer's genuine
 *             signature, renamed for this block and this PUT
 *   sybil     every PUT is answered "relayed", not relayed, and
 *             answered with receipts that verify, signed by storers it
 *             made up (HOSTILE_SYBILS keys of its own, fresh per run)
 * Any other value, or none, and it will not start: a test must not take
 * an honest daemon for a hostile one. Each tampering is logged (notice,
 * tag "hostile") for the test to wait on.
 */
/* tool-link: ferry_daemon */
#define LOG_TAG "hostile"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/identity.h"
#include "daemon/ferryd.h"
#include "intermediary/imd_tamper.h"
#include "lib/log.h"

#define HOSTILE_SYBILS 3 /* made-up storers: as many as a default put asks */

struct hostile {
	bool have_first;                 /* replay: a receipt to replay */
	struct dhtmsg_receipt first;     /* the first genuine receipt */
	struct dhtkey first_key;         /* its block */
	unsigned long dropped, tampered; /* for the log */
	struct identity *sybil[HOSTILE_SYBILS]; /* sybil: the storers */
	struct dhtmsg_receipt made[HOSTILE_SYBILS];
};

static bool
hostile_relay(void *cls, const struct dhtmsg_put *put)
{
	struct hostile *h = cls;

	(void)put;
	log_notice("dropped PUT %lu (answered relayed)", ++h->dropped);
	return false;
}

static size_t
hostile_withhold(void *cls, struct rqueue_entry *e, size_t n)
{
	struct hostile *h = cls;

	(void)e;
	log_notice("withheld the %zu entries of relay %lu", n, ++h->tampered);
	return 0;
}

static size_t
hostile_forge(void *cls, struct rqueue_entry *e, size_t n)
{
	struct hostile *h = cls;

	for (size_t i = 0; i < n; i++)
		if (e[i].type == RQUEUE_RECEIPT)
			randombytes_buf(e[i].receipt.sig,
			    sizeof(e[i].receipt.sig));
	log_notice("forged the receipts of relay %lu", ++h->tampered);
	return n;
}

/* The first relay's receipts go through as they are, to be replayed. */
static size_t
hostile_replay(void *cls, struct rqueue_entry *e, size_t n)
{
	struct hostile *h = cls;
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		if (e[i].type != RQUEUE_RECEIPT)
			continue;
		if (!h->have_first) {
			h->have_first = true;
			h->first = e[i].receipt;
			h->first_key = e[i].key;
			continue;
		}
		if (dhtkey_equal(&e[i].key, &h->first_key))
			continue;
		memcpy(e[i].receipt.sig, h->first.sig, sizeof(h->first.sig));
		memcpy(e[i].receipt.storer_pk, h->first.storer_pk,
		    sizeof(h->first.storer_pk));
		e[i].receipt.expiry = h->first.expiry;
		any = true;
	}
	if (any)
		log_notice("replayed another block's receipt in relay %lu",
		    ++h->tampered);
	return n;
}

/* A dropped PUT is "stored" by made-up peers, whose receipts verify. */
static bool
hostile_sybil(void *cls, const struct dhtkey *key, const struct dhtmsg_put *put,
    struct dht_result *ret)
{
	struct hostile *h = cls;
	uint8_t hash[DHTMSG_HASH_LEN];
	unsigned n = put->replication < HOSTILE_SYBILS ? put->replication
	                                               : HOSTILE_SYBILS;

	dhtmsg_put_hash(key, put, hash);
	for (unsigned i = 0; i < n; i++)
		dhtmsg_receipt_sign(h->sybil[i], key, hash, put->expiry,
		    &h->made[i]);
	memset(ret, 0, sizeof(*ret));
	ret->key = *key;
	ret->receipts = n;
	ret->receipt = h->made;
	log_notice("made up %u receipts for dropped PUT %lu", n, h->dropped);
	return true;
}

static int
hostile_sybils(struct hostile *h)
{
	uint8_t seed[32];

	for (int i = 0; i < HOSTILE_SYBILS; i++) {
		randombytes_buf(seed, sizeof(seed));
		if (identity_from_seed(seed, &h->sybil[i]) < 0)
			return -1;
	}
	sodium_memzero(seed, sizeof(seed));
	return 0;
}

int
main(int argc, char **argv)
{
	static struct hostile h;
	static struct imd_tamper t = { .cls = &h };
	const char *mode = getenv("FERRY_HOSTILE");

	if (mode == NULL)
		mode = "";
	if (strcmp(mode, "drop") == 0)
		t.relay = hostile_relay;
	else if (strcmp(mode, "withhold") == 0)
		t.queue = hostile_withhold;
	else if (strcmp(mode, "forge") == 0)
		t.queue = hostile_forge;
	else if (strcmp(mode, "replay") == 0)
		t.queue = hostile_replay;
	else if (strcmp(mode, "sybil") == 0 && sodium_init() >= 0 &&
	    hostile_sybils(&h) == 0) {
		t.relay = hostile_relay;
		t.fake = hostile_sybil;
	} else {
		fprintf(stderr,
		    "ferryd_hostile: FERRY_HOSTILE must be drop, withhold, "
		    "forge, replay or sybil, not '%s'\n",
		    mode);
		return 2;
	}
	imd_tamper_set(&t);
	fprintf(stderr, "ferryd_hostile: a hostile intermediary (%s)\n", mode);
	return ferryd_main(argc, argv);
}
