/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry stats [PREFIX]: the daemon's statistics counters. */
#include "cli/cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/json.h"

int
stats_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_client *fc;
	struct ferry_stat *st;
	const char *prefix;
	struct json j;
	size_t n, plen;
	int r = cli_parse_simple(cli, argc, argv, 0, 1, false);

	if (r >= 0)
		return r;
	prefix = optind < argc ? argv[optind] : "";
	plen = strlen(prefix);
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ferry_stats(fc, &st, &n);
	ferry_client_close(fc);
	if (r < 0)
		return cli_fail(cli, "stats", r);
	json_init(&j, stdout);
	if (cli->json)
		json_object_begin(&j);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(st[i].name, prefix, plen) != 0)
			continue;
		if (cli->json) {
			json_key(&j, st[i].name);
			json_uint(&j, st[i].value);
		} else {
			printf("%-40s %" PRIu64 "\n", st[i].name, st[i].value);
		}
	}
	if (cli->json)
		json_object_end(&j);
	ferry_stats_free(st, n);
	return CLI_EXIT_OK;
}
