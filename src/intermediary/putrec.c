/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The upload records of POST /v1/blocks (putrec.h), intermediary layer. */
#include "intermediary/putrec.h"

#include <errno.h>
#include <string.h>

#include "lib/wire.h"

int
putrec_size(const uint8_t *data, size_t len, size_t max_block,
    size_t *ret_total)
{
	uint32_t n;

	if (len < 4)
		return -EAGAIN;
	n = wire_get32(data);
	if (n < PUTREC_HEAD - 4 + 1)
		return -EBADMSG;
	if ((uint64_t)n > PUTREC_HEAD - 4 + (uint64_t)max_block)
		return -EMSGSIZE;
	*ret_total = 4 + (size_t)n;
	return 0;
}

int
putrec_decode(const uint8_t *data, size_t len, size_t max_block,
    struct putrec *ret)
{
	size_t total;
	int r = putrec_size(data, len, max_block, &total);

	if (r == -EAGAIN || (r == 0 && total != len))
		return -EBADMSG;
	if (r < 0)
		return r;
	if (data[4] != PUTREC_VERSION)
		return -EBADMSG;
	ret->replication = data[5];
	ret->expiry = wire_get64(data + 6);
	memcpy(ret->sig, data + 14, PUTREC_SIG_LEN);
	ret->block = data + PUTREC_HEAD;
	ret->block_len = len - PUTREC_HEAD;
	return 0;
}

void
putrec_encode(uint8_t replication, uint64_t expiry,
    const uint8_t sig[PUTREC_SIG_LEN], const void *block, size_t block_len,
    uint8_t *out)
{
	wire_put32(out, (uint32_t)(PUTREC_HEAD - 4 + block_len));
	out[4] = PUTREC_VERSION;
	out[5] = replication;
	wire_put64(out + 6, expiry);
	memcpy(out + 14, sig, PUTREC_SIG_LEN);
	memcpy(out + PUTREC_HEAD, block, block_len);
}
