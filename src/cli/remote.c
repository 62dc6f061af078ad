/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry remote put|get|receipts|intermediaries: the thin client (issue
 * 15), with no daemon on this machine: files sealed here and stored or
 * fetched through HTTPS intermediaries (ferry-intermediary(7)). Progress
 * and --json as ferry put and ferry get show them (progress.c).
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/json.h"
#include "cli/outfile.h"
#include "cli/progress.h"
#include "lib/base32.h"
#include "remote/remote.h"

#define REMOTE_URLS_MAX 16

enum {
	REMOTE_OPT_INTERMEDIARY = CLI_OPT_FIRST_OWN,
	REMOTE_OPT_CACERT,
	REMOTE_OPT_CONFIG,
	REMOTE_OPT_RECEIPT_TIMEOUT,
	REMOTE_OPT_LIFETIME,
	REMOTE_OPT_VERIFY,
	REMOTE_OPT_VERBOSE,
};

/* The options every remote operation takes, then the globals. */
/* clang-format off */
#define REMOTE_OPTIONS							\
	{ "intermediary", required_argument, NULL, REMOTE_OPT_INTERMEDIARY }, \
	{ "cacert", required_argument, NULL, REMOTE_OPT_CACERT },	\
	{ "config-dir", required_argument, NULL, REMOTE_OPT_CONFIG },	\
	{ "verbose", no_argument, NULL, REMOTE_OPT_VERBOSE },		\
	CLI_GLOBAL_OPTIONS
/* clang-format on */

static int remote_put_main(struct cli *cli, int argc, char **argv);
static int remote_get_main(struct cli *cli, int argc, char **argv);
static int remote_receipts_main(struct cli *cli, int argc, char **argv);
static int remote_imds_main(struct cli *cli, int argc, char **argv);

#define REMOTE_COMMON_HELP                                                     \
	"  --intermediary URL  an intermediary to use (https://HOST:PORT),\n"  \
	"                      tried first, in order; repeatable\n"            \
	"  --cacert FILE       CA certificates to check it with\n"             \
	"                      (default: the system's)\n"                      \
	"  --config-dir DIR    the client's key, secret and lists\n"           \
	"                      (default: ~/.config/ferry/remote)\n"            \
	"  --verbose           say on standard error what happens\n"

static const struct cli_cmd remote_cmds[] = {
	{ "remote put", remote_put_main, "FILE",
	    "Store FILE through an intermediary and print its URI once every block has its receipts and the check found them",
	    "  -r, --replication N      storing peers of each block, 1 to 16 (default 3)\n"
	    "  --lifetime SECONDS       how long they keep it (default 30 days)\n"
	    "  --receipt-timeout SECONDS  receipts awaited from one intermediary\n"
	    "                           before the next is tried (default 60)\n"
	    "  --verify all|sample|none  blocks fetched back through another\n"
	    "                           intermediary to check them (default\n"
	    "                           sample: every node and 135 data blocks)\n" REMOTE_COMMON_HELP },
	{ "remote get", remote_get_main, "URI",
	    "Fetch the file URI names through an intermediary, checked against its XXH128",
	    "  -o, --output FILE   write it to FILE (through FILE.part) instead of\n"
	    "                      standard output\n" REMOTE_COMMON_HELP },
	{ "remote receipts", remote_receipts_main, "",
	    "Take this client's queue of receipts from an intermediary",
	    REMOTE_COMMON_HELP },
	{ "remote intermediaries", remote_imds_main, "",
	    "List the intermediaries of the federation", REMOTE_COMMON_HELP },
};
#define REMOTE_N_CMDS (sizeof(remote_cmds) / sizeof(remote_cmds[0]))

/* What the options of an operation gave. */
struct remote_args {
	struct remote_opts o;
	const char *urls[REMOTE_URLS_MAX];
	const char *out;
};

/* Applies a common option. 1 if c was one, 0 if not, or an exit code
 * (negated) for a bad value. */
