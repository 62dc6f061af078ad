/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The full configuration schema, for ferryd --dump-schema. Daemon layer. */
#ifndef FERRY_DAEMON_SCHEMA_H
#define FERRY_DAEMON_SCHEMA_H

#include <stdio.h>

#include "lib/cfg.h"

/* [paths] and [ferryd], the keys ferryd itself reads. */
extern const struct cfg_schema_key ferryd_cfg_keys[];

/*
 * Prints every key ferryd knows, one per line as
 * "[section] KEY = default  # help": its own, the core's, the service's
 * and those of every transport plugin in the plugin directory (each
 * loaded in stub mode). Returns 0, or -EIO if the output failed.
 */
int schema_dump(struct cfg *cfg, FILE *out);

#endif /* FERRY_DAEMON_SCHEMA_H */
