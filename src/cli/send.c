/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry send PEER TYPE [DATA]: one application message, its body from the
 * argument or standard input, confirmed by the daemon so that the exit
 * status says whether the peer's queue took it.
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/json.h"

struct send_req {
	const struct ferry_peer_id *peer;
	uint16_t type;
	const uint8_t *data;
	size_t len;
};

static int
send_ask(struct ferry_client *fc, void *cls)
{
	const struct send_req *q = cls;

	return ferry_send_confirmed(fc, q->peer, q->type, q->data, q->len);
}

static int
send_fail(const struct cli *cli, int r)
{
	if (r == -EAGAIN) {
		fprintf(stderr,
		    "ferry send: the peer's queue is full; try again\n");
		return CLI_EXIT_FAIL;
	}
	if (r == -ENOTCONN) {
		fprintf(stderr, "ferry send: the peer is not connected\n");
		return CLI_EXIT_PEER;
	}
	return cli_fail(cli, "send", r);
}

static int
send_message(struct cli *cli, const struct ferry_peer_id *peer, uint16_t type,
    const uint8_t *data, size_t len)
{
	struct send_req q = { peer, type, data, len };
	struct json j;
	int r = cli_request(cli, send_ask, &q, send_fail);

	if (r != 0)
		return r;
	if (cli->json) {
		json_init(&j, stdout);
		json_object_begin(&j);
		json_member_bool(&j, "ok", true);
		json_member_uint(&j, "bytes", len);
		json_object_end(&j);
	}
	return CLI_EXIT_OK;
}

int
send_main(struct cli *cli, int argc, char **argv)
{
	struct ferry_peer_id peer;
	uint8_t *data = NULL;
	uint64_t type;
	size_t len = 0;
	int r = cli_parse_simple(cli, argc, argv, 2, 3, true);

	if (r >= 0)
		return r;
	if (cli_parse_peer(cli, argv[optind], &peer) != 0 ||
	    cli_parse_uint(cli, "TYPE", argv[optind + 1], FERRY_APP_TYPE_MIN,
	        0xffff, &type) != 0)
		return CLI_EXIT_USAGE;
	if (optind + 2 < argc) {
		len = strlen(argv[optind + 2]);
		if (len > FERRY_APP_MSG_MAX)
			return cli_usage_error(cli, "DATA is too long");
		return send_message(cli, &peer, (uint16_t)type,
		    (const uint8_t *)argv[optind + 2], len);
	}
	r = cli_read_all(STDIN_FILENO, FERRY_APP_MSG_MAX, &data, &len);
	if (r == -EMSGSIZE)
		return cli_usage_error(cli, "the message is over %u bytes",
		    FERRY_APP_MSG_MAX);
	if (r < 0) {
		fprintf(stderr, "ferry send: standard input: %s\n",
		    strerror(-r));
		return CLI_EXIT_FAIL;
	}
	r = send_message(cli, &peer, (uint16_t)type, data, len);
	free(data);
	return r;
}
