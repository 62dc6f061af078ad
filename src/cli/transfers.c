/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry transfers, ferry cancel ID: the running and resumable transfers
 * of this user (all users' for an admin), and stopping one. */
#include "cli/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "cli/json.h"

/* The daemon's reason when it gave one ("the DHT is not running"),
 * else cli_fail's; the exit code. */
static int
transfers_fail(const struct cli *cli, struct ferry_client *fc, int r)
{
	const char *why = ferry_last_error(fc);

	if (*why == '\0')
		return cli_fail(cli, cli->cmd->name, r);
	fprintf(stderr, "ferry %s: %s\n", cli->cmd->name, why);
	return cli_exit_code(r);
}

static void
transfers_json(const struct ferry_transfer *t, size_t n)
{
	char id[17];
	struct json j;

	json_init(&j, stdout);
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		(void)snprintf(id, sizeof(id), "%016" PRIx64, t[i].id);
		json_object_begin(&j);
		json_key(&j, "id");
		json_string(&j, id);
		json_key(&j, "kind");
		json_string(&j,
		    t[i].kind == FERRY_TRANSFER_PUT ? "put" : "get");
		json_key(&j, "state");
		json_string(&j,
		    t[i].state == FERRY_TRANSFER_RUNNING ? "running"
		                                         : "resumable");
		json_key(&j, "uid");
		json_uint(&j, t[i].uid);
		json_key(&j, "bytes_done");
		json_uint(&j, t[i].bytes_done);
		json_key(&j, "bytes_total");
		json_uint(&j, t[i].bytes_total);
		json_key(&j, "updated");
		json_uint(&j, t[i].updated);
		json_key(&j, "label");
		json_string(&j, t[i].label);
		json_object_end(&j);
	}
	json_array_end(&j);
}

/* One line of the list. The label is the putting client's choice, and
 * an admin lists every user's: escaped, so that no name can forge lines
 * or send the terminal escape sequences. */
static void
transfers_line(const struct ferry_transfer *t)
{
	printf("%016" PRIx64 " %-4s %-9s %5.1f%% ", t->id,
	    t->kind == FERRY_TRANSFER_PUT ? "put" : "get",
	    t->state == FERRY_TRANSFER_RUNNING ? "running" : "resumable",
	    t->bytes_total > 0
	        ? 100.0 * (double)t->bytes_done / (double)t->bytes_total
	        : 100.0);
	escape_print(stdout, t->label);
	putchar('\n');
}

int
transfers_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_transfer *t;
	struct ferry_client *fc;
	size_t n;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ferry_transfers(fc, &t, &n);
	if (r < 0) {
		r = transfers_fail(cli, fc, r);
		ferry_client_close(fc);
		return r;
	}
	ferry_client_close(fc);
	if (cli->json) {
		transfers_json(t, n);
	} else {
		if (n > 0)
			printf("%-16s %-4s %-9s %6s %s\n", "ID", "KIND",
			    "STATE", "DONE", "FILE");
		for (size_t i = 0; i < n; i++)
			transfers_line(&t[i]);
	}
	ferry_transfers_free(t, n);
	return CLI_EXIT_OK;
}

int
cancel_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_client *fc;
	unsigned long long id;
	char *end;
	int r = cli_parse_simple(cli, argc, argv, 1, 1, false);

	if (r >= 0)
		return r;
	errno = 0;
	id = strtoull(argv[optind], &end, 16);
	if (*argv[optind] == '\0' || *end != '\0' || errno != 0 || id == 0)
		return cli_usage_error(cli,
		    "'%s' is not a transfer id (hexadecimal, as ferry transfers prints it)",
		    argv[optind]);
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ferry_transfer_cancel(fc, id);
	if (r == -ENOENT) {
		ferry_client_close(fc);
		fprintf(stderr, "ferry cancel: no transfer %s of this user\n",
		    argv[optind]);
		return CLI_EXIT_NOTFOUND;
	}
	if (r < 0)
		r = transfers_fail(cli, fc, r);
	ferry_client_close(fc);
	return r;
}
