/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the intermediary keeps of each client key (imd_int.h): its
 * CLIENT_RATE bucket and the bytes it relayed in the last 24 hours, for
 * at most IMD_CLIENTS_MAX keys, the least recently seen forgotten first;
 * intermediary layer. */
#include "intermediary/imd_int.h"

#include <stdlib.h>
#include <string.h>

#include "lib/map.h"
#include "lib/time.h"

struct imd_client *
imd_client_get(struct imd *imd, const uint8_t key[IMDWIRE_KEY_LEN])
{
	struct imd_client *cl = map_get(imd->clients, key, IMDWIRE_KEY_LEN);

	if (cl != NULL) {
		TAILQ_REMOVE(&imd->client_lru, cl, link);
		TAILQ_INSERT_TAIL(&imd->client_lru, cl, link);
		return cl;
	}
	if (imd->n_clients >= IMD_CLIENTS_MAX) {
		/* Forgetting a key forgets its quota: a client would need
		 * IMD_CLIENTS_MAX other keys in between to gain by it. */
		cl = TAILQ_FIRST(&imd->client_lru);
		TAILQ_REMOVE(&imd->client_lru, cl, link);
		(void)map_remove(imd->clients, cl->key, IMDWIRE_KEY_LEN);
		imd->n_clients--;
		memset(cl, 0, sizeof(*cl));
	} else {
		cl = calloc(1, sizeof(*cl));
		if (cl == NULL)
			return NULL;
	}
	memcpy(cl->key, key, IMDWIRE_KEY_LEN);
	ratelimit_init(&cl->rl, imd->cfg.client_rate, 2 * imd->cfg.client_rate);
	if (map_put(imd->clients, cl->key, IMDWIRE_KEY_LEN, cl) < 0) {
		free(cl);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&imd->client_lru, cl, link);
	imd->n_clients++;
	return cl;
}

bool
imd_client_take(struct imd *imd, struct imd_client *cl)
{
	/* A reload may have changed the rate. */
	cl->rl.rate = imd->cfg.client_rate;
	cl->rl.burst = 2 * imd->cfg.client_rate;
	return ratelimit_take(&cl->rl, time_mono_us(), 1);
}

bool
imd_client_over_quota(struct imd *imd, struct imd_client *cl, uint64_t add)
{
	uint64_t now_h = time_real_s() / 3600, sum = add;

	if (imd->cfg.client_quota == 0)
		return false;
	for (unsigned i = 0; i < IMD_QUOTA_HOURS; i++)
		if (cl->hour_no[i] + IMD_QUOTA_HOURS > now_h)
			sum += cl->hour[i];
	return sum > imd->cfg.client_quota;
}

void
imd_client_charge(struct imd *imd, struct imd_client *cl, uint64_t n)
{
	uint64_t now_h = time_real_s() / 3600;
	unsigned i = (unsigned)(now_h % IMD_QUOTA_HOURS);

	(void)imd;
	if (cl->hour_no[i] != now_h) {
		cl->hour_no[i] = now_h;
		cl->hour[i] = 0;
	}
	cl->hour[i] += n;
}

void
imd_clients_free(struct imd *imd)
{
	struct imd_client *cl;

	while ((cl = TAILQ_FIRST(&imd->client_lru)) != NULL) {
		TAILQ_REMOVE(&imd->client_lru, cl, link);
		(void)map_remove(imd->clients, cl->key, IMDWIRE_KEY_LEN);
		free(cl);
	}
	imd->n_clients = 0;
}
