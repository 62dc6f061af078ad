/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the SMTP transport's HELO addresses
 * (plugins/smtp/smtp_addr.c): what verify_helo accepts must encode back
 * to the same bytes, format for humans without overflow, and contain
 * nothing that could end an SMTP command or a header line. The input,
 * cut at its first NUL, is also tried as a BLACKLIST against the address.
 */
/* fuzz-sources: plugins/smtp/smtp_addr.c plugins/smtp/smtp_mime.c plugins/smtp/smtp_base64.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/smtp/smtp_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t back[SMTP_ADDR_MAX];
	char text[SMTP_ADDR_MAX + 8], key[SMTP_ADDR_MAIL_MAX + 1];
	char *list;
	struct smtp_addr a;
	size_t len;

	list = malloc(size + 1);
	if (list == NULL)
		abort();
	memcpy(list, data, size);
	list[size] = '\0';
	(void)smtp_addr_check_list(list);
	if (smtp_addr_decode(data, size, &a) < 0) {
		free(list);
		return 0;
	}
	if (strcspn(a.mail, "\r\n<> \t\"|/") != a.mail_len ||
	    strcspn(a.filter, "\r\n") != a.filter_len ||
	    smtp_addr_encode(a.mail, a.mail_len, a.filter, a.filter_len, back,
	        sizeof(back), &len) < 0 ||
	    len != size || memcmp(back, data, size) != 0 ||
	    smtp_addr_format(data, size, text, sizeof(text)) < 0)
		abort();
	if (smtp_addr_budget_key(a.mail, a.mail_len, key) > a.mail_len)
		abort();
	(void)smtp_addr_listed(list, a.mail, a.mail_len);
	free(list);
	return 0;
}
