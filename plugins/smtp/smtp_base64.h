/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Base64 (RFC 4648 section 4) in the shape MIME mail carries it (RFC 2045
 * section 6.8), for the SMTP transport (seed 004, III-A: "the resulting
 * message is base64 encoded"). The encoder writes lines of 76 characters
 * ending in CRLF; the decoder is strict. Pure functions, no allocation.
 */
#ifndef FERRY_PLUGINS_SMTP_BASE64_H
#define FERRY_PLUGINS_SMTP_BASE64_H

#include <stddef.h>
#include <stdint.h>

#define SMTP_B64_LINE		76 /* characters per encoded line */
#define SMTP_B64_LINE_BYTES	57 /* input bytes per full line */

/* A streaming encoder: feed bytes in any pieces, then finish; the output
 * equals that of one smtp_base64_encode() over all of them. */
struct smtp_b64_enc {
	uint8_t pend[2]; /* bytes waiting for a full 3-byte group */
	uint8_t n_pend;	 /* how many */
	uint8_t col;	 /* characters on the current output line */
};

/* Characters the encoder writes for n input bytes, line breaks included:
 * every line, the last one too, ends in CRLF; no input, no output. */
size_t smtp_base64_encoded_size(size_t n);
/* Most bytes n characters of base64 text can decode to. */
size_t smtp_base64_decoded_max(size_t n);

void smtp_base64_enc_init(struct smtp_b64_enc *e);
/* Encodes n bytes of in, writing to out (room for
 * smtp_base64_encoded_size(n) + 4 characters suffices). Returns the
 * number of characters written. */
size_t smtp_base64_enc_update(struct smtp_b64_enc *e, const void *in,
    size_t n, char *out);
/* Writes what is pending, with '=' padding and the last CRLF (at most 6
 * characters). Returns the number of characters written. */
size_t smtp_base64_enc_final(struct smtp_b64_enc *e, char *out);

/* One-shot: writes smtp_base64_encoded_size(n) characters (no NUL) and
 * returns that number. */
size_t smtp_base64_encode(const void *in, size_t n, char *out);

/*
 * Decodes n characters of base64 text into out (max bytes). Accepted:
 * the 64 alphabet characters in groups of four, '=' padding only to
 * complete the last group, and line breaks (CRLF or LF) anywhere. Refused
 * with -EBADMSG: any other character (space, a CR not before LF, text
 * after the padding), an incomplete last group, and padding bits that are
 * not zero, so every byte string has exactly one accepted encoding (up to
 * line breaks). -ENOSPC if the result exceeds max. 0 and *ret_len on
 * success; out may be written to on failure.
 */
int smtp_base64_decode(const char *in, size_t n, uint8_t *out, size_t max,
    size_t *ret_len);

#endif /* FERRY_PLUGINS_SMTP_BASE64_H */
