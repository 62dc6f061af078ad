/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for libferry's side of the client socket: the input
 * is what a daemon sends, and the client library's public calls read it,
 * as an application would from whatever bound the socket path.
 *
 * Input: byte 0 picks the call (FUZZ_OP_*), byte 1 is its argument, the
 * rest is the daemon's byte stream. Each run binds a listening socket in
 * $TMPDIR (or /tmp) just long enough for ferry_client_open() to connect
 * and removes it again, writes the stream to the daemon's end and shuts
 * that end for writing, so that every call sees the end of the stream
 * after the input rather than waiting: the client's requests go into the
 * daemon's receive buffer, which nobody reads. A stream longer than that
 * end's send buffer (far above -max_len) is cut there. The calls' first
 * request has req_id 1, the next 2, and so on (the seeds rely on it).
 *
 * Whatever a call returns is read byte by byte and its invariants
 * checked, so that an over-read or a broken promise shows under ASan.
 */
/* fuzz-link: libferry */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ferry/client.h>
#include <ferry/proto.h>

#include "fuzz_touch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	FUZZ_OP_STATUS,
	FUZZ_OP_PEERS,
	FUZZ_OP_STATS,
	FUZZ_OP_HELLO,
	FUZZ_OP_DHT_PUT,
	FUZZ_OP_DHT_GET,
	FUZZ_OP_DHT_FIND,
	FUZZ_OP_DHT_STATUS,
	FUZZ_OP_TRANSFERS,
	FUZZ_OP_FILE_PUT,
	FUZZ_OP_FILE_GET,
	FUZZ_OP_DHT_ASYNC,
	FUZZ_OP_RECEIVE,
	FUZZ_OP_PING,
	FUZZ_OP_RESULT, /* calls answered by RESULT alone */
	FUZZ_OP_COUNT
};

/* The block the DHT calls put and ask for; the seeds carry it. */
static const char fuzz_block[] = "ferry fuzz block\n";
/* Per call: short, since the stream's end always comes at once. */
#define FUZZ_TIMEOUT_MS 200

/* A promise of the API broken: a crash libFuzzer keeps. */
static void
fuzz_check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_client_replies: %s\n", what);
		abort();
	}
}

static void
fuzz_touch_str(const char *s)
{
	fuzz_check(s != NULL, "NULL string");
	fuzz_touch(s, strlen(s) + 1);
}

/* A char array of the API: NUL-terminated within its size. */
static void
fuzz_touch_array(const char *s, size_t size)
{
	fuzz_check(memchr(s, '\0', size) != NULL, "unterminated string");
	fuzz_touch(s, size);
}

/* Every call returns 0 or a negative errno. */
static void
fuzz_check_ret(int r)
{
	fuzz_check(r <= 0 && r >= -4095, "return value not 0 or -errno");
}

/* Connects a client to a listening socket that exists only while it
 * does; *ret_daemon is the daemon's end. 0 or -errno. */
