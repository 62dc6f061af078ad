/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the federation needs of the daemon's core (struct imd_net),
 * intermediary layer: sends and links to other intermediaries over
 * ferry's encrypted links, and the inner messages of
 * FERRY_MSG_IMD_MIN..MAX handed to imd_fed_receive(). As dhtnode_env.c
 * is for the DHT: the federation's code sees the table only.
 */
#include "intermediary/imd_int.h"

#include <errno.h>
#include <string.h>

#include "core/core.h"

static struct ferry_peer_id
imd_net_id(const uint8_t peer[IMDWIRE_ID_LEN])
{
	struct ferry_peer_id id;

	memcpy(id.bytes, peer, sizeof(id.bytes));
	return id;
}

/* The federation's messages are small and go before bulk data. */
static int
imd_net_send(void *cls, const uint8_t peer[IMDWIRE_ID_LEN], uint16_t type,
    const void *body, size_t len)
{
	struct ferry_peer_id id = imd_net_id(peer);

	return core_send_class(cls, &id, CORE_CLASS_CONTROL, type, body, len);
}

static bool
imd_net_linked(void *cls, const uint8_t peer[IMDWIRE_ID_LEN])
{
	struct ferry_peer_id id = imd_net_id(peer);
	uint64_t bytes;

	return core_peer_queue_bytes(cls, &id, CORE_CLASS_CONTROL, &bytes) == 0;
}

static int
imd_net_link(void *cls, const uint8_t peer[IMDWIRE_ID_LEN], const void *helos,
    size_t len)
{
	struct ferry_peer_id id = imd_net_id(peer);
	int r;

	if (len > 0) {
		r = core_learn_helo(cls, NULL, helos, len);
		if (r < 0)
			return r;
	}
	return core_link(cls, &id);
}

static size_t
imd_net_own_helos(void *cls, uint8_t *buf, size_t size)
{
	size_t len;

	return core_peer_helos(cls, core_identity(cls), buf, size, &len) == 0
	    ? len
	    : 0;
}

static void
imd_net_on_message(void *cls, const struct ferry_peer_id *peer, uint16_t type,
    const void *data, size_t len)
{
	imd_fed_receive(cls, peer->bytes, type, data, len);
}

int
imd_net_attach(struct imd *imd, struct core *core)
{
	int r;

	imd->fed.net = (struct imd_net){ core, imd_net_send, imd_net_linked,
		imd_net_link, imd_net_own_helos };
	r = core_handler_set(core, FERRY_MSG_IMD_MIN, FERRY_MSG_IMD_MAX,
	    imd_net_on_message, imd);
	if (r == 0)
		imd->fed.core = core;
	return r;
}

void
imd_net_detach(struct imd *imd)
{
	if (imd->fed.core != NULL)
		core_handler_unset(imd->fed.core, FERRY_MSG_IMD_MIN,
		    FERRY_MSG_IMD_MAX);
	imd->fed.core = NULL;
}
