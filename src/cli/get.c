/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferry get URI [-o FILE]: fetches a file from the DHT (issue 13, client
 * side). The daemon fills FILE.part, which this command opened, and
 * says so only once every byte is written, synced and checked against
 * the file's XXH128; FILE.part is then renamed to FILE. A failure that
 * may pass leaves FILE.part, and the same command resumes it; a damaged
 * file is removed. Without -o the file goes to standard output, through
 * an unnamed temporary file.
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/outfile.h"
#include "cli/progress.h"

static int
get_run(struct cli *cli, const char *uri, const char *file)
{
	struct ferry_file_result res;
	struct ferry_client *fc;
	struct progress pr;
	char part[4096];
	bool created = false;
	struct stat st;
	int fd, r;

	if (file != NULL) {
		if (outfile_part_name(file, part, sizeof(part)) < 0)
			return cli_usage_error(cli, "%s: name too long", file);
		/* Not truncated: a .part left by a failed run resumes. */
		created = access(part, F_OK) < 0;
		fd = open(part, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
	} else {
		fd = outfile_tmp();
	}
	if (fd < 0) {
		fprintf(stderr, "ferry get: %s: %s\n",
		    file != NULL ? part : "temporary file", strerror(errno));
		return CLI_EXIT_FILE;
	}
	r = cli_open(cli, &fc);
	if (r != 0) {
		(void)close(fd);
		return r;
	}
	progress_init(&pr, cli);
	r = ferry_file_get(fc, uri, fd, progress_interval(&pr), progress_report,
	    &pr, &res);
	progress_end(&pr);
	if (r < 0) {
		/* What cannot be right is not kept, nor a .part this run
		 * made that the daemon never sized (refused at once). */
		if (file != NULL &&
		    (r == -EBADMSG || r == -EINVAL ||
		        (created && fstat(fd, &st) == 0 && st.st_size == 0)))
			(void)unlink(part);
		r = progress_fail(cli, fc, r);
		ferry_client_close(fc);
		(void)close(fd);
		return r;
	}
	ferry_client_close(fc);
	r = file != NULL ? outfile_finish(part, file) : outfile_copy_out(fd);
	(void)close(fd);
	if (r < 0) {
		fprintf(stderr, "ferry get: %s: %s\n",
		    file != NULL ? file : "standard output", strerror(-r));
		return CLI_EXIT_FILE;
	}
	if (cli->json || file == NULL)
		progress_result(cli, "done", &res, file != NULL ? file : "-");
	return CLI_EXIT_OK;
}

int
get_main(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		CLI_GLOBAL_OPTIONS,
	};
	const char *file = NULL;
	int c;

	while ((c = cli_getopt(cli, argc, argv, "o:", opts)) != -1) {
		if (c == CLI_STOP)
			return cli->exit;
		if (c != 'o')
			return CLI_EXIT_USAGE;
		file = optarg;
	}
	if (argc - optind != 1)
		return cli_usage_error(cli,
		    argc - optind < 1 ? "missing URI"
		                      : "unexpected argument '%s'",
		    argv[optind + 1 < argc ? optind + 1 : optind]);
	if (file != NULL && strcmp(file, "-") == 0)
		file = NULL;
	return get_run(cli, argv[optind], file);
}
