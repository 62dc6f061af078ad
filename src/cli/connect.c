/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry connect URI: hands the daemon another peer's ferry:// URI. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>

static int
connect_ask(struct ferry_client *fc, void *cls)
{
	return ferry_connect_uri(fc, cls);
}

static int
connect_fail(const struct cli *cli, int r)
{
	if (r == -EINVAL || r == -EBADMSG) {
		fprintf(stderr,
		    "ferry connect: the daemon refused the URI: %s\n",
		    r == -EINVAL ? "malformed" : "bad signature or expired");
		return CLI_EXIT_FAIL;
	}
	if (r == -ENOENT) {
		fprintf(stderr,
		    "ferry connect: the URI has no usable address\n");
		return CLI_EXIT_PEER;
	}
	return cli_fail(cli, "connect", r);
}

int
connect_main(struct cli *cli, int argc, char **argv)
{
	int r = cli_parse_simple(cli, argc, argv, 1, 1, false);

	if (r >= 0)
		return r;
	r = cli_request(cli, connect_ask, argv[optind], connect_fail);
	if (r != 0)
		return r;
	cli_print_ok(cli);
	return CLI_EXIT_OK;
}
