/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small JSON writer into a growing buffer: objects, arrays, strings
 * (invalid UTF-8 becomes U+FFFD), integers, fixed-point numbers.  Misuse
 * (a key in an array, a mismatched close) or running out of memory sets
 * `failed` and every later call does nothing.
 */
#ifndef DMAHARNESS_AGENT_JSON_H
#define DMAHARNESS_AGENT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JW_MAX_DEPTH		16

enum jw_kind { JW_TOP, JW_OBJECT, JW_ARRAY };

struct jw {
	char *buf;
	size_t len;
	size_t cap;
	unsigned int depth;
	enum jw_kind kind[JW_MAX_DEPTH];
	bool first[JW_MAX_DEPTH];
	bool failed;		/* out of memory or misuse; output invalid */
};

void jw_init(struct jw *w);
void jw_free(struct jw *w);
/* Raw bytes, no separator or quoting (e.g. a prefix before the document). */
void jw_raw(struct jw *w, const char *s, size_t n);
/* key is NULL for a value in an array or at the top level. */
void jw_obj(struct jw *w, const char *key);
void jw_obj_end(struct jw *w);
void jw_arr(struct jw *w, const char *key);
void jw_arr_end(struct jw *w);
void jw_null(struct jw *w, const char *key);
void jw_str(struct jw *w, const char *key, const char *s);
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_i64(struct jw *w, const char *key, int64_t v);
void jw_bool(struct jw *w, const char *key, bool v);
void jw_dbl(struct jw *w, const char *key, double v, int decimals);
bool jw_done(const struct jw *w);

#endif
