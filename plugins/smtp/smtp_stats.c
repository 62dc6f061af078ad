/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The SMTP transport's counters "smtp.<name>" (see smtp_int.h). */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <stddef.h>

void
smtp_stats_init(struct smtp *s)
{
	static const struct stats_slot slots[] = {
#define SMTP_STAT(f) STATS_SLOT(struct smtp_stats, f)
		SMTP_STAT(tx_mails), SMTP_STAT(tx_bytes),
		SMTP_STAT(tx_connects), SMTP_STAT(tx_failed),
		SMTP_STAT(tx_retries), SMTP_STAT(tx_eagain),
		SMTP_STAT(tx_cap_dest), SMTP_STAT(tx_cap_total),
		SMTP_STAT(tx_blacklisted), SMTP_STAT(rx_mails),
		SMTP_STAT(rx_bytes), SMTP_STAT(drop_foreign),
		SMTP_STAT(drop_broken), SMTP_STAT(drop_base64),
		SMTP_STAT(drop_envelope), SMTP_STAT(drop_oversize),
		SMTP_STAT(inbox_errors), SMTP_STAT(inbox_rescans),
#undef SMTP_STAT
	};

	plog_stats_bind(&s->log, &s->st, slots,
	    sizeof(slots) / sizeof(slots[0]));
}
