/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Client request decoding (src/service/msgparse.c, through the request
 * tables of src/service/requests.c and requests_dht.c): stream
 * splitting, every request with valid, truncated and oversized frames,
 * unknown types, the families of the request table, and the
 * chunk-sequence rules of SEND and DHT_PUT in <ferry/proto.h>.
 */
#include <errno.h>
#include <string.h>

#include <check.h>

#include "lib/wire.h"
#include "service/msgparse.h"
#include "service/requests.h"
#include "unit.h"

static uint8_t frame_buf[FERRY_MSG_SIZE_MAX + 16];

/* A frame {size, type, req_id, body} in frame_buf. */
static struct msg_frame
mk(uint16_t type, uint32_t req_id, const void *body, size_t body_len)
{
	struct msg_frame f;
	size_t size = 8 + body_len;

	wire_put_hdr(frame_buf, (uint16_t)size, type);
	wire_put32(frame_buf + 4, req_id);
	if (body_len > 0)
		memcpy(frame_buf + 8, body, body_len);
	ck_assert_int_eq(msgparse_frame(frame_buf, size, &f), 1);
	return f;
}

/* A SEND piece to peer 0x11.., type, total, offset, len bytes of 0xab. */
static struct msg_frame
mk_send(uint32_t req_id, uint16_t type, uint32_t total, uint32_t offset,
    size_t len)
{
	uint8_t body[FERRY_C_SEND_FIXED - 8 + 64];

	ck_assert_uint_le(len, 64);
	memset(body, 0x11, FERRY_PEER_ID_LEN);
	wire_put16(body + 32, type);
	wire_put16(body + 34, 0);
	wire_put32(body + 36, total);
	wire_put32(body + 40, offset);
	memset(body + 44, 0xab, len);
	return mk(FERRY_C_SEND, req_id, body, 44 + len);
}

/* A DHT_PUT piece: replication, expiry, total, offset and len bytes of
 * 0xcd, with its reserved fields r8 and r16. */
static struct msg_frame
mk_put_r(uint32_t req_id, uint8_t repl, uint64_t expiry, uint32_t total,
    uint32_t offset, size_t len, uint8_t r8, uint16_t r16)
{
	uint8_t body[FERRY_C_DHT_PUT_FIXED - 8 + 64];

	ck_assert_uint_le(len, 64);
	body[0] = repl;
	body[1] = r8;
	wire_put16(body + 2, r16);
	wire_put64(body + 4, expiry);
	wire_put32(body + 12, total);
	wire_put32(body + 16, offset);
	memset(body + 20, 0xcd, len);
	return mk(FERRY_C_DHT_PUT, req_id, body, 20 + len);
}

static struct msg_frame
mk_put(uint32_t req_id, uint32_t total, uint32_t offset, size_t len)
{
	return mk_put_r(req_id, 3, 1700000000, total, offset, len, 0, 0);
}

START_TEST(test_frame_split)
{
	uint8_t stream[20];
	struct msg_frame f;

	wire_put_hdr(stream, 8, FERRY_C_STATUS_REQ);
	wire_put32(stream + 4, 7);
	wire_put_hdr(stream + 8, 12, 0x1234);
	/* Nothing complete until all of a frame is there. */
	for (size_t len = 0; len < 8; len++)
		ck_assert_int_eq(msgparse_frame(stream, len, &f), 0);
	ck_assert_int_eq(msgparse_frame(stream, 9, &f), 1);
	ck_assert_ptr_eq(f.p, stream);
	ck_assert_uint_eq(f.size, 8);
	ck_assert_uint_eq(f.type, FERRY_C_STATUS_REQ);
	ck_assert_int_eq(msgparse_frame(stream + 8, 11, &f), 0);
	ck_assert_int_eq(msgparse_frame(stream + 8, 12, &f), 1);
	ck_assert_uint_eq(f.type, 0x1234);
}
END_TEST

START_TEST(test_frame_size_below_header)
{
	uint8_t b[4];
	struct msg_frame f;

	for (uint16_t size = 0; size < FERRY_HDR_SIZE; size++) {
		wire_put_hdr(b, size, FERRY_C_STATUS_REQ);
		ck_assert_int_eq(msgparse_frame(b, sizeof(b), &f), -EBADMSG);
	}
	wire_put_hdr(b, 4, 0);
	ck_assert_int_eq(msgparse_frame(b, sizeof(b), &f), 1);
}
END_TEST

