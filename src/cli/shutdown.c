/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry shutdown: asks the daemon to stop, and returns once it agreed. */
#include "cli/cli.h"

#include <stdio.h>

#include "cli/json.h"

int
shutdown_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_client *fc;
	struct json j;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ferry_shutdown(fc);
	ferry_client_close(fc);
	if (r < 0)
		return cli_fail(cli, "shutdown", r);
	if (cli->json) {
		json_init(&j, stdout);
		json_object_begin(&j);
		json_key(&j, "ok");
		json_bool(&j, true);
		json_object_end(&j);
	}
	return CLI_EXIT_OK;
}
