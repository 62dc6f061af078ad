/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Our own signed HELOs (see ownhelo.h), core layer. */
#define LOG_TAG "core"
#include "core/ownhelo.h"

#include <errno.h>
#include <string.h>

#include <ferry/proto.h>

#include "core/core_int.h"
#include "core/helo.h"
#include "core/transport.h"
#include "lib/log.h"
#include "lib/time.h"
#include "lib/wire.h"

/* Addresses one transport may advertise at most. */
#define OWNHELO_PER_TRANSPORT 8

int
ownhelo_refresh(struct core *core)
{
	uint64_t now = time_real_s();
	uint64_t life = core->cc.helo_lifetime_us / USEC_PER_SEC;
	uint8_t addr[FERRY_ADDR_MAX];
	size_t off = 0, len;
	int n = 0;

	for (size_t i = 0; i < core->n_transports; i++) {
		struct transport *t = core->transports[i];
		const struct ferry_transport_api *api = t->api;
		bool many = FERRY_HAS(api, struct ferry_transport_api,
				create_helo_at) &&
		    api->create_helo_at != NULL;

		for (unsigned k = 0; k < OWNHELO_PER_TRANSPORT; k++) {
			int r = many ? api->create_helo_at(api->cls, k, addr,
					   sizeof(addr), &len)
				     : api->create_helo(api->cls, addr,
					   sizeof(addr), &len);

			if (r == -ENOENT)
				break; /* no (more) addresses to advertise */
			if (r < 0) {
				log_warn_errno(r, "transport %s: no HELO",
				    t->name);
				break;
			}
			r = helo_build(core->ident, api->protocol, api->mtu,
			    now + life, addr, len, core->own_helos + off,
			    sizeof(core->own_helos) - off);
			if (r < 0) {
				log_warn("transport %s: HELO does not fit (%zu bytes of HELOs already)",
				    t->name, off);
				break;
			}
			off += (size_t)r;
			n++;
			if (!many)
				break;
		}
	}
	core->own_helos_len = off;
	core->own_helos_until_s = now + life / 2;
	return n;
}

void
ownhelo_maybe_refresh(struct core *core)
{
	if (time_real_s() >= core->own_helos_until_s)
		(void)ownhelo_refresh(core);
}

bool
ownhelo_has(const struct core *core, uint16_t protocol, const uint8_t *addr,
    size_t len)
{
	size_t off = 0;
	struct helo h;

	while (off < core->own_helos_len) {
		size_t size = wire_get16(core->own_helos + off);

		if (helo_decode(core->own_helos + off, size, &h) == 0 &&
		    h.protocol == protocol && h.addr_len == len &&
		    memcmp(h.addr, addr, len) == 0)
			return true;
		off += size;
	}
	return false;
}

size_t
ownhelo_fill(const struct core *core, uint8_t *out, size_t max)
{
	size_t off = 0, done = 0;

	while (off < core->own_helos_len) {
		size_t size = wire_get16(core->own_helos + off);

		if (done + size <= max) {
			memcpy(out + done, core->own_helos + off, size);
			done += size;
		}
		off += size;
	}
	return done;
}