/* The requests that are only a req_id: exactly 8 bytes. */
static const uint16_t simple_types[] = {
	FERRY_C_STATUS_REQ,
	FERRY_C_SHUTDOWN,
	FERRY_C_PEERS_REQ,
	FERRY_C_HELLO_REQ,
	FERRY_C_STATS_REQ,
	FERRY_C_DHT_STATUS_REQ,
};

START_TEST(test_simple_requests)
{
	uint16_t type = simple_types[_i];
	struct msg_frame f = mk(type, 0xdeadbeef, NULL, 0);
	struct msg_req req;
	uint8_t extra = 0;

	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.type, type);
	ck_assert_uint_eq(req.req_id, 0xdeadbeef);
	/* Longer and shorter frames are malformed, and leave *ret alone. */
	f = mk(type, 1, &extra, 1);
	memset(&req, 0x77, sizeof(req));
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	ck_assert_uint_eq(req.req_id, 0x77777777);
	f.size = 4;
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f.size = 7;
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
}
END_TEST

START_TEST(test_send_valid)
{
	struct msg_frame f = mk_send(9, 0x0400, 10, 0, 10);
	struct msg_req req;

	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.req_id, 9);
	ck_assert_uint_eq(req.u.send.req_id, 9);
	ck_assert_uint_eq(req.u.send.peer.bytes[0], 0x11);
	ck_assert_uint_eq(req.u.send.peer.bytes[31], 0x11);
	ck_assert_uint_eq(req.u.send.app_type, 0x0400);
	ck_assert_uint_eq(req.u.send.total_len, 10);
	ck_assert_uint_eq(req.u.send.offset, 0);
	ck_assert_uint_eq(req.u.send.len, 10);
	ck_assert_ptr_eq(req.u.send.data, frame_buf + FERRY_C_SEND_FIXED);
	/* Empty messages are messages too. */
	f = mk_send(0, 0x0400, 0, 0, 0);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.send.len, 0);
	/* The largest allowed total. */
	f = mk_send(0, 0xffff, FERRY_APP_MSG_MAX, FERRY_APP_MSG_MAX - 4, 4);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
}
END_TEST

START_TEST(test_send_malformed)
{
	struct msg_frame f;
	struct msg_req req;

	/* Truncated: every size below the fixed part. */
	f = mk_send(0, 0x0400, 0, 0, 0);
	for (uint16_t size = 8; size < FERRY_C_SEND_FIXED; size++) {
		f.size = size;
		ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	}
	/* Too large says so, whatever else is wrong with the piece. */
	f = mk_send(0, 0x0400, FERRY_APP_MSG_MAX + 1, 0, 4);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EMSGSIZE);
	f = mk_send(0, 0x0400, 0xffffffff, 0xffffffff, 4);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EMSGSIZE);
	/* Data running past total_len, or an offset past it. */
	f = mk_send(0, 0x0400, 10, 0, 11);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk_send(0, 0x0400, 10, 8, 3);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk_send(0, 0x0400, 10, 11, 0);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk_send(0, 0x0400, 10, 0xfffffffe, 4);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
}
END_TEST

START_TEST(test_register)
{
	uint8_t types[6];
	struct msg_frame f;
	struct msg_req req;

	wire_put16(types, 0x0400);
	wire_put16(types + 2, 0xffff);
	wire_put16(types + 4, 0x0001);
	f = mk(FERRY_C_REGISTER, 3, types, 6);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.reg.n, 3);
	ck_assert_uint_eq(msgparse_register_type(&req.u.reg, 0), 0x0400);
	ck_assert_uint_eq(msgparse_register_type(&req.u.reg, 1), 0xffff);
	/* The decoder checks layout only; reserved types are refused by the
	 * handler with RESULT -EINVAL. */
	ck_assert_uint_eq(msgparse_register_type(&req.u.reg, 2), 0x0001);
	f = mk(FERRY_C_REGISTER, 3, NULL, 0);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.reg.n, 0);
	f = mk(FERRY_C_REGISTER, 3, types, 5);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f.size = 6;
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
}
END_TEST

