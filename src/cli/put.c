/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry put FILE: stores a file in the DHT and prints its URI (issue 13,
 * client side). The file is opened here and handed to the daemon, which
 * never opens a path.
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/progress.h"

int
put_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "replication", required_argument, NULL, 'r' },
		{ "label", required_argument, NULL, 'l' },
		CLI_GLOBAL_OPTIONS,
	};
	struct ferry_file_result res;
	struct ferry_client *fc;
	struct progress pr;
	const char *file, *label = NULL;
	uint64_t replication = 0;
	int c, fd, r;

	while ((c = cli_getopt(cli, argc, argv, "r:l:", opts)) != -1) {
		if (c == CLI_STOP)
			return cli->exit;
		if (c == 'r' &&
		    cli_parse_uint(cli, "--replication", optarg, 1,
		        FERRY_DHT_REPL_MAX, &replication) == 0)
			continue;
		if (c == 'l') {
			label = optarg;
			continue;
		}
		return CLI_EXIT_USAGE;
	}
	if (argc - optind != 1)
		return cli_usage_error(cli,
		    argc - optind < 1 ? "missing FILE"
		                      : "unexpected argument '%s'",
		    argv[optind + 1 < argc ? optind + 1 : optind]);
	file = argv[optind];
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		fprintf(stderr, "ferry put: %s: %s\n", file, strerror(errno));
		return CLI_EXIT_FILE;
	}
	r = cli_open(cli, &fc);
	if (r != 0) {
		(void)close(fd);
		return r;
	}
	progress_init(&pr, cli);
	r = ferry_file_put(fc, fd, label != NULL ? label : file,
	    (unsigned)replication, progress_interval(&pr), progress_report, &pr,
	    &res);
	progress_end(&pr);
	(void)close(fd);
	if (r < 0) {
		r = progress_fail(cli, fc, r);
		ferry_client_close(fc);
		return r;
	}
	ferry_client_close(fc);
	progress_result(cli, "done", &res, NULL);
	return CLI_EXIT_OK;
}
