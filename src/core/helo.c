/* SPDX-License-Identifier: GPL-3.0-or-later */
/* HELO encoding, signing and checking, and ferry:// URIs (see helo.h). */
#include "core/helo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/identity.h"
#include "lib/base32.h"
#include "lib/wire.h"

#define HELO_SIG_PREFIX "ferry helo v1"
#define HELO_URI_MAX_BYTES 8192 /* decoded HELOs in one URI */

int
helo_decode(const void *msg, size_t len, struct helo *ret)
{
	const uint8_t *p = msg;
	uint16_t addr_len;

	if (len < FERRY_HELO_FIXED || len > FERRY_MSG_SIZE_MAX)
		return -EBADMSG;
	if (wire_get16(p) != len || wire_get16(p + 2) != FERRY_P2P_HELO)
		return -EBADMSG;
	addr_len = wire_get16(p + 38);
	if (addr_len == 0 || addr_len > FERRY_ADDR_MAX ||
	    len != FERRY_HELO_FIXED + (size_t)addr_len)
		return -EBADMSG;
	memcpy(ret->pk, p + 4, FERRY_PUBKEY_LEN);
	peer_id_of(ret->pk, &ret->id);
	ret->protocol = wire_get16(p + 36);
	ret->addr_len = addr_len;
	ret->mtu = wire_get32(p + 40);
	ret->expiry = wire_get64(p + 44);
	ret->addr = p + 52;
	ret->raw = p;
	ret->raw_len = len;
	return 0;
}

int
helo_verify(const struct helo *h, uint64_t now_s)
{
	size_t signed_len = h->raw_len - FERRY_SIG_LEN;

	if (identity_verify(h->pk, HELO_SIG_PREFIX, h->raw, signed_len,
		h->raw + signed_len) < 0)
		return -EBADMSG;
	if (h->expiry <= now_s)
		return -ESTALE;
	return 0;
}

int
helo_build(const struct identity *ident, uint16_t protocol, uint32_t mtu,
    uint64_t expiry, const void *addr, size_t addr_len, uint8_t *out,
    size_t max)
{
	size_t len = FERRY_HELO_FIXED + addr_len;

	if (addr_len == 0 || addr_len > FERRY_ADDR_MAX)
		return -EINVAL;
	if (len > max)
		return -ENOSPC;
	wire_put_hdr(out, (uint16_t)len, FERRY_P2P_HELO);
	memcpy(out + 4, ident->pk, FERRY_PUBKEY_LEN);
	wire_put16(out + 36, protocol);
	wire_put16(out + 38, (uint16_t)addr_len);
	wire_put32(out + 40, mtu);
	wire_put64(out + 44, expiry);
	memcpy(out + 52, addr, addr_len);
	identity_sign(ident, HELO_SIG_PREFIX, out, len - FERRY_SIG_LEN,
	    out + len - FERRY_SIG_LEN);
	return (int)len;
}

int
helo_uri_encode(const struct ferry_peer_id *id, const uint8_t *helos,
    size_t len, char **ret_uri)
{
	size_t slen = strlen(HELO_URI_SCHEME) + FERRY_PEER_ID_STRLEN + 1 +
	    BASE32_LEN(len) + 1;
	char *uri;

	if (len == 0 || len > HELO_URI_MAX_BYTES)
		return -EINVAL;
	uri = malloc(slen);
	if (uri == NULL)
		return -ENOMEM;
	strcpy(uri, HELO_URI_SCHEME);
	peer_id_format(id, uri + strlen(HELO_URI_SCHEME));
	uri[strlen(HELO_URI_SCHEME) + FERRY_PEER_ID_STRLEN] = '/';
	base32_encode(helos, len,
	    uri + strlen(HELO_URI_SCHEME) + FERRY_PEER_ID_STRLEN + 1);
	*ret_uri = uri;
	return 0;
}

/* Checks that buf is a sequence of well-formed HELOs of peer id. */
static int
helo_check_all(const uint8_t *buf, size_t len, const struct ferry_peer_id *id)
{
	size_t off = 0;
	struct helo h;

	if (len == 0)
		return -EINVAL;
	while (off < len) {
		size_t size;

		if (len - off < FERRY_HDR_SIZE)
			return -EINVAL;
		size = wire_get16(buf + off);
		if (size > len - off || helo_decode(buf + off, size, &h) < 0)
			return -EINVAL;
		if (memcmp(&h.id, id, sizeof(*id)) != 0)
			return -EINVAL;
		off += size;
	}
	return 0;
}

int
helo_uri_decode(const char *uri, uint8_t **ret_helos, size_t *ret_len)
{
	size_t plen = strlen(HELO_URI_SCHEME);
	char idstr[FERRY_PEER_ID_STRLEN + 1];
	struct ferry_peer_id id;
	const char *body;
	uint8_t *helos;
	size_t blen, len;

	/* Schemes are case-insensitive (RFC 3986 3.1): a QR code in its
	 * alphanumeric mode carries upper case only. */
	if (strncasecmp(uri, HELO_URI_SCHEME, plen) != 0)
		return -EINVAL;
	uri += plen;
	if (strlen(uri) < FERRY_PEER_ID_STRLEN + 2 ||
	    uri[FERRY_PEER_ID_STRLEN] != '/')
		return -EINVAL;
	memcpy(idstr, uri, FERRY_PEER_ID_STRLEN);
	idstr[FERRY_PEER_ID_STRLEN] = '\0';
	if (peer_id_parse(idstr, &id) < 0)
		return -EINVAL;
	body = uri + FERRY_PEER_ID_STRLEN + 1;
	blen = strlen(body);
	/* Bytes whose base32 form is blen long, if blen is a valid length. */
	len = blen * 5 / 8;
	if (len == 0 || len > HELO_URI_MAX_BYTES || BASE32_LEN(len) != blen)
		return -EINVAL;
	helos = malloc(len);
	if (helos == NULL)
		return -ENOMEM;
	if (base32_decode(body, blen, helos, len) < 0 ||
	    helo_check_all(helos, len, &id) < 0) {
		free(helos);
		return -EINVAL;
	}
	*ret_helos = helos;
	*ret_len = len;
	return 0;
}
