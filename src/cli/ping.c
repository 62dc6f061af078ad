/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry ping PEER: round trips through the whole stack, client socket
 * and both daemons included, one echo at a time, with ping(8)'s summary.
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/json.h"

#define PING_DEFAULT_COUNT       4
#define PING_DEFAULT_SIZE        56
#define PING_DEFAULT_INTERVAL_MS 1000
#define PING_DEFAULT_TIMEOUT_MS  5000
#define PING_MAX_COUNT           100000

struct ping_opts {
	struct ferry_peer_id peer;
	uint32_t count;
	uint16_t size;
	uint32_t interval_ms;
	uint32_t timeout_ms; /* per round trip */
};

struct ping_stats {
	uint32_t sent, received;
	double min_ms, max_ms, sum_ms;
	double *rtt_ms; /* the received ones, in order, for --json */
};

static double
ping_now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
ping_sleep_ms(uint32_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* One round trip. 0, or a libferry error. */
static int
ping_once(struct cli *cli, struct ferry_client *fc, const struct ping_opts *o,
    struct ping_stats *st, char *id)
{
	struct ferry_ping_result res;
	double t0 = ping_now_ms(), ms;
	int r = ferry_ping(fc, &o->peer, 1, o->size, o->timeout_ms, &res);

	st->sent++;
	if (r < 0)
		return r;
	ms = ping_now_ms() - t0;
	st->rtt_ms[st->received++] = ms;
	st->sum_ms += ms;
	if (st->received == 1 || ms < st->min_ms)
		st->min_ms = ms;
	if (ms > st->max_ms)
		st->max_ms = ms;
	if (!cli->json)
		printf(
		    "%u bytes from %.8s: seq=%u time=%.3f ms (link %.3f ms)\n",
		    o->size, id, st->sent, ms, (double)res.total_ns / 1e6);
	return 0;
}

static void
ping_summary(const struct cli *cli, const char *id, const struct ping_opts *o,
    const struct ping_stats *st)
{
	double avg = st->received ? st->sum_ms / st->received : 0;
	struct json j;

	if (!cli->json) {
		printf("--- %.8s ping statistics ---\n", id);
		printf("%u sent, %u received", st->sent, st->received);
		if (st->received > 0)
			printf(", rtt min/avg/max = %.3f/%.3f/%.3f ms",
			    st->min_ms, avg, st->max_ms);
		printf("\n");
		return;
	}
	json_init(&j, stdout);
	json_object_begin(&j);
	json_member_string(&j, "peer", id);
	json_member_uint(&j, "size", o->size);
	json_member_uint(&j, "sent", st->sent);
	json_member_uint(&j, "received", st->received);
	json_key(&j, "rtt_ms");
	json_array_begin(&j);
	for (uint32_t i = 0; i < st->received; i++)
		json_double(&j, st->rtt_ms[i]);
	json_array_end(&j);
	if (st->received > 0) {
		json_key(&j, "min_ms");
		json_double(&j, st->min_ms);
		json_key(&j, "avg_ms");
		json_double(&j, avg);
		json_key(&j, "max_ms");
		json_double(&j, st->max_ms);
	}
	json_object_end(&j);
}

static int
ping_run(struct cli *cli, struct ferry_client *fc, const struct ping_opts *o)
{
	char id[FERRY_PEER_ID_STRLEN + 1];
	struct ping_stats st = { 0, 0, 0, 0, 0, NULL };
	int r = 0;

	st.rtt_ms = calloc(o->count, sizeof(*st.rtt_ms));
	if (st.rtt_ms == NULL)
		return cli_fail(cli, "ping", -ENOMEM);
	ferry_peer_id_to_string(&o->peer, id);
	for (uint32_t i = 0; i < o->count; i++) {
		if (i > 0)
			ping_sleep_ms(o->interval_ms);
		r = ping_once(cli, fc, o, &st, id);
		if (r == -ETIMEDOUT && !cli->json)
			printf("seq=%u: no answer within %u ms\n", st.sent,
			    o->timeout_ms);
		else if (r < 0 && r != -ETIMEDOUT)
			break;
	}
	if (r < 0 && r != -ETIMEDOUT)
		r = cli_fail(cli, "ping", r);
	else {
		ping_summary(cli, id, o, &st);
		r = st.received > 0 ? CLI_EXIT_OK : CLI_EXIT_TIMEOUT;
	}
	free(st.rtt_ms);
	return r;
}

int
ping_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		CLI_GLOBAL_OPTIONS,
	};
	struct ping_opts o = { .count = PING_DEFAULT_COUNT,
		.size = PING_DEFAULT_SIZE,
		.interval_ms = PING_DEFAULT_INTERVAL_MS };
	struct ferry_client *fc;
	uint64_t v;
	int c, r;

	while ((c = cli_getopt(cli, argc, argv, "c:s:i:", opts)) != -1) {
		if (c == CLI_STOP)
			return cli->exit;
		if (c == 'c' &&
		    cli_parse_uint(cli, "--count", optarg, 1, PING_MAX_COUNT,
		        &v) == 0)
			o.count = (uint32_t)v;
		else if (c == 's' &&
		    cli_parse_uint(cli, "--size", optarg, 0, UINT16_MAX, &v) == 0)
			o.size = (uint16_t)v;
		else if (c == 'i' &&
		    cli_parse_uint(cli, "--interval", optarg, 0, 3600000, &v) ==
		        0)
			o.interval_ms = (uint32_t)v;
		else
			return CLI_EXIT_USAGE;
	}
	if (argc - optind != 1)
		return cli_usage_error(cli, "expected one PEER");
	if (cli_parse_peer(cli, argv[optind], &o.peer) != 0)
		return CLI_EXIT_USAGE;
	o.timeout_ms = cli->timeout_ms >= 0 ? (uint32_t)cli->timeout_ms
	                                    : PING_DEFAULT_TIMEOUT_MS;
	r = cli_open(cli, &fc);
	if (r != 0)
		return r;
	r = ping_run(cli, fc, &o);
	ferry_client_close(fc);
	return r;
}
