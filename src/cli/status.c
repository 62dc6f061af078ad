/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferry status: the daemon's identity, version, uptime and transports. */
#include "cli/cli.h"

#include <inttypes.h>
#include <stdio.h>

#include "cli/json.h"

static void
status_uptime(uint64_t ms)
{
	uint64_t s = ms / 1000;

	if (s >= 86400)
		printf("%" PRIu64 "d ", s / 86400);
	if (s >= 3600)
		printf("%" PRIu64 "h ", s / 3600 % 24);
	if (s >= 60)
		printf("%" PRIu64 "m ", s / 60 % 60);
	printf("%" PRIu64 ".%03" PRIu64 "s\n", s % 60, ms % 1000);
}

static void
status_print(const struct ferry_status *st)
{
	char id[FERRY_PEER_ID_STRLEN + 1];

	ferry_peer_id_to_string(&st->id, id);
	printf("identity:   %s\n", id);
	printf("version:    %s\n", st->version);
	printf("uptime:     ");
	status_uptime(st->uptime_ms);
	printf("transports: %s\n", st->n_transports ? "" : "none");
	for (size_t i = 0; i < st->n_transports; i++) {
		const struct ferry_transport_info *t = &st->transports[i];

		printf("  %-8s protocol %-5u mtu %-6" PRIu32 " cost %" PRIu32
		       "\n",
		    t->name, t->protocol, t->mtu, t->cost);
	}
}

static void
status_json(const struct ferry_status *st)
{
	char id[FERRY_PEER_ID_STRLEN + 1];
	struct json j;

	ferry_peer_id_to_string(&st->id, id);
	json_init(&j, stdout);
	json_object_begin(&j);
	json_member_string(&j, "identity", id);
	json_member_string(&j, "version", st->version);
	json_member_uint(&j, "uptime_ms", st->uptime_ms);
	json_key(&j, "transports");
	json_array_begin(&j);
	for (size_t i = 0; i < st->n_transports; i++) {
		json_object_begin(&j);
		json_member_string(&j, "name", st->transports[i].name);
		json_member_uint(&j, "protocol", st->transports[i].protocol);
		json_member_uint(&j, "mtu", st->transports[i].mtu);
		json_member_uint(&j, "cost", st->transports[i].cost);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
}

static int
status_ask(struct ferry_client *fc, void *cls)
{
	return ferry_status(fc, cls);
}

int
status_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_status *st;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_request(cli, status_ask, &st, NULL);
	if (r != 0)
		return r;
	if (cli->json)
		status_json(st);
	else
		status_print(st);
	ferry_status_free(st);
	return CLI_EXIT_OK;
}