static int
remote_common_opt(struct cli *cli, int c, struct remote_args *a)
{
	switch (c) {
	case REMOTE_OPT_INTERMEDIARY:
		if (strncmp(optarg, "https://", 8) != 0)
			return -cli_usage_error(cli,
			    "--intermediary %s: an https:// URL is expected",
			    optarg);
		if (a->o.n_urls == REMOTE_URLS_MAX)
			return -cli_usage_error(cli,
			    "at most %d --intermediary", REMOTE_URLS_MAX);
		/* No trailing slash: targets start with one. */
		optarg[strcspn(optarg + 8, "/") + 8] = '\0';
		a->urls[a->o.n_urls++] = optarg;
		return 1;
	case REMOTE_OPT_CACERT:
		a->o.cacert = optarg;
		return 1;
	case REMOTE_OPT_CONFIG:
		a->o.dir = optarg;
		return 1;
	case REMOTE_OPT_VERBOSE:
		a->o.verbose = true;
		return 1;
	default:
		return 0;
	}
}

/* Maps a failure to an exit code of ferry(1), saying why. */
static int
remote_exit(const struct cli *cli, struct remote *rc, int r)
{
	const char *why = rc != NULL ? remote_error(rc) : "";
	int code;

	switch (r) {
	case -EHOSTUNREACH:
		code = CLI_EXIT_NODAEMON; /* no intermediary answered */
		break;
	case -ETIMEDOUT:
		code = CLI_EXIT_TIMEOUT;
		break;
	case -ENOENT:
		code = CLI_EXIT_NOTFOUND;
		break;
	case -EBADMSG:
		code = strcmp(cli->cmd->name, "remote get") == 0
		    ? CLI_EXIT_DAMAGED
		    : CLI_EXIT_FAIL;
		break;
	case -EINVAL:
		code = CLI_EXIT_USAGE;
		break;
	case -ENOLINK:
		code = CLI_EXIT_NOCHECK; /* --verify all, and none could */
		break;
	case -ESTALE:
	case -EISDIR:
	case -ENOSPC:
	case -EDQUOT:
	case -EFBIG:
	case -EIO:
		code = CLI_EXIT_FILE;
		break;
	default:
		code = CLI_EXIT_FAIL;
		break;
	}
	fprintf(stderr, "ferry %s: %s\n", cli->cmd->name,
	    why[0] != '\0' ? why : strerror(-r));
	return code;
}

static int
remote_start(struct cli *cli, struct remote_args *a, struct remote **ret)
{
	int r;

	a->o.urls = a->urls;
	if (cli->timeout_ms > 0)
		a->o.timeout_s = (unsigned)((cli->timeout_ms + 999) / 1000);
	r = remote_open(&a->o, ret);
	if (r < 0) {
		fprintf(stderr, "ferry %s: %s\n", cli->cmd->name,
		    *remote_open_error() != '\0' ? remote_open_error()
		                                 : strerror(-r));
		return r == -ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_FILE;
	}
	return 0;
}

/* Parses an operation's options: own ones through own(), then the
 * common ones. -1 to go on, else the exit code. */
static int
remote_parse(struct cli *cli, int argc, char **argv, const char *shortopts,
    const struct option *opts, struct remote_args *a,
    int (*own)(struct cli *, int, struct remote_args *), int operands)
{
	int c, r;

	while ((c = cli_getopt(cli, argc, argv, shortopts, opts)) != -1) {
		if (c == CLI_STOP)
			return cli->exit;
		r = remote_common_opt(cli, c, a);
		if (r == 0 && own != NULL)
			r = own(cli, c, a);
		if (r < 0)
			return -r;
		if (r == 0)
			return CLI_EXIT_USAGE;
	}
	if (argc - optind != operands)
		return cli_usage_error(cli,
		    argc - optind < operands ? "missing %s"
		                             : "unexpected argument '%s'",
		    argc - optind < operands ? cli->cmd->args
		                             : argv[optind + operands]);
	return -1;
}

