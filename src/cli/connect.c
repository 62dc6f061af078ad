/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry connect URI: hands the daemon another peer's ferry:// URI. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>

#include "cli/json.h"

int
connect_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_client *fc;
	struct json j;
	int r = cli_parse_simple(cli, argc, argv, 1, 1, false);

	if (r >= 0)
		return r;
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ferry_connect_uri(fc, argv[optind]);
	ferry_client_close(fc);
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
	if (r < 0)
		return cli_fail(cli, "connect", r);
	if (cli->json) {
		json_init(&j, stdout);
		json_object_begin(&j);
		json_key(&j, "ok");
		json_bool(&j, true);
		json_object_end(&j);
	}
	return CLI_EXIT_OK;
}
