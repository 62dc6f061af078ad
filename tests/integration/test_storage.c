/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Files through the DHT between real ferryd processes (issue 13), each on
 * its own 127.0.0.N, with `ferry put` and `ferry get` as a user runs
 * them: round trips of files of 0, 1, CHUNK_SIZE - 1, CHUNK_SIZE and
 * CHUNK_SIZE + 1 bytes and one whose manifest has three levels (a small
 * CHUNK_SIZE), each put on one daemon and got on another and compared
 * byte for byte; the same file twice with the same convergence secret
 * stores no new block, with another it shares none; a marker planted in
 * a file is in no daemon's block store; a slow storing daemon's blocks
 * are asked again of the others; progress names the peers in use;
 * transfers listed (names escaped) and cancelled; bad
 * URIs, hostile manifests and blocks that do not open. The failures a
 * transfer survives are in test_storage_faults.c.
 */
/* ctest: TIMEOUT=300 RUN_SERIAL=1 */
#include "storage_test.h"

#include <sys/mman.h>

#include "asuser.h"

static void
round_trip(size_t len, int from, int to)
{
	char name[64], *file, *out, *uri, err[512];
	int status;

	(void)snprintf(name, sizeof(name), "f%zu", len);
	file = make_file(name, len, NULL);
	uri = put_cli(d[from], file);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	status = get_cli(d[to], uri, out, err, sizeof(err));
	if (status != 0)
		harness_dump_logs(h);
	ck_assert_msg(status == 0, "get of %zu bytes: %d: %s", len, status,
	    err);
	ck_assert_msg(same_files(file, out), "%zu bytes differ", len);
	free(file);
	free(out);
	free(uri);
}