static int
fuzz_connect(struct ferry_client **ret_c, int *ret_daemon)
{
	const char *dir = getenv("TMPDIR");
	struct sockaddr_un sun;
	int lfd, dfd = -1, r;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (snprintf(sun.sun_path, sizeof(sun.sun_path),
	        "%s/ferry-fuzz-replies-%ld.sock", dir,
	        (long)getpid()) >= (int)sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return -errno;
	/* A socket left by an earlier process of this pid that crashed. */
	(void)unlink(sun.sun_path);
	if (bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(lfd, 1) < 0) {
		r = -errno;
		(void)close(lfd);
		return r;
	}
	r = ferry_client_open(sun.sun_path, ret_c);
	if (r == 0) {
		dfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (dfd < 0) {
			r = -errno;
			ferry_client_close(*ret_c);
		}
	}
	(void)unlink(sun.sun_path);
	(void)close(lfd);
	*ret_daemon = dfd;
	return r;
}

static void
fuzz_status(struct ferry_client *c)
{
	struct ferry_status *st = NULL;
	int r = ferry_status(c, &st);

	fuzz_check_ret(r);
	if (r < 0)
		return;
	fuzz_touch(st, sizeof(*st));
	fuzz_touch_str(st->version);
	fuzz_touch(st->transports, st->n_transports * sizeof(*st->transports));
	for (size_t i = 0; i < st->n_transports; i++)
		fuzz_touch_str(st->transports[i].name);
	ferry_status_free(st);
}

static void
fuzz_peers(struct ferry_client *c)
{
	struct ferry_peer_info *peers = NULL;
	size_t n = 0;
	int r = ferry_peers(c, &peers, &n);

	fuzz_check_ret(r);
	if (r < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		fuzz_touch(&peers[i].id, sizeof(peers[i].id));
		fuzz_touch_array(peers[i].transport,
		    sizeof(peers[i].transport));
		fuzz_touch_array(peers[i].address, sizeof(peers[i].address));
	}
	ferry_peers_free(peers);
}

static void
fuzz_stats(struct ferry_client *c)
{
	struct ferry_stat *stats = NULL;
	size_t n = 0;
	int r = ferry_stats(c, &stats, &n);

	fuzz_check_ret(r);
	if (r < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		fuzz_touch_str(stats[i].name);
		fuzz_touch(&stats[i].value, sizeof(stats[i].value));
	}
	ferry_stats_free(stats, n);
}

static void
fuzz_hello(struct ferry_client *c)
{
	char *uri = NULL;
	int r = ferry_hello(c, &uri);

	fuzz_check_ret(r);
	if (r < 0)
		return;
	fuzz_touch_str(uri);
	free(uri);
}

static void
fuzz_dht_put(struct ferry_client *c, uint8_t arg)
{
	struct ferry_dht_receipt *rc = NULL;
	struct ferry_dht_key key, want;
	size_t n = 0;
	int r = ferry_dht_put(c, fuzz_block, sizeof(fuzz_block) - 1,
	    arg % (FERRY_DHT_REPL_MAX + 1), 0, &key, &rc, &n);

	fuzz_check_ret(r);
	if (r != 0 && r != -EIO)
		return;
	(void)ferry_dht_key_of(fuzz_block, sizeof(fuzz_block) - 1, &want);
	fuzz_check(memcmp(key.bytes, want.bytes, sizeof(key.bytes)) == 0,
	    "DHT_PUT gave another block's key");
	fuzz_check(n <= FERRY_DHT_REPL_MAX, "more receipts than asked");
	fuzz_touch(rc, n * sizeof(*rc));
	for (size_t i = 0; i < n; i++)
		fuzz_sink = (uint8_t)ferry_dht_receipt_verify(&key, &rc[i]);
	free(rc);
}

static void
fuzz_dht_get(struct ferry_client *c)
{
	struct ferry_dht_key key, got;
	uint8_t *block = NULL;
	size_t len = 0;
	int r;

	(void)ferry_dht_key_of(fuzz_block, sizeof(fuzz_block) - 1, &key);
	r = ferry_dht_get(c, &key, &block, &len);
	fuzz_check_ret(r);
	if (r < 0)
		return;
	fuzz_check(block != NULL && len <= FERRY_DHT_BLOCK_MAX,
	    "DHT_GET's block");
	(void)ferry_dht_key_of(block, len, &got);
	fuzz_check(memcmp(got.bytes, key.bytes, sizeof(key.bytes)) == 0,
	    "DHT_GET gave a block of another key");
	free(block);
}

static void
fuzz_dht_find(struct ferry_client *c, uint8_t arg)
{
	unsigned want = arg % FERRY_DHT_FIND_MAX + 1;
	struct ferry_peer_id *ids = NULL;
	struct ferry_dht_key key;
	size_t n = 0;
	int r;

	(void)ferry_dht_key_of(fuzz_block, sizeof(fuzz_block) - 1, &key);
	r = ferry_dht_find(c, &key, want, &ids, &n);
	fuzz_check_ret(r);
	if (r < 0)
		return;
	fuzz_check(n <= want, "DHT_FIND gave more peers than asked");
	fuzz_touch(ids, n * sizeof(*ids));
	free(ids);
}

static void
fuzz_dht_status(struct ferry_client *c)
{
	struct ferry_dht_status *st = NULL;
	int r = ferry_dht_status(c, &st);

	fuzz_check_ret(r);
	if (r < 0)
		return;
	fuzz_touch(st, sizeof(*st));
	fuzz_touch(st->buckets, st->n_buckets * sizeof(*st->buckets));
	if (st->bpcc != NULL) {
		fuzz_touch(st->bpcc, sizeof(*st->bpcc));
		fuzz_touch(st->bpcc->peers,
		    st->bpcc->n_peers * sizeof(*st->bpcc->peers));
	}
	if (st->cc != NULL)
		fuzz_touch(st->cc, sizeof(*st->cc));
	ferry_dht_status_free(st);
}

static void
fuzz_transfers(struct ferry_client *c)
{
	struct ferry_transfer *t = NULL;
	size_t n = 0;
	int r = ferry_transfers(c, &t, &n);

	fuzz_check_ret(r);
	if (r < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		fuzz_touch(&t[i].id, sizeof(t[i].id));
		fuzz_touch_str(t[i].label);
	}
	ferry_transfers_free(t, n);
}

static void
fuzz_progress(void *cls, const struct ferry_file_progress *p)
{
	(*(unsigned *)cls)++;
	fuzz_touch(p, sizeof(*p));
}

/* FILE_PUT or FILE_GET: the daemon never reads the file here, so any
 * descriptor does. */
static void
fuzz_file(struct ferry_client *c, bool put, uint8_t arg)
{
	struct ferry_file_result res;
	unsigned calls = 0;
	/* arg 0: no progress asked for; else every arg ms. */
	uint32_t every = arg;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC), r;

	if (fd < 0)
		return;
	if (put)
		r = ferry_file_put(c, fd, "fuzz.txt", arg % 4, every,
		    fuzz_progress, &calls, &res);
	else
		r = ferry_file_get(c,
		    "ferry:f1.5.0123456789ABCDEFGHJKMNPQRSTVWXYZ", fd, every,
		    fuzz_progress, &calls, &res);
	(void)close(fd);
	fuzz_check_ret(r);
	fuzz_check(every > 0 || calls == 0, "progress nobody asked for");
	if (r == 0) {
		fuzz_touch(&res, offsetof(struct ferry_file_result, uri));
		fuzz_touch_array(res.uri, sizeof(res.uri));
	}
}

