/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * [transport-smtp]: the keys of the SMTP transport, their defaults and
 * checks (see smtp_int.h). Values come from the core's cfg_get, defaults
 * from smtp_keys, so the documented and the applied default are one.
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/strparse.h"
#include "lib/time.h"

#define SMTP_MAIL_SIZE_MIN	(32 * 1024)
#define SMTP_MAIL_SIZE_MAX	(64ull * 1024 * 1024)
#define SMTP_MTU_MIN		548 /* what the core needs of a transport */
#define SMTP_COST_MAX		1000000
#define SMTP_QUEUE_MAILS_MAX	65536
#define SMTP_QUEUE_BYTES_MAX	(4ull * 1024 * 1024 * 1024)
#define SMTP_CAP_MAX		10000000
#define SMTP_SERVER_MAX		1024
#define SMTP_TIMEOUT_MIN_US	USEC_PER_SEC
#define SMTP_TIMEOUT_MAX_US	(3600 * USEC_PER_SEC)
#define SMTP_RESCAN_MIN_US	USEC_PER_SEC
#define SMTP_RESCAN_MAX_US	(86400 * USEC_PER_SEC)

/*
 * The caps (seed 004, III-C): a mail every 6 s to one address on average
 * (600 an hour) carries a link whose units the core batches up to the
 * MTU, and the paper's validation sends one mail per address; the total
 * of 6000 an hour (1.7 a second) is 1/100 of what Postfix takes here
 * (~200/s) and still a hard stop for a runaway loop. Lower both when a
 * provider's relay is the SERVER (many allow a few hundred a day).
 */
const struct ferry_cfg_key smtp_keys[] = {
	{ "SERVER", "smtp://127.0.0.1:25",
	    "MTA that mail is submitted to: smtp://host[:port][/ehlo-name] or smtps://..." },
	{ "STARTTLS", "no",
	    "no, try or yes: upgrade the submission with STARTTLS (yes refuses a server without it)" },
	{ "USERNAME", "", "SMTP AUTH user at a relay; empty: no authentication" },
	{ "PASSWORD", "", "SMTP AUTH password; keep the configuration file private" },
	{ "SERVER_TIMEOUT", "60 s",
	    "connect limit, and longest stall of a submission" },
	{ "ADDRESS", "",
	    "our e-mail address, advertised in HELOs; empty: send only" },
	{ "FILTER", "",
	    "header line 'Name: value' senders add and procmail matches; needed with ADDRESS or INBOX" },
	{ "INBOX", "",
	    "absolute path of the FIFO or Maildir procmail fills; empty: receive nothing" },
	{ "INBOX_TYPE", "auto", "auto, fifo or maildir" },
	{ "MAX_MAIL_SIZE", "10240000",
	    "largest mail after base64, the MTA's limit (Postfix message_size_limit); sets the MTU" },
	{ "MTU", "auto",
	    "largest unit: auto (as much as MAX_MAIL_SIZE allows) or fewer bytes" },
	{ "COST", "1000", "relative cost; the core prefers the cheapest transport" },
	{ "QUEUE_MAILS", "256",
	    "mails waiting for the MTA before send() says -EAGAIN" },
	{ "QUEUE_BYTES", "64 MiB",
	    "bytes waiting for the MTA before send() says -EAGAIN (at least MAX_MAIL_SIZE)" },
	{ "MAX_MAILS_PER_DEST_HOUR", "600",
	    "mails to one address in any hour; more are refused" },
	{ "MAX_MAILS_HOUR", "6000", "mails in any hour to all addresses" },
	{ "BLACKLIST", "", "addresses and @domains never mailed" },
	{ "RESCAN_INTERVAL", "60 s",
	    "Maildir: full reads of new/ besides inotify, as a safety net" },
	{ NULL, NULL, NULL },
};

/* The section's value of key, else the default, else "". */
static const char *
cfg_value(const struct smtp *s, const char *key)
{
	const char *v = s->core->cfg_get(s->core->cls, key);

	if (v != NULL)
		return v;
	for (const struct ferry_cfg_key *k = smtp_keys; k->name != NULL; k++)
		if (strcasecmp(k->name, key) == 0)
			return k->def != NULL ? k->def : "";
	return "";
}

