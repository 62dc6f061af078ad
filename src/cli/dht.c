/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry dht put|get|find|status: the daemon's DHT (issue 12, client
 * side). Blocks stored from a file or standard input and fetched by key,
 * checked against the key before a byte is written; the peers closest to
 * a key with their distance; the routing table and the block store. Each
 * operation is a command of its own, with its options, found here.
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/json.h"

#define DHT_FIND_DEFAULT 20 /* peers ferry dht find asks for: Kademlia's k */

static int dht_put_main(struct cli *cli, int argc, char **argv);
static int dht_get_main(struct cli *cli, int argc, char **argv);
static int dht_find_main(struct cli *cli, int argc, char **argv);
static int dht_status_main(struct cli *cli, int argc, char **argv);

static const struct cli_cmd dht_cmds[] = {
	{ "dht put", dht_put_main, "[FILE|-]",
	    "Store FILE, or standard input, as one DHT block (at most 4 MiB) and print its key",
	    "  -r, --replication N     storing peers, 1 to 16 (default: the daemon's)\n"
	    "  -l, --lifetime SECONDS  how long they keep it (default: the daemon's, a day)\n" },
	{ "dht get", dht_get_main, "KEY",
	    "Fetch the block of KEY, check that it hashes to KEY and write it out",
	    "  -o, --output FILE   write it to FILE, whole or not at all, instead of\n"
	    "                      standard output\n" },
	{ "dht find", dht_find_main, "KEY",
	    "List the peers closest to KEY, closest first, with their distance",
	    "  -n, --count N   peers wanted, 1 to 32 (default 20)\n" },
	{ "dht status", dht_status_main, "",
	    "Show the DHT's routing table and block store", "" },
};
#define DHT_N_CMDS (sizeof(dht_cmds) / sizeof(dht_cmds[0]))

int
dht_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_GLOBAL_OPTIONS };
	const struct cli_cmd *sub = NULL;
	int c;

	/* "+": global options may come before the operation, its own after. */
	while ((c = cli_getopt(cli, argc, argv, "+", opts)) != -1)
		if (c == CLI_STOP)
			return cli->exit;
	if (optind >= argc)
		return cli_usage_error(cli,
		    "missing operation: put, get, find or status");
	for (size_t i = 0; i < DHT_N_CMDS; i++)
		if (strcmp(dht_cmds[i].name + strlen("dht "), argv[optind]) ==
		    0)
			sub = &dht_cmds[i];
	if (sub == NULL)
		return cli_usage_error(cli, "unknown operation '%s'",
		    argv[optind]);
	cli->cmd = sub;
	argc -= optind;
	argv += optind;
	optind = 0;
	return sub->main(cli, argc, argv);
}

/* Says why a DHT request failed and gives the exit code of ferry(1). */
static int
dht_fail(const struct cli *cli, int r)
{
	const char *why;
	int code = CLI_EXIT_FAIL;

	switch (r) {
	case -ENOTCONN:
		why = "the DHT is not running";
		code = CLI_EXIT_PEER;
		break;
	case -EHOSTUNREACH:
		why = "no route toward the key";
		code = CLI_EXIT_PEER;
		break;
	case -ENOENT:
		why = "no peer holds the block";
		code = CLI_EXIT_NOTFOUND;
		break;
	case -EMSGSIZE:
		why = "the block is over the daemon's largest";
		break;
	case -EBADMSG:
		why =
		    "refused by the DHT, or a block that does not hash to its key";
		break;
	case -ENOBUFS:
		why = "the daemon holds too many answers for this client";
		break;
	case -EAGAIN:
		why = "the DHT is busy; try again later";
		break;
	case -ENOSPC:
		why = "the storing peers are full";
		break;
	case -EREMOTEIO:
		why = "the storing peers' disks failed to take the block";
		break;
	case -EDQUOT:
		why =
		    "the storing peers hold all they take from this daemon; try again once blocks expire";
		break;
	case -ETIMEDOUT:
		why = "no answer from the DHT in time";
		code = CLI_EXIT_TIMEOUT;
		break;
	default:
		return cli_fail(cli, "request", r);
	}
	fprintf(stderr, "ferry %s: %s\n", cli->cmd->name, why);
	return code;
}

