/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What a receipt proves, remote client (ferry-intermediary(7) TRUST): a
 * block of a put is stored when distinct storing peers signed receipts
 * naming the put_hash of the PUT this client signed for it. The
 * intermediary only carries receipts; one that does not verify is a
 * forgery, and the caller leaves that intermediary.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

#include "core/identity.h"

int
remote_receipt_verify(const struct remote_entry *e, struct dhtkey *ret_storer)
{
	struct dhtmsg_receipt r;
	struct ferry_peer_id id;
	struct dhtkey key;

	if (e->done)
		return -EBADMSG;
	memcpy(key.b, e->key, DHTKEY_LEN);
	r.expiry = e->expiry;
	memcpy(r.put_hash, e->put_hash, DHTMSG_HASH_LEN);
	memcpy(r.storer_pk, e->storer_pk, FERRY_PUBKEY_LEN);
	memcpy(r.sig, e->sig, FERRY_SIG_LEN);
	peer_id_of(r.storer_pk, &id);
	dhtkey_from_peer(&id, ret_storer);
	return dhtmsg_receipt_verify(&key, ret_storer, r.put_hash, &r) < 0
	    ? -EBADMSG
	    : 0;
}

int
remote_receipt_check(struct remote_block *b, const struct remote_entry *e)
{
	struct dhtkey storer;

	if (e->done || memcmp(e->key, b->key.b, DHTKEY_LEN) != 0)
		return -EBADMSG;
	/* The signature first: a receipt that does not verify is a forgery
	 * whatever it names; one that verifies for another put_hash is a
	 * storer's honest receipt of another PUT of this block (an earlier
	 * put, with another expiry), which proves nothing for this one. */
	if (remote_receipt_verify(e, &storer) < 0)
		return -EBADMSG;
	if (sodium_memcmp(e->put_hash, b->put_hash, DHTMSG_HASH_LEN) != 0)
		return REMOTE_RECEIPT_OTHER;
	for (unsigned i = 0; i < b->n_storers; i++)
		if (dhtkey_equal(&b->storers[i], &storer))
			return REMOTE_RECEIPT_DUP;
	if (b->n_storers >= DHTMSG_REPL_MAX)
		return REMOTE_RECEIPT_FULL;
	b->storers[b->n_storers++] = storer;
	return REMOTE_RECEIPT_NEW;
}
