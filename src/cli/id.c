/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry id: the daemon's peer id, for scripts and other peers' configs. */
#include "cli/cli.h"

#include <stdio.h>

#include "cli/json.h"

static int
id_ask(struct ferry_client *fc, void *cls)
{
	return ferry_status(fc, cls);
}

int
id_main(struct cli *cli, int argc, char **argv)
{
	char id[FERRY_PEER_ID_STRLEN + 1];
	struct ferry_status *st;
	struct json j;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_request(cli, id_ask, &st, NULL);
	if (r != 0)
		return r;
	ferry_peer_id_to_string(&st->id, id);
	ferry_status_free(st);
	if (cli->json) {
		json_init(&j, stdout);
		json_object_begin(&j);
		json_member_string(&j, "identity", id);
		json_object_end(&j);
	} else {
		printf("%s\n", id);
	}
	return CLI_EXIT_OK;
}
