/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Crockford base32, the printable form of peer ids (as GNUnet), layer 0.
 * Decoding ignores case and reads O as 0 and I, L as 1.
 */
#ifndef FERRY_LIB_BASE32_H
#define FERRY_LIB_BASE32_H

#include <stddef.h>

/* Characters needed for n bytes, without the NUL. */
#define BASE32_LEN(n) (((n) * 8 + 4) / 5)

/* Writes BASE32_LEN(len) characters and a NUL; out must hold that. */
void base32_encode(const void *data, size_t len, char *out);
/* Decodes exactly len bytes from s (which must be BASE32_LEN(len) chars
 * long, with zero padding bits). 0 or -EINVAL. */
int base32_decode(const char *s, size_t slen, void *out, size_t len);

#endif /* FERRY_LIB_BASE32_H */