static int
remote_put_opt(struct cli *cli, int c, struct remote_args *a)
{
	uint64_t v;

	if (c == 'r') {
		if (cli_parse_uint(cli, "--replication", optarg, 1,
		        FERRY_DHT_REPL_MAX, &v) != 0)
			return -CLI_EXIT_USAGE;
		a->o.replication = (unsigned)v;
		return 1;
	}
	if (c == REMOTE_OPT_LIFETIME) {
		if (cli_parse_uint(cli, "--lifetime", optarg, 60,
		        100ull * 365 * 86400, &v) != 0)
			return -CLI_EXIT_USAGE;
		a->o.lifetime_s = v;
		return 1;
	}
	if (c == REMOTE_OPT_RECEIPT_TIMEOUT) {
		if (cli_parse_uint(cli, "--receipt-timeout", optarg, 1, 3600,
		        &v) != 0)
			return -CLI_EXIT_USAGE;
		a->o.receipt_wait_s = (unsigned)v;
		return 1;
	}
	if (c == REMOTE_OPT_VERIFY) {
		if (strcmp(optarg, "all") == 0)
			a->o.verify = REMOTE_VERIFY_ALL;
		else if (strcmp(optarg, "sample") == 0)
			a->o.verify = REMOTE_VERIFY_SAMPLE;
		else if (strcmp(optarg, "none") == 0)
			a->o.verify = REMOTE_VERIFY_NONE;
		else
			return -cli_usage_error(cli,
			    "--verify %s: all, sample or none is expected",
			    optarg);
		return 1;
	}
	return 0;
}

static int
remote_put_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "replication", required_argument, NULL, 'r' },
		{ "lifetime", required_argument, NULL, REMOTE_OPT_LIFETIME },
		{ "receipt-timeout", required_argument, NULL,
		    REMOTE_OPT_RECEIPT_TIMEOUT },
		{ "verify", required_argument, NULL, REMOTE_OPT_VERIFY },
		REMOTE_OPTIONS,
	};
	struct remote_args a = { 0 };
	struct ferry_file_result res;
	struct remote *rc;
	struct progress pr;
	int r;

	r = remote_parse(cli, argc, argv, "r:", opts, &a, remote_put_opt, 1);
	if (r >= 0)
		return r;
	r = remote_start(cli, &a, &rc);
	if (r != 0)
		return r;
	progress_init(&pr, cli);
	r = remote_put(rc, argv[optind], progress_interval(&pr),
	    progress_report, &pr, &res);
	progress_end(&pr);
	if (r < 0) {
		r = remote_exit(cli, rc, r);
		remote_free(rc);
		return r;
	}
	/* The URI first: remote_free() then acknowledges the receipts. */
	progress_result(cli, "done", &res, NULL);
	remote_free(rc);
	return CLI_EXIT_OK;
}

static int
remote_get_opt(struct cli *cli, int c, struct remote_args *a)
{
	(void)cli;
	if (c != 'o')
		return 0;
	a->out = strcmp(optarg, "-") == 0 ? NULL : optarg;
	return 1;
}

static int
remote_get_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		REMOTE_OPTIONS,
	};
	struct remote_args a = { 0 };
	struct ferry_file_result res;
	struct remote *rc;
	struct progress pr;
	char part[4096];
	int fd, r;

	r = remote_parse(cli, argc, argv, "o:", opts, &a, remote_get_opt, 1);
	if (r >= 0)
		return r;
	if (a.out != NULL && outfile_part_name(a.out, part, sizeof(part)) < 0)
		return cli_usage_error(cli, "%s: name too long", a.out);
	r = remote_start(cli, &a, &rc);
	if (r != 0)
		return r;
	fd = a.out != NULL
	    ? open(part, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY,
	          0666)
	    : outfile_tmp();
	if (fd < 0) {
		fprintf(stderr, "ferry remote get: %s: %s\n",
		    a.out != NULL ? part : "temporary file", strerror(errno));
		remote_free(rc);
		return CLI_EXIT_FILE;
	}
	progress_init(&pr, cli);
	r = remote_get(rc, argv[optind], fd, progress_interval(&pr),
	    progress_report, &pr, &res);
	progress_end(&pr);
	if (r < 0) {
		/* Nothing to resume from: the blocks are fetched again. */
		if (a.out != NULL)
			(void)unlink(part);
		(void)close(fd);
		r = remote_exit(cli, rc, r);
		remote_free(rc);
		return r;
	}
	remote_free(rc);
	r = fsync(fd) < 0 ? -errno : 0;
	if (r == 0)
		r = a.out != NULL ? outfile_finish(part, a.out)
		                  : outfile_copy_out(fd);
	(void)close(fd);
	if (r < 0) {
		fprintf(stderr, "ferry remote get: %s: %s\n",
		    a.out != NULL ? a.out : "standard output", strerror(-r));
		return CLI_EXIT_FILE;
	}
	if (cli->json || a.out == NULL)
		progress_result(cli, "done", &res, a.out != NULL ? a.out : "-");
	return CLI_EXIT_OK;
}

