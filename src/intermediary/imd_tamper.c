/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary's test seam (imd_tamper.h), intermediary layer: one
 * pointer for the process, set by a test build before the daemon starts
 * and only read after, so it needs no lock.
 */
#include "intermediary/imd_tamper.h"

static const struct imd_tamper *imd_tamper;

void
imd_tamper_set(const struct imd_tamper *t)
{
	imd_tamper = t;
}

bool
imd_tamper_relay(const struct dhtmsg_put *put)
{
	if (imd_tamper == NULL || imd_tamper->relay == NULL)
		return true;
	return imd_tamper->relay(imd_tamper->cls, put);
}

bool
imd_tamper_fake(const struct dhtkey *key, const struct dhtmsg_put *put,
    struct dht_result *ret)
{
	if (imd_tamper == NULL || imd_tamper->fake == NULL)
		return false;
	return imd_tamper->fake(imd_tamper->cls, key, put, ret);
}

size_t
imd_tamper_queue(struct rqueue_entry *e, size_t n)
{
	size_t keep;

	if (imd_tamper == NULL || imd_tamper->queue == NULL)
		return n;
	keep = imd_tamper->queue(imd_tamper->cls, e, n);
	return keep < n ? keep : n;
}
