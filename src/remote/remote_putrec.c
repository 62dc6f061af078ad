/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One signed PUT as a record of POST /v1/blocks, remote client
 * (ferry-intermediary(7) UPLOAD):
 *    0 u32 len          bytes after this field: 74 + block_len
 *    4 u8  version      1
 *    5 u8  replication  1..16
 *    6 u64 expiry
 *   14 u8  sig[64]      dhtmsg_put_sign()'s, by the client key
 *   78 u8  block[]      1..DHTMSG_BLOCK_MAX bytes
 * origin_pk is not in the record: it is the Authorization header's key.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <string.h>

#include "lib/wire.h"

void
remote_putrec_head(const struct dhtmsg_put *put,
    uint8_t out[REMOTE_PUTREC_HEAD])
{
	wire_put32(out, (uint32_t)(REMOTE_PUTREC_HEAD - 4 + put->block_len));
	out[4] = REMOTE_PUTREC_VERSION;
	out[5] = put->replication;
	wire_put64(out + 6, put->expiry);
	memcpy(out + 14, put->sig, FERRY_SIG_LEN);
}

int
remote_putrec_decode(const uint8_t *p, size_t len, struct dhtmsg_put *put,
    size_t *used)
{
	uint32_t rlen;

	if (len < 4)
		return -EAGAIN;
	rlen = wire_get32(p);
	if (rlen < REMOTE_PUTREC_HEAD - 4 + 1 ||
	    rlen > REMOTE_PUTREC_HEAD - 4 + DHTMSG_BLOCK_MAX)
		return -EBADMSG;
	if (len < 5)
		return -EAGAIN;
	if (p[4] != REMOTE_PUTREC_VERSION)
		return -EBADMSG;
	if (len - 4 < rlen)
		return -EAGAIN;
	if (p[5] == 0 || p[5] > DHTMSG_REPL_MAX)
		return -EBADMSG;
	put->replication = p[5];
	put->expiry = wire_get64(p + 6);
	memcpy(put->sig, p + 14, FERRY_SIG_LEN);
	put->block = p + REMOTE_PUTREC_HEAD;
	put->block_len = rlen - (REMOTE_PUTREC_HEAD - 4);
	*used = 4 + (size_t)rlen;
	return 0;
}
