/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the DHT's wire messages (src/dht/dhtmsg.c): the
 * first input byte picks the message type (a request or an answer), the
 * rest is the body, decoded as a peer's daemon would. Checked: what
 * decodes encodes back to exactly the input; a NODES answer walks
 * through exactly its count of entries, and a RECORDS answer through
 * its count of records; PUT, record and receipt signatures are checked
 * without crashing. Types are appended to the table, so that a seed's
 * first byte keeps naming its type.
 * Seeds: tests/fuzz/corpus/dhtmsg.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "dht/dhtmsg.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint16_t fuzz_types[] = { FERRY_MSG_DHT_PUT, FERRY_MSG_DHT_GET,
	FERRY_MSG_DHT_FIND, FERRY_MSG_DHT_RECEIPT, FERRY_MSG_DHT_BLOCK,
	FERRY_MSG_DHT_NODES, FERRY_MSG_DHT_FAIL, FERRY_MSG_DHT_ACK,
	FERRY_MSG_DHT_RPUT, FERRY_MSG_DHT_RGET, FERRY_MSG_DHT_RECORDS };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	return 0;
}

static void
fuzz_same(const struct buf *out, const uint8_t *body, size_t len)
{
	if (buf_size(out) != len || memcmp(buf_head(out), body, len) != 0)
		abort();
}

static void
fuzz_request(uint16_t type, const uint8_t *body, size_t len)
{
	struct dhtmsg_req m;
	struct buf out;

	if (dhtmsg_req_decode(type, body, len, &m) < 0)
		return;
	buf_init(&out);
	if (dhtmsg_req_encode(&m, &out) != 0)
		abort();
	fuzz_same(&out, body, len);
	buf_done(&out);
	if (type == FERRY_MSG_DHT_PUT)
		(void)dhtmsg_put_verify(&m.key, &m.put);
	if (type == FERRY_MSG_DHT_RPUT)
		(void)dhtrec_verify(&m.rec);
}

static void
fuzz_answer(uint16_t type, const uint8_t *body, size_t len)
{
	struct dhtmsg_node n;
	struct dhtmsg_ans m;
	struct dhtrec r;
	struct buf out;
	size_t off = 0;
	unsigned count = 0;

	if (dhtmsg_ans_decode(type, body, len, &m) < 0)
		return;
	buf_init(&out);
	if (dhtmsg_ans_encode(&m, &out) != 0)
		abort();
	fuzz_same(&out, body, len);
	buf_done(&out);
	while (type == FERRY_MSG_DHT_NODES &&
	    dhtmsg_nodes_next(&m, &off, &n) == 1)
		count++;
	if (type == FERRY_MSG_DHT_NODES && count != m.count)
		abort();
	off = 0;
	count = 0;
	while (type == FERRY_MSG_DHT_RECORDS &&
	    dhtmsg_records_next(&m, &off, &r) == 1) {
		(void)dhtrec_verify(&r);
		count++;
	}
	if (type == FERRY_MSG_DHT_RECORDS && count != m.count)
		abort();
	if (type == FERRY_MSG_DHT_RECEIPT)
		(void)dhtmsg_receipt_verify(&m.key, &m.responder,
		    m.receipt.put_hash, &m.receipt);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t type;

	if (size < 1)
		return 0;
	type = fuzz_types[data[0] %
	    (sizeof(fuzz_types) / sizeof(fuzz_types[0]))];
	if (dhtmsg_is_request(type))
		fuzz_request(type, data + 1, size - 1);
	else
		fuzz_answer(type, data + 1, size - 1);
	return 0;
}
