/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What every ferry subcommand shares: option parsing with the global
 * options mixed in, connecting and one request, argument parsing, reading
 * input, and the mapping of errors to the exit codes of ferry(1).
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/json.h"

void
cli_usage(const struct cli *cli, bool to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;
	const struct cli_cmd *cmd = cli->cmd;

	fprintf(f,
	    "Usage: ferry [--socket PATH] [--json] [--timeout MS] %s%s%s\n",
	    cmd->name, *cmd->args ? " " : "", cmd->args);
	fprintf(f, "%s.\n", cmd->summary);
	if (*cmd->help)
		fprintf(f, "\n%s", cmd->help);
	fprintf(f, "\nSee ferry(1).\n");
}

int
cli_usage_error(const struct cli *cli, const char *fmt, ...)
{
	va_list ap;
	const char *name = cli->cmd->name, *sp = *name ? " " : "";

	fprintf(stderr, "ferry%s%s: ", sp, name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ferry%s%s --help'.\n", sp, name);
	return CLI_EXIT_USAGE;
}

/* Applies one global option. */
static int
cli_global(struct cli *cli, int c)
{
	uint64_t v = 0;

	switch (c) {
	case CLI_OPT_SOCKET:
		cli->socket = optarg;
		return 0;
	case CLI_OPT_JSON:
		cli->json = true;
		return 0;
	case CLI_OPT_TIMEOUT:
		if (cli_parse_uint(cli, "--timeout", optarg, 0, INT32_MAX,
		        &v) != 0)
			return CLI_EXIT_USAGE;
		cli->timeout_ms = (int)v;
		return 0;
	case CLI_OPT_HELP:
		cli_usage(cli, false);
		return -1;
	default:
		/* getopt_long printed what was wrong. */
		fprintf(stderr, "Try 'ferry %s --help'.\n", cli->cmd->name);
		return CLI_EXIT_USAGE;
	}
}

int
cli_getopt(struct cli *cli, int argc, char **argv, const char *shortopts,
    const struct option *opts)
{
	int c, r;

	for (;;) {
		c = getopt_long(argc, argv, shortopts, opts, NULL);
		if (c == -1)
			return -1;
		if (c != '?' && (c < CLI_OPT_SOCKET || c >= CLI_OPT_FIRST_OWN))
			return c;
		r = cli_global(cli, c);
		if (r < 0) {
			cli->exit = CLI_EXIT_OK;
			return CLI_STOP;
		}
		if (r > 0) {
			cli->exit = r;
			return CLI_STOP;
		}
	}
}

int
cli_parse_simple(struct cli *cli, int argc, char **argv, int min, int max,
    bool stop_at_operand)
{
	static const struct option opts[] = { CLI_GLOBAL_OPTIONS };
	int c, n;

	while ((c = cli_getopt(cli, argc, argv, stop_at_operand ? "+" : "",
	            opts)) != -1)
		if (c == CLI_STOP)
			return cli->exit;
	n = argc - optind;
	if (n < min)
		return cli_usage_error(cli, "missing argument");
	if (n > max)
		return cli_usage_error(cli, "unexpected argument '%s'",
		    argv[optind + max]);
	return -1;
}

int
cli_exit_code(int r)
{
	switch (r) {
	case 0:
		return CLI_EXIT_OK;
	case -ECONNREFUSED:
	case -ENOENT:
	case -ECONNRESET:
	case -EPIPE:
	case -EACCES:
	case -ENOTSOCK:
	case -ENAMETOOLONG:
		return CLI_EXIT_NODAEMON;
	case -ENOTCONN:
	case -EHOSTUNREACH:
		return CLI_EXIT_PEER;
	case -ETIMEDOUT:
		return CLI_EXIT_TIMEOUT;
	default:
		return CLI_EXIT_FAIL;
	}
}

int
cli_open(struct cli *cli, struct ferry_client **ret)
{
	char def[256];
	const char *path = cli->socket;
	int r;

	if (path == NULL) {
		r = ferry_default_socket(def, sizeof(def));
		if (r < 0) {
			fprintf(stderr,
			    "ferry: cannot determine the socket path: %s\n",
			    strerror(-r));
			return CLI_EXIT_NODAEMON;
		}
		path = def;
	}
	r = ferry_client_open(path, ret);
	if (r < 0) {
		fprintf(stderr, "ferry: cannot reach ferryd at %s: %s\n", path,
		    strerror(-r));
		return CLI_EXIT_NODAEMON;
	}
	if (cli->timeout_ms >= 0)
		ferry_client_set_timeout(*ret, cli->timeout_ms);
	return 0;
}

int
cli_fail(const struct cli *cli, const char *what, int r)
{
	const char *why = strerror(-r);

	if (r == -ECONNRESET)
		why = "the daemon closed the connection";
	else if (r == -ETIMEDOUT)
		why = "no answer from the daemon in time";
	else if (r == -EPROTO)
		why = "malformed answer from the daemon";
	fprintf(stderr, "ferry %s: %s: %s\n", cli->cmd->name, what, why);
	return cli_exit_code(r);
}

int
cli_parse_peer(const struct cli *cli, const char *s, struct ferry_peer_id *ret)
{
	if (ferry_peer_id_from_string(s, ret) < 0)
		return cli_usage_error(cli,
		    "'%s' is not a peer id (%d base32 characters)", s,
		    FERRY_PEER_ID_STRLEN);
	return 0;
}

int
cli_parse_uint(const struct cli *cli, const char *what, const char *s,
    uint64_t min, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0 || v < min ||
	    v > max)
		return cli_usage_error(cli,
		    "%s: expected a number from %llu to %llu, not '%s'", what,
		    (unsigned long long)min, (unsigned long long)max, s);
	*ret = v;
	return 0;
}

