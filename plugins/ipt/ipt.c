/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Setting up and tearing down the common state of an IP transport (see
 * ipt.h). */
#define LOG_TAG "ipt"
#include "ipt.h"

#include <stdio.h>
#include <string.h>

/* Lines a peer can cause: a burst of 20, then 2 per second. */
#define IPT_PEER_LOG_RATE	2.0
#define IPT_PEER_LOG_BURST	20.0

void
ipt_init(struct ipt *ipt, const struct ferry_core_api *core,
    const char *name, const struct ferry_cfg_key *keys)
{
	memset(ipt, 0, sizeof(*ipt));
	ipt->core = core;
	ipt->keys = keys;
	ipt->stub = core->receive == NULL;
	(void)snprintf(ipt->section, sizeof(ipt->section), "transport-%s",
	    name);
	plog_init(&ipt->log, core, IPT_PEER_LOG_RATE, IPT_PEER_LOG_BURST);
}

void
ipt_done(struct ipt *ipt)
{
	ipt_cfg_done(&ipt->cfg);
	plog_done(&ipt->log);
}
