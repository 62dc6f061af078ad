/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The [storage] section (see xfer.h), storage layer. */
#define LOG_TAG "storage"
#include "storage/xfer_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <ferry/proto.h>

#include "lib/log.h"

/* The schema's defaults are strings: they must say what chunk.h's
 * benchmark-chosen defaults say. */
_Static_assert(STORAGE_CHUNK_SIZE_DEFAULT == 256u * 1024, "CHUNK_SIZE");
_Static_assert(STORAGE_ITERATIONS_DEFAULT == 100u, "ITERATIONS");

const struct cfg_schema_key xfer_cfg_keys[] = {
	{ "storage", "CHUNK_SIZE", "256 KiB",
	    "bytes of file per chunk of a new put (1 KiB to 4032 KiB); a get reads any" },
	{ "storage", "ITERATIONS", "100",
	    "PBKDF2-HMAC-SHA512 rounds deriving each chunk's key" },
	{ "storage", "WORKERS", "2",
	    "threads that read, seal, open and write chunks (1 to 64)" },
	{ "storage", "MAX_IN_FLIGHT", "32",
	    "most blocks one transfer asks of the DHT at once; the window adapts below it" },
	{ "storage", "REPLICATION", "0",
	    "storing peers of each block put; 0: the DHT's REPLICATION" },
	{ "storage", "LIFETIME", "30 d",
	    "how long the storing peers keep a file's blocks" },
	{ "storage", "SHARED_SECRET_FILE", "",
	    "a convergence secret shared by every user of this daemon (deduplication across a group); empty: one per user, made in the state directory" },
	{ NULL, NULL, NULL, NULL },
};

static int
xfer_cfg_fail(struct cfg *cfg)
{
	log_err("%s", cfg_error(cfg));
	return -EINVAL;
}

int
xfer_cfg_parse(struct cfg *cfg, struct xfer_cfg *ret)
{
	struct xfer_cfg c;
	uint64_t v[5], chunk, life;
	const char *secret;
	int r = 0;

	memset(&c, 0, sizeof(c));
	if (cfg_get_size(cfg, "storage", "CHUNK_SIZE", STORAGE_CHUNK_MIN,
	        STORAGE_CHUNK_MAX, &chunk) < 0)
		r = xfer_cfg_fail(cfg);
	if (cfg_get_uint(cfg, "storage", "ITERATIONS", STORAGE_ITERATIONS_MIN,
	        STORAGE_ITERATIONS_MAX, &v[0]) < 0)
		r = xfer_cfg_fail(cfg);
	if (cfg_get_uint(cfg, "storage", "WORKERS", 1, 64, &v[1]) < 0)
		r = xfer_cfg_fail(cfg);
	if (cfg_get_uint(cfg, "storage", "MAX_IN_FLIGHT", 1, 4096, &v[2]) < 0)
		r = xfer_cfg_fail(cfg);
	if (cfg_get_uint(cfg, "storage", "REPLICATION", 0, FERRY_DHT_REPL_MAX,
	        &v[3]) < 0)
		r = xfer_cfg_fail(cfg);
	if (cfg_get_duration(cfg, "storage", "LIFETIME", 60000000ull,
	        100ull * 365 * 86400 * 1000000, &life) < 0)
		r = xfer_cfg_fail(cfg);
	secret = cfg_get(cfg, "storage", "SHARED_SECRET_FILE");
	if (secret != NULL && *secret != '\0' && *secret != '/')
		r = cfg_fail(cfg, "storage", "SHARED_SECRET_FILE",
		        "expected an absolute path") < 0
		    ? xfer_cfg_fail(cfg)
		    : r;
	if (secret != NULL &&
	    snprintf(c.secret_file, sizeof(c.secret_file), "%s", secret) >=
	        (int)sizeof(c.secret_file))
		r = -EINVAL;
	if (r < 0)
		return -EINVAL;
	c.chunk_size = (uint32_t)chunk;
	c.iterations = (unsigned)v[0];
	c.workers = (unsigned)v[1];
	c.max_in_flight = (unsigned)v[2];
	c.replication = (unsigned)v[3];
	c.lifetime_s = life / 1000000;
	*ret = c;
	return 0;
}

int
xfer_config_check(struct cfg *cfg)
{
	struct xfer_cfg c;

	return xfer_cfg_parse(cfg, &c);
}