int
cli_request(struct cli *cli, cli_request_fn *fn, void *cls, cli_fail_fn *fail)
{
	struct ferry_client *fc;
	int r = cli_open(cli, &fc);

	if (r != 0)
		return r;
	r = fn(fc, cls);
	ferry_client_close(fc);
	if (r >= 0)
		return 0;
	return fail != NULL ? fail(cli, r) : cli_fail(cli, cli->cmd->name, r);
}

void
cli_print_ok(const struct cli *cli)
{
	struct json j;

	if (!cli->json)
		return;
	json_init(&j, stdout);
	json_object_begin(&j);
	json_member_bool(&j, "ok", true);
	json_object_end(&j);
}

int
cli_parse_key(const struct cli *cli, const char *s, struct ferry_dht_key *ret)
{
	if (ferry_dht_key_parse(s, ret) < 0)
		return cli_usage_error(cli,
		    "'%s' is not a key (%d hexadecimal digits, or a peer id)",
		    s, FERRY_DHT_KEY_STRLEN);
	return 0;
}

int
cli_read_all(int fd, size_t max, uint8_t **ret, size_t *ret_len)
{
	/* Room for one byte more than max: a longer input is refused, not
	 * cut. */
	size_t len = 0, cap = 0, limit = max + 1;
	uint8_t *data = NULL, *p;
	ssize_t n;
	int r = 0;

	while (len < limit) {
		if (len == cap) {
			cap = cap == 0 ? 64 * 1024 : cap * 2;
			if (cap > limit)
				cap = limit;
			p = realloc(data, cap);
			if (p == NULL) {
				r = -ENOMEM;
				goto out;
			}
			data = p;
		}
		n = read(fd, data + len, cap - len);
		if (n == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		len += (size_t)n;
	}
	if (len > max)
		r = -EMSGSIZE;
out:
	if (r < 0) {
		free(data);
		return r;
	}
	*ret = data;
	*ret_len = len;
	return 0;
}
