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
	json_key(&j, "identity");
	json_string(&j, id);
	json_key(&j, "version");
	json_string(&j, st->version);
	json_key(&j, "uptime_ms");
	json_uint(&j, st->uptime_ms);
	json_key(&j, "transports");
	json_array_begin(&j);
	for (size_t i = 0; i < st->n_transports; i++) {
		json_object_begin(&j);
		json_key(&j, "name");
		json_string(&j, st->transports[i].name);
		json_key(&j, "protocol");
		json_uint(&j, st->transports[i].protocol);
		json_key(&j, "mtu");
		json_uint(&j, st->transports[i].mtu);
		json_key(&j, "cost");
		json_uint(&j, st->transports[i].cost);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
}

int
status_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_client *fc;
	struct ferry_status *st;
	int r = cli_parse_simple(cli, argc, argv, 0, 0, false);

	if (r >= 0)
		return r;
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ferry_status(fc, &st);
	ferry_client_close(fc);
	if (r < 0)
		return cli_fail(cli, "status", r);
	if (cli->json)
		status_json(st);
	else
		status_print(st);
	ferry_status_free(st);
	return CLI_EXIT_OK;
}