/* The bytes of FILE, or standard input for NULL or "-". 0, or prints
 * why and returns an exit code. */
static int
dht_input(const struct cli *cli, const char *file, uint8_t **ret,
    size_t *ret_len)
{
	bool use_stdin = file == NULL || strcmp(file, "-") == 0;
	int fd = use_stdin ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC);
	const char *name = use_stdin ? "standard input" : file;
	uint8_t *data = NULL;
	size_t len = 0;
	int r;

	if (fd < 0) {
		fprintf(stderr, "ferry %s: %s: %s\n", cli->cmd->name, file,
		    strerror(errno));
		return CLI_EXIT_FAIL;
	}
	r = cli_read_all(fd, FERRY_DHT_BLOCK_MAX, &data, &len);
	if (!use_stdin)
		(void)close(fd);
	if (r == -EMSGSIZE) {
		(void)cli_usage_error(cli,
		    "%s is over %u bytes, the largest block", name,
		    FERRY_DHT_BLOCK_MAX);
		return CLI_EXIT_USAGE;
	}
	if (r < 0) {
		fprintf(stderr, "ferry %s: %s: %s\n", cli->cmd->name, name,
		    strerror(-r));
		return CLI_EXIT_FAIL;
	}
	if (len == 0) {
		free(data);
		(void)cli_usage_error(cli,
		    "%s is empty: a block has 1 byte or more", name);
		return CLI_EXIT_USAGE;
	}
	*ret = data;
	*ret_len = len;
	return 0;
}

static void
dht_put_json(const struct ferry_dht_key *key, unsigned replication,
    const struct ferry_dht_receipt *rc, size_t n)
{
	char hex[FERRY_DHT_KEY_STRLEN + 1], id[FERRY_PEER_ID_STRLEN + 1];
	struct json j;

	ferry_dht_key_format(key, hex);
	json_init(&j, stdout);
	json_object_begin(&j);
	json_member_string(&j, "key", hex);
	/* Only when asked for: 0 leaves it to the daemon, whose choice the
	 * receipts show. */
	if (replication != 0) {
		json_member_uint(&j, "replication", replication);
	}
	json_member_uint(&j, "receipts", n);
	json_key(&j, "storers");
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		ferry_peer_id_to_string(&rc[i].storer, id);
		json_object_begin(&j);
		json_member_string(&j, "id", id);
		json_member_uint(&j, "expiry", rc[i].expiry);
		/* Checked again here: a receipt is what a client keeps. */
		json_member_bool(&j, "verified",
		    ferry_dht_receipt_verify(key, &rc[i]) == 0);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
}

struct dht_put_req {
	const uint8_t *data;
	size_t len;
	unsigned replication;
	uint64_t expiry;
	struct ferry_dht_key key;     /* answer */
	struct ferry_dht_receipt *rc; /* answer, n of them */
	size_t n;
	bool too_few; /* fewer receipts than asked */
};

static int
dht_put_ask(struct ferry_client *fc, void *cls)
{
	struct dht_put_req *q = cls;
	int r = ferry_dht_put(fc, q->data, q->len, q->replication, q->expiry,
	    &q->key, &q->rc, &q->n);

	/* With fewer receipts than asked the block is stored all the same
	 * at those peers: its key is worth printing. */
	q->too_few = r == -EIO;
	return q->too_few ? 0 : r;
}