START_TEST(test_connect)
{
	static const char uri[] = "ferry://ABC";
	struct msg_frame f = mk(FERRY_C_CONNECT, 4, uri, strlen(uri));
	struct msg_req req;

	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.uri.len, strlen(uri));
	ck_assert_int_eq(memcmp(req.u.uri.s, uri, strlen(uri)), 0);
	f = mk(FERRY_C_CONNECT, 4, NULL, 0);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk(FERRY_C_CONNECT, 4, "ab\0cd", 5);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f.size = 6;
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
}
END_TEST

START_TEST(test_ping)
{
	static const uint8_t zeros[FERRY_C_PING_FIXED];
	uint8_t body[FERRY_C_PING_FIXED - 8];
	struct msg_frame f;
	struct msg_req req;

	memset(body, 0x22, FERRY_PEER_ID_LEN);
	wire_put32(body + 32, 5);
	wire_put16(body + 36, 1000);
	wire_put16(body + 38, 0x0102);
	wire_put32(body + 40, 2500);
	f = mk(FERRY_C_PING, 6, body, sizeof(body));
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.req_id, 6);
	ck_assert_uint_eq(req.u.ping.peer.bytes[5], 0x22);
	ck_assert_uint_eq(req.u.ping.count, 5);
	ck_assert_uint_eq(req.u.ping.payload_len, 1000);
	ck_assert_uint_eq(req.u.ping.timeout_ms, 2500);
	/* Decoded, not judged: the handler refuses a non-zero value. */
	ck_assert_uint_eq(req.u.ping.reserved, 0x0102);
	f = mk(FERRY_C_PING, 6, body, sizeof(body) - 1);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk(FERRY_C_PING, 6, zeros, sizeof(body) + 1);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
}
END_TEST

START_TEST(test_unknown_types)
{
	static const uint16_t types[] = { 0x0000, FERRY_C_RESULT,
		FERRY_C_STATUS, FERRY_C_RECEIVE, FERRY_C_PEER, FERRY_C_HELLO,
		FERRY_C_PONG, FERRY_C_STAT, FERRY_C_DHT_STORED,
		FERRY_C_DHT_BLOCK, FERRY_C_DHT_NODE, FERRY_C_DHT_STATUS,
		FERRY_C_FILE_PROGRESS, FERRY_C_FILE_DONE, FERRY_C_TRANSFER,
		0x0020, 0x0400, 0xffff };
	struct msg_frame f;
	struct msg_req req;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		f = mk(types[i], 0x01020304, NULL, 0);
		ck_assert_int_eq(requests_decode(&f, NULL, &req), -EOPNOTSUPP);
		ck_assert_uint_eq(msgparse_req_id(&f), 0x01020304);
		/* Too short to carry a req_id: answered with 0. */
		f.size = 7;
		ck_assert_int_eq(requests_decode(&f, NULL, &req), -EOPNOTSUPP);
		ck_assert_uint_eq(msgparse_req_id(&f), 0);
	}
}
END_TEST

/* FILE_PUT: a label of 0..255 bytes without NUL; FILE_GET: a URI of
 * 1..1024; CANCEL: exactly an id. */
START_TEST(test_file_requests)
{
	uint8_t body[1100];
	struct msg_frame f;
	struct msg_req req;

	memset(body, 'a', sizeof(body));
	body[0] = 3;
	body[1] = 0;
	wire_put16(body + 2, 0);
	wire_put32(body + 4, 250);
	f = mk(FERRY_C_FILE_PUT, 9, body, 8 + 5);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.file_put.replication, 3);
	ck_assert_uint_eq(req.u.file_put.progress_ms, 250);
	ck_assert_uint_eq(req.u.file_put.label_len, 5);
	f = mk(FERRY_C_FILE_PUT, 9, body, 8);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.file_put.label_len, 0);
	f = mk(FERRY_C_FILE_PUT, 9, body, 7);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk(FERRY_C_FILE_PUT, 9, body, 8 + FERRY_C_FILE_LABEL_MAX + 1);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	body[10] = '\0';
	f = mk(FERRY_C_FILE_PUT, 9, body, 8 + 5);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	body[10] = 'a';
	wire_put32(body, 1000);
	wire_put32(body + 4, 0);
	f = mk(FERRY_C_FILE_GET, 9, body, 8 + 20);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.file_get.progress_ms, 1000);
	ck_assert_uint_eq(req.u.file_get.uri_len, 20);
	f = mk(FERRY_C_FILE_GET, 9, body, 8);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk(FERRY_C_FILE_GET, 9, body, 8 + FERRY_C_FILE_URI_MAX + 1);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	wire_put64(body, 0x0102030405060708ull);
	f = mk(FERRY_C_CANCEL, 9, body, 8);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert(req.u.cancel.id == 0x0102030405060708ull);
	f = mk(FERRY_C_CANCEL, 9, body, 9);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
}
END_TEST

