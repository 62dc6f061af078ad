/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry hello: the daemon's signed HELOs as one ferry:// URI. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/json.h"

int
hello_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_client *fc;
	struct json j;
	char *uri;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ferry_hello(fc, &uri);
	ferry_client_close(fc);
	if (r == -ENOENT) {
		fprintf(stderr,
		    "ferry hello: no transport advertises an address\n");
		return CLI_EXIT_FAIL;
	}
	if (r < 0)
		return cli_fail(cli, "hello", r);
	if (cli->json) {
		json_init(&j, stdout);
		json_object_begin(&j);
		json_key(&j, "uri");
		json_string(&j, uri);
		json_object_end(&j);
	} else {
		printf("%s\n", uri);
	}
	free(uri);
	return CLI_EXIT_OK;
}