/* Stores data; prints its key (with its receipts, for --json). */
static int
dht_put_run(struct cli *cli, const uint8_t *data, size_t len,
    unsigned replication, uint64_t expiry)
{
	struct dht_put_req q = { data, len, replication, expiry, { { 0 } },
		NULL, 0, false };
	char hex[FERRY_DHT_KEY_STRLEN + 1];
	int r = cli_request(cli, dht_put_ask, &q, dht_fail);

	if (r != 0)
		return r;
	if (cli->json)
		dht_put_json(&q.key, replication, q.rc, q.n);
	else {
		ferry_dht_key_format(&q.key, hex);
		printf("%s\n", hex);
	}
	free(q.rc);
	if (q.too_few) {
		fprintf(stderr,
		    "ferry %s: only %zu storing peer(s) sent a receipt, fewer than asked\n",
		    cli->cmd->name, q.n);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int
dht_put_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "replication", required_argument, NULL, 'r' },
		{ "lifetime", required_argument, NULL, 'l' },
		CLI_GLOBAL_OPTIONS,
	};
	uint64_t replication = 0, lifetime = 0, expiry = 0;
	uint8_t *data;
	size_t len;
	int c, r;

	while ((c = cli_getopt(cli, argc, argv, "r:l:", opts)) != -1) {
		if (c == CLI_STOP)
			return cli->exit;
		if (c == 'r' &&
		    cli_parse_uint(cli, "--replication", optarg, 1,
		        FERRY_DHT_REPL_MAX, &replication) == 0)
			continue;
		if (c == 'l' &&
		    cli_parse_uint(cli, "--lifetime", optarg, 1, UINT32_MAX,
		        &lifetime) == 0)
			continue;
		return CLI_EXIT_USAGE;
	}
	if (argc - optind > 1)
		return cli_usage_error(cli, "unexpected argument '%s'",
		    argv[optind + 1]);
	if (lifetime > 0)
		expiry = (uint64_t)time(NULL) + lifetime;
	r = dht_input(cli, optind < argc ? argv[optind] : NULL, &data, &len);
	if (r != 0)
		return r;
	r = dht_put_run(cli, data, len, (unsigned)replication, expiry);
	free(data);
	return r;
}

/* Writes all of data to fd. 0 or -errno. */
static int
dht_write_all(int fd, const uint8_t *data, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* FILE.tmp, written and synced, then renamed to FILE: FILE is the whole
 * block or what it was before, never a part. 0 or -errno. */
static int
dht_write_file(const char *file, const uint8_t *data, size_t len)
{
	size_t flen = strlen(file);
	char *tmp = malloc(flen + sizeof(".tmp"));
	int fd, r;

	if (tmp == NULL)
		return -ENOMEM;
	memcpy(tmp, file, flen);
	memcpy(tmp + flen, ".tmp", sizeof(".tmp"));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	r = dht_write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, file) < 0)
		r = -errno;
	if (r < 0)
		(void)unlink(tmp);
	free(tmp);
	return r;
}

static void
dht_get_json(const struct ferry_dht_key *key, const uint8_t *data, size_t len,
    const char *file)
{
	char hex[FERRY_DHT_KEY_STRLEN + 1];
	struct json j;

	ferry_dht_key_format(key, hex);
	json_init(&j, stdout);
	json_object_begin(&j);
	json_member_string(&j, "key", hex);
	json_member_uint(&j, "len", len);
	if (file != NULL) {
		json_member_string(&j, "file", file);
	} else {
		json_key(&j, "data");
		json_bytes(&j, data, len);
	}
	json_object_end(&j);
}

/* Writes the block where it was asked for. An exit code. */
static int
dht_get_output(const struct cli *cli, const struct ferry_dht_key *key,
    const uint8_t *data, size_t len, const char *file)
{
	int r = 0;

	if (file != NULL)
		r = dht_write_file(file, data, len);
	if (r == 0 && cli->json)
		dht_get_json(key, data, len, file);
	else if (r == 0 && file == NULL) {
		r = dht_write_all(STDOUT_FILENO, data, len);
		file = "standard output";
	}
	if (r < 0) {
		fprintf(stderr, "ferry %s: %s: %s\n", cli->cmd->name, file,
		    strerror(-r));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

struct dht_get_req {
	const struct ferry_dht_key *key;
	uint8_t *data; /* answer, len bytes */
	size_t len;
};

static int
dht_get_ask(struct ferry_client *fc, void *cls)
{
	struct dht_get_req *q = cls;

	return ferry_dht_get(fc, q->key, &q->data, &q->len);
}

static int
dht_get_run(struct cli *cli, const struct ferry_dht_key *key, const char *file)
{
	struct dht_get_req q = { key, NULL, 0 };
	uint8_t hash[FERRY_DHT_KEY_LEN], *data;
	size_t len;
	int r = cli_request(cli, dht_get_ask, &q, dht_fail);

	if (r != 0)
		return r;
	data = q.data;
	len = q.len;
	/* Not a byte out before the block is proven to be KEY's. */
	if (sodium_init() < 0 ||
	    crypto_generichash(hash, sizeof(hash), data, len, NULL, 0) != 0 ||
	    memcmp(hash, key->bytes, sizeof(hash)) != 0) {
		fprintf(stderr,
		    "ferry %s: the block does not hash to its key; nothing written\n",
		    cli->cmd->name);
		free(data);
		return CLI_EXIT_FAIL;
	}
	r = dht_get_output(cli, key, data, len, file);
	free(data);
	return r;
}

static int
dht_get_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		CLI_GLOBAL_OPTIONS,
	};
	const char *file = NULL;
	struct ferry_dht_key key;
	int c;

	while ((c = cli_getopt(cli, argc, argv, "o:", opts)) != -1) {
		if (c == CLI_STOP)
			return cli->exit;
		if (c != 'o')
			return CLI_EXIT_USAGE;
		file = optarg;
	}
	if (file != NULL && *file == '\0')
		return cli_usage_error(cli, "--output: empty FILE");
	if (argc - optind != 1)
		return cli_usage_error(cli, "expected one KEY");
	if (cli_parse_key(cli, argv[optind], &key) != 0)
		return CLI_EXIT_USAGE;
	return dht_get_run(cli, &key, file);
}

