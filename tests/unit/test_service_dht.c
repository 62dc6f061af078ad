/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's client requests with a DHT running (src/service/requests_dht.c
 * and libferry's src/libferry/dht.c), against the one-node daemon of
 * dhtd.h, through libferry and in raw frames: a PUT whole and in pieces
 * with its signed receipt, GET back, an absent key, FIND, STATUS, fewer
 * receipts than asked, a block over the daemon's largest, every refused
 * value, CLIENT_BUFFER (-ENOBUFS), the bound on requests in flight
 * (-EAGAIN), and clients that leave before their answers come: the child
 * must then go on and exit cleanly, with ASan or valgrind watching.
 */
/* unit-link: libferry */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include <ferry/client.h>

#include "lib/time.h"
#include "lib/wire.h"
#include "dhtd.h"
#include "unit.h"

#define RAW_WAIT_MS 5000
#define RESULT_SIZE 12

/* len bytes that differ with seed. */
static uint8_t *
block_new(size_t len, uint32_t seed)
{
	uint8_t *p = malloc(len);

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131 + seed * 7 + (i >> 9)) & 0xff);
	return p;
}

static int
raw_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memcpy(sun.sun_path, dhtd.socket, strlen(dhtd.socket) + 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

static void
raw_write(int fd, const void *p, size_t len)
{
	ck_assert_int_eq(write(fd, p, len), (ssize_t)len);
}

/* Reads exactly len bytes within RAW_WAIT_MS. */
static void
raw_read_all(int fd, uint8_t *buf, size_t len)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	size_t have = 0;
	ssize_t n;

	while (have < len) {
		ck_assert_int_eq(poll(&pfd, 1, RAW_WAIT_MS), 1);
		n = read(fd, buf + have, len - have);
		ck_assert_int_gt(n, 0);
		have += (size_t)n;
	}
}

/* Reads one frame into buf (64 KiB); returns its size. */
static size_t
raw_frame(int fd, uint8_t *buf)
{
	size_t size;

	raw_read_all(fd, buf, 4);
	size = wire_get16(buf);
	ck_assert_uint_ge(size, 4);
	raw_read_all(fd, buf + 4, size - 4);
	return size;
}

/* Expects RESULT {req_id, status} with text in its message. */
static void
raw_result(int fd, uint32_t req_id, int status, const char *text)
{
	static uint8_t buf[65536];
	size_t n = raw_frame(fd, buf);

	ck_assert_uint_ge(n, RESULT_SIZE);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_RESULT);
	ck_assert_uint_eq(wire_get32(buf + 4), req_id);
	ck_assert_int_eq((int32_t)wire_get32(buf + 8), status);
	if (text != NULL)
		ck_assert_msg(memmem(buf + 12, n - 12, text, strlen(text)),
		    "RESULT of %u does not say \"%s\"", req_id, text);
}

/* A DHT_PUT piece in buf; returns its size. */
static size_t
mk_put(uint8_t *buf, uint32_t req_id, uint8_t repl, uint8_t r8, uint16_t r16,
    uint64_t expiry, uint32_t total, uint32_t offset, const void *data,
    size_t len)
{
	wire_put_hdr(buf, (uint16_t)(FERRY_C_DHT_PUT_FIXED + len),
	    FERRY_C_DHT_PUT);
	wire_put32(buf + 4, req_id);
	buf[8] = repl;
	buf[9] = r8;
	wire_put16(buf + 10, r16);
	wire_put64(buf + 12, expiry);
	wire_put32(buf + 20, total);
	wire_put32(buf + 24, offset);
	if (len > 0)
		memcpy(buf + FERRY_C_DHT_PUT_FIXED, data, len);
	return FERRY_C_DHT_PUT_FIXED + len;
}

static size_t
mk_get(uint8_t *buf, uint32_t req_id, const struct ferry_dht_key *key)
{
	wire_put_hdr(buf, FERRY_C_DHT_GET_SIZE, FERRY_C_DHT_GET);
	wire_put32(buf + 4, req_id);
	memcpy(buf + 8, key->bytes, FERRY_DHT_KEY_LEN);
	return FERRY_C_DHT_GET_SIZE;
}

