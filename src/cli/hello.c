/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry hello: the daemon's signed HELOs as one ferry:// URI. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/json.h"

static int
hello_ask(struct ferry_client *fc, void *cls)
{
	return ferry_hello(fc, cls);
}

static int
hello_fail(const struct cli *cli, int r)
{
	if (r != -ENOENT)
		return cli_fail(cli, "hello", r);
	fprintf(stderr, "ferry hello: no transport advertises an address\n");
	return CLI_EXIT_FAIL;
}

int
hello_main(struct cli *cli, int argc, char **argv)
{
	struct json j;
	char *uri;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_request(cli, hello_ask, &uri, hello_fail);
	if (r != 0)
		return r;
	if (cli->json) {
		json_init(&j, stdout);
		json_object_begin(&j);
		json_member_string(&j, "uri", uri);
		json_object_end(&j);
	} else {
		printf("%s\n", uri);
	}
	free(uri);
	return CLI_EXIT_OK;
}
