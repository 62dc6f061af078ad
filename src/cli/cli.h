/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The ferry command's shared parts: global options, exit codes and the
 * helpers every subcommand uses (ferry.c holds the table, one file per
 * subcommand does the work; wireguard-tools' wg.c layout).
 */
#ifndef FERRY_CLI_CLI_H
#define FERRY_CLI_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include <ferry/client.h>

/* Exit codes, documented in ferry(1). */
#define CLI_EXIT_OK       0 /* success */
#define CLI_EXIT_FAIL     1 /* the daemon reported a failure */
#define CLI_EXIT_USAGE    2 /* bad command line */
#define CLI_EXIT_NODAEMON 3 /* cannot reach the daemon */
#define CLI_EXIT_PEER     4 /* peer not connected or unknown */
#define CLI_EXIT_TIMEOUT  5 /* no answer in time */
#define CLI_EXIT_NOTFOUND 6 /* no peer holds the block (dht get, get) */
#define CLI_EXIT_FILE     7 /* a local file cannot be read or written */
#define CLI_EXIT_DAMAGED  8 /* what was got fails its checks (get) */
#define CLI_EXIT_NOCHECK  9 /* remote put --verify all: not checked */

/* Returned by cli_getopt() when the subcommand must exit now. */
#define CLI_STOP (-2)

/* Long-option values of the global options, above any short option. */
enum {
	CLI_OPT_SOCKET = 0x100,
	CLI_OPT_JSON,
	CLI_OPT_TIMEOUT,
	CLI_OPT_HELP,
	CLI_OPT_VERSION,
	CLI_OPT_FIRST_OWN /* subcommands number their options from here */
};

/* Options every subcommand takes; end a subcommand's table with them. */
/* clang-format off */
#define CLI_GLOBAL_OPTIONS						\
	{ "socket", required_argument, NULL, CLI_OPT_SOCKET },		\
	{ "json", no_argument, NULL, CLI_OPT_JSON },			\
	{ "timeout", required_argument, NULL, CLI_OPT_TIMEOUT },	\
	{ "help", no_argument, NULL, CLI_OPT_HELP },			\
	{ NULL, 0, NULL, 0 }
/* clang-format on */

struct cli;

/* A subcommand: argv[0] is its name. Returns an exit code. */
typedef int cli_main_fn(struct cli *cli, int argc, char **argv);

struct cli_cmd {
	const char *name;    /* "status" */
	cli_main_fn *main;   /* runs it */
	const char *args;    /* "PEER TYPE [DATA]", "" if none */
	const char *summary; /* one line for the command list */
	const char *help;    /* its own options, one per line, or "" */
};

struct cli {
	const char *socket;        /* --socket, else $FERRY_SOCKET, or NULL */
	bool json;                 /* --json */
	int timeout_ms;            /* --timeout; -2: libferry's default */
	const struct cli_cmd *cmd; /* the running subcommand */
	int exit;                  /* exit code when cli_getopt says stop */
};

/*
 * Parses a subcommand's options: applies the global ones and returns the
 * command's own (short ones from shortopts, getopt(3) syntax, where a
 * leading "+" stops at the first operand; long ones with their letter or
 * a value >= CLI_OPT_FIRST_OWN; optarg set), -1 after the last, or
 * CLI_STOP with cli->exit set (0 after --help, CLI_EXIT_USAGE after an
 * error, which is printed). opts must end with CLI_GLOBAL_OPTIONS.
 */
int cli_getopt(struct cli *cli, int argc, char **argv, const char *shortopts,
    const struct option *opts);
/* For a subcommand with only the global options: parses them and checks
 * that between min and max operands follow. stop_at_operand keeps an
 * operand such as "-x" (message data) from being read as an option. -1
 * to go on (operands at argv[optind]), else the exit code to return. */
int cli_parse_simple(struct cli *cli, int argc, char **argv, int min, int max,
    bool stop_at_operand);
/* Prints the subcommand's usage to stdout (to_stderr false) or stderr. */
void cli_usage(const struct cli *cli, bool to_stderr);
/* Prints "ferry CMD: msg" to stderr and returns CLI_EXIT_USAGE. */
int cli_usage_error(const struct cli *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Connects to the daemon. 0, or prints why and returns an exit code. */
int cli_open(struct cli *cli, struct ferry_client **ret);
/* Reports a failed request (what: "status") on stderr and maps its
 * errno to an exit code. */
int cli_fail(const struct cli *cli, const char *what, int r);

/* One request on a connection: its arguments and answer are at cls.
 * 0, or a negative errno. */
typedef int cli_request_fn(struct ferry_client *fc, void *cls);
/* Says why a request failed and returns the exit code. */
typedef int cli_fail_fn(const struct cli *cli, int r);
/* Connects, makes the request and disconnects. 0 when it succeeded;
 * else the exit code, with the reason printed: the daemon was not
 * reached, or fail (NULL: cli_fail naming the subcommand) said why the
 * request failed. */
int cli_request(struct cli *cli, cli_request_fn *fn, void *cls,
    cli_fail_fn *fail);
/* With --json, prints {"ok":true}: a request that answers nothing
 * else succeeded. */
void cli_print_ok(const struct cli *cli);
/* Maps a libferry error to an exit code. */
int cli_exit_code(int r);

/* Parses a peer id argument. 0, or prints the problem and returns
 * CLI_EXIT_USAGE. */
int cli_parse_peer(const struct cli *cli, const char *s,
    struct ferry_peer_id *ret);
/* Parses an unsigned number in [min, max] (decimal, or 0x hex). 0, or
 * prints the problem naming what and returns CLI_EXIT_USAGE. */
int cli_parse_uint(const struct cli *cli, const char *what, const char *s,
    uint64_t min, uint64_t max, uint64_t *ret);
/* Parses a DHT key argument (hexadecimal, or a peer id). 0, or prints
 * the problem and returns CLI_EXIT_USAGE. */
int cli_parse_key(const struct cli *cli, const char *s,
    struct ferry_dht_key *ret);
/* Reads fd to its end into a buffer the caller frees: at most max bytes.
 * 0, -EMSGSIZE (more than max), -ENOMEM or another negative errno. */
int cli_read_all(int fd, size_t max, uint8_t **ret, size_t *ret_len);

/* The subcommands. */
int status_main(struct cli *cli, int argc, char **argv);
int id_main(struct cli *cli, int argc, char **argv);
int peers_main(struct cli *cli, int argc, char **argv);
int hello_main(struct cli *cli, int argc, char **argv);
int connect_main(struct cli *cli, int argc, char **argv);
int send_main(struct cli *cli, int argc, char **argv);
int listen_main(struct cli *cli, int argc, char **argv);
int ping_main(struct cli *cli, int argc, char **argv);
int stats_main(struct cli *cli, int argc, char **argv);
int shutdown_main(struct cli *cli, int argc, char **argv);
int dht_main(struct cli *cli, int argc, char **argv);
int put_main(struct cli *cli, int argc, char **argv);
int get_main(struct cli *cli, int argc, char **argv);
int transfers_main(struct cli *cli, int argc, char **argv);
int cancel_main(struct cli *cli, int argc, char **argv);
int remote_main(struct cli *cli, int argc, char **argv);

#endif /* FERRY_CLI_CLI_H */