static void
fuzz_dht_end(const struct ferry_dht_end *e)
{
	fuzz_check_ret(e->status);
	fuzz_check(e->op == FERRY_C_DHT_PUT || e->op == FERRY_C_DHT_GET ||
	        e->op == FERRY_C_DHT_FIND,
	    "an end of no DHT request");
	if (e->data != NULL) {
		struct ferry_dht_key got;
		bool same;

		(void)ferry_dht_key_of(e->data, e->len, &got);
		same = memcmp(got.bytes, e->key.bytes, sizeof(got.bytes)) == 0;
		fuzz_check(same,
		    "an asynchronous GET gave a block of another key");
	}
	if (e->peers != NULL) {
		fuzz_check(e->n_peers <= FERRY_DHT_FIND_MAX,
		    "an asynchronous FIND gave too many peers");
		fuzz_touch(e->peers, e->n_peers * sizeof(*e->peers));
	}
	fuzz_check(e->receipts <= FERRY_DHT_REPL_MAX,
	    "an asynchronous PUT counted too many receipts");
}

/* arg bits 0-1: 1 to 4 requests; bits 2-5 two bits each for the first
 * two (and the rest as the second): 0 PUT, 1 GET, 2 and 3 FIND; bit 6
 * a blocking DHT_STATUS after the starts, while they are in flight. */
static void
fuzz_dht_async(struct ferry_client *c, uint8_t arg)
{
	unsigned n = (arg & 3u) + 1, started = 0;
	struct ferry_dht_key key;
	struct ferry_dht_end e;
	uint32_t req_id;
	int r;

	(void)ferry_dht_key_of(fuzz_block, sizeof(fuzz_block) - 1, &key);
	for (unsigned i = 0; i < n; i++) {
		unsigned kind =
		    i < 2 ? (arg >> (2 + 2 * i)) & 3u : (arg >> 4) & 3u;

		if (kind == 0)
			r = ferry_dht_put_start(c, fuzz_block,
			    sizeof(fuzz_block) - 1, 1, 0, &req_id);
		else if (kind == 1)
			r = ferry_dht_get_start(c, &key, &req_id);
		else
			r = ferry_dht_find_start(c, &key, kind == 2 ? 4 : 32,
			    &req_id);
		fuzz_check_ret(r);
		if (r == 0)
			started++;
	}
	fuzz_check(ferry_dht_pending(c) == started, "pending miscounted");
	if (arg & 0x40)
		fuzz_dht_status(c);
	for (unsigned i = 0; i <= started; i++) {
		r = ferry_dht_next(c, FUZZ_TIMEOUT_MS, &e);
		fuzz_check_ret(r);
		if (r < 0) {
			/* The stream's end ends every request in flight. */
			fuzz_check(r == -ENOENT && i == started,
			    "ferry_dht_next lost a request");
			break;
		}
		fuzz_dht_end(&e);
		ferry_dht_end_free(&e);
	}
}

