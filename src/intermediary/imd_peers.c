/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The intermediaries this one knows (imd.h) and GET /v1/intermediaries;
 * intermediary layer. The federation's signed DHT announcements feed
 * imd_peer_learn(); this file only keeps what they said until it
 * expires. */
#include "intermediary/imd_int.h"

#include <errno.h>
#include <string.h>

#include <event2/buffer.h>

#include "lib/base32.h"
#include "lib/time.h"

/* Forgets those past their expiry. */
static void
imd_peers_expire(struct imd *imd, uint64_t now)
{
	size_t o = 0;

	for (size_t i = 0; i < imd->n_peers; i++)
		if (imd->peers[i].expires > now)
			imd->peers[o++] = imd->peers[i];
	imd->n_peers = o;
}

int
imd_peer_learn(struct imd *imd, const struct imd_peer *p)
{
	size_t i;

	if (memchr(p->url, '\0', sizeof(p->url)) == NULL ||
	    (strncmp(p->url, "https://", 8) != 0 &&
	        strncmp(p->url, "http://", 7) != 0))
		return -EINVAL;
	for (const char *c = p->url; *c != '\0'; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f ||
		    *c == '"' || *c == '\\')
			return -EINVAL;
	imd_peers_expire(imd, time_real_s());
	if (p->expires <= time_real_s() || memcmp(p->id, imd->id, 32) == 0)
		return 0;
	for (i = 0; i < imd->n_peers; i++)
		if (memcmp(imd->peers[i].id, p->id, sizeof(p->id)) == 0)
			break;
	if (i == IMD_PEERS_MAX)
		return -ENOBUFS;
	imd->peers[i] = *p;
	if (i == imd->n_peers)
		imd->n_peers++;
	return 0;
}

bool
imd_peer_forget(struct imd *imd, const uint8_t id[IMDWIRE_ID_LEN])
{
	for (size_t i = 0; i < imd->n_peers; i++)
		if (memcmp(imd->peers[i].id, id, IMDWIRE_ID_LEN) == 0) {
			imd->peers[i] = imd->peers[--imd->n_peers];
			return true;
		}
	return false;
}

bool
imd_peer_is_known(struct imd *imd, const uint8_t id[IMDWIRE_ID_LEN])
{
	imd_peers_expire(imd, time_real_s());
	for (size_t i = 0; i < imd->n_peers; i++)
		if (memcmp(imd->peers[i].id, id, IMDWIRE_ID_LEN) == 0)
			return true;
	return false;
}

size_t
imd_peers_known(struct imd *imd, struct imd_peer *ret, size_t max)
{
	size_t n;

	imd_peers_expire(imd, time_real_s());
	n = imd->n_peers < max ? imd->n_peers : max;
	memcpy(ret, imd->peers, n * sizeof(*ret));
	return n;
}

void
imd_peers_reply(struct imd *imd, struct httpd_req *req)
{
	struct evbuffer *b = evbuffer_new();
	char id[BASE32_LEN(32) + 1];
	size_t n;

	if (b == NULL) {
		httpd_reply_error(req, 503, "busy", "out of memory");
		return;
	}
	imd_peers_expire(imd, time_real_s());
	(void)evbuffer_add_printf(b,
	    "{\"self\": {\"peer\": \"%s\", \"url\": \"%s\"},\n"
	    " \"intermediaries\": [",
	    imd->id_str, imd->cfg.public_url);
	for (n = 0; n < imd->n_peers; n++) {
		base32_encode(imd->peers[n].id, 32, id);
		(void)evbuffer_add_printf(b,
		    "%s{\"peer\": \"%s\", \"url\": \"%s\", \"expires\": %llu}",
		    n > 0 ? ", " : "", id, imd->peers[n].url,
		    (unsigned long long)imd->peers[n].expires);
	}
	(void)evbuffer_add_printf(b, "]}\n");
	httpd_reply(req, 200, "application/json", evbuffer_pullup(b, -1),
	    evbuffer_get_length(b));
	evbuffer_free(b);
}
