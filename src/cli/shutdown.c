/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry shutdown: asks the daemon to stop, and returns once it agreed. */
#include "cli/cli.h"

static int
shutdown_ask(struct ferry_client *fc, void *cls)
{
	(void)cls;
	return ferry_shutdown(fc);
}

int
shutdown_main(struct cli *cli, int argc, char **argv)
{
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_request(cli, shutdown_ask, NULL, NULL);
	if (r != 0)
		return r;
	cli_print_ok(cli);
	return CLI_EXIT_OK;
}
