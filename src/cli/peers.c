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
		json_member_string(&j, "id", id);
		json_member_string(&j, "transport", p[i].transport);
		json_member_uint(&j, "protocol", p[i].protocol);
		json_member_string(&j, "address", p[i].address);
		json_member_uint(&j, "age_ms", p[i].age_ms);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
}

struct peers_answer {
	struct ferry_peer_info *peers;
	size_t n;
};

static int
peers_ask(struct ferry_client *fc, void *cls)
{
	struct peers_answer *a = cls;

	return ferry_peers(fc, &a->peers, &a->n);
}

int
peers_main(struct cli *cli, int argc, char **argv)
{
	struct peers_answer a;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_request(cli, peers_ask, &a, NULL);
	if (r != 0)
		return r;
	if (cli->json)
		peers_json(a.peers, a.n);
	else
		peers_print(a.peers, a.n);
	ferry_peers_free(a.peers);
	return CLI_EXIT_OK;
}