/* Bits a and b share from the most significant one. */
static unsigned
dht_common_bits(const uint8_t *a, const uint8_t *b)
{
	for (size_t i = 0; i < FERRY_DHT_KEY_LEN; i++) {
		unsigned x = a[i] ^ b[i];

		if (x != 0)
			return (unsigned)(i * 8) + (unsigned)__builtin_clz(x) -
			    24;
	}
	return FERRY_DHT_KEY_LEN * 8;
}

static void
dht_find_print(const struct cli *cli, const struct ferry_dht_key *key,
    const struct ferry_peer_id *ids, size_t n)
{
	char id[FERRY_PEER_ID_STRLEN + 1], dist[FERRY_DHT_KEY_STRLEN + 1];
	struct ferry_dht_key d;
	struct json j;

	if (cli->json) {
		ferry_dht_key_format(key, dist);
		json_init(&j, stdout);
		json_object_begin(&j);
		json_member_string(&j, "key", dist);
		json_key(&j, "peers");
		json_array_begin(&j);
	} else if (n > 0) {
		printf("%-52s  %6s  %s\n", "PEER", "COMMON", "DISTANCE");
	} else {
		printf("no peers known\n");
	}
	for (size_t i = 0; i < n; i++) {
		/* The distance of Kademlia: key XOR id. */
		for (size_t b = 0; b < FERRY_DHT_KEY_LEN; b++)
			d.bytes[b] = key->bytes[b] ^ ids[i].bytes[b];
		ferry_dht_key_format(&d, dist);
		ferry_peer_id_to_string(&ids[i], id);
		if (!cli->json) {
			printf("%-52s  %6u  %s\n", id,
			    dht_common_bits(key->bytes, ids[i].bytes), dist);
			continue;
		}
		json_object_begin(&j);
		json_member_string(&j, "id", id);
		json_member_string(&j, "distance", dist);
		json_member_uint(&j, "common_bits",
		    dht_common_bits(key->bytes, ids[i].bytes));
		json_object_end(&j);
	}
	if (cli->json) {
		json_array_end(&j);
		json_object_end(&j);
	}
}

struct dht_find_req {
	const struct ferry_dht_key *key;
	unsigned want;
	struct ferry_peer_id *ids; /* answer, n of them */
	size_t n;
};

static int
dht_find_ask(struct ferry_client *fc, void *cls)
{
	struct dht_find_req *q = cls;

	return ferry_dht_find(fc, q->key, q->want, &q->ids, &q->n);
}