static size_t
mk_find(uint8_t *buf, uint32_t req_id, uint16_t want, uint16_t reserved)
{
	wire_put_hdr(buf, FERRY_C_DHT_FIND_SIZE, FERRY_C_DHT_FIND);
	wire_put32(buf + 4, req_id);
	memset(buf + 8, 0x33, FERRY_DHT_KEY_LEN);
	wire_put16(buf + 40, want);
	wire_put16(buf + 42, reserved);
	return FERRY_C_DHT_FIND_SIZE;
}

/* Stores len bytes of seed at the daemon with replication 1. */
static struct ferry_dht_key
put_block(size_t len, uint32_t seed)
{
	struct ferry_dht_receipt *rc;
	struct ferry_dht_key key;
	uint8_t *data = block_new(len, seed);
	size_t n;

	ck_assert_int_eq(ferry_dht_put(dhtd.fc, data, len, 1, 0, &key, &rc, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	free(rc);
	free(data);
	return key;
}

START_TEST(test_status_empty)
{
	struct ferry_dht_status *st;

	ck_assert_int_eq(ferry_dht_status(dhtd.fc, &st), 0);
	ck_assert_uint_eq(st->k, 20);
	ck_assert_uint_eq(st->replication, 3);
	ck_assert_uint_eq(st->entries, 0);
	ck_assert_uint_eq(st->cached, 0);
	ck_assert_uint_eq(st->buckets_used, 0);
	ck_assert_uint_eq(st->blocks, 0);
	ck_assert_uint_eq(st->bytes, 0);
	ck_assert_uint_eq(st->quota, DHTD_QUOTA);
	ck_assert_uint_eq(st->n_buckets, 0);
	/* CSCC at its start: the seed's window, nothing measured. */
	ck_assert_ptr_nonnull(st->cc);
	ck_assert_uint_eq(st->cc->scheme, FERRY_DHT_CC_CSCC);
	ck_assert_uint_eq(st->cc->waiting, 0);
	ck_assert_uint_eq(st->cc->in_flight, 0);
	ck_assert(st->cc->credits == 5.0);
	ck_assert(st->cc->ssthresh == 1000.0);
	ck_assert_uint_eq(st->cc->rtt_us, 0);
	ck_assert_uint_eq(st->cc->rto_us, 1000000);
	ck_assert_uint_eq(st->cc->retransmits + st->cc->losses +
	        st->cc->drops + st->cc->duplicates + st->cc->refused,
	    0);
	ck_assert_ptr_null(st->bpcc);
	ferry_dht_status_free(st);
}
END_TEST

/* A receipt as the DHT checked it: signed by the daemon's DHT identity
 * for this block, and every byte of it counts. */
static void
check_receipt(const struct ferry_dht_key *key, struct ferry_dht_receipt *rc,
    uint64_t expiry)
{
	struct ferry_dht_key other = *key;

	ck_assert_mem_eq(rc->storer.bytes, dhtd.dht_id.bytes,
	    FERRY_PEER_ID_LEN);
	ck_assert_uint_eq(rc->expiry, expiry);
	ck_assert_int_eq(ferry_dht_receipt_verify(key, rc), 0);
	other.bytes[0] ^= 1;
	ck_assert_int_eq(ferry_dht_receipt_verify(&other, rc), -EBADMSG);
	rc->sig[10] ^= 1;
	ck_assert_int_eq(ferry_dht_receipt_verify(key, rc), -EBADMSG);
	rc->sig[10] ^= 1;
	rc->storer.bytes[0] ^= 1;
	ck_assert_int_eq(ferry_dht_receipt_verify(key, rc), -EBADMSG);
	rc->storer.bytes[0] ^= 1;
}

START_TEST(test_put_get_find)
{
	uint8_t *small = block_new(1000, 1), *large = block_new(300000, 2);
	struct ferry_dht_key k1, k2, want;
	struct ferry_dht_receipt *rc;
	struct ferry_dht_status *st;
	struct ferry_peer_id *ids;
	uint64_t now = time_real_s();
	uint8_t *got;
	size_t n, len;

	/* Expiry 0: the daemon's default lifetime, a day. */
	ck_assert_int_eq(ferry_dht_put(dhtd.fc, small, 1000, 1, 0, &k1, &rc,
	                     &n),
	    0);
	ck_assert_int_eq(ferry_dht_key_of(small, 1000, &want), 0);
	ck_assert_mem_eq(k1.bytes, want.bytes, FERRY_DHT_KEY_LEN);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_ge(rc[0].expiry, now + 86400);
	ck_assert_uint_le(rc[0].expiry, time_real_s() + 86400);
	check_receipt(&k1, &rc[0], rc[0].expiry);
	free(rc);
	/* In five pieces, with an expiry of its own. */
	ck_assert_int_eq(ferry_dht_put(dhtd.fc, large, 300000, 1, now + 3600,
	                     &k2, &rc, &n),
	    0);
	ck_assert_uint_eq(n, 1);
	check_receipt(&k2, &rc[0], now + 3600);
	free(rc);
	ck_assert_int_eq(ferry_dht_get(dhtd.fc, &k1, &got, &len), 0);
	ck_assert_uint_eq(len, 1000);
	ck_assert_mem_eq(got, small, len);
	free(got);
	ck_assert_int_eq(ferry_dht_get(dhtd.fc, &k2, &got, &len), 0);
	ck_assert_uint_eq(len, 300000);
	ck_assert_int_eq(memcmp(got, large, len), 0);
	free(got);
	ck_assert_int_eq(ferry_dht_status(dhtd.fc, &st), 0);
	ck_assert_uint_eq(st->blocks, 2);
	ck_assert_uint_eq(st->bytes, 301000);
	ferry_dht_status_free(st);
	/* Alone in its network, the daemon is the closest peer to any key. */
	ck_assert_int_eq(ferry_dht_find(dhtd.fc, &k2, 8, &ids, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_mem_eq(ids[0].bytes, dhtd.dht_id.bytes, FERRY_PEER_ID_LEN);
	free(ids);
	free(small);
	free(large);
}
END_TEST

START_TEST(test_not_found_and_partial)
{
	uint8_t data[100], *got = NULL;
	struct ferry_dht_receipt *rc;
	struct ferry_dht_key key, absent;
	size_t n = 99, len = 0;

	memset(&absent, 0xee, sizeof(absent));
	ck_assert_int_eq(ferry_dht_get(dhtd.fc, &absent, &got, &len), -ENOENT);
	ck_assert_ptr_null(got);
	/* Two storing peers asked for, one there: after the DHT's timeout,
	 * -EIO with the receipt that came. */
	memset(data, 0x42, sizeof(data));
	ck_assert_int_eq(ferry_dht_put(dhtd.fc, data, sizeof(data), 2, 0, &key,
	                     &rc, &n),
	    -EIO);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(ferry_dht_receipt_verify(&key, &rc[0]), 0);
	free(rc);
	/* The daemon stored it all the same. */
	ck_assert_int_eq(ferry_dht_get(dhtd.fc, &key, &got, &len), 0);
	ck_assert_uint_eq(len, sizeof(data));
	free(got);
}
END_TEST

START_TEST(test_block_sizes)
{
	size_t max = 1024 * 1024; /* the DHT's default largest block */
	uint8_t *data = block_new(FERRY_DHT_BLOCK_MAX + 1, 3), *got;
	struct ferry_dht_status *st;
	struct ferry_dht_key key;
	size_t len;

	/* Over the daemon's largest: refused after its pieces, and the
	 * connection goes on. */
	ck_assert_int_eq(ferry_dht_put(dhtd.fc, data, max + 1, 1, 0, &key, NULL,
	                     NULL),
	    -EMSGSIZE);
	ck_assert_int_eq(ferry_dht_status(dhtd.fc, &st), 0);
	ck_assert_uint_eq(st->blocks, 0);
	ferry_dht_status_free(st);
	/* Over the wire's: libferry refuses it itself. */
	ck_assert_int_eq(ferry_dht_put(dhtd.fc, data, FERRY_DHT_BLOCK_MAX + 1,
	                     1, 0, &key, NULL, NULL),
	    -EMSGSIZE);
	/* Exactly the daemon's largest, in 17 pieces. */
	ck_assert_int_eq(ferry_dht_put(dhtd.fc, data, max, 1, 0, &key, NULL,
	                     NULL),
	    0);
	ck_assert_int_eq(ferry_dht_get(dhtd.fc, &key, &got, &len), 0);
	ck_assert_uint_eq(len, max);
	ck_assert_int_eq(memcmp(got, data, max), 0);
	free(got);
	free(data);
}
END_TEST

/* Well-formed requests with values the daemon refuses: RESULT -EINVAL
 * saying why, and the connection stays. */
START_TEST(test_refused_values)
{
	static uint8_t buf[65536];
	uint64_t past = time_real_s() - 1;
	int fd = raw_connect();
	size_t n;

	raw_write(fd, buf, mk_put(buf, 1, 1, 1, 0, 0, 3, 0, "abc", 3));
	raw_result(fd, 1, -EINVAL, "reserved field not 0");
	raw_write(fd, buf, mk_put(buf, 2, 1, 0, 0x8000, 0, 3, 0, "abc", 3));
	raw_result(fd, 2, -EINVAL, "reserved field not 0");
	/* Set in a middle piece only: refused once, for the last piece. */
	raw_write(fd, buf, mk_put(buf, 3, 1, 0, 0, 0, 9, 0, "abc", 3));
	raw_write(fd, buf, mk_put(buf, 4, 1, 0, 1, 0, 9, 3, "def", 3));
	raw_write(fd, buf, mk_put(buf, 5, 1, 0, 0, 0, 9, 6, "ghi", 3));
	raw_result(fd, 5, -EINVAL, "reserved field not 0");
	raw_write(fd, buf, mk_put(buf, 6, 1, 0, 0, past, 3, 0, "abc", 3));
	raw_result(fd, 6, -EINVAL, "expiry not in the future");
	raw_write(fd, buf, mk_put(buf, 7, 17, 0, 0, 0, 3, 0, "abc", 3));
	raw_result(fd, 7, -EINVAL, "replication above 16");
	raw_write(fd, buf, mk_put(buf, 8, 1, 0, 0, 0, 0, 0, NULL, 0));
	raw_result(fd, 8, -EINVAL, "the block is empty");
	raw_write(fd, buf, mk_find(buf, 9, 0, 0));
	raw_result(fd, 9, -EINVAL, "want must be 1 to 32");
	raw_write(fd, buf, mk_find(buf, 10, 33, 0));
	raw_result(fd, 10, -EINVAL, "want must be 1 to 32");
	raw_write(fd, buf, mk_find(buf, 11, 4, 1));
	raw_result(fd, 11, -EINVAL, "reserved field not 0");
	/* Still served: DHT_STATUS, then a FIND answered in full. */
	wire_put_hdr(buf, 8, FERRY_C_DHT_STATUS_REQ);
	wire_put32(buf + 4, 12);
	raw_write(fd, buf, 8);
	n = raw_frame(fd, buf);
	/* No bucket; the congestion control's section, CSCC's. */
	ck_assert_uint_eq(n,
	    FERRY_C_DHT_STATUS_FIXED + FERRY_C_DHT_SECTION_HDR +
	        FERRY_C_DHT_CC_SIZE);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_DHT_STATUS);
	ck_assert_uint_eq(wire_get32(buf + 4), 12);
	ck_assert_uint_eq(wire_get16(buf + 48), 0);
	ck_assert_uint_eq(wire_get16(buf + 50), 0);
	ck_assert_uint_eq(wire_get16(buf + 52), FERRY_C_DHT_SECTION_CC);
	ck_assert_uint_eq(wire_get16(buf + 54), FERRY_C_DHT_CC_SIZE);
	ck_assert_uint_eq(buf[56], FERRY_DHT_CC_CSCC);
	raw_write(fd, buf, mk_find(buf, 13, 32, 0));
	n = raw_frame(fd, buf);
	ck_assert_uint_eq(n, FERRY_C_DHT_NODE_SIZE);
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_DHT_NODE);
	ck_assert_uint_eq(wire_get32(buf + 4), 13);
	ck_assert_mem_eq(buf + 8, dhtd.dht_id.bytes, FERRY_PEER_ID_LEN);
	raw_result(fd, 13, 0, NULL);
	(void)close(fd);
}
END_TEST

/*
 * A client that reads nothing while it asks for two big blocks: the
 * first is queued whole, the second refused with -ENOBUFS since more
 * than CLIENT_BUFFER (64 KiB here) already waits for it. Once it reads,
 * the same GET succeeds.
 */
START_TEST(test_client_buffer)
{
	static uint8_t buf[65536];
	const size_t len = 600000;
	struct ferry_dht_key key = put_block(len, 4);
	uint8_t two[2 * FERRY_C_DHT_GET_SIZE], *want = block_new(len, 4);
	uint8_t *got = malloc(len);
	size_t off = 0, n;
	int fd = raw_connect();

	ck_assert_ptr_nonnull(got);
	(void)mk_get(two, 1, &key);
	(void)mk_get(two + FERRY_C_DHT_GET_SIZE, 2, &key);
	raw_write(fd, two, sizeof(two));
	while (off < len) {
		n = raw_frame(fd, buf);
		ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_DHT_BLOCK);
		ck_assert_uint_eq(wire_get32(buf + 4), 1);
		ck_assert_uint_eq(wire_get32(buf + 8), len);
		ck_assert_uint_eq(wire_get32(buf + 12), off);
		ck_assert_uint_gt(n, FERRY_C_DHT_BLOCK_FIXED);
		memcpy(got + off, buf + FERRY_C_DHT_BLOCK_FIXED,
		    n - FERRY_C_DHT_BLOCK_FIXED);
		off += n - FERRY_C_DHT_BLOCK_FIXED;
	}
	ck_assert_uint_eq(off, len);
	ck_assert_int_eq(memcmp(got, want, len), 0);
	raw_result(fd, 1, 0, NULL);
	raw_result(fd, 2, -ENOBUFS, "CLIENT_BUFFER");
	raw_write(fd, two + FERRY_C_DHT_GET_SIZE, FERRY_C_DHT_GET_SIZE);
	for (off = 0; off < len; off += n - FERRY_C_DHT_BLOCK_FIXED) {
		n = raw_frame(fd, buf);
		ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_DHT_BLOCK);
		ck_assert_uint_eq(wire_get32(buf + 4), 2);
	}
	raw_result(fd, 2, 0, NULL);
	(void)close(fd);
	free(got);
	free(want);
}
END_TEST

