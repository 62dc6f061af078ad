/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry peers: the connected peers with transport, address and age. */
#include "cli/cli.h"

#include <inttypes.h>
#include <stdio.h>

#include "cli/json.h"

static void
peers_print(const struct ferry_peer_info *p, size_t n)
{
	char id[FERRY_PEER_ID_STRLEN + 1];

	if (n == 0) {
		printf("no peers connected\n");
		return;
	}
	printf("%-52s  %-9s %10s  %s\n", "PEER", "TRANSPORT", "AGE", "ADDRESS");
	for (size_t i = 0; i < n; i++) {
		ferry_peer_id_to_string(&p[i].id, id);
		printf("%-52s  %-9s %9" PRIu64 "s  %s\n", id, p[i].transport,
		    p[i].age_ms / 1000, p[i].address);
	}
}

static void
peers_json(const struct ferry_peer_info *p, size_t n)
{
	char id[FERRY_PEER_ID_STRLEN + 1];
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "peers");
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		ferry_peer_id_to_string(&p[i].id, id);
		json_object_begin(&j);
		json_key(&j, "id");
		json_string(&j, id);
		json_key(&j, "transport");
		json_string(&j, p[i].transport);
		json_key(&j, "protocol");
		json_uint(&j, p[i].protocol);
		json_key(&j, "address");
		json_string(&j, p[i].address);
		json_key(&j, "age_ms");
		json_uint(&j, p[i].age_ms);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
}

int
peers_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_client *fc;
	struct ferry_peer_info *peers;
	size_t n;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ferry_peers(fc, &peers, &n);
	ferry_client_close(fc);
	if (r < 0)
		return cli_fail(cli, "peers", r);
	if (cli->json)
		peers_json(peers, n);
	else
		peers_print(peers, n);
	ferry_peers_free(peers);
	return CLI_EXIT_OK;
}
