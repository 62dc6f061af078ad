/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What ferry put and ferry get show while they run and when they end:
 * on a terminal a progress bar with rate and ETA (on standard error),
 * with --json one JSON line per progress report, otherwise nothing but
 * the result; and the failures of a file transfer, with their exit
 * codes (ferry(1)).
 */
#ifndef FERRY_CLI_PROGRESS_H
#define FERRY_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cli.h"

#define PROGRESS_MS 250 /* between reports */

struct progress {
	const struct cli *cli;
	bool tty;   /* a bar on standard error */
	bool drawn; /* a bar is on the screen */
};

/* Decides how progress is shown for cli. */
void progress_init(struct progress *p, const struct cli *cli);
/* ferry_file_progress_fn: cls is a struct progress. */
void progress_report(void *cls, const struct ferry_file_progress *fp);
/* Clears the bar, if one is drawn. */
void progress_end(struct progress *p);
/* The progress_ms to ask libferry for: 0 when nothing is shown. */
uint32_t progress_interval(const struct progress *p);
/* Prints the result of a transfer that succeeded: what on stdout (the
 * URI, or the file written), or a JSON object with --json. */
void progress_result(const struct cli *cli, const char *what,
    const struct ferry_file_result *r, const char *file);
/* Says why a transfer failed (the daemon's sentence if it gave one,
 * and whether running it again resumes) and returns the exit code. */
int progress_fail(const struct cli *cli, struct ferry_client *fc, int r);

#endif /* FERRY_CLI_PROGRESS_H */