/* Every request type has one entry with a name, a decoder and a handler;
 * only SHUTDOWN is for admins. */
START_TEST(test_request_table)
{
	static const uint16_t requests[] = { FERRY_C_STATUS_REQ,
		FERRY_C_SHUTDOWN, FERRY_C_REGISTER, FERRY_C_SEND,
		FERRY_C_PEERS_REQ, FERRY_C_HELLO_REQ, FERRY_C_CONNECT,
		FERRY_C_PING, FERRY_C_STATS_REQ, FERRY_C_DHT_PUT,
		FERRY_C_DHT_GET, FERRY_C_DHT_FIND, FERRY_C_DHT_STATUS_REQ,
		FERRY_C_FILE_PUT, FERRY_C_FILE_GET, FERRY_C_TRANSFERS_REQ,
		FERRY_C_CANCEL };
	unsigned kinds = 0;

	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		const struct request_kind *k = requests_kind(requests[i]);

		ck_assert_ptr_nonnull(k);
		ck_assert_uint_eq(k->type, requests[i]);
		ck_assert_ptr_nonnull(k->name);
		ck_assert_ptr_nonnull(k->decode);
		ck_assert_ptr_nonnull(k->handle);
		ck_assert_int_eq(k->level, requests[i] == FERRY_C_SHUTDOWN
		        ? POLICY_ADMIN
		        : POLICY_CLIENT);
	}
	/* Nothing else is a request. */
	for (uint32_t t = 0; t <= 0xffff; t++)
		kinds += requests_kind((uint16_t)t) != NULL;
	ck_assert_uint_eq(kinds, sizeof(requests) / sizeof(requests[0]));
}
END_TEST

/* How many times type appears across the families; *ret_family (may be
 * NULL) names the last one that has it. */
static unsigned
family_hits(uint16_t type, const char **ret_family)
{
	unsigned hits = 0;

	for (size_t f = 0; f < requests_family_count(); f++) {
		const struct request_family *fam = requests_family(f);

		for (size_t i = 0; i < fam->n; i++) {
			if (fam->kinds[i].type != type)
				continue;
			hits++;
			if (ret_family != NULL)
				*ret_family = fam->name;
		}
	}
	return hits;
}

/* Each request type is in exactly one family, the DHT's in "dht", and
 * requests_kind() finds what the families hold. */
START_TEST(test_request_families)
{
	static const uint16_t dht[] = { FERRY_C_DHT_PUT, FERRY_C_DHT_GET,
		FERRY_C_DHT_FIND, FERRY_C_DHT_STATUS_REQ };
	const char *name = NULL;

	ck_assert_uint_ge(requests_family_count(), 2);
	ck_assert_ptr_null(requests_family(requests_family_count()));
	for (uint32_t t = 0; t <= 0xffff; t++) {
		unsigned hits = family_hits((uint16_t)t, NULL);

		ck_assert_msg(hits <= 1, "type 0x%04x in %u families", t, hits);
		ck_assert_uint_eq(hits, requests_kind((uint16_t)t) != NULL);
	}
	for (size_t i = 0; i < sizeof(dht) / sizeof(dht[0]); i++) {
		ck_assert_uint_eq(family_hits(dht[i], &name), 1);
		ck_assert_str_eq(name, "dht");
		ck_assert_str_eq(requests_kind(dht[i])->name,
		    dht[i] == FERRY_C_DHT_PUT      ? "DHT_PUT"
		        : dht[i] == FERRY_C_DHT_GET  ? "DHT_GET"
		        : dht[i] == FERRY_C_DHT_FIND ? "DHT_FIND"
		                                     : "DHT_STATUS");
		ck_assert_int_eq(requests_kind(dht[i])->level, POLICY_CLIENT);
	}
	ck_assert_uint_eq(family_hits(FERRY_C_SEND, &name), 1);
	ck_assert_str_eq(name, "base");
}
END_TEST