/* 64 requests in flight on one connection; the 65th is refused at once
 * with -EAGAIN, and the 64 end as the DHT ends them. */
START_TEST(test_in_flight_bound)
{
	static uint8_t buf[65536];
	unsigned stored = 0, eio = 0;
	int fd = raw_connect();
	size_t n;

	for (uint32_t i = 1; i <= 65; i++)
		raw_write(fd, buf, mk_put(buf, i, 2, 0, 0, 0, 4, 0, &i, 4));
	raw_result(fd, 65, -EAGAIN, "in flight already");
	while (eio < 64) {
		n = raw_frame(fd, buf);
		if (wire_get16(buf + 2) == FERRY_C_DHT_STORED) {
			ck_assert_uint_eq(n,
			    FERRY_C_DHT_STORED_FIXED +
			        FERRY_C_DHT_RECEIPT_SIZE);
			ck_assert_uint_eq(buf[40], 1);
			ck_assert_uint_eq(buf[41], 2);
			stored++;
			continue;
		}
		ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_RESULT);
		ck_assert_int_eq((int32_t)wire_get32(buf + 8), -EIO);
		eio++;
		ck_assert_uint_eq(stored, eio);
	}
	/* And there is room again. */
	raw_write(fd, buf, mk_find(buf, 66, 1, 0));
	(void)raw_frame(fd, buf);
	raw_result(fd, 66, 0, NULL);
	(void)close(fd);
}
END_TEST

