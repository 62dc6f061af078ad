/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's small helpers: the default socket path, printable peer ids
 * and the library version.
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base32.h"
#include "lib/dirs.h"

int
ferry_default_socket(char *buf, size_t size)
{
	if (buf == NULL || size == 0)
		return -EINVAL;
	return dirs_socket(buf, size);
}

void
ferry_peer_id_to_string(const struct ferry_peer_id *id,
    char buf[FERRY_PEER_ID_STRLEN + 1])
{
	base32_encode(id->bytes, FERRY_PEER_ID_LEN, buf);
}

int
ferry_peer_id_from_string(const char *s, struct ferry_peer_id *ret)
{
	struct ferry_peer_id id;

	if (s == NULL || ret == NULL || strlen(s) != FERRY_PEER_ID_STRLEN)
		return -EINVAL;
	if (base32_decode(s, FERRY_PEER_ID_STRLEN, id.bytes,
	        FERRY_PEER_ID_LEN) < 0)
		return -EINVAL;
	*ret = id;
	return 0;
}

const char *
ferry_version(void)
{
	return FERRY_VERSION;
}

char *
lf_strndup(const void *p, size_t len)
{
	char *s = malloc(len + 1);

	if (s == NULL)
		return NULL;
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}