START_TEST(test_dht_put_valid)
{
	struct msg_frame f = mk_put_r(21, 5, 0x0102030405060708ull, 64, 0, 64,
	    0, 0);
	struct msg_req req;

	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.type, FERRY_C_DHT_PUT);
	ck_assert_uint_eq(req.req_id, 21);
	ck_assert_uint_eq(req.u.dht_put.replication, 5);
	ck_assert_uint_eq(req.u.dht_put.expiry, 0x0102030405060708ull);
	ck_assert_uint_eq(req.u.dht_put.total_len, 64);
	ck_assert_uint_eq(req.u.dht_put.offset, 0);
	ck_assert_uint_eq(req.u.dht_put.len, 64);
	ck_assert_ptr_eq(req.u.dht_put.data, frame_buf + FERRY_C_DHT_PUT_FIXED);
	ck_assert_uint_eq(req.u.dht_put.data[63], 0xcd);
	/* Replication and expiry are the handler's to judge, and so are
	 * the reserved fields and an empty block. */
	f = mk_put_r(22, 0xff, 0, 0, 0, 0, 0x80, 0xbeef);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.dht_put.replication, 0xff);
	ck_assert_uint_eq(req.u.dht_put.reserved8, 0x80);
	ck_assert_uint_eq(req.u.dht_put.reserved16, 0xbeef);
	ck_assert_uint_eq(req.u.dht_put.len, 0);
	/* The largest block, its last piece. */
	f = mk_put(0, FERRY_DHT_BLOCK_MAX, FERRY_DHT_BLOCK_MAX - 10, 10);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.dht_put.offset, FERRY_DHT_BLOCK_MAX - 10);
}
END_TEST

START_TEST(test_dht_put_malformed)
{
	struct msg_frame f;
	struct msg_req req;

	/* Every cut of the fixed part. */
	f = mk_put(0, 0, 0, 0);
	for (uint16_t size = 0; size < FERRY_C_DHT_PUT_FIXED; size++) {
		f.size = size;
		memset(&req, 0x77, sizeof(req));
		ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
		ck_assert_uint_eq(req.req_id, 0x77777777);
	}
	/* Over the wire's largest block: -EMSGSIZE, whatever else. */
	f = mk_put(0, FERRY_DHT_BLOCK_MAX + 1, 0, 4);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EMSGSIZE);
	f = mk_put(0, 0xffffffff, 0xfffffff0, 64);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EMSGSIZE);
	/* Data past total_len, an offset past it. */
	f = mk_put(0, 10, 0, 11);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk_put(0, 10, 8, 3);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk_put(0, 10, 11, 0);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	f = mk_put(0, 10, 0xfffffffe, 4);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
}
END_TEST

START_TEST(test_dht_get)
{
	uint8_t key[FERRY_DHT_KEY_LEN + 1];
	struct msg_frame f;
	struct msg_req req;

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0x40 + i);
	f = mk(FERRY_C_DHT_GET, 31, key, FERRY_DHT_KEY_LEN);
	ck_assert_uint_eq(f.size, FERRY_C_DHT_GET_SIZE);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.req_id, 31);
	ck_assert_int_eq(memcmp(req.u.dht_get.key, key, FERRY_DHT_KEY_LEN), 0);
	for (uint16_t size = 0; size < FERRY_C_DHT_GET_SIZE; size++) {
		f.size = size;
		ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	}
	f = mk(FERRY_C_DHT_GET, 31, key, sizeof(key));
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
}
END_TEST

START_TEST(test_dht_find)
{
	uint8_t body[FERRY_C_DHT_FIND_SIZE - 8 + 1];
	struct msg_frame f;
	struct msg_req req;

	memset(body, 0x5a, FERRY_DHT_KEY_LEN);
	wire_put16(body + 32, 20);
	wire_put16(body + 34, 0);
	f = mk(FERRY_C_DHT_FIND, 41, body, FERRY_C_DHT_FIND_SIZE - 8);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.req_id, 41);
	ck_assert_uint_eq(req.u.dht_find.key[0], 0x5a);
	ck_assert_uint_eq(req.u.dht_find.key[31], 0x5a);
	ck_assert_uint_eq(req.u.dht_find.want, 20);
	ck_assert_uint_eq(req.u.dht_find.reserved, 0);
	/* want out of range and a reserved field set are decoded, and the
	 * handler refuses them. */
	wire_put16(body + 32, 0);
	wire_put16(body + 34, 0x0101);
	f = mk(FERRY_C_DHT_FIND, 42, body, FERRY_C_DHT_FIND_SIZE - 8);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_uint_eq(req.u.dht_find.want, 0);
	ck_assert_uint_eq(req.u.dht_find.reserved, 0x0101);
	for (uint16_t size = 0; size < FERRY_C_DHT_FIND_SIZE; size++) {
		f.size = size;
		ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
	}
	f = mk(FERRY_C_DHT_FIND, 43, body, sizeof(body));
	ck_assert_int_eq(requests_decode(&f, NULL, &req), -EBADMSG);
}
END_TEST