/*
 * Clients that leave with requests in flight, in the middle of a chunked
 * PUT, or stay connected with one pending while the daemon shuts down:
 * their answers are dropped and nothing freed is touched (the child's
 * clean exit in the teardown is the check, with ASan or valgrind).
 */
START_TEST(test_clients_leave)
{
	static uint8_t buf[65536];
	struct ferry_dht_key key = put_block(200000, 5);
	struct ferry_dht_receipt *rc;
	struct ferry_dht_status *st;
	uint8_t data[8] = "leaving";
	size_t n;
	int fd;

	fd = raw_connect();
	raw_write(fd, buf, mk_put(buf, 1, 2, 0, 0, 0, 8, 0, data, 8));
	raw_write(fd, buf, mk_get(buf, 2, &key));
	raw_write(fd, buf, mk_find(buf, 3, 4, 0));
	(void)close(fd);
	fd = raw_connect();
	raw_write(fd, buf, mk_put(buf, 4, 1, 0, 0, 0, 100, 0, data, 8));
	(void)close(fd);
	/* Outlives the DHT's timeout of the PUT above. */
	ck_assert_int_eq(ferry_dht_put(dhtd.fc, data, 7, 2, 0, &key, &rc, &n),
	    -EIO);
	free(rc);
	ck_assert_int_eq(ferry_dht_status(dhtd.fc, &st), 0);
	ferry_dht_status_free(st);
	/* Left connected, a PUT unanswered and a block unread, at the
	 * shutdown. The DHT_STATUS answer says the daemon has read them. */
	dhtd.keep_fd = raw_connect();
	raw_write(dhtd.keep_fd, buf, mk_put(buf, 5, 2, 0, 0, 0, 8, 0, data, 8));
	raw_write(dhtd.keep_fd, buf, mk_get(buf, 6, &key));
	wire_put_hdr(buf, 8, FERRY_C_DHT_STATUS_REQ);
	wire_put32(buf + 4, 7);
	raw_write(dhtd.keep_fd, buf, 8);
	/* The GET's block (and its RESULT) may come first: the store
	 * answers at the DHT's next tick, which a slow machine (valgrind)
	 * can reach before the daemon reads the STATUS request. */
	for (int i = 0; i < 3; i++) {
		(void)raw_frame(dhtd.keep_fd, buf);
		if (wire_get16(buf + 2) == FERRY_C_DHT_STATUS)
			break;
		ck_assert_uint_eq(wire_get32(buf + 4), 6);
	}
	ck_assert_uint_eq(wire_get16(buf + 2), FERRY_C_DHT_STATUS);
}
END_TEST

static Suite *
service_dht_suite(void)
{
	Suite *s = suite_create("service_dht");
	TCase *tc = tcase_create("dht on");

	tcase_add_checked_fixture(tc, dhtd_setup, dhtd_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_status_empty);
	tcase_add_test(tc, test_put_get_find);
	tcase_add_test(tc, test_not_found_and_partial);
	tcase_add_test(tc, test_block_sizes);
	tcase_add_test(tc, test_refused_values);
	tcase_add_test(tc, test_client_buffer);
	tcase_add_test(tc, test_in_flight_bound);
	tcase_add_test(tc, test_clients_leave);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(service_dht_suite());
}
