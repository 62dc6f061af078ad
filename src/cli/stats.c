/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry stats [PREFIX]: the daemon's statistics counters. */
#include "cli/cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/json.h"

struct stats_answer {
	struct ferry_stat *st;
	size_t n;
};

static int
stats_ask(struct ferry_client *fc, void *cls)
{
	struct stats_answer *a = cls;

	return ferry_stats(fc, &a->st, &a->n);
}

int
stats_main(struct cli *cli, int argc, char **argv)
{
	struct stats_answer a;
	const char *prefix;
	struct json j;
	size_t plen;
	int r = cli_parse_simple(cli, argc, argv, 0, 1, false);

	if (r >= 0)
		return r;
	prefix = optind < argc ? argv[optind] : "";
	plen = strlen(prefix);
	r = cli_request(cli, stats_ask, &a, NULL);
	if (r != 0)
		return r;
	json_init(&j, stdout);
	if (cli->json)
		json_object_begin(&j);
	for (size_t i = 0; i < a.n; i++) {
		if (strncmp(a.st[i].name, prefix, plen) != 0)
			continue;
		if (cli->json) {
			json_key(&j, a.st[i].name);
			json_uint(&j, a.st[i].value);
		} else {
			printf("%-40s %" PRIu64 "\n", a.st[i].name,
			    a.st[i].value);
		}
	}
	if (cli->json)
		json_object_end(&j);
	ferry_stats_free(a.st, a.n);
	return CLI_EXIT_OK;
}