static int
dht_find_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		CLI_GLOBAL_OPTIONS,
	};
	uint64_t want = DHT_FIND_DEFAULT;
	struct dht_find_req q;
	struct ferry_dht_key key;
	int c, r;

	while ((c = cli_getopt(cli, argc, argv, "n:", opts)) != -1) {
		if (c == CLI_STOP)
			return cli->exit;
		if (c != 'n' ||
		    cli_parse_uint(cli, "--count", optarg, 1,
		        FERRY_DHT_FIND_MAX, &want) != 0)
			return CLI_EXIT_USAGE;
	}
	if (argc - optind != 1)
		return cli_usage_error(cli, "expected one KEY");
	if (cli_parse_key(cli, argv[optind], &key) != 0)
		return CLI_EXIT_USAGE;
	q = (struct dht_find_req){ &key, (unsigned)want, NULL, 0 };
	r = cli_request(cli, dht_find_ask, &q, dht_fail);
	if (r != 0)
		return r;
	dht_find_print(cli, &key, q.ids, q.n);
	free(q.ids);
	return CLI_EXIT_OK;
}

/* [dht] CONGESTION's word for a scheme. */
static const char *
dht_cc_word(uint8_t c)
{
	switch (c) {
	case FERRY_DHT_CC_NONE:
		return "none";
	case FERRY_DHT_CC_CSCC:
		return "cscc";
	case FERRY_DHT_CC_BPCC:
		return "bpcc";
	default:
		return "unknown";
	}
}

/* The congestion control's part, whichever the scheme. */
static void
dht_status_print_cc(const struct ferry_dht_cc *cc)
{
	printf("congestion:    %s, %" PRIu32 " requests waiting, %" PRIu64
	       " refused\n",
	    dht_cc_word(cc->scheme), cc->waiting, cc->refused);
	if (cc->scheme == FERRY_DHT_CC_CSCC)
		printf("  credits %.2f, ssthresh %.2f, %" PRIu32
		       " in flight, rtt %.1f ms, rto %.1f ms\n",
		    cc->credits, cc->ssthresh, cc->in_flight,
		    cc->rtt_us / 1000.0, cc->rto_us / 1000.0);
	printf("  %" PRIu64 " retransmitted, %" PRIu64 " losses, %" PRIu64
	       " dropped, %" PRIu64 " duplicates\n",
	    cc->retransmits, cc->losses, cc->drops, cc->duplicates);
}

static void
dht_status_json_cc(struct json *j, const struct ferry_dht_cc *cc)
{
	json_key(j, "congestion");
	json_object_begin(j);
	json_member_string(j, "scheme", dht_cc_word(cc->scheme));
	json_member_uint(j, "waiting", cc->waiting);
	json_member_uint(j, "in_flight", cc->in_flight);
	json_member_uint(j, "credits_milli",
	    (uint64_t)(cc->credits * 1000 + 0.5));
	json_member_uint(j, "ssthresh_milli",
	    (uint64_t)(cc->ssthresh * 1000 + 0.5));
	json_member_uint(j, "rtt_us", cc->rtt_us);
	json_member_uint(j, "rto_us", cc->rto_us);
	json_member_uint(j, "retransmits", cc->retransmits);
	json_member_uint(j, "losses", cc->losses);
	json_member_uint(j, "drops", cc->drops);
	json_member_uint(j, "duplicates", cc->duplicates);
	json_member_uint(j, "refused", cc->refused);
	json_object_end(j);
}

/* BPCC's part ([dht] CONGESTION = bpcc). */
static void
dht_status_print_bpcc(const struct ferry_dht_bpcc *b)
{
	char id[FERRY_PEER_ID_STRLEN + 1];

	printf("bpcc:          queue %" PRIu32 ", block max %" PRIu32
	       " ms: %" PRIu32 " waiting, %" PRIu32 " blocked, %" PRIu32
	       " held\n",
	    b->queue, b->block_max_ms, b->depth, b->blocked, b->held);
	printf("               %" PRIu64 " holds, %" PRIu64
	       " releases, %" PRIu64 " given up (%" PRIu64
	       " rerouted, %" PRIu64 " failed), %" PRIu64 " refused\n",
	    b->holds, b->releases, b->block_timeouts, b->failed_over,
	    b->fails, b->overflow);
	for (size_t i = 0; i < b->n_peers; i++) {
		const struct ferry_dht_bpcc_peer *p = &b->peers[i];

		ferry_peer_id_to_string(&p->id, id);
		printf("  %s: %" PRIu32 " waiting", id, p->depth);
		if (p->flags & FERRY_DHT_BPCC_BLOCKED)
			printf(", blocked %" PRIu32 " ms", p->blocked_ms);
		if (p->flags & FERRY_DHT_BPCC_STALLED)
			printf(", given up");
		if (p->flags & FERRY_DHT_BPCC_HELD)
			printf(", held");
		printf("\n");
	}
}