START_TEST(test_round_trips)
{
	static const size_t sizes[] = { 0, 1, CHUNK - 1, CHUNK, CHUNK + 1,
		/* More than 14 x 14 chunks (a 1 KiB node lists 14): three
		 * levels at least. */
		300 * CHUNK + 7 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		round_trip(sizes[i], (int)i % N, (int)(i + 1 + i / N) % N);
}
END_TEST

/* Waits until the storing daemons' counts stop moving (receipts come
 * once blocks are durable, but replicas of a put may still be in flight
 * when ferry put returns); the total. */
static uint64_t
settled_blocks(void)
{
	uint64_t a = sum_stat("dht.store_blocks"), b;

	for (;;) {
		harness_sleep_ms(300);
		b = sum_stat("dht.store_blocks");
		if (a == b)
			return b;
		a = b;
	}
}

/* Convergent: the same file with the same secret (uid 0 on d0) makes the
 * same blocks, and no storing daemon stores a new one; d1 has a secret
 * of its own, and its blocks share none with d0's. */
START_TEST(test_dedup)
{
	char *file = make_file("dedup", 40 * CHUNK + 5, NULL);
	char *u1, *u2, *u3;
	uint64_t b0, b1, b2, b3;

	b0 = settled_blocks();
	u1 = put_cli(d[0], file);
	b1 = settled_blocks();
	ck_assert_uint_gt(b1, b0);
	u2 = put_cli(d[0], file);
	b2 = settled_blocks();
	ck_assert_str_eq(u1, u2);
	ck_assert_uint_eq(b2, b1);
	u3 = put_cli(d[1], file);
	b3 = settled_blocks();
	ck_assert_str_ne(u1, u3);
	/* As many new blocks as the first put made: none shared. */
	ck_assert_uint_eq(b3 - b2, b1 - b0);
	free(u1);
	free(u2);
	free(u3);
	free(file);
}
END_TEST

/* True if needle is in any file under dir (recursively). */
static bool
dir_has(const char *dir, const char *needle)
{
	char cmd[4200];
	int status;

	/* grep -r reads every byte of every file, SQLite's WAL included. */
	(void)snprintf(cmd, sizeof(cmd), "grep -rqa -- '%s' '%s'", needle, dir);
	status = system(cmd);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Nothing of the plaintext reaches a block store: the marker of a file
 * put and got is in no daemon's state directory (blocks.sqlite and its
 * WAL, the records of the transfers) nor its log. */
START_TEST(test_marker)
{
	static const char marker[] = "ferry-MARKER-9e1f03c2";
	char *file = make_file("marked", 64 * CHUNK + 100, marker), *out, *uri;

	uri = put_cli(d[0], file);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	ck_assert_int_eq(get_cli(d[2], uri, out, NULL, 0), 0);
	ck_assert(same_files(file, out));
	ck_assert(dir_has(harness_dir(h), marker)); /* the probe works */
	for (int i = 0; i < N; i++) {
		ck_assert_msg(!dir_has(d[i]->state_dir, marker),
		    "the marker is in d%d's state directory", i);
		ck_assert_msg(!harness_daemon_log_has(d[i], marker),
		    "the marker is in d%d's log", i);
	}
	free(out);
	free(uri);
	free(file);
}
END_TEST

/* A malformed URI: exit status 2, the reason, counted, no file left. */
START_TEST(test_bad_uri)
{
	char *out, err[512];

	ck_assert_int_gt(asprintf(&out, "%s/bad.got", harness_dir(h)), 0);
	ck_assert_int_eq(get_cli(d[1], "ferry:f1.12.NOTAURI", out, err,
	                     sizeof(err)),
	    2);
	ck_assert_msg(strstr(err, "ferry get: ") != NULL, "%s", err);
	ck_assert_int_eq(get_cli(d[1], "ferry://peer", out, err, sizeof(err)),
	    2);
	ck_assert(access(out, F_OK) < 0);
	ck_assert_uint_eq(mesh_stat(d[1], "storage.uri_bad"), 2);
	free(out);
}
END_TEST

/* <0 if a is closer to key than b (XOR), >0 if farther. */
static int
xor_cmp(const uint8_t *key, const struct ferry_peer_id *a,
    const struct ferry_peer_id *b)
{
	for (size_t i = 0; i < FERRY_PEER_ID_LEN; i++) {
		uint8_t x = key[i] ^ a->bytes[i], y = key[i] ^ b->bytes[i];

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* The daemon the getter's first asks go to most: for the blocks getter
 * does not hold (it is the farthest of the four from their keys), the
 * closest holder. Found by trying keys, as the DHT will. */
static int
first_holder_of_misses(int getter)
{
	unsigned hits[N] = { 0 };
	uint8_t key[FERRY_PEER_ID_LEN];
	int best = getter == 0 ? 1 : 0, far, near;

	for (int k = 0; k < 4096; k++) {
		randombytes_buf(key, sizeof(key));
		far = near = -1;
		for (int i = 0; i < N; i++) {
			if (far < 0 || xor_cmp(key, &d[i]->id, &d[far]->id) > 0)
				far = i;
			if (near < 0 ||
			    xor_cmp(key, &d[i]->id, &d[near]->id) < 0)
				near = i;
		}
		if (far == getter)
			hits[near]++;
	}
	for (int i = 0; i < N; i++)
		if (hits[i] > hits[best])
			best = i;
	return best;
}

/* Blocks asked again, by the engine or by the DHT, of the getter d3. */
static uint64_t
asked_again(void)
{
	return mesh_stat(d[3], "storage.hedges") +
	    mesh_stat(d[3], "dht.retries");
}

/* One storing daemon slow (2 s on every unit it sends): the blocks the
 * getter asked of it are asked again of the other holders, by the
 * engine after a delay from the latencies seen (and those answers win)
 * or by the DHT's own next attempt, whichever comes first. The slow one
 * is the daemon the getter's first asks go to most. */
START_TEST(test_hedged)
{
	char name[32], *file[2], *out, *uri[2];
	int slow = first_holder_of_misses(3), from = slow == 0 ? 1 : 0;

	/* Put while every daemon is fast: the put is not what is tested.
	 * Which blocks the getter asks of the slow one depends on their
	 * keys: a second file, should the first have none. */
	for (int i = 0; i < 2; i++) {
		(void)snprintf(name, sizeof(name), "slow%d", i);
		file[i] = make_file(name, 200 * CHUNK + 1, NULL);
		uri[i] = put_cli(d[from], file[i]);
	}
	/* Slow from its start, so that its links are made slow rather than
	 * changed under way. */
	ck_assert_int_eq(harness_daemon_stop(d[slow], 10000, NULL), 0);
	ck_assert_int_eq(harness_daemon_config(d[slow],
	                     "[testing]\nENABLE = yes\nDELAY = 2 s\n"),
	    0);
	ck_assert_int_eq(harness_daemon_start_ready(d[slow]), 0);
	wait_tables();
	for (int i = 0; i < 2 && asked_again() == 0; i++) {
		uint64_t t0 = harness_now_ms();

		ck_assert_int_gt(asprintf(&out, "%s.got", file[i]), 0);
		ck_assert_int_eq(get_cli(d[3], uri[i], out, NULL, 0), 0);
		ck_assert(same_files(file[i], out));
		/* Not a block waited its 4 s round trip for long: without a
		 * second ask, dozens would have, a window at a time. */
		ck_assert_uint_lt(harness_now_ms() - t0, 15000);
		free(out);
	}
	/* Asked again: by the engine (its hedges, which then win) or by
	 * the DHT itself (its attempts through other peers, when they
	 * come first: src/dht/dht_attempt.c). */
	ck_assert_uint_gt(asked_again(), 0);
	if (mesh_stat(d[3], "storage.hedges") > 0)
		ck_assert_uint_gt(mesh_stat(d[3], "storage.hedges_won"), 0);
	for (int i = 0; i < 2; i++) {
		free(uri[i]);
		free(file[i]);
	}
}
END_TEST

/*
 * The engine's own hedges, end to end. A holder of the files' blocks,
 * the one the getter asks first most, is farther than the others (its
 * units 100 ms late, theirs 20 ms: its links' round trips are 120 ms),
 * and in the middle of ferry get it stops (SIGSTOP: its links stay up,
 * it answers nothing); REQUEST_TIMEOUT is 120 s. The blocks asked of it
 * are asked again of the other holders by the engine after the delay
 * the transfer measured (srtt + 4 rttvar of its blocks, here its floor,
 * 200 ms, and up to a tick), before the DHT's own next attempt through
 * it (8 of its round trips, 960 ms): the engine's hedges win, and every
 * get ends in seconds, not in the 120 s a block asked of the stopped
 * holder would wait for its request to time out (here 0.9 to 3.4 s after
 * a first stop; after a second the holder, back in the getter's table
 * with a round trip measured over its first stop, drew 136 to 210
 * hedges, the DHT not trying again at all, and the get took 3.6 to 13.2
 * s).
 *
 * In about 1 run of 4 the DHT did not know the round trip to that
 * holder (srtt 0 in every attempt through it) and gave up at its 50 ms
 * floor, its estimate per request type being a few ms (most of the
 * getter's GETs are answered by its own store): then the DHT's attempt
 * is the second ask, and the get is as quick. So the get is run again,
 * with another file, until the engine's hedges have won, three times at
 * most.
 */
START_TEST(test_hedged_stopped)
{
	char name[32], *file[3], *out, *uri[3], *hello;
	int victim = first_holder_of_misses(3), status, i;
	uint64_t t0, ms, won;
	pid_t pid;

	for (i = 0; i < 3; i++) {
		(void)snprintf(name, sizeof(name), "stop%d", i);
		file[i] = make_file(name, 1500 * CHUNK + 3, NULL);
		uri[i] = put_cli(d[victim == 0 ? 1 : 0], file[i]);
	}
	/* Delayed from their start, so that their links' round trips are
	 * measured so (d0, the first, needs a peer to start from). */
	hello = mesh_hello(d[1]);
	ck_assert_int_eq(harness_daemon_config(d[0], "[core]\nBOOTSTRAP = %s\n",
	                     hello),
	    0);
	free(hello);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(harness_daemon_stop(d[i], 10000, NULL), 0);
		ck_assert_int_eq(harness_daemon_config(d[i],
		                     "[testing]\nENABLE = yes\nDELAY = %s\n"
		                     "[dht]\nREQUEST_TIMEOUT = 120 s\n",
		                     i == victim ? "100 ms" : "20 ms"),
		    0);
		ck_assert_int_eq(harness_daemon_start_ready(d[i]), 0);
	}
	for (i = 0; i < 3 && mesh_stat(d[3], "storage.hedges_won") == 0; i++) {
		wait_tables();
		ck_assert_int_gt(asprintf(&out, "%s.got", file[i]), 0);
		pid = spawn_cli(d[3], "get", uri[i], "-o", out, NULL);
		ck_assert_msg(wait_counter(d[3], "storage.blocks_got", 20, pid),
		    "the get ended before a holder could be stopped");
		won = mesh_stat(d[3], "storage.hedges_won");
		ck_assert_int_eq(kill(d[victim]->pid, SIGSTOP), 0);
		t0 = harness_now_ms();
		status = wait_pid(pid);
		ms = harness_now_ms() - t0;
		(void)kill(d[victim]->pid, SIGCONT);
		fprintf(stderr,
		    "hedged get %d: d%d stopped, the get ended %llu ms later; "
		    "hedges %llu (won %llu, %llu before the stop), "
		    "dht.retries %llu\n",
		    i, victim, (unsigned long long)ms,
		    (unsigned long long)mesh_stat(d[3], "storage.hedges"),
		    (unsigned long long)mesh_stat(d[3], "storage.hedges_won"),
		    (unsigned long long)won,
		    (unsigned long long)mesh_stat(d[3], "dht.retries"));
		ck_assert_int_eq(status, 0);
		ck_assert(same_files(file[i], out));
		ck_assert_uint_lt(ms, 30000);
		free(out);
	}
	ck_assert_uint_gt(mesh_stat(d[3], "storage.hedges_won"), 0);
	for (i = 0; i < 3; i++) {
		free(uri[i]);
		free(file[i]);
	}
}
END_TEST

/* ferry transfers lists a running put; ferry cancel stops it: its
 * client hears so (status 1), and nothing is left to resume. */
START_TEST(test_transfers_cancel)
{
	char *file = make_file("cancel", 3000 * CHUNK, NULL);
	struct harness_output o;
	char id[17] = "";
	pid_t pid;

	pid = spawn_cli(d[0], "put", file, NULL);
	ck_assert(wait_counter(d[0], "storage.blocks_put", 50, pid));
	ck_assert_int_eq(harness_run_cli(d[0], &o, "transfers", NULL), 0);
	ck_assert_msg(strstr(o.out, " put  running ") != NULL, "%s", o.out);
	ck_assert_msg(strstr(o.out, file) != NULL, "%s", o.out);
	ck_assert_int_eq(sscanf(strchr(o.out, '\n') + 1, "%16s", id), 1);
	harness_output_free(&o);
	ck_assert_int_eq(harness_run_cli(d[0], &o, "cancel", id, NULL), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	harness_output_free(&o);
	ck_assert_int_eq(wait_pid(pid), 1);
	ck_assert_int_eq(harness_run_cli(d[0], &o, "transfers", NULL), 0);
	ck_assert_str_eq(o.out, "");
	harness_output_free(&o);
	ck_assert_int_eq(harness_run_cli(d[0], &o, "cancel", id, NULL), 0);
	ck_assert_int_eq(o.status, 6);
	harness_output_free(&o);
	ck_assert_uint_eq(mesh_stat(d[0], "storage.cancelled"), 1);
	free(file);
}
END_TEST

/* The largest "peers" of the progress lines of ferry --json output, and
 * how many there were. */
static uint64_t
peers_seen(const char *out, unsigned *ret_lines)
{
	const char *p = out;
	uint64_t most = 0, v;

	*ret_lines = 0;
	while ((p = strstr(p, "{\"event\":\"progress\"")) != NULL) {
		const char *end = strchr(p, '\n');

		ck_assert_ptr_nonnull(end);
		p = strstr(p, "\"peers\":");
		ck_assert_msg(p != NULL && p < end,
		    "a progress line without peers");
		v = strtoull(p + 8, NULL, 10);
		most = v > most ? v : most;
		(*ret_lines)++;
		p = end;
	}
	return most;
}

/* Progress names the peers in use: a put's storers (the putting daemon
 * may be one, but is not counted) and the peers that answered a get,
 * never more than the other daemons. One replica of each block: the
 * getter holds a quarter of them, and fetches the rest for long enough
 * to report progress. */
START_TEST(test_progress_peers)
{
	char *file = make_file("peers", 6000 * CHUNK, NULL), *out, *uri;
	struct harness_output o;
	unsigned lines;
	uint64_t put_peers, get_peers;

	ck_assert_int_eq(harness_run_cli(d[0], &o, "--json", "put", "-r", "1",
	                     file, NULL),
	    0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	put_peers = peers_seen(o.out, &lines);
	ck_assert_msg(lines > 0, "no progress: %s", o.out);
	uri = strdup(strstr(o.out, "\"uri\":\"") + 7);
	ck_assert_ptr_nonnull(uri);
	uri[strcspn(uri, "\"")] = '\0';
	harness_output_free(&o);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	ck_assert_int_eq(harness_run_cli(d[3], &o, "--json", "get", uri, "-o",
	                     out, NULL),
	    0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	get_peers = peers_seen(o.out, &lines);
	ck_assert_msg(lines > 0, "no progress: %s", o.out);
	harness_output_free(&o);
	ck_assert(same_files(file, out));
	fprintf(stderr, "progress: put %llu peers, get %llu peers\n",
	    (unsigned long long)put_peers, (unsigned long long)get_peers);
	ck_assert_uint_gt(put_peers, 0);
	ck_assert_uint_le(put_peers, N - 1);
	ck_assert_uint_gt(get_peers, 0);
	ck_assert_uint_le(get_peers, N - 1);
	free(out);
	free(uri);
	free(file);
}
END_TEST

/* Lines of text. */
static size_t
lines_of(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

/* A put whose file name would forge a line of ferry transfers and drive
 * the terminal (a newline, ESC and BEL, a C1 CSI): listed on one line,
 * the name escaped, no control byte out; --json escapes it too. */
START_TEST(test_transfers_escaped)
{
	static const char name[] = "evil\n0123456789abcdef put  running "
	                           "  100.0% forged\033]0;title\007\033[2J"
	                           "\xc2\x9b"
	                           "31m\xff";
	char *file = make_file(name, 3000 * CHUNK, NULL);
	struct harness_output o;
	pid_t pid;

	pid = spawn_cli(d[0], "put", file, NULL);
	ck_assert(wait_counter(d[0], "storage.blocks_put", 50, pid));
	ck_assert_int_eq(harness_run_cli(d[0], &o, "transfers", NULL), 0);
	ck_assert_int_eq(o.status, 0);
	/* The header and one transfer. */
	ck_assert_msg(lines_of(o.out) == 2, "%s", o.out);
	ck_assert_msg(strstr(o.out, "evil\\n0123456789abcdef put ") != NULL,
	    "%s", o.out);
	ck_assert_msg(
	    strstr(o.out,
	        "forged\\x1b]0;title\\x07\\x1b[2J\\xc2\\x9b31m\\xff\n") != NULL,
	    "%s", o.out);
	for (size_t i = 0; i < o.out_len; i++)
		ck_assert_msg(((unsigned char)o.out[i] >= 0x20 &&
		                  (unsigned char)o.out[i] < 0x7f) ||
		        o.out[i] == '\n',
		    "byte 0x%02x in the list", (unsigned char)o.out[i]);
	harness_output_free(&o);
	ck_assert_int_eq(harness_run_cli(d[0], &o, "--json", "transfers", NULL),
	    0);
	ck_assert_msg(lines_of(o.out) == 1, "%s", o.out);
	ck_assert_msg(strstr(o.out, "evil\\n0123") != NULL, "%s", o.out);
	ck_assert_msg(strstr(o.out,
	                  "forged\\u001b]0;title\\u0007\\u001b[2J\\u009b31m") !=
	        NULL,
	    "%s", o.out);
	for (size_t i = 0; i < o.out_len; i++)
		ck_assert_msg((unsigned char)o.out[i] >= 0x20 ||
		        o.out[i] == '\n',
		    "byte 0x%02x in the JSON", (unsigned char)o.out[i]);
	ck_assert(strstr(o.out, "\xc2\x9b") == NULL);
	harness_output_free(&o);
	(void)kill(pid, SIGKILL);
	(void)wait_pid(pid);
	free(file);
}
END_TEST

/* Puts len bytes as one DHT block from dd; its key. */
static void
raw_put(struct harness_daemon *dd, const uint8_t *data, size_t len,
    struct dhtkey *ret)
{
	struct ferry_client *c;
	struct ferry_dht_key key;

	ck_assert_int_eq(harness_daemon_client(dd, &c), 0);
	ck_assert_int_eq(ferry_dht_put(c, data, len, 0, 0, &key, NULL, NULL),
	    0);
	ferry_client_close(c);
	memcpy(ret->b, key.bytes, sizeof(ret->b));
}

/* A hostile manifest, sealed and put as a user with its own code could:
 * root is its URI's ref. */
struct hostile {
	struct harness_daemon *dd;
	struct storage_ref root;
};

static int
hostile_emit(void *arg, const uint8_t *sealed, size_t len,
    const struct storage_ref *ref)
{
	struct hostile *hs = arg;
	struct dhtkey key;

	raw_put(hs->dd, sealed, len, &key);
	ck_assert(dhtkey_equal(&key, &ref->block));
	hs->root = *ref;
	return 0;
}

/* ferry get of root on dd: its status; the reason in err. */
static int
get_root(const struct storage_ref *root, char *err, size_t size)
{
	char uri[STORAGE_URI_MAX], *out;
	int status;

	ck_assert_int_gt(storage_uri_format(root, uri, sizeof(uri)), 0);
	ck_assert_int_gt(asprintf(&out, "%s/hostile.got", harness_dir(h)), 0);
	status = get_cli(d[2], uri, out, err, size);
	ck_assert(access(out, F_OK) < 0);
	free(out);
	return status;
}

/* A manifest node that is not one (random plaintext, sealed as a node):
 * the get fails as damaged (status 8), names the problem, counts it, and
 * leaves nothing. */
START_TEST(test_bad_manifest)
{
	struct storage_codec *codec;
	uint8_t secret[STORAGE_SECRET_LEN] = { 1 }, plain[600];
	uint8_t sealed[sizeof(plain) + STORAGE_SEAL_OVERHEAD];
	struct storage_ref root;
	struct dhtkey key;
	char err[512];

	ck_assert_int_eq(storage_codec_new(secret, 1, false, &codec), 0);
	randombytes_buf(plain, sizeof(plain));
	ck_assert_int_eq(storage_seal(codec, STORAGE_KIND_NODE, plain,
	                     sizeof(plain), sealed, &root),
	    0);
	root.len = 12345;
	raw_put(d[0], sealed, storage_sealed_len(sizeof(plain)), &key);
	ck_assert_int_eq(get_root(&root, err, sizeof(err)), 8);
	ck_assert_msg(strstr(err, "ferry get: ") != NULL, "%s", err);
	ck_assert_uint_eq(mesh_stat(d[2], "storage.manifest_bad"), 1);
	storage_codec_free(codec);
}
END_TEST

/* A manifest whose chunk ref names a real block with the wrong key: the
 * block fails its AEAD check on every ask; the get fails as damaged,
 * counted, and leaves nothing. */
START_TEST(test_bad_block)
{
	struct hostile hs = { .dd = d[0] };
	struct manifest_builder *mb;
	struct storage_codec *codec;
	uint8_t secret[STORAGE_SECRET_LEN] = { 2 }, plain[CHUNK];
	uint8_t sealed[CHUNK + STORAGE_SEAL_OVERHEAD], sum[16] = { 0 };
	struct storage_ref chunk, root;
	char err[512];

	ck_assert_int_eq(storage_codec_new(secret, 1, false, &codec), 0);
	randombytes_buf(plain, sizeof(plain));
	ck_assert_int_eq(storage_seal(codec, STORAGE_KIND_DATA, plain,
	                     sizeof(plain), sealed, &chunk),
	    0);
	raw_put(d[0], sealed, storage_sealed_len(sizeof(plain)), &chunk.block);
	chunk.key[0] ^= 1;
	ck_assert_int_eq(manifest_builder_new(codec, CHUNK, CHUNK, hostile_emit,
	                     &hs, &mb),
	    0);
	ck_assert_int_eq(manifest_builder_add(mb, &chunk), 0);
	ck_assert_int_eq(manifest_builder_finish(mb, sum, &root), 0);
	manifest_builder_free(mb);
	ck_assert_int_eq(get_root(&root, err, sizeof(err)), 8);
	ck_assert_msg(strstr(err, "fails its check") != NULL, "%s", err);
	ck_assert_uint_ge(mesh_stat(d[2], "storage.blocks_bad"), 1);
	storage_codec_free(codec);
}
END_TEST

/* What the other user's client did, shared with the test. */
struct other {
	const char *socket;
	const char *file;
	uint64_t root_id; /* root's resumable transfer */
	int put, list, cancel;
	size_t n_listed;
	char uri[FERRY_FILE_URI_MAX];
};

static int
other_fn(void *cls)
{
	struct other *o = cls;
	struct ferry_file_result res;
	struct ferry_transfer *t;
	struct ferry_client *c;
	int fd = open(o->file, O_RDONLY);

	if (fd < 0 || ferry_client_open(o->socket, &c) < 0)
		return 1;
	o->put = ferry_file_put(c, fd, "other", 0, 0, NULL, NULL, &res);
	memcpy(o->uri, res.uri, sizeof(o->uri));
	o->list = ferry_transfers(c, &t, &o->n_listed);
	if (o->list == 0)
		ferry_transfers_free(t, o->n_listed);
	o->cancel = ferry_transfer_cancel(c, o->root_id);
	ferry_client_close(c);
	return 0;
}

/* Another local user: its own convergence secret (made at its first
 * put, mode 0600), so the same file makes other blocks; it sees and
 * cancels none of root's transfers; and root gets its file by the URI. */
START_TEST(test_other_user)
{
	static const struct asuser u = { .uid = 4321, .gid = 4321 };
	char *file = make_file("both", 3000 * CHUNK, NULL), *out, *key;
	struct harness_output ho;
	struct other *o;
	struct stat st;
	char *root_uri;
	pid_t pid;

	if (!asuser_root_or_skip("test_other_user"))
		return;
	/* A resumable transfer of root's: a put whose client was killed. */
	pid = spawn_cli(d[0], "put", file, NULL);
	ck_assert(wait_counter(d[0], "storage.blocks_put", 50, pid));
	(void)kill(pid, SIGKILL);
	(void)wait_pid(pid);
	harness_sleep_ms(300);
	ck_assert_int_eq(harness_run_cli(d[0], &ho, "transfers", NULL), 0);
	ck_assert_msg(strstr(ho.out, " resumable ") != NULL, "%s", ho.out);
	o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(o, MAP_FAILED);
	memset(o, 0, sizeof(*o));
	o->root_id = strtoull(strchr(ho.out, '\n') + 1, NULL, 16);
	harness_output_free(&ho);
	o->socket = d[0]->socket;
	o->file = file;
	ck_assert_int_eq(chmod(file, 0644), 0);
	ck_assert_int_eq(asuser_open_dir(harness_dir(h)), 0);
	ck_assert_int_eq(asuser_open_daemon(d[0]), 0);
	ck_assert_int_eq(asuser_run(&u, other_fn, o), 0);
	ck_assert_int_eq(o->put, 0);
	ck_assert_int_eq(o->list, 0);
	ck_assert_uint_eq(o->n_listed, 0);
	ck_assert_int_eq(o->cancel, -ENOENT);
	ck_assert_int_gt(asprintf(&key, "%s/storage/convergence-4321.key",
	                     d[0]->state_dir),
	    0);
	ck_assert_int_eq(stat(key, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	root_uri = put_cli(d[0], file);
	ck_assert_str_ne(root_uri, o->uri);
	ck_assert_int_gt(asprintf(&out, "%s.got", file), 0);
	ck_assert_int_eq(get_cli(d[1], o->uri, out, NULL, 0), 0);
	ck_assert(same_files(file, out));
	(void)munmap(o, sizeof(*o));
	free(root_uri);
	free(key);
	free(out);
	free(file);
}
END_TEST

static void
teardown_other(void)
{
	asuser_reset();
	teardown();
}

static Suite *
storage_suite(void)
{
	Suite *s = suite_create("storage");
	TCase *tc = tcase_create("daemons");

	tcase_set_timeout(tc, 240);
	tcase_add_checked_fixture(tc, setup, teardown_other);
	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_dedup);
	tcase_add_test(tc, test_marker);
	tcase_add_test(tc, test_bad_uri);
	tcase_add_test(tc, test_hedged);
	tcase_add_test(tc, test_hedged_stopped);
	tcase_add_test(tc, test_transfers_cancel);
	tcase_add_test(tc, test_transfers_escaped);
	tcase_add_test(tc, test_progress_peers);
	tcase_add_test(tc, test_bad_manifest);
	tcase_add_test(tc, test_bad_block);
	tcase_add_test(tc, test_other_user);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return storage_test_run(storage_suite());
}