/* Logs a bad value and returns -EINVAL. Secrets are not repeated. */
static int
cfg_bad(const struct smtp *s, const char *key, const char *why)
{
	bool hide = strcmp(key, "PASSWORD") == 0 || strcmp(key, "SERVER") == 0;

	plog(&s->log, FERRY_LOG_ERR, "[transport-%s] %s = '%s': %s", s->api.name,
	    key, hide ? "..." : cfg_value(s, key), why);
	return -EINVAL;
}

static int
cfg_number(const struct smtp *s, const char *key, bool size, uint64_t min,
    uint64_t max, uint64_t *ret)
{
	const char *v = cfg_value(s, key);
	char why[96];
	int r = size ? parse_size(v, min, max, ret) : parse_uint(v, min, max,
	    ret);

	if (r == 0)
		return 0;
	(void)snprintf(why, sizeof(why), "expected a %s in %llu..%llu",
	    size ? "size in bytes" : "number", (unsigned long long)min,
	    (unsigned long long)max);
	return cfg_bad(s, key, why);
}

static int
cfg_duration(const struct smtp *s, const char *key, uint64_t min_us,
    uint64_t max_us, uint64_t *ret)
{
	if (parse_duration(cfg_value(s, key), min_us, max_us, ret) == 0)
		return 0;
	return cfg_bad(s, key, "expected a duration such as '30 s' in range");
}

/* Copies the value of key into *ret (owned). */
static int
cfg_string(const struct smtp *s, const char *key, char **ret)
{
	*ret = strdup(cfg_value(s, key));
	if (*ret == NULL)
		return plog_errno(&s->log, FERRY_LOG_ERR, -ENOMEM, "[transport-%s]",
		    s->api.name);
	return 0;
}

static int
cfg_server(const struct smtp *s, struct smtp_settings *set)
{
	const char *v = cfg_value(s, "STARTTLS");
	size_t len;

	if (cfg_string(s, "SERVER", &set->server) < 0)
		return -ENOMEM;
	len = strlen(set->server);
	if (strncasecmp(set->server, "smtp://", 7) != 0 &&
	    strncasecmp(set->server, "smtps://", 8) != 0)
		return cfg_bad(s, "SERVER", "expected an smtp:// or smtps:// URL");
	if (len > SMTP_SERVER_MAX ||
	    strcspn(set->server, " \t\r\n") != len)
		return cfg_bad(s, "SERVER", "not a URL");
	if (strcasecmp(v, "no") == 0)
		set->tls = SMTP_TLS_NO;
	else if (strcasecmp(v, "try") == 0)
		set->tls = SMTP_TLS_TRY;
	else if (strcasecmp(v, "yes") == 0)
		set->tls = SMTP_TLS_YES;
	else
		return cfg_bad(s, "STARTTLS", "expected no, try or yes");
	if (cfg_string(s, "USERNAME", &set->username) < 0 ||
	    cfg_string(s, "PASSWORD", &set->password) < 0)
		return -ENOMEM;
	return cfg_duration(s, "SERVER_TIMEOUT", SMTP_TIMEOUT_MIN_US,
	    SMTP_TIMEOUT_MAX_US, &set->timeout_us);
}

/* ADDRESS, FILTER, BLACKLIST and the domain of our From line. */
static int
cfg_identity(const struct smtp *s, struct smtp_settings *set)
{
	size_t len;

	if (cfg_string(s, "ADDRESS", &set->address) < 0 ||
	    cfg_string(s, "FILTER", &set->filter) < 0 ||
	    cfg_string(s, "BLACKLIST", &set->blacklist) < 0)
		return -ENOMEM;
	len = strlen(set->address);
	if (len > 0 && smtp_addr_check_mail(set->address, len) < 0)
		return cfg_bad(s, "ADDRESS",
		    "expected an address such as 'peer@example.org' (letters, digits and #%*+-=?^_~ before the @)");
	if (set->filter[0] != '\0' &&
	    smtp_mime_filter_parse(set->filter, strlen(set->filter),
	    &set->filter_parts) < 0)
		return cfg_bad(s, "FILTER",
		    "expected a header line 'Name: value' of printable ASCII, not one the mail format uses (From, To, Subject, Content-*, ...)");
	if (smtp_addr_check_list(set->blacklist) < 0)
		return cfg_bad(s, "BLACKLIST",
		    "expected addresses and @domains such as 'list@example.org @example.net'");
	(void)snprintf(set->domain, sizeof(set->domain), "%s",
	    len > 0 ? smtp_addr_domain(set->address, len) : "localhost");
	return 0;
}

