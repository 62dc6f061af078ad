/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The receipt queue's keys of the [intermediary] section (see rqueue.h),
 * intermediary layer. */
#define LOG_TAG "intermediary"
#include "intermediary/rqueue.h"

#include <errno.h>
#include <string.h>

#include "lib/cfg.h"
#include "lib/log.h"

/* The schema's defaults are strings: they must say what rqueue.h says. */
_Static_assert(RQUEUE_MAX_DEFAULT == 10000, "QUEUE_MAX");
_Static_assert(RQUEUE_KEEP_DEFAULT == 7 * 86400, "RECEIPT_KEEP");

const struct cfg_schema_key rqueue_cfg_keys[] = {
	{ "intermediary", "QUEUE_MAX", "10000",
	    "entries queued for one client, at most; a push past it is refused" },
	{ "intermediary", "RECEIPT_KEEP", "7 d",
	    "how long a queued receipt waits for its client before it is dropped" },
	{ NULL, NULL, NULL, NULL },
};

int
rqueue_cfg_parse(struct cfg *cfg, struct rqueue_cfg *ret)
{
	uint64_t max, keep;
	int r = 0;

	if (cfg_get_uint(cfg, "intermediary", "QUEUE_MAX", 1, 1000000, &max) <
	    0) {
		log_err("%s", cfg_error(cfg));
		r = -EINVAL;
	}
	/* At least a minute: the sweep runs once a minute anyway. */
	if (cfg_get_duration(cfg, "intermediary", "RECEIPT_KEEP", 60000000ull,
	        10ull * 365 * 86400 * 1000000, &keep) < 0) {
		log_err("%s", cfg_error(cfg));
		r = -EINVAL;
	}
	if (r < 0)
		return r;
	memset(ret, 0, sizeof(*ret));
	ret->max_entries = (unsigned)max;
	ret->keep_s = keep / 1000000;
	return 0;
}
