/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Progress and results of ferry put and ferry get (see progress.h). */
#include "cli/progress.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/json.h"

#define PROGRESS_BAR 24

void
progress_init(struct progress *p, const struct cli *cli)
{
	p->cli = cli;
	p->tty = !cli->json && isatty(STDERR_FILENO);
	p->drawn = false;
}

uint32_t
progress_interval(const struct progress *p)
{
	return p->tty || p->cli->json ? PROGRESS_MS : 0;
}

/* "12.3 MiB" into buf. */
static const char *
progress_bytes(double v, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	(void)snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
	return buf;
}

static void
progress_json(const struct ferry_file_progress *fp)
{
	char id[17];
	struct json j;

	(void)snprintf(id, sizeof(id), "%016" PRIx64, fp->id);
	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "event");
	json_string(&j, "progress");
	json_key(&j, "id");
	json_string(&j, id);
	json_key(&j, "bytes_done");
	json_uint(&j, fp->bytes_done);
	json_key(&j, "bytes_total");
	json_uint(&j, fp->bytes_total);
	json_key(&j, "blocks_done");
	json_uint(&j, fp->blocks_done);
	json_key(&j, "blocks_total");
	json_uint(&j, fp->blocks_total);
	json_key(&j, "rate");
	json_uint(&j, fp->rate);
	json_key(&j, "in_flight");
	json_uint(&j, fp->in_flight);
	json_key(&j, "window");
	json_uint(&j, fp->window);
	json_key(&j, "peers");
	json_uint(&j, fp->peers);
	json_object_end(&j);
}

void
progress_report(void *cls, const struct ferry_file_progress *fp)
{
	struct progress *p = cls;
	char done[32], total[32], rate[32], eta[32] = "--:--";
	double frac = fp->bytes_total > 0
	    ? (double)fp->bytes_done / (double)fp->bytes_total
	    : 1.0;
	int fill = (int)(frac * PROGRESS_BAR);
	uint64_t left;

	if (p->cli->json) {
		progress_json(fp);
		return;
	}
	if (!p->tty)
		return;
	if (fp->rate > 0 && fp->bytes_total >= fp->bytes_done) {
		left = (fp->bytes_total - fp->bytes_done) / fp->rate;
		(void)snprintf(eta, sizeof(eta), "%" PRIu64 ":%02" PRIu64,
		    left / 60, left % 60);
	}
	fprintf(stderr,
	    "\r[%.*s%*s] %3d%%  %s / %s  %s/s  ETA %s  %u in flight, %u peers",
	    fill, "########################", PROGRESS_BAR - fill, "",
	    (int)(frac * 100),
	    progress_bytes((double)fp->bytes_done, done, sizeof(done)),
	    progress_bytes((double)fp->bytes_total, total, sizeof(total)),
	    progress_bytes((double)fp->rate, rate, sizeof(rate)), eta,
	    fp->in_flight, fp->peers);
	fprintf(stderr, "\033[K");
	p->drawn = true;
}

void
progress_end(struct progress *p)
{
	if (p->drawn)
		fprintf(stderr, "\r\033[K");
	p->drawn = false;
}

void
progress_result(const struct cli *cli, const char *what,
    const struct ferry_file_result *r, const char *file)
{
	char id[17], sum[33];
	struct json j;

	if (!cli->json) {
		if (file == NULL)
			printf("%s\n", r->uri);
		return;
	}
	(void)snprintf(id, sizeof(id), "%016" PRIx64, r->id);
	for (size_t i = 0; i < sizeof(r->xxh128); i++)
		(void)snprintf(sum + 2 * i, 3, "%02x", r->xxh128[i]);
	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "event");
	json_string(&j, what);
	json_key(&j, "id");
	json_string(&j, id);
	json_key(&j, "uri");
	json_string(&j, r->uri);
	json_key(&j, "size");
	json_uint(&j, r->size);
	json_key(&j, "xxh128");
	json_string(&j, sum);
	json_key(&j, "blocks_sent");
	json_uint(&j, r->blocks_sent);
	json_key(&j, "blocks_skipped");
	json_uint(&j, r->blocks_skipped);
	if (file != NULL) {
		json_key(&j, "file");
		json_string(&j, file);
	}
	json_object_end(&j);
}

int
progress_fail(const struct cli *cli, struct ferry_client *fc, int r)
{
	const char *why = ferry_last_error(fc);
	bool resumes = false;
	int code;

	switch (r) {
	case -ENOTCONN:
		code = CLI_EXIT_PEER;
		break;
	case -ENOENT:
		code = CLI_EXIT_NOTFOUND;
		resumes = true;
		break;
	case -EINVAL:
		code = CLI_EXIT_USAGE;
		break;
	case -EBADMSG:
		code = CLI_EXIT_DAMAGED;
		break;
	case -ESTALE:
		code = CLI_EXIT_FILE;
		break;
	case -ENOSPC:
	case -EDQUOT:
		/* A get's disk; a put's storing peers. */
		code = strcmp(cli->cmd->name, "get") == 0 ? CLI_EXIT_FILE
							 : CLI_EXIT_FAIL;
		resumes = true;
		break;
	case -ECANCELED:
	case -EBUSY: /* another run of the same transfer goes on */
		code = CLI_EXIT_FAIL;
		break;
	default:
		code = cli_exit_code(r);
		resumes = true;
		break;
	}
	if (*why == '\0')
		why = r == -ECONNRESET ? "the daemon went away" : strerror(-r);
	fprintf(stderr, "ferry %s: %s%s\n", cli->cmd->name, why,
	    resumes ? " (run it again to resume)" : "");
	return code;
}
