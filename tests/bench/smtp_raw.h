/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP benchmark's raw baseline (issue 5, "Benchmarks"): the mail path
 * with no ferry in it. libcurl submits a mail to Postfix over one kept
 * connection, Postfix hands it to procmail, procmail files it into the
 * same kind of inbox ferryd reads (a Maildir or a FIFO), and a reader in
 * this program sees it: inotify on the Maildir's new/ and a read of each
 * new file, or reading the FIFO, opened as ferryd opens it. Each mail
 * ends with a MIME closing boundary unique to it (or to its run), by which
 * the reader knows it arrived.
 */
#ifndef FERRY_BENCH_SMTP_RAW_H
#define FERRY_BENCH_SMTP_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where raw mail goes. Strings are borrowed for the calls. */
struct smtp_raw_path {
	const char *server; /* smtp://127.0.0.1:25 */
	const char *rcpt;   /* user@localhost */
	const char *filter; /* the user's filter line */
	const char *inbox;  /* its Maildir or FIFO */
	bool fifo;          /* FIFO rather than Maildir */
};

/* What a bulk run measured. */
struct smtp_raw_bulk {
	unsigned sent;        /* mails the MTA took */
	unsigned received;    /* mails the reader saw */
	uint64_t payload;     /* payload bytes of the mails received */
	uint64_t mail_bytes;  /* bytes of one mail as submitted */
	uint64_t start_ns;    /* before the first submission */
	uint64_t send_end_ns; /* the last submission returned */
	uint64_t last_ns;     /* the last arrival */
};

/*
 * count sequential mails of mail_size bytes each (the whole mail as
 * submitted), mail i+1 submitted once the reader saw mail i, after warmup
 * untimed ones. per_msg_ns (count entries, may be NULL) gets each mail's
 * time from before its submission to its arrival; *ret_ns the time of
 * all count. 0 or a negative errno (-ETIMEDOUT: a mail did not arrive
 * within timeout_ms).
 */
int smtp_raw_seq(const struct smtp_raw_path *p, size_t mail_size,
    unsigned count, unsigned warmup, int timeout_ms, uint64_t *per_msg_ns,
    uint64_t *ret_ns);

/*
 * count mails each carrying payload bytes (base64, 76-character lines),
 * submitted one after another as fast as the MTA takes them, while a
 * reader process counts arrivals. It stops when all are there, or
 * drain_ms after the last submission. 0 or a negative errno.
 */
int smtp_raw_bulk(const struct smtp_raw_path *p, size_t payload, unsigned count,
    unsigned drain_ms, struct smtp_raw_bulk *ret);

/* Bytes of a mail to p carrying payload bytes, as smtp_raw_bulk sends it
 * (to compare with ferry's mails). */
size_t smtp_raw_mail_size(const struct smtp_raw_path *p, size_t payload);

#endif /* FERRY_BENCH_SMTP_RAW_H */
