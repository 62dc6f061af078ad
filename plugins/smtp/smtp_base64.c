/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Base64 for the SMTP transport's mails (see smtp_base64.h): a streaming
 * encoder with MIME's 76-character CRLF lines and a strict decoder that
 * tolerates line breaks and nothing else.
 */
#include "smtp_base64.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

static const char smtp_b64_alphabet[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Table entries: an alphabet character's value plus one; 0 for every
 * byte that is not base64 (so that the table needs no default). */
#define B64_PAD		65 /* '=' */
#define B64_LF		66 /* '\n' */
#define B64_CR		67 /* '\r' */

static const uint8_t smtp_b64_value[256] = {
	['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6,
	['G'] = 7, ['H'] = 8, ['I'] = 9, ['J'] = 10, ['K'] = 11, ['L'] = 12,
	['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16, ['Q'] = 17,
	['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21, ['V'] = 22,
	['W'] = 23, ['X'] = 24, ['Y'] = 25, ['Z'] = 26, ['a'] = 27,
	['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32,
	['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37,
	['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42,
	['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47,
	['v'] = 48, ['w'] = 49, ['x'] = 50, ['y'] = 51, ['z'] = 52,
	['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56, ['4'] = 57,
	['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62,
	['+'] = 63, ['/'] = 64,
	['='] = B64_PAD, ['\n'] = B64_LF, ['\r'] = B64_CR,
};

size_t
smtp_base64_encoded_size(size_t n)
{
	size_t chars, lines;

	if (n > SIZE_MAX / 2)
		return SIZE_MAX;
	chars = (n / 3 + (n % 3 != 0)) * 4;
	lines = chars / SMTP_B64_LINE + (chars % SMTP_B64_LINE != 0);
	return chars + 2 * lines;
}

size_t
smtp_base64_decoded_max(size_t n)
{
	return n / 4 * 3;
}

void
smtp_base64_enc_init(struct smtp_b64_enc *e)
{
	e->n_pend = 0;
	e->col = 0;
}

/* Appends four characters, breaking the line after SMTP_B64_LINE. */
static size_t
smtp_b64_put4(struct smtp_b64_enc *e, const char q[4], char *out)
{
	size_t w = 0;

	out[w++] = q[0];
	out[w++] = q[1];
	out[w++] = q[2];
	out[w++] = q[3];
	e->col += 4;
	if (e->col == SMTP_B64_LINE) {
		out[w++] = '\r';
		out[w++] = '\n';
		e->col = 0;
	}
	return w;
}

static size_t
smtp_b64_group(struct smtp_b64_enc *e, const uint8_t g[3], char *out)
{
	char q[4];

	q[0] = smtp_b64_alphabet[g[0] >> 2];
	q[1] = smtp_b64_alphabet[(g[0] & 0x03) << 4 | g[1] >> 4];
	q[2] = smtp_b64_alphabet[(g[1] & 0x0f) << 2 | g[2] >> 6];
	q[3] = smtp_b64_alphabet[g[2] & 0x3f];
	return smtp_b64_put4(e, q, out);
}

size_t
smtp_base64_enc_update(struct smtp_b64_enc *e, const void *in, size_t n,
    char *out)
{
	const uint8_t *p = in;
	size_t w = 0;
	uint8_t g[3];

	/* Complete a group left over from the last call first. */
	if (e->n_pend > 0) {
		unsigned k = e->n_pend;

		g[0] = e->pend[0];
		g[1] = e->pend[1];
		while (k < 3 && n > 0) {
			g[k++] = *p++;
			n--;
		}
		if (k < 3) {
			e->pend[1] = g[1];
			e->n_pend = (uint8_t)k;
			return 0;
		}
		w += smtp_b64_group(e, g, out);
		e->n_pend = 0;
	}
	for (; n >= 3; p += 3, n -= 3)
		w += smtp_b64_group(e, p, out + w);
	for (size_t i = 0; i < n; i++)
		e->pend[e->n_pend++] = p[i];
	return w;
}

size_t
smtp_base64_enc_final(struct smtp_b64_enc *e, char *out)
{
	size_t w = 0;
	char q[4];

	if (e->n_pend > 0) {
		uint8_t b0 = e->pend[0];
		uint8_t b1 = e->n_pend == 2 ? e->pend[1] : 0;

		q[0] = smtp_b64_alphabet[b0 >> 2];
		q[1] = smtp_b64_alphabet[(b0 & 0x03) << 4 | b1 >> 4];
		q[2] = e->n_pend == 2 ? smtp_b64_alphabet[(b1 & 0x0f) << 2]
				      : '=';
		q[3] = '=';
		w += smtp_b64_put4(e, q, out);
		e->n_pend = 0;
	}
	if (e->col > 0) {
		out[w++] = '\r';
		out[w++] = '\n';
		e->col = 0;
	}
	return w;
}

size_t
smtp_base64_encode(const void *in, size_t n, char *out)
{
	struct smtp_b64_enc e;
	size_t w;

	smtp_base64_enc_init(&e);
	w = smtp_base64_enc_update(&e, in, n, out);
	return w + smtp_base64_enc_final(&e, out + w);
}

/* Index of the next character that is not a line break at or after i, or
 * n; a CR not followed by LF is returned as a character (and refused). */
static size_t
smtp_b64_skip_breaks(const char *in, size_t n, size_t i)
{
	while (i < n) {
		uint8_t v = smtp_b64_value[(uint8_t)in[i]];

		if (v == B64_LF)
			i++;
		else if (v == B64_CR && i + 1 < n && in[i + 1] == '\n')
			i += 2;
		else
			break;
	}
	return i;
}

/* The padded last group "xx==" or "xxx=" whose '=' is at in[i]; q holds
 * the k (2 or 3) values before it. Writes the 1 or 2 bytes and returns
 * where the text ends, or 0 if anything is wrong. */
static size_t
smtp_b64_padding(const char *in, size_t n, size_t i, const uint8_t q[3],
    unsigned k, uint8_t *out)
{
	if (k == 2) {
		/* "xx==": the low 4 bits of the second value carry nothing */
		if ((q[1] & 0x0f) != 0)
			return 0;
		i = smtp_b64_skip_breaks(in, n, i + 1);
		if (i == n || in[i] != '=')
			return 0;
		out[0] = (uint8_t)(q[0] << 2 | q[1] >> 4);
	} else {
		if ((q[2] & 0x03) != 0)
			return 0;
		out[0] = (uint8_t)(q[0] << 2 | q[1] >> 4);
		out[1] = (uint8_t)(q[1] << 4 | q[2] >> 2);
	}
	/* Nothing but line breaks may follow. */
	return smtp_b64_skip_breaks(in, n, i + 1) == n ? n : 0;
}

int
smtp_base64_decode(const char *in, size_t n, uint8_t *out, size_t max,
    size_t *ret_len)
{
	size_t i = 0, w = 0;
	uint8_t q[4];
	unsigned k = 0;

	for (;;) {
		uint8_t v;

		i = smtp_b64_skip_breaks(in, n, i);
		if (i == n)
			break;
		v = smtp_b64_value[(uint8_t)in[i]];
		if (v == B64_PAD) {
			if (k < 2)
				return -EBADMSG;
			if (max - w < k - 1)
				return -ENOSPC;
			if (smtp_b64_padding(in, n, i, q, k, out + w) != n)
				return -EBADMSG;
			*ret_len = w + k - 1;
			return 0;
		}
		if (v == 0 || v > 64)
			return -EBADMSG;
		q[k++] = (uint8_t)(v - 1);
		i++;
		if (k < 4)
			continue;
		if (max - w < 3)
			return -ENOSPC;
		out[w++] = (uint8_t)(q[0] << 2 | q[1] >> 4);
		out[w++] = (uint8_t)(q[1] << 4 | q[2] >> 2);
		out[w++] = (uint8_t)(q[2] << 6 | q[3]);
		k = 0;
	}
	if (k != 0)
		return -EBADMSG;
	*ret_len = w;
	return 0;
}
