/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry: the command-line client of ferryd. This file is the subcommand
 * table and the global options; each subcommand lives in its own file
 * (wireguard-tools' wg.c layout). See ferry(1).
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct cli_cmd ferry_cmds[] = {
	{ "status", status_main, "",
	    "Show the daemon's identity, version, uptime and transports", "" },
	{ "id", id_main, "", "Print the daemon's peer id", "" },
	{ "peers", peers_main, "", "List the connected peers", "" },
	{ "hello", hello_main, "",
	    "Print the daemon's HELOs as a ferry:// URI for other peers", "" },
	{ "connect", connect_main, "URI",
	    "Hand the daemon a peer's ferry:// URI to validate and connect to",
	    "" },
	{ "send", send_main, "PEER TYPE [DATA]",
	    "Send one message of application TYPE to PEER; the body is DATA, or standard input",
	    "" },
	{ "listen", listen_main, "TYPE...",
	    "Print the messages of the given application types as they arrive",
	    "  -n, --count N   exit after N messages\n"
	    "  -r, --raw       print only the bodies, byte for byte\n" },
	{ "ping", ping_main, "PEER",
	    "Measure round trips to PEER through the daemons and the link",
	    "  -c, --count N      round trips (default 4)\n"
	    "  -s, --size BYTES   payload of each (default 56)\n"
	    "  -i, --interval MS  pause between them (default 1000)\n" },
	{ "stats", stats_main, "[PREFIX]",
	    "Show the daemon's statistics counters, or those starting with PREFIX",
	    "" },
	{ "dht", dht_main, "OPERATION [ARG]...",
	    "Store and fetch blocks in the DHT, find the peers closest to a key, show its state",
	    "Operations:\n"
	    "  put [FILE|-]       store a block (at most 4 MiB), print its key\n"
	    "  get KEY [-o FILE]  fetch the block of KEY, checked against KEY\n"
	    "  find KEY [-n N]    the N peers closest to KEY, with their distance\n"
	    "  status             routing table and block store\n"
	    "'ferry dht OPERATION --help' shows an operation's options.\n" },
	{ "put", put_main, "FILE",
	    "Store FILE in the DHT, encrypted, and print the URI that names it",
	    "  -r, --replication N  storing peers of each block, 1 to 16\n"
	    "                       (default: the daemon's)\n"
	    "  -l, --label NAME     the name ferry transfers shows (default FILE)\n" },
	{ "get", get_main, "URI",
	    "Fetch the file URI names, checked against its XXH128",
	    "  -o, --output FILE   write it to FILE (through FILE.part, which a\n"
	    "                      failed run leaves to resume) instead of\n"
	    "                      standard output\n" },
	{ "remote", remote_main, "OPERATION [ARG]...",
	    "Store and fetch files through an HTTPS intermediary, with no daemon here",
	    "Operations:\n"
	    "  put FILE [-r N]      seal and store FILE, print its URI once every\n"
	    "                       block has its receipts\n"
	    "  get URI [-o FILE]    fetch the file of URI, checked\n"
	    "  receipts             take this client's queue of receipts\n"
	    "  intermediaries       list the intermediaries of the federation\n"
	    "Each takes --intermediary URL (repeatable) and --cacert FILE;\n"
	    "'ferry remote OPERATION --help' shows its options.\n" },
	{ "transfers", transfers_main, "",
	    "List this user's running and resumable transfers", "" },
	{ "cancel", cancel_main, "ID",
	    "Stop a transfer and forget what it did", "" },
	{ "shutdown", shutdown_main, "", "Ask the daemon to shut down", "" },
};
#define FERRY_N_CMDS (sizeof(ferry_cmds) / sizeof(ferry_cmds[0]))

static void
ferry_usage(FILE *f)
{
	fprintf(f,
	    "Usage: ferry [OPTION]... COMMAND [ARG]...\n"
	    "Talk to the local ferryd.\n\n"
	    "Options (also accepted after COMMAND):\n"
	    "      --socket PATH   the daemon's socket (default: $FERRY_SOCKET, else\n"
	    "                      the runtime directory's ferryd.sock)\n"
	    "      --json          machine-readable output\n"
	    "      --timeout MS    how long to wait for an answer (default 10000)\n"
	    "  -h, --help          show this help, or a command's with COMMAND --help\n"
	    "  -V, --version       show the version\n\n"
	    "Commands:\n");
	for (size_t i = 0; i < FERRY_N_CMDS; i++)
		fprintf(f, "  %-9s %s\n", ferry_cmds[i].name,
		    ferry_cmds[i].summary);
	fprintf(f,
	    "\nExit status: 0 success, 1 the daemon reported a failure, 2 usage error,\n"
	    "3 cannot reach the daemon, 4 peer not connected or unknown (dht: no DHT\n"
	    "or no route), 5 timed out, 6 no peer holds the block (dht get, get),\n"
	    "7 a local file cannot be read or written, 8 what was got is damaged.\n"
	    "See ferry(1).\n");
}

static const struct cli_cmd *
ferry_find(const char *name)
{
	for (size_t i = 0; i < FERRY_N_CMDS; i++)
		if (strcmp(ferry_cmds[i].name, name) == 0)
			return &ferry_cmds[i];
	return NULL;
}

/* The options before COMMAND. Returns -1 to go on, else an exit code. */
static int
ferry_global_options(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "version", no_argument, NULL, CLI_OPT_VERSION },
		CLI_GLOBAL_OPTIONS,
	};
	static const struct cli_cmd top = { "", NULL, "COMMAND", "", "" };
	uint64_t v;
	int c;

	cli->cmd = &top;
	while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
		case CLI_OPT_HELP:
			ferry_usage(stdout);
			return CLI_EXIT_OK;
		case 'V':
		case CLI_OPT_VERSION:
			printf("ferry %s (libferry %s)\n", FERRY_VERSION,
			    ferry_version());
			return CLI_EXIT_OK;
		case CLI_OPT_SOCKET:
			cli->socket = optarg;
			break;
		case CLI_OPT_JSON:
			cli->json = true;
			break;
		case CLI_OPT_TIMEOUT:
			if (cli_parse_uint(cli, "--timeout", optarg, 0,
			        INT32_MAX, &v) != 0)
				return CLI_EXIT_USAGE;
			cli->timeout_ms = (int)v;
			break;
		default:
			ferry_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	return -1;
}

int
main(int argc, char **argv)
{
	struct cli cli;
	const char *env = getenv("FERRY_SOCKET");
	int r;

	memset(&cli, 0, sizeof(cli));
	cli.timeout_ms = -2;
	if (env != NULL && *env != '\0')
		cli.socket = env;
	r = ferry_global_options(&cli, argc, argv);
	if (r >= 0)
		return r;
	if (optind >= argc) {
		ferry_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	cli.cmd = ferry_find(argv[optind]);
	if (cli.cmd == NULL) {
		fprintf(stderr, "ferry: unknown command '%s'\n", argv[optind]);
		ferry_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	optind = 0; /* restart getopt for the subcommand's own options */
	return cli.cmd->main(&cli, argc, argv);
}