static void
dht_status_print(const struct ferry_dht_status *st)
{
	printf("routing table: %" PRIu32 " peers in %" PRIu32
	       " buckets, %" PRIu32 " waiting (k %u)\n",
	    st->entries, st->buckets_used, st->cached, st->k);
	printf("replication:   %u\n", st->replication);
	printf("store:         %" PRIu64 " blocks, %" PRIu64
	       " bytes of %" PRIu64 " (quota)\n",
	    st->blocks, st->bytes, st->quota);
	for (size_t i = 0; i < st->n_buckets; i++)
		printf("  bucket %3u: %u peers\n", st->buckets[i].prefix,
		    st->buckets[i].entries);
	if (st->cc != NULL)
		dht_status_print_cc(st->cc);
	if (st->bpcc != NULL)
		dht_status_print_bpcc(st->bpcc);
}

static void
dht_status_json_bpcc(struct json *j, const struct ferry_dht_bpcc *b)
{
	char id[FERRY_PEER_ID_STRLEN + 1];

	json_key(j, "bpcc");
	json_object_begin(j);
	json_member_uint(j, "queue", b->queue);
	json_member_uint(j, "block_max_ms", b->block_max_ms);
	json_member_uint(j, "depth", b->depth);
	json_member_uint(j, "blocked", b->blocked);
	json_member_uint(j, "held", b->held);
	json_member_uint(j, "holds", b->holds);
	json_member_uint(j, "releases", b->releases);
	json_member_uint(j, "block_timeouts", b->block_timeouts);
	json_member_uint(j, "failed_over", b->failed_over);
	json_member_uint(j, "fails", b->fails);
	json_member_uint(j, "overflow", b->overflow);
	json_key(j, "peers");
	json_array_begin(j);
	for (size_t i = 0; i < b->n_peers; i++) {
		const struct ferry_dht_bpcc_peer *p = &b->peers[i];

		ferry_peer_id_to_string(&p->id, id);
		json_object_begin(j);
		json_member_string(j, "id", id);
		json_member_uint(j, "depth", p->depth);
		json_member_uint(j, "blocked_ms", p->blocked_ms);
		json_member_bool(j, "blocked",
		    (p->flags & FERRY_DHT_BPCC_BLOCKED) != 0);
		json_member_bool(j, "given_up",
		    (p->flags & FERRY_DHT_BPCC_STALLED) != 0);
		json_member_bool(j, "held",
		    (p->flags & FERRY_DHT_BPCC_HELD) != 0);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

static void
dht_status_json(const struct ferry_dht_status *st)
{
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_member_uint(&j, "k", st->k);
	json_member_uint(&j, "replication", st->replication);
	json_member_uint(&j, "peers", st->entries);
	json_member_uint(&j, "cached", st->cached);
	json_member_uint(&j, "buckets_used", st->buckets_used);
	json_member_uint(&j, "blocks", st->blocks);
	json_member_uint(&j, "bytes", st->bytes);
	json_member_uint(&j, "quota", st->quota);
	if (st->cc != NULL)
		dht_status_json_cc(&j, st->cc);
	json_key(&j, "buckets");
	json_array_begin(&j);
	for (size_t i = 0; i < st->n_buckets; i++) {
		json_object_begin(&j);
		json_member_uint(&j, "prefix", st->buckets[i].prefix);
		json_member_uint(&j, "peers", st->buckets[i].entries);
		json_object_end(&j);
	}
	json_array_end(&j);
	if (st->bpcc != NULL)
		dht_status_json_bpcc(&j, st->bpcc);
	json_object_end(&j);
}

static int
dht_status_ask(struct ferry_client *fc, void *cls)
{
	return ferry_dht_status(fc, cls);
}

static int
dht_status_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_dht_status *st;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_request(cli, dht_status_ask, &st, dht_fail);
	if (r != 0)
		return r;
	if (cli->json)
		dht_status_json(st);
	else
		dht_status_print(st);
	ferry_dht_status_free(st);
	return CLI_EXIT_OK;
}