static int
chunk(struct msg_chunks *st, struct msg_frame f)
{
	struct msg_req req;

	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	return msgparse_chunk(st, &req.u.send);
}

START_TEST(test_chunk_sequence)
{
	struct msg_chunks st;

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 5, 0, 5)),
	    MSGPARSE_WHOLE);
	ck_assert(!st.active);
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 100, 0, 40)),
	    MSGPARSE_FIRST);
	ck_assert(st.active);
	ck_assert(msgparse_chunk_allows(&st, FERRY_C_SEND));
	ck_assert(!msgparse_chunk_allows(&st, FERRY_C_STATUS_REQ));
	ck_assert(!msgparse_chunk_allows(&st, 0x7777));
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 100, 40, 40)),
	    MSGPARSE_MIDDLE);
	ck_assert_int_eq(chunk(&st, mk_send(7, 0x400, 100, 80, 20)),
	    MSGPARSE_LAST);
	ck_assert(!st.active);
	ck_assert(msgparse_chunk_allows(&st, FERRY_C_STATUS_REQ));
}
END_TEST

START_TEST(test_chunk_violations)
{
	struct msg_chunks st, saved;
	struct msg_frame f;
	struct msg_req req;

	memset(&st, 0, sizeof(st));
	/* Starting anywhere but 0, or with an empty first piece. */
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 100, 10, 10)), -EBADMSG);
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 100, 0, 0)), -EBADMSG);
	ck_assert(!st.active);
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 100, 0, 40)),
	    MSGPARSE_FIRST);
	saved = st;
	/* A gap, an overlap, another type, another total, another peer, an
	 * empty piece: each refused and the state left as it was. */
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 100, 50, 10)), -EBADMSG);
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 100, 30, 10)), -EBADMSG);
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x401, 100, 40, 10)), -EBADMSG);
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 99, 40, 10)), -EBADMSG);
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 100, 40, 0)), -EBADMSG);
	f = mk_send(0, 0x400, 100, 40, 10);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	req.u.send.peer.bytes[31] ^= 1;
	ck_assert_int_eq(msgparse_chunk(&st, &req.u.send), -EBADMSG);
	ck_assert_mem_eq(&st, &saved, sizeof(st));
}
END_TEST

static int
put_chunk(struct msg_chunks *st, struct msg_frame f)
{
	struct msg_req req;

	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	return msgparse_put_chunk(st, &req.u.dht_put);
}

START_TEST(test_put_chunk_sequence)
{
	struct msg_chunks st;

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(put_chunk(&st, mk_put(1, 5, 0, 5)), MSGPARSE_WHOLE);
	ck_assert(!st.active);
	/* The empty block is whole too (and refused by the handler). */
	ck_assert_int_eq(put_chunk(&st, mk_put(1, 0, 0, 0)), MSGPARSE_WHOLE);
	ck_assert_int_eq(put_chunk(&st, mk_put(2, 100, 0, 64)),
	    MSGPARSE_FIRST);
	ck_assert(st.active);
	/* Only its pieces may come now, and no SEND. */
	ck_assert(msgparse_chunk_allows(&st, FERRY_C_DHT_PUT));
	ck_assert(!msgparse_chunk_allows(&st, FERRY_C_SEND));
	ck_assert(!msgparse_chunk_allows(&st, FERRY_C_DHT_GET));
	ck_assert(!msgparse_chunk_allows(&st, FERRY_C_STATUS_REQ));
	/* A req_id that differs is ignored until the last piece. */
	ck_assert_int_eq(put_chunk(&st, mk_put(3, 100, 64, 20)),
	    MSGPARSE_MIDDLE);
	ck_assert_int_eq(put_chunk(&st, mk_put(4, 100, 84, 16)),
	    MSGPARSE_LAST);
	ck_assert(!st.active);
	ck_assert(msgparse_chunk_allows(&st, FERRY_C_SEND));
}
END_TEST

