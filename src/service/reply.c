/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Building reply frames in a client's output buffer, service layer. Each
 * frame is appended whole, so a client never sees half of one.
 */
#include "service/service_int.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "lib/stats.h"
#include "lib/wire.h"

uint8_t *
reply_frame(struct client *c, uint16_t type, size_t size)
{
	uint8_t *p;

	assert(size >= FERRY_HDR_SIZE && size <= FERRY_MSG_SIZE_MAX);
	p = conn_out_append(&c->conn, size);
	if (p == NULL)
		return NULL;
	wire_put_hdr(p, (uint16_t)size, type);
	(*c->svc->c.frames_out)++;
	return p;
}

int
reply_result(struct client *c, uint32_t req_id, int status, const char *msg)
{
	size_t len = 0;
	uint8_t *p;

	if (msg == NULL && status < 0)
		msg = strerror(-status);
	if (msg != NULL)
		len = strnlen(msg, 1024);
	p = reply_frame(c, FERRY_C_RESULT, 12 + len);
	if (p == NULL)
		return -ENOMEM;
	wire_put32(p + 4, req_id);
	wire_put32(p + 8, (uint32_t)status);
	if (len > 0)
		memcpy(p + 12, msg, len);
	return 0;
}