static void
remote_hex(const uint8_t *b, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		(void)snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* remote_entry_fn: one line, or one JSON object, per entry. */
static void
remote_print_entry(void *cls, const char *url, const struct remote_entry *e,
    bool valid)
{
	const struct cli *cli = cls;
	char key[65], hash[65], storer[BASE32_LEN(32) + 1];
	struct json j;

	remote_hex(e->key, 32, key);
	remote_hex(e->put_hash, 32, hash);
	base32_encode(e->storer_pk, 32, storer);
	if (!cli->json) {
		if (e->done)
			printf("%" PRIu64 " done %s %s %" PRIu32 " receipts\n",
			    e->cursor, key, e->status, e->receipts);
		else
			printf("%" PRIu64
			       " receipt %s storer %.8s expires %" PRIu64
			       "%s\n",
			    e->cursor, key, storer, e->expiry,
			    valid ? "" : " FORGED");
		return;
	}
	json_init(&j, stdout);
	json_object_begin(&j);
	json_member_string(&j, "intermediary", url);
	json_member_uint(&j, "cursor", e->cursor);
	json_member_string(&j, "type", e->done ? "done" : "receipt");
	json_member_string(&j, "key", key);
	json_member_string(&j, "put_hash", hash);
	if (e->done) {
		json_member_string(&j, "status", e->status);
		json_member_uint(&j, "receipts", e->receipts);
	} else {
		json_member_string(&j, "storer", storer);
		json_member_uint(&j, "expiry", e->expiry);
		json_member_bool(&j, "valid", valid);
	}
	json_object_end(&j);
}

static void
remote_print_imd(void *cls, const struct remote_imd *imd)
{
	const struct cli *cli = cls;
	struct json j;

	if (!cli->json) {
		printf("%s %s%s%s\n", imd->url,
		    imd->peer[0] != '\0' ? imd->peer : "-",
		    imd->self ? " (answered)" : "", imd->bad ? " (bad)" : "");
		return;
	}
	json_init(&j, stdout);
	json_object_begin(&j);
	json_member_string(&j, "url", imd->url);
	json_member_string(&j, "peer", imd->peer[0] != '\0' ? imd->peer : NULL);
	json_member_uint(&j, "expires", imd->expires);
	json_member_bool(&j, "self", imd->self);
	json_member_bool(&j, "bad", imd->bad);
	json_object_end(&j);
}

/* receipts, or intermediaries if imds: the operations with the common
 * options only, that print a list the intermediary answers. */
static int
remote_list_main(struct cli *cli, int argc, char **argv, bool imds)
{
	static const struct option opts[] = { REMOTE_OPTIONS };
	struct remote_args a = { 0 };
	struct remote *rc;
	int r;

	r = remote_parse(cli, argc, argv, "", opts, &a, NULL, 0);
	if (r >= 0)
		return r;
	r = remote_start(cli, &a, &rc);
	if (r != 0)
		return r;
	r = imds ? remote_intermediaries(rc, remote_print_imd, cli)
	         : remote_receipts(rc, remote_print_entry, cli);
	r = r < 0 ? remote_exit(cli, rc, r) : CLI_EXIT_OK;
	remote_free(rc);
	return r;
}

static int
remote_receipts_main(struct cli *cli, int argc, char **argv)
{
	return remote_list_main(cli, argc, argv, false);
}

static int
remote_imds_main(struct cli *cli, int argc, char **argv)
{
	return remote_list_main(cli, argc, argv, true);
}

int
remote_main(struct cli *cli, int argc, char **argv)
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
		    "missing operation: put, get, receipts or intermediaries");
	for (size_t i = 0; i < REMOTE_N_CMDS; i++)
		if (strcmp(remote_cmds[i].name + strlen("remote "),
		        argv[optind]) == 0)
			sub = &remote_cmds[i];
	if (sub == NULL)
		return cli_usage_error(cli, "unknown operation '%s'",
		    argv[optind]);
	cli->cmd = sub;
	argc -= optind;
	argv += optind;
	optind = 0;
	return sub->main(cli, argc, argv);
}
