// SPDX-License-Identifier: GPL-2.0-only
/* The JSON writer of the agent's result line (see json.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void jw_init(struct jw *w)
{
	memset(w, 0, sizeof(*w));
	w->kind[0] = JW_TOP;
	w->first[0] = true;
}

void jw_free(struct jw *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

void jw_raw(struct jw *w, const char *s, size_t n)
{
	if (w->failed)
		return;
	if (w->len + n + 1 > w->cap) {
		size_t ncap = w->cap ? w->cap : 256;
		char *nb;

		while (ncap < w->len + n + 1)
			ncap *= 2;
		nb = realloc(w->buf, ncap);
		if (!nb) {
			w->failed = true;
			return;
		}
		w->buf = nb;
		w->cap = ncap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void jw_rawf(struct jw *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void jw_rawf(struct jw *w, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		w->failed = true;
		return;
	}
	jw_raw(w, tmp, (size_t)n);
}

/*
 * Length of the valid UTF-8 sequence at s (at most avail bytes), or 0 when
 * the bytes there are not valid UTF-8 (overlong forms, surrogates and code
 * points above U+10FFFF are invalid).
 */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* Write s as a JSON string; invalid UTF-8 bytes become U+FFFD. */
static void jw_quoted(struct jw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);

	jw_raw(w, "\"", 1);
	while (left > 0) {
		unsigned char c = *p;
		size_t n;

		switch (c) {
		case '"':
			jw_raw(w, "\\\"", 2);
			break;
		case '\\':
			jw_raw(w, "\\\\", 2);
			break;
		case '\n':
			jw_raw(w, "\\n", 2);
			break;
		case '\r':
			jw_raw(w, "\\r", 2);
			break;
		case '\t':
			jw_raw(w, "\\t", 2);
			break;
		case '\b':
			jw_raw(w, "\\b", 2);
			break;
		case '\f':
			jw_raw(w, "\\f", 2);
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				jw_rawf(w, "\\u%04x", c);
				break;
			}
			n = utf8_seq_len(p, left);
			if (n == 0) {
				jw_raw(w, "\\ufffd", 6);
				break;
			}
			jw_raw(w, (const char *)p, n);
			p += n;
			left -= n;
			continue;
		}
		p++;
		left--;
	}
	jw_raw(w, "\"", 1);
}

/* Separator and key before a value; marks misuse (key in array etc.). */
static void jw_prefix(struct jw *w, const char *key)
{
	unsigned int d = w->depth;

	if (w->kind[d] == JW_OBJECT) {
		if (!key) {
			w->failed = true;
			return;
		}
	} else if (key || (w->kind[d] == JW_TOP && !w->first[d])) {
		/* keys only in objects; a single top-level value */
		w->failed = true;
		return;
	}
	if (!w->first[d])
		jw_raw(w, ",", 1);
	w->first[d] = false;
	if (key) {
		jw_quoted(w, key);
		jw_raw(w, ":", 1);
	}
}

static void jw_open(struct jw *w, const char *key, enum jw_kind kind)
{
	jw_prefix(w, key);
	if (w->failed)
		return;
	if (w->depth + 1 >= JW_MAX_DEPTH) {
		w->failed = true;
		return;
	}
	jw_raw(w, kind == JW_OBJECT ? "{" : "[", 1);
	w->depth++;
	w->kind[w->depth] = kind;
	w->first[w->depth] = true;
}

static void jw_close(struct jw *w, enum jw_kind kind)
{
	if (w->failed)
		return;
	if (w->depth == 0 || w->kind[w->depth] != kind) {
		w->failed = true;
		return;
	}
	jw_raw(w, kind == JW_OBJECT ? "}" : "]", 1);
	w->depth--;
}

void jw_obj(struct jw *w, const char *key) { jw_open(w, key, JW_OBJECT); }
void jw_obj_end(struct jw *w) { jw_close(w, JW_OBJECT); }
void jw_arr(struct jw *w, const char *key) { jw_open(w, key, JW_ARRAY); }
void jw_arr_end(struct jw *w) { jw_close(w, JW_ARRAY); }

void jw_null(struct jw *w, const char *key)
{
	jw_prefix(w, key);
	jw_raw(w, "null", 4);
}

void jw_str(struct jw *w, const char *key, const char *s)
{
	if (!s) {
		jw_null(w, key);
		return;
	}
	jw_prefix(w, key);
	jw_quoted(w, s);
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_prefix(w, key);
	jw_rawf(w, "%" PRIu64, v);
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	jw_prefix(w, key);
	jw_rawf(w, "%" PRId64, v);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	jw_prefix(w, key);
	jw_raw(w, v ? "true" : "false", v ? 4 : 5);
}

/* Fixed-point number with `decimals` digits; NaN and infinities are null. */
void jw_dbl(struct jw *w, const char *key, double v, int decimals)
{
	if (v != v || v > 1e300 || v < -1e300) {
		jw_null(w, key);
		return;
	}
	jw_prefix(w, key);
	jw_rawf(w, "%.*f", decimals, v);
}

/* True when a complete, well-formed document has been written. */
bool jw_done(const struct jw *w)
{
	return !w->failed && w->depth == 0 && !w->first[0];
}
