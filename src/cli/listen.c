/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry listen TYPE...: registers for application types and prints each
 * message as it arrives, until interrupted or --count messages; with
 * --raw, only the bodies, byte for byte (for piping a file through).
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/json.h"

#define LISTEN_TYPES_MAX 256

/* Text stays readable; anything else is escaped, so a line is a line. */
static void
listen_print_data(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '\\')
			fputs("\\\\", stdout);
		else if (p[i] >= 0x20 && p[i] < 0x7f)
			putchar(p[i]);
		else if (p[i] == '\n')
			fputs("\\n", stdout);
		else if (p[i] == '\t')
			fputs("\\t", stdout);
		else
			printf("\\x%02x", p[i]);
	}
}

static void
listen_print(const struct cli *cli, const struct ferry_message *m, bool raw)
{
	char id[FERRY_PEER_ID_STRLEN + 1];
	struct json j;

	if (raw) {
		(void)fwrite(m->data, 1, m->len, stdout);
		(void)fflush(stdout);
		return;
	}
	ferry_peer_id_to_string(&m->peer, id);
	if (cli->json) {
		json_init(&j, stdout);
		json_object_begin(&j);
		json_member_string(&j, "peer", id);
		json_member_uint(&j, "type", m->type);
		json_member_uint(&j, "len", m->len);
		json_key(&j, "data");
		json_bytes(&j, m->data, m->len);
		json_object_end(&j);
		return;
	}
	printf("%s %u %zu ", id, m->type, m->len);
	listen_print_data(m->data, m->len);
	putchar('\n');
	(void)fflush(stdout);
}

static int
listen_loop(struct cli *cli, struct ferry_client *fc, uint64_t count,
    bool raw)
{
	struct ferry_message m;
	uint64_t got = 0;
	int r;

	while (count == 0 || got < count) {
		r = ferry_receive(fc, &m, -1);
		if (r == -EINTR)
			continue;
		if (r < 0)
			return cli_fail(cli, "receive", r);
		listen_print(cli, &m, raw);
		got++;
	}
	return CLI_EXIT_OK;
}

int
listen_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "raw", no_argument, NULL, 'r' },
		CLI_GLOBAL_OPTIONS,
	};
	bool raw = false;
	uint16_t types[LISTEN_TYPES_MAX];
	struct ferry_client *fc;
	uint64_t count = 0, v;
	size_t n = 0;
	int c, r;

	while ((c = cli_getopt(cli, argc, argv, "n:r", opts)) != -1) {
		if (c == CLI_STOP)
			return cli->exit;
		if (c == 'r') {
			raw = true;
			continue;
		}
		if (cli_parse_uint(cli, "--count", optarg, 1, UINT64_MAX,
		        &count) != 0)
			return CLI_EXIT_USAGE;
	}
	if (optind >= argc)
		return cli_usage_error(cli, "name at least one TYPE");
	if (argc - optind > LISTEN_TYPES_MAX)
		return cli_usage_error(cli, "at most %d types",
		    LISTEN_TYPES_MAX);
	for (int i = optind; i < argc; i++) {
		if (cli_parse_uint(cli, "TYPE", argv[i], FERRY_APP_TYPE_MIN,
		        0xffff, &v) != 0)
			return CLI_EXIT_USAGE;
		types[n++] = (uint16_t)v;
	}
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ferry_register(fc, types, n);
	if (r < 0)
		r = cli_fail(cli, "register", r);
	else
		r = listen_loop(cli, fc, count, raw);
	ferry_client_close(fc);
	return r;
}