static int
cfg_inbox(const struct smtp *s, struct smtp_settings *set)
{
	const char *v = cfg_value(s, "INBOX_TYPE");

	if (cfg_string(s, "INBOX", &set->inbox) < 0)
		return -ENOMEM;
	if (set->inbox[0] != '\0' && set->inbox[0] != '/')
		return cfg_bad(s, "INBOX", "expected an absolute path");
	if (strcasecmp(v, "auto") == 0)
		set->inbox_type = SMTP_INBOX_AUTO;
	else if (strcasecmp(v, "fifo") == 0)
		set->inbox_type = SMTP_INBOX_FIFO;
	else if (strcasecmp(v, "maildir") == 0)
		set->inbox_type = SMTP_INBOX_MAILDIR;
	else
		return cfg_bad(s, "INBOX_TYPE", "expected auto, fifo or maildir");
	if (set->filter[0] == '\0' &&
	    (set->address[0] != '\0' || set->inbox[0] != '\0'))
		return cfg_bad(s, "FILTER",
		    "needed with ADDRESS or INBOX: choose a line of your own (see ferry-smtp(7))");
	return 0;
}

/* MAX_MAIL_SIZE, MTU, COST and the queue bounds. */
static int
cfg_sizes(const struct smtp *s, struct smtp_settings *set)
{
	const char *mtu = cfg_value(s, "MTU");
	uint64_t v, unit_max;

	if (cfg_number(s, "MAX_MAIL_SIZE", true, SMTP_MAIL_SIZE_MIN,
	    SMTP_MAIL_SIZE_MAX, &set->max_mail) < 0)
		return -EINVAL;
	unit_max = smtp_mime_unit_max(set->max_mail);
	set->mtu = (uint32_t)unit_max;
	if (strcasecmp(mtu, "auto") != 0) {
		if (cfg_number(s, "MTU", true, SMTP_MTU_MIN, unit_max, &v) < 0)
			return -EINVAL;
		set->mtu = (uint32_t)v;
	}
	if (cfg_number(s, "COST", false, 0, SMTP_COST_MAX, &v) < 0)
		return -EINVAL;
	set->cost = (uint32_t)v;
	if (cfg_number(s, "QUEUE_MAILS", false, 1, SMTP_QUEUE_MAILS_MAX,
	    &v) < 0)
		return -EINVAL;
	set->queue_mails = (uint32_t)v;
	return cfg_number(s, "QUEUE_BYTES", true, set->max_mail,
	    SMTP_QUEUE_BYTES_MAX, &set->queue_bytes);
}

static int
cfg_limits(const struct smtp *s, struct smtp_settings *set)
{
	uint64_t v;

	if (cfg_number(s, "MAX_MAILS_PER_DEST_HOUR", false, 1, SMTP_CAP_MAX,
	    &v) < 0)
		return -EINVAL;
	set->cap_dest = (uint32_t)v;
	if (cfg_number(s, "MAX_MAILS_HOUR", false, 1, SMTP_CAP_MAX, &v) < 0)
		return -EINVAL;
	set->cap_total = (uint32_t)v;
	return cfg_duration(s, "RESCAN_INTERVAL", SMTP_RESCAN_MIN_US,
	    SMTP_RESCAN_MAX_US, &set->rescan_us);
}

int
smtp_settings_load(const struct smtp *s, struct smtp_settings *ret)
{
	struct smtp_settings set;
	int r;

	memset(&set, 0, sizeof(set));
	r = cfg_server(s, &set);
	if (r == 0)
		r = cfg_identity(s, &set);
	if (r == 0)
		r = cfg_inbox(s, &set);
	if (r == 0)
		r = cfg_sizes(s, &set);
	if (r == 0)
		r = cfg_limits(s, &set);
	if (r < 0) {
		smtp_settings_done(&set);
		return r;
	}
	*ret = set;
	return 0;
}

void
smtp_settings_done(struct smtp_settings *set)
{
	if (set->password != NULL)
		explicit_bzero(set->password, strlen(set->password));
	free(set->server);
	free(set->username);
	free(set->password);
	free(set->address);
	free(set->filter);
	free(set->inbox);
	free(set->blacklist);
	memset(set, 0, sizeof(*set));
}
