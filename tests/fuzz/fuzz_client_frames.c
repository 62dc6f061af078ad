/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the client socket's request decoding: the input
 * is a client's byte stream, split into frames and decoded exactly as
 * src/service/client.c does, the chunk rules of SEND and DHT_PUT
 * included.
 */
/* fuzz-link: ferry_service */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "service/msgparse.h"
#include "service/requests.h"

#include "fuzz_touch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One decoded request; false once the connection would be cut off. */
static bool
fuzz_request(struct msg_chunks *st, const struct msg_req *req)
{
	switch (req->type) {
	case FERRY_C_SEND:
		if (msgparse_chunk(st, &req->u.send) < 0)
			return false;
		fuzz_touch(req->u.send.data, req->u.send.len);
		break;
	case FERRY_C_REGISTER:
		for (size_t i = 0; i < req->u.reg.n; i++)
			fuzz_sink =
			    (uint8_t)msgparse_register_type(&req->u.reg, i);
		break;
	case FERRY_C_CONNECT:
		fuzz_touch(req->u.uri.s, req->u.uri.len);
		break;
	case FERRY_C_DHT_PUT:
		if (msgparse_put_chunk(st, &req->u.dht_put) < 0)
			return false;
		fuzz_touch(req->u.dht_put.data, req->u.dht_put.len);
		break;
	case FERRY_C_DHT_GET:
		fuzz_touch(req->u.dht_get.key, sizeof(req->u.dht_get.key));
		break;
	case FERRY_C_DHT_FIND:
		fuzz_touch(req->u.dht_find.key, sizeof(req->u.dht_find.key));
		break;
	case FERRY_C_FILE_PUT:
		fuzz_touch(req->u.file_put.label, req->u.file_put.label_len);
		break;
	case FERRY_C_FILE_GET:
		fuzz_touch(req->u.file_get.uri, req->u.file_get.uri_len);
		break;
	default:
		break;
	}
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msg_chunks st;
	struct msg_frame f;
	struct msg_req req;
	size_t off = 0;
	int r;

	memset(&st, 0, sizeof(st));
	while (off < size) {
		r = msgparse_frame(data + off, size - off, &f);
		if (r <= 0)
			break;
		if (!msgparse_chunk_allows(&st, f.type))
			break;
		r = requests_decode(&f, NULL, &req);
		if (r == -EOPNOTSUPP)
			fuzz_sink = (uint8_t)msgparse_req_id(&f);
		else if (r < 0 || !fuzz_request(&st, &req))
			break;
		off += f.size;
	}
	return 0;
}