static void
fuzz_receive(struct ferry_client *c)
{
	struct ferry_message m;
	int r;

	while ((r = ferry_receive(c, &m, FUZZ_TIMEOUT_MS)) == 0) {
		fuzz_check(m.len <= FERRY_APP_MSG_MAX, "message too long");
		fuzz_touch(m.data, m.len);
		fuzz_sink = (uint8_t)m.type;
	}
	fuzz_check_ret(r);
}

static void
fuzz_ping(struct ferry_client *c, uint8_t arg)
{
	struct ferry_peer_id peer;
	struct ferry_ping_result res;
	int r;

	memset(&peer, arg, sizeof(peer));
	r = ferry_ping(c, &peer, arg % 4 + 1, 64, 100, &res);
	fuzz_check_ret(r);
	if (r == 0)
		fuzz_touch(&res, sizeof(res));
}

static void
fuzz_result(struct ferry_client *c, uint8_t arg)
{
	static const uint16_t types[] = { 0x0400, 0x0401 };
	struct ferry_peer_id peer;
	int r;

	memset(&peer, 0x5a, sizeof(peer));
	switch (arg % 5) {
	case 0:
		r = ferry_register(c, types, 2);
		break;
	case 1:
		r = ferry_connect_uri(c, "ferry://EXAMPLE");
		break;
	case 2:
		r = ferry_transfer_cancel(c, 42);
		break;
	case 3:
		r = ferry_send_confirmed(c, &peer, 0x0400, "hi", 2);
		break;
	default:
		r = ferry_shutdown(c);
		break;
	}
	fuzz_check_ret(r);
}

/* The call op picks, with its argument. */
static void
fuzz_call(struct ferry_client *c, uint8_t op, uint8_t arg)
{
	switch (op % FUZZ_OP_COUNT) {
	case FUZZ_OP_STATUS:
		fuzz_status(c);
		break;
	case FUZZ_OP_PEERS:
		fuzz_peers(c);
		break;
	case FUZZ_OP_STATS:
		fuzz_stats(c);
		break;
	case FUZZ_OP_HELLO:
		fuzz_hello(c);
		break;
	case FUZZ_OP_DHT_PUT:
		fuzz_dht_put(c, arg);
		break;
	case FUZZ_OP_DHT_GET:
		fuzz_dht_get(c);
		break;
	case FUZZ_OP_DHT_FIND:
		fuzz_dht_find(c, arg);
		break;
	case FUZZ_OP_DHT_STATUS:
		fuzz_dht_status(c);
		break;
	case FUZZ_OP_TRANSFERS:
		fuzz_transfers(c);
		break;
	case FUZZ_OP_FILE_PUT:
		fuzz_file(c, true, arg);
		break;
	case FUZZ_OP_FILE_GET:
		fuzz_file(c, false, arg);
		break;
	case FUZZ_OP_DHT_ASYNC:
		fuzz_dht_async(c, arg);
		break;
	case FUZZ_OP_RECEIVE:
		fuzz_receive(c);
		break;
	case FUZZ_OP_PING:
		fuzz_ping(c, arg);
		break;
	default:
		fuzz_result(c, arg);
		break;
	}
	fuzz_touch_str(ferry_last_error(c));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ferry_client *c;
	size_t off = 0;
	ssize_t n;
	int dfd = -1;

	if (size < 2 || fuzz_connect(&c, &dfd) < 0)
		return 0;
	ferry_client_set_timeout(c, FUZZ_TIMEOUT_MS);
	while (off < size - 2) {
		n = send(dfd, data + 2 + off, size - 2 - off,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	(void)shutdown(dfd, SHUT_WR);
	fuzz_call(c, data[0], data[1]);
	ferry_client_close(c);
	(void)close(dfd);
	return 0;
}
