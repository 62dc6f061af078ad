/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The file URI (see uri.h), storage layer:
 *
 *   ferry:f1.SIZE.DATA
 *   DATA = base32(block key 32 || AEAD key 32 || check 4)   109 characters
 *   check = CRC-32 of "ferry:f1" || SIZE as u64 big-endian || block || key
 *
 * CRC-32 rather than a truncated hash: it is certain to catch any error
 * within 32 consecutive bits, so every single mistyped character (5 bits)
 * and every swap of neighbours (10 bits) of DATA is caught, not just
 * nearly every one.
 */
#include "storage/uri.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "lib/base32.h"
#include "lib/crc32.h"
#include "lib/wire.h"
#include "storage/manifest.h"

#define URI_PREFIX      "ferry:"
#define URI_PREFIX_LEN  (sizeof(URI_PREFIX) - 1)
#define URI_KIND        'f' /* a file; other kinds may follow */
#define URI_VERSION     1
#define URI_CHECKED     "ferry:f1" /* what the check covers before the bytes */
#define URI_RAW_LEN     (DHTKEY_LEN + STORAGE_KEY_LEN + 4)
#define URI_DATA_LEN    BASE32_LEN(URI_RAW_LEN)
#define URI_SIZE_DIGITS 20 /* UINT64_MAX has 20 */

static uint32_t
uri_check(uint64_t size, const struct storage_ref *root)
{
	uint8_t be[8];
	uint32_t crc;

	wire_put64(be, size);
	crc = crc32_update(0, URI_CHECKED, sizeof(URI_CHECKED) - 1);
	crc = crc32_update(crc, be, sizeof(be));
	crc = crc32_update(crc, root->block.b, DHTKEY_LEN);
	return crc32_update(crc, root->key, STORAGE_KEY_LEN);
}

int
storage_uri_format(const struct storage_ref *root, char *buf, size_t size)
{
	uint8_t raw[URI_RAW_LEN];
	char data[URI_DATA_LEN + 1];
	int n;

	if (root == NULL || buf == NULL || root->len > MANIFEST_FILE_MAX)
		return -EINVAL;
	memcpy(raw, root->block.b, DHTKEY_LEN);
	memcpy(raw + DHTKEY_LEN, root->key, STORAGE_KEY_LEN);
	wire_put32(raw + DHTKEY_LEN + STORAGE_KEY_LEN,
	    uri_check(root->len, root));
	base32_encode(raw, sizeof(raw), data);
	n = snprintf(buf, size, "%s%c%d.%llu.%s", URI_PREFIX, URI_KIND,
	    URI_VERSION, (unsigned long long)root->len, data);
	sodium_memzero(raw, sizeof(raw));
	sodium_memzero(data, sizeof(data));
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

/* Reads decimal digits up to the next '.' (without leading zeros but for
 * "0"); *s moves past the '.'. 0 or -EINVAL. */
static int
uri_number(const char **s, uint64_t max, uint64_t *ret)
{
	const char *p = *s;
	uint64_t v = 0;
	size_t n = 0;

	for (; *p >= '0' && *p <= '9'; p++, n++) {
		unsigned d = (unsigned)(*p - '0');

		if (n >= URI_SIZE_DIGITS || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (n == 0 || *p != '.' || (n > 1 && **s == '0'))
		return -EINVAL;
	*s = p + 1;
	*ret = v;
	return 0;
}

static int
uri_fail(const char **why, const char *reason)
{
	if (why != NULL)
		*why = reason;
	return -EINVAL;
}

int
storage_uri_parse(const char *s, struct storage_ref *root, const char **why)
{
	struct storage_ref got;
	uint8_t raw[URI_RAW_LEN];
	uint64_t version, size;
	size_t len;
	int r;

	if (s == NULL || root == NULL)
		return uri_fail(why, "no URI");
	if (strncasecmp(s, URI_PREFIX, URI_PREFIX_LEN) != 0)
		return uri_fail(why,
		    "not a ferry file URI: it must begin with ferry:f");
	s += URI_PREFIX_LEN;
	if (strncmp(s, "//", 2) == 0)
		return uri_fail(why,
		    "a peer URI (ferry://...), not a file URI (ferry:f...)");
	if (*s != URI_KIND && *s != 'F')
		return uri_fail(why,
		    "not a file URI: ferry: must be followed by f and a version");
	s++;
	r = uri_number(&s, UINT64_MAX, &version);
	if (r < 0 && r != -ERANGE)
		return uri_fail(why,
		    "malformed: ferry:f must be followed by a version number and a dot");
	if (r < 0 || version != URI_VERSION)
		return uri_fail(why,
		    "a URI version this ferry does not read (it reads ferry:f1.)");
	r = uri_number(&s, MANIFEST_FILE_MAX, &size);
	if (r == -ERANGE)
		return uri_fail(why,
		    "the file size is larger than any ferry file (2^48 bytes)");
	if (r < 0)
		return uri_fail(why,
		    "malformed size: a decimal number without leading zeros and a dot must follow ferry:f1.");
	len = strlen(s);
	if (len < URI_DATA_LEN)
		return uri_fail(why,
		    "too short: characters are missing at its end (cut when copied?)");
	if (len > URI_DATA_LEN)
		return uri_fail(why, "too long: characters follow its end");
	if (base32_decode(s, len, raw, sizeof(raw)) < 0)
		return uri_fail(why,
		    "a character that base32 does not use (a typo?)");
	got.len = size;
	memcpy(got.block.b, raw, DHTKEY_LEN);
	memcpy(got.key, raw + DHTKEY_LEN, STORAGE_KEY_LEN);
	r = wire_get32(raw + DHTKEY_LEN + STORAGE_KEY_LEN) ==
	        uri_check(size, &got)
	    ? 0
	    : uri_fail(why,
	          "its check does not match: the URI was mistyped or altered");
	if (r == 0)
		memcpy(root, &got, sizeof(got));
	sodium_memzero(&got, sizeof(got));
	sodium_memzero(raw, sizeof(raw));
	return r;
}