START_TEST(test_put_chunk_violations)
{
	struct msg_chunks st, saved;
	struct msg_frame f;
	struct msg_req req;

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(put_chunk(&st, mk_put(0, 100, 10, 10)), -EBADMSG);
	ck_assert_int_eq(put_chunk(&st, mk_put(0, 100, 0, 0)), -EBADMSG);
	ck_assert(!st.active);
	ck_assert_int_eq(put_chunk(&st, mk_put(0, 100, 0, 40)),
	    MSGPARSE_FIRST);
	saved = st;
	/* A gap, an overlap, an empty piece, another total, replication or
	 * expiry: each refused, the state left as it was. */
	ck_assert_int_eq(put_chunk(&st, mk_put(0, 100, 50, 10)), -EBADMSG);
	ck_assert_int_eq(put_chunk(&st, mk_put(0, 100, 30, 10)), -EBADMSG);
	ck_assert_int_eq(put_chunk(&st, mk_put(0, 100, 40, 0)), -EBADMSG);
	ck_assert_int_eq(put_chunk(&st, mk_put(0, 99, 40, 10)), -EBADMSG);
	ck_assert_int_eq(put_chunk(&st,
	                     mk_put_r(0, 4, 1700000000, 100, 40, 10, 0, 0)),
	    -EBADMSG);
	ck_assert_int_eq(put_chunk(&st,
	                     mk_put_r(0, 3, 1700000001, 100, 40, 10, 0, 0)),
	    -EBADMSG);
	ck_assert_mem_eq(&st, &saved, sizeof(st));
	/* A SEND piece where a DHT_PUT's is due, and the other way round,
	 * even at the right offset. */
	f = mk_send(0, 0x400, 100, 40, 10);
	ck_assert_int_eq(requests_decode(&f, NULL, &req), 0);
	ck_assert_int_eq(msgparse_chunk(&st, &req.u.send), -EBADMSG);
	ck_assert_mem_eq(&st, &saved, sizeof(st));
	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(chunk(&st, mk_send(0, 0x400, 100, 0, 40)),
	    MSGPARSE_FIRST);
	ck_assert_int_eq(put_chunk(&st, mk_put(0, 100, 40, 10)), -EBADMSG);
	/* Reserved bits do not break the sequence: the handler refuses the
	 * PUT at its end. */
	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(put_chunk(&st, mk_put(0, 100, 0, 40)),
	    MSGPARSE_FIRST);
	ck_assert_int_eq(put_chunk(&st,
	                     mk_put_r(0, 3, 1700000000, 100, 40, 60, 1, 0)),
	    MSGPARSE_LAST);
}
END_TEST

static Suite *
msgparse_suite(void)
{
	Suite *s = suite_create("msgparse");
	TCase *tc = tcase_create("decode");

	tcase_add_test(tc, test_frame_split);
	tcase_add_test(tc, test_request_table);
	tcase_add_test(tc, test_request_families);
	tcase_add_test(tc, test_frame_size_below_header);
	tcase_add_loop_test(tc, test_simple_requests, 0,
	    sizeof(simple_types) / sizeof(simple_types[0]));
	tcase_add_test(tc, test_send_valid);
	tcase_add_test(tc, test_send_malformed);
	tcase_add_test(tc, test_register);
	tcase_add_test(tc, test_connect);
	tcase_add_test(tc, test_ping);
	tcase_add_test(tc, test_unknown_types);
	tcase_add_test(tc, test_dht_put_valid);
	tcase_add_test(tc, test_dht_put_malformed);
	tcase_add_test(tc, test_dht_get);
	tcase_add_test(tc, test_dht_find);
	tcase_add_test(tc, test_file_requests);
	suite_add_tcase(s, tc);
	tc = tcase_create("chunks");
	tcase_add_test(tc, test_chunk_sequence);
	tcase_add_test(tc, test_chunk_violations);
	tcase_add_test(tc, test_put_chunk_sequence);
	tcase_add_test(tc, test_put_chunk_violations);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(msgparse_suite());
}
