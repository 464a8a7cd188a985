// SPDX-License-Identifier: MIT
/*
 * USB device profiles, format 1: parser, load-time checks, canonical writer
 * and lookups.  The contract is profiles/FORMAT.md.
 *
 * The parser reads physical lines, splits them into fields (a statement's
 * continuation lines add fields to it) and handles each statement once its
 * last continuation line has been read.  It stops at the first error.
 */
#include "profile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define USB_DT_CONFIG          0x02
#define USB_DT_INTERFACE       0x04
#define USB_DT_ENDPOINT        0x05
#define USB_DT_QUALIFIER       0x06
#define USB_DT_IAD             0x0b
#define USB_DT_BOS             0x0f
#define USB_DT_DEVICE_CAP      0x10
#define USB_DT_HID             0x21
#define USB_DT_CS_INTERFACE    0x24
#define USB_DT_CS_ENDPOINT     0x25

#define HEADER_KEYWORD "dmaharness-usb-profile"
/* The most fields a statement can have: `get` with a full answer. */
#define MAX_FIELDS (PROFILE_MAX_BLOB + 8)

static const char *const speed_names[] = {
	[PROFILE_SPEED_LOW] = "low",
	[PROFILE_SPEED_FULL] = "full",
	[PROFILE_SPEED_HIGH] = "high",
	[PROFILE_SPEED_SUPER] = "super",
};

static const char *const pattern_names[PROFILE_PATTERN_COUNT] = {
	[PROFILE_PATTERN_PACKETS] = "packet",
	[PROFILE_PATTERN_UVC_CONTROL] = "uvc-control",
	[PROFILE_PATTERN_UVC_BUTTON] = "uvc-button",
	[PROFILE_PATTERN_UVC_MIXED] = "uvc-mixed",
	[PROFILE_PATTERN_UVC_MALFORMED] = "uvc-malformed",
	[PROFILE_PATTERN_UVC_RANDOM] = "uvc-random",
	[PROFILE_PATTERN_RANDOM] = "random",
	[PROFILE_PATTERN_ZERO] = "zero",
	[PROFILE_PATTERN_HID] = "hid",
};

const char *profile_speed_name(enum profile_speed s)
{
	if ((unsigned)s >= sizeof(speed_names) / sizeof(speed_names[0]))
		return "?";
	return speed_names[s];
}

const char *profile_pattern_name(enum profile_pattern pat)
{
	if ((unsigned)pat >= PROFILE_PATTERN_COUNT)
		return "?";
	return pattern_names[pat];
}

static unsigned le16(const uint8_t *p)
{
	return p[0] | ((unsigned)p[1] << 8);
}

/* ---- Messages ------------------------------------------------------------ */

/* "FILE:LINE: STMT: message"; LINE 0 and STMT NULL are left out. */
static void verr(char *err, size_t size, const char *file, unsigned line,
		 const char *stmt, const char *fmt, va_list ap)
{
	size_t n;
	int k;

	if (!err || !size)
		return;
	if (line)
		k = snprintf(err, size, "%s:%u: ", file ? file : "<profile>", line);
	else
		k = snprintf(err, size, "%s: ", file ? file : "<profile>");
	n = k < 0 ? 0 : (size_t)k;
	if (stmt && n < size) {
		k = snprintf(err + n, size - n, "%s: ", stmt);
		n += k < 0 ? 0 : (size_t)k;
	}
	if (n < size)
		vsnprintf(err + n, size - n, fmt, ap);
}

static void errf(char *err, size_t size, const char *file, unsigned line,
		 const char *stmt, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void errf(char *err, size_t size, const char *file, unsigned line,
		 const char *stmt, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(err, size, file, line, stmt, fmt, ap);
	va_end(ap);
}

/* ---- UTF-8 --------------------------------------------------------------- */

/* Decode one code point of valid-or-not UTF-8 at s[0..n); returns its
 * length, or 0 if the bytes there are not valid UTF-8 (overlong forms,
 * surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_decode(const uint8_t *s, size_t n, uint32_t *cp)
{
	uint32_t c;
	size_t len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	*cp = c;
	return len;
}

/* UTF-16 units of a valid UTF-8 string. */
static size_t utf16_units(const char *s)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t n = strlen(s), units = 0;
	uint32_t cp;

	for (size_t i = 0, k; i < n; i += k) {
		k = utf8_decode(u + i, n - i, &cp);
		if (!k)
			break;
		units += cp >= 0x10000 ? 2 : 1;
	}
	return units;
}

/* ---- Lexer --------------------------------------------------------------- */

struct field {
	const char *s;          /* into the text; a quoted field includes quotes */
	size_t len;
	unsigned line;
	bool quoted;
};

struct parser {
	const char *file;
	char *err;
	size_t errsize;
	struct profile *p;
	struct field *f;
	size_t n, cap;
	const char *stmt;       /* keyword of the statement being parsed */
};

static int perr(struct parser *ps, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct parser *ps, unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(ps->err, ps->errsize, ps->file, line, ps->stmt, fmt, ap);
	va_end(ap);
	return -1;
}

/* A field as it can be printed in a message: printable ASCII, the rest as
 * \xNN, at most about 32 characters. */
static const char *show(const struct field *f, char *buf, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < f->len && o + 8 < size; i++) {
		unsigned char c = (unsigned char)f->s[i];

		if (o >= 32) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	buf[o] = 0;
	return buf;
}

#define SHOW(f) show((f), (char[48]){ 0 }, 48)

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int add_field(struct parser *ps, const char *s, size_t len, unsigned line,
		     bool quoted)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 64;
		struct field *nf;

		if (ps->n >= MAX_FIELDS)
			return perr(ps, line, "more than %d fields", MAX_FIELDS);
		if (cap > MAX_FIELDS)
			cap = MAX_FIELDS;
		nf = realloc(ps->f, cap * sizeof(*nf));
		if (!nf)
			return perr(ps, line, "out of memory");
		ps->f = nf;
		ps->cap = cap;
	}
	ps->f[ps->n++] = (struct field){ s, len, line, quoted };
	return 0;
}

/* Split one physical line (without its newline) into fields. */
static int split_line(struct parser *ps, const char *s, size_t n, unsigned line)
{
	size_t i = 0;

	while (i < n) {
		size_t j;

		if (is_blank(s[i])) {
			i++;
			continue;
		}
		if (s[i] == '#')
			break;
		if (s[i] == '"') {
			for (j = i + 1; ; ) {
				if (j >= n)
					return perr(ps, line, "unterminated string");
				if (s[j] == '"')
					break;
				if (s[j] != '\\') {
					j++;
					continue;
				}
				if (j + 1 >= n)
					return perr(ps, line, "unterminated string");
				if (s[j + 1] == '"' || s[j + 1] == '\\') {
					j += 2;
				} else if (s[j + 1] == 'x') {
					if (j + 3 >= n || hexval(s[j + 2]) < 0 ||
					    hexval(s[j + 3]) < 0)
						return perr(ps, line, "string: \\x must be "
							    "followed by two hex digits");
					j += 4;
				} else {
					struct field e = { s + j, 2, line, false };

					return perr(ps, line, "string: unknown escape '%s' "
						    "(only \\\", \\\\ and \\xNN)", SHOW(&e));
				}
			}
			j++;
			if (j < n && !is_blank(s[j]) && s[j] != '#')
				return perr(ps, line, "a string must be followed by a blank");
			if (add_field(ps, s + i, j - i, line, true))
				return -1;
			i = j;
			continue;
		}
		for (j = i; j < n && !is_blank(s[j]) && s[j] != '#'; j++) {
			if (s[j] == '"')
				return perr(ps, line, "a string must follow a blank");
		}
		if (add_field(ps, s + i, j - i, line, false))
			return -1;
		i = j;
	}
	return 0;
}

/* ---- Fields ---------------------------------------------------------------- */

static bool field_is(const struct field *f, const char *word)
{
	size_t n = strlen(word);

	return !f->quoted && f->len == n && memcmp(f->s, word, n) == 0;
}

/* A number, decimal or 0x hexadecimal, at most @max. */
static int get_num(struct parser *ps, const struct field *f, const char *what,
		   uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	int base = 10;

	if (f->len > 2 && f->s[0] == '0' && f->s[1] == 'x') {
		base = 16;
		i = 2;
	}
	if (f->quoted || i == f->len)
		goto bad;
	for (; i < f->len; i++) {
		int d = hexval(f->s[i]);

		if (d < 0 || d >= base)
			goto bad;
		v = v * (unsigned)base + (unsigned)d;
		if (v > 0xffffffffu)
			v = 0x100000000u;       /* saturate: only "too large" matters */
	}
	if (v > max)
		return perr(ps, f->line, "%s %s is larger than 0x%x", what, SHOW(f), max);
	*out = (uint32_t)v;
	return 0;
bad:
	return perr(ps, f->line, "%s '%s' is not a number (decimal, or hexadecimal "
		    "with 0x)", what, SHOW(f));
}

static int get_num_or_any(struct parser *ps, const struct field *f,
			  const char *what, int32_t *out)
{
	uint32_t v;

	if (field_is(f, "*")) {
		*out = PROFILE_ANY;
		return 0;
	}
	if (get_num(ps, f, what, 0xffff, &v))
		return -1;
	*out = (int32_t)v;
	return 0;
}

/* Fields f[0..n) as hex bytes into a new buffer (NULL when n == 0). */
static int get_bytes(struct parser *ps, const struct field *f, size_t n,
		     uint8_t **out, size_t *len)
{
	uint8_t *b = NULL;

	if (n > PROFILE_MAX_BLOB)
		return perr(ps, f[0].line, "%zu bytes, more than %d", n, PROFILE_MAX_BLOB);
	if (n) {
		b = malloc(n);
		if (!b)
			return perr(ps, f[0].line, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		int hi = f[i].len == 2 && !f[i].quoted ? hexval(f[i].s[0]) : -1;
		int lo = f[i].len == 2 && !f[i].quoted ? hexval(f[i].s[1]) : -1;

		if (hi < 0 || lo < 0) {
			free(b);
			return perr(ps, f[i].line, "'%s' is not a byte (two hex digits, "
				    "like 0a)", SHOW(&f[i]));
		}
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = b;
	*len = n;
	return 0;
}

/* Fixed-size hex field. */
static int get_bytes_exact(struct parser *ps, const struct field *f, size_t n,
			   uint8_t *out, size_t want, const char *what)
{
	uint8_t *b;
	size_t len;

	if (get_bytes(ps, f, n, &b, &len))
		return -1;
	if (n != want) {
		free(b);
		return perr(ps, f[-1].line, "%zu bytes, %s has %zu", n, what, want);
	}
	memcpy(out, b, want);
	free(b);
	return 0;
}

/* A quoted string, unescaped, valid UTF-8 without NUL. */
static int get_string(struct parser *ps, const struct field *f, char **out)
{
	char *s;
	size_t o = 0;
	uint32_t cp;

	if (!f->quoted)
		return perr(ps, f->line, "'%s' is not a quoted string", SHOW(f));
	s = malloc(f->len);
	if (!s)
		return perr(ps, f->line, "out of memory");
	for (size_t i = 1; i + 1 < f->len; i++) {
		char c = f->s[i];

		if (c == '\\') {
			c = f->s[++i];
			if (c == 'x') {
				c = (char)(hexval(f->s[i + 1]) << 4 | hexval(f->s[i + 2]));
				i += 2;
			}
		}
		if (c == 0) {
			free(s);
			return perr(ps, f->line, "the string contains a NUL byte");
		}
		s[o++] = c;
	}
	s[o] = 0;
	for (size_t i = 0, k; i < o; i += k) {
		k = utf8_decode((const uint8_t *)s + i, o - i, &cp);
		if (!k) {
			unsigned bad = (unsigned char)s[i];

			free(s);
			return perr(ps, f->line, "the string is not valid UTF-8 (byte "
				    "0x%02x at offset %zu)", bad, i);
		}
	}
	*out = s;
	return 0;
}

static int nfields(struct parser *ps, size_t want, const char *usage)
{
	if (ps->n < want)
		return perr(ps, ps->f[ps->n - 1].line, "missing field (%s)", usage);
	if (ps->n > want) {
		const struct field *x = &ps->f[want];

		return perr(ps, x->line, "extra field '%s' (%s)", SHOW(x), usage);
	}
	return 0;
}

static int once(struct parser *ps, unsigned first)
{
	if (first)
		return perr(ps, ps->f[0].line, "repeated (first on line %u); it may "
			    "appear once", first);
	return 0;
}

/* ---- Statements ------------------------------------------------------------ */

/* Room for one more element in the array pointed to by @arrp (a pointer to
 * a struct pointer) holding @n elements of @size bytes; its capacity is
 * the next power of two. */
static int grow(struct parser *ps, void *arrp, size_t n, size_t size)
{
	void *a;

	if (n >= PROFILE_MAX_RULES)
		return perr(ps, ps->f[0].line, "more than %d statements of this kind",
			    PROFILE_MAX_RULES);
	if (n && (n & (n - 1)))
		return 0;
	memcpy(&a, arrp, sizeof(a));
	a = realloc(a, (n ? 2 * n : 1) * size);
	if (!a)
		return perr(ps, ps->f[0].line, "out of memory");
	memcpy(arrp, &a, sizeof(a));
	return 0;
}

static int st_header(struct parser *ps)
{
	uint32_t v;

	if (nfields(ps, 2, "dmaharness-usb-profile 1") ||
	    get_num(ps, &ps->f[1], "version", 0xffffffffu, &v))
		return -1;
	if (v > PROFILE_VERSION)
		return perr(ps, ps->f[1].line, "format version %u is newer than this "
			    "program reads (version %d); use a newer dmaharness", v,
			    PROFILE_VERSION);
	if (v != PROFILE_VERSION)
		return perr(ps, ps->f[1].line, "there is no format version %u "
			    "(this program reads version %d)", v, PROFILE_VERSION);
	return 0;
}

static int st_name(struct parser *ps)
{
	struct profile *p = ps->p;
	const struct field *f = &ps->f[1];

	if (once(ps, p->name_line) || nfields(ps, 2, "name NAME"))
		return -1;
	if (f->quoted || f->len > PROFILE_NAME_MAX)
		goto bad;
	for (size_t i = 0; i < f->len; i++) {
		char c = f->s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      (c == '-' && i > 0)))
			goto bad;
	}
	memcpy(p->name, f->s, f->len);
	p->name[f->len] = 0;
	p->name_line = f->line;
	return 0;
bad:
	return perr(ps, f->line, "'%s' is not a name: [a-z0-9][a-z0-9-]*, at most %d "
		    "characters", SHOW(f), PROFILE_NAME_MAX);
}

static int st_description(struct parser *ps)
{
	struct profile *p = ps->p;

	if (once(ps, p->description_line) || nfields(ps, 2, "description \"TEXT\"") ||
	    get_string(ps, &ps->f[1], &p->description))
		return -1;
	p->description_line = ps->f[0].line;
	return 0;
}

static int st_source(struct parser *ps)
{
	struct profile *p = ps->p;
	struct profile_text *t = &p->sources[p->n_sources];

	if (nfields(ps, 2, "source \"TEXT\""))
		return -1;
	if (p->n_sources >= PROFILE_MAX_SOURCES)
		return perr(ps, ps->f[0].line, "more than %d sources", PROFILE_MAX_SOURCES);
	if (get_string(ps, &ps->f[1], &t->text))
		return -1;
	t->line = ps->f[0].line;
	p->n_sources++;
	return 0;
}

static int st_speed(struct parser *ps)
{
	struct profile *p = ps->p;

	if (once(ps, p->speed_line) || nfields(ps, 2, "speed low|full|high|super"))
		return -1;
	for (size_t i = 0; i < sizeof(speed_names) / sizeof(speed_names[0]); i++) {
		if (field_is(&ps->f[1], speed_names[i])) {
			p->speed = (enum profile_speed)i;
			p->speed_line = ps->f[0].line;
			return 0;
		}
	}
	return perr(ps, ps->f[1].line, "'%s' is not a speed (low, full, high or super)",
		    SHOW(&ps->f[1]));
}

static int st_device(struct parser *ps)
{
	struct profile *p = ps->p;

	if (once(ps, p->device_line) ||
	    get_bytes_exact(ps, ps->f + 1, ps->n - 1, p->device, 18,
			    "a device descriptor"))
		return -1;
	p->device_line = ps->f[0].line;
	return 0;
}

static int st_qualifier(struct parser *ps)
{
	struct profile *p = ps->p;

	if (once(ps, p->qualifier_line) ||
	    get_bytes_exact(ps, ps->f + 1, ps->n - 1, p->qualifier, 10,
			    "a device qualifier descriptor"))
		return -1;
	p->has_qualifier = true;
	p->qualifier_line = ps->f[0].line;
	return 0;
}

static int st_blob(struct parser *ps, struct profile_blob *b)
{
	if (ps->n < 2)
		return perr(ps, ps->f[0].line, "missing field (hex bytes)");
	if (get_bytes(ps, ps->f + 1, ps->n - 1, &b->data, &b->len))
		return -1;
	b->line = ps->f[0].line;
	return 0;
}

static int st_config(struct parser *ps)
{
	struct profile *p = ps->p;

	if (p->n_configs >= PROFILE_MAX_CONFIGS)
		return perr(ps, ps->f[0].line, "more than %d configurations",
			    PROFILE_MAX_CONFIGS);
	if (st_blob(ps, &p->configs[p->n_configs]))
		return -1;
	p->n_configs++;
	return 0;
}

static int st_bos(struct parser *ps)
{
	struct profile *p = ps->p;

	if (once(ps, p->bos.line) || st_blob(ps, &p->bos))
		return -1;
	p->has_bos = true;
	return 0;
}

static const char string_usage[] = "string 0 LANGID-BYTES, or string LANGID INDEX \"TEXT\"";

static int st_string(struct parser *ps)
{
	struct profile *p = ps->p;
	struct profile_string *s;
	uint32_t langid, index;
	char *text;

	if (ps->n < 3)
		return perr(ps, ps->f[0].line, "missing field (%s)", string_usage);
	if (!ps->f[ps->n - 1].quoted) {
		uint8_t *b;
		size_t len;

		if (get_num(ps, &ps->f[1], "LANGID", 0xffff, &langid))
			return -1;
		if (langid != 0)
			return perr(ps, ps->f[1].line, "expected %s", string_usage);
		if (once(ps, p->string0_line) || get_bytes(ps, ps->f + 2, ps->n - 2, &b, &len))
			return -1;
		if (len % 2 || len > PROFILE_STRING0_MAX) {
			free(b);
			return perr(ps, ps->f[0].line, "%zu bytes: string 0 holds 1 to %d "
				    "LANGIDs of 2 bytes", len, PROFILE_STRING0_MAX / 2);
		}
		memcpy(p->string0, b, len);
		free(b);
		p->string0_len = len;
		p->has_string0 = true;
		p->string0_line = ps->f[0].line;
		return 0;
	}
	if (nfields(ps, 4, string_usage) ||
	    get_num(ps, &ps->f[1], "LANGID", 0xffff, &langid) ||
	    get_num(ps, &ps->f[2], "INDEX", 0xff, &index))
		return -1;
	if (index == 0)
		return perr(ps, ps->f[2].line, "index 0 is the LANGID list: "
			    "string 0 BYTES");
	for (size_t i = 0; i < p->n_strings; i++) {
		if (p->strings[i].langid == langid && p->strings[i].index == index)
			return perr(ps, ps->f[0].line, "language 0x%04x index %u repeated "
				    "(first on line %u)", langid, index,
				    p->strings[i].line);
	}
	if (grow(ps, &p->strings, p->n_strings, sizeof(*p->strings)) ||
	    get_string(ps, &ps->f[3], &text))
		return -1;
	if (utf16_units(text) > PROFILE_STRING_UNITS) {
		free(text);
		return perr(ps, ps->f[3].line, "the string has more than %d UTF-16 units "
			    "(a string descriptor holds at most %d)",
			    PROFILE_STRING_UNITS, PROFILE_STRING_UNITS);
	}
	s = &p->strings[p->n_strings++];
	*s = (struct profile_string){ (uint16_t)langid, (uint8_t)index, text,
				      ps->f[0].line };
	return 0;
}

/* TYPE REQ VALUE INDEX of get and set. */
static int get_request(struct parser *ps, bool in, uint8_t *type, uint8_t *req,
		       int32_t *value, int32_t *index)
{
	uint32_t t, r;

	if (get_num(ps, &ps->f[1], "bmRequestType", 0xff, &t) ||
	    get_num(ps, &ps->f[2], "bRequest", 0xff, &r) ||
	    get_num_or_any(ps, &ps->f[3], "wValue", value) ||
	    get_num_or_any(ps, &ps->f[4], "wIndex", index))
		return -1;
	if (in && !(t & 0x80))
		return perr(ps, ps->f[1].line, "bmRequestType 0x%02x is an OUT request "
			    "(bit 7 clear); 'get' answers IN requests", t);
	if (!in && (t & 0x80))
		return perr(ps, ps->f[1].line, "bmRequestType 0x%02x is an IN request "
			    "(bit 7 set); 'set' accepts OUT requests", t);
	*type = (uint8_t)t;
	*req = (uint8_t)r;
	return 0;
}

static const char get_usage[] = "get TYPE REQ VALUE INDEX = BYTES, or ... stall";
static const char set_usage[] = "set TYPE REQ VALUE INDEX ack, or ... store REQ2";

static int st_get(struct parser *ps)
{
	struct profile *p = ps->p;
	struct profile_get g = { 0 };

	if (ps->n < 6)
		return perr(ps, ps->f[ps->n - 1].line, "missing field (%s)", get_usage);
	if (get_request(ps, true, &g.type, &g.req, &g.value, &g.index))
		return -1;
	if (field_is(&ps->f[5], "stall")) {
		if (nfields(ps, 6, get_usage))
			return -1;
		g.stall = true;
	} else if (field_is(&ps->f[5], "=")) {
		if (get_bytes(ps, ps->f + 6, ps->n - 6, &g.data, &g.len))
			return -1;
	} else {
		return perr(ps, ps->f[5].line, "expected '=' or 'stall', not '%s' (%s)",
			    SHOW(&ps->f[5]), get_usage);
	}
	g.line = ps->f[0].line;
	if (grow(ps, &p->gets, p->n_gets, sizeof(*p->gets))) {
		free(g.data);
		return -1;
	}
	p->gets[p->n_gets++] = g;
	return 0;
}

static int st_set(struct parser *ps)
{
	struct profile *p = ps->p;
	struct profile_set s = { 0 };

	if (ps->n < 6)
		return perr(ps, ps->f[ps->n - 1].line, "missing field (%s)", set_usage);
	if (get_request(ps, false, &s.type, &s.req, &s.value, &s.index))
		return -1;
	if (field_is(&ps->f[5], "ack")) {
		if (nfields(ps, 6, set_usage))
			return -1;
	} else if (field_is(&ps->f[5], "store")) {
		uint32_t r;

		if (nfields(ps, 7, set_usage) || get_num(ps, &ps->f[6], "REQ2", 0xff, &r))
			return -1;
		s.store = true;
		s.store_req = (uint8_t)r;
	} else {
		return perr(ps, ps->f[5].line, "expected 'ack' or 'store', not '%s' (%s)",
			    SHOW(&ps->f[5]), set_usage);
	}
	s.line = ps->f[0].line;
	if (grow(ps, &p->sets, p->n_sets, sizeof(*p->sets)))
		return -1;
	p->sets[p->n_sets++] = s;
	return 0;
}

static const char interrupt_usage[] = "interrupt EP pattern PATTERN, or interrupt EP "
				      "packet BYTES";

static size_t total_packets(const struct profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_interrupts; i++)
		n += p->interrupts[i].n_packets;
	return n;
}

static int st_interrupt(struct parser *ps)
{
	struct profile *p = ps->p;
	struct profile_interrupt *it = NULL;
	unsigned line = ps->f[0].line;
	uint32_t ep;

	if (ps->n < 4)
		return perr(ps, ps->f[ps->n - 1].line, "missing field (%s)",
			    interrupt_usage);
	if (get_num(ps, &ps->f[1], "endpoint", 0xff, &ep))
		return -1;
	if (!(ep & 0x80) || (ep & 0x70) || !(ep & 0x0f))
		return perr(ps, ps->f[1].line, "0x%02x is not the address of an IN "
			    "endpoint (0x81 to 0x8f)", ep);
	for (size_t i = 0; i < p->n_interrupts; i++)
		if (p->interrupts[i].ep == ep)
			it = &p->interrupts[i];

	if (field_is(&ps->f[2], "pattern")) {
		if (nfields(ps, 4, interrupt_usage))
			return -1;
		if (it)
			return perr(ps, line, "endpoint 0x%02x already has %s (line %u); "
				    "an endpoint has one pattern or packets", ep,
				    it->pattern ? "a pattern" : "packets", it->line);
		for (int k = 1; k < PROFILE_PATTERN_COUNT; k++) {
			if (!field_is(&ps->f[3], pattern_names[k]))
				continue;
			if (p->n_interrupts >= PROFILE_MAX_INTERRUPTS)
				return perr(ps, line, "more than %d endpoints",
					    PROFILE_MAX_INTERRUPTS);
			p->interrupts[p->n_interrupts++] = (struct profile_interrupt){
				.ep = (uint8_t)ep, .pattern = (enum profile_pattern)k,
				.line = line,
			};
			return 0;
		}
		return perr(ps, ps->f[3].line, "unknown pattern '%s' (uvc-control, "
			    "uvc-button, uvc-mixed, uvc-malformed, uvc-random, random, "
			    "zero, hid)", SHOW(&ps->f[3]));
	}
	if (!field_is(&ps->f[2], "packet"))
		return perr(ps, ps->f[2].line, "expected 'pattern' or 'packet', not '%s'",
			    SHOW(&ps->f[2]));
	if (it && it->pattern)
		return perr(ps, line, "endpoint 0x%02x already has a pattern (line %u); "
			    "an endpoint has one pattern or packets", ep, it->line);
	if (total_packets(p) >= PROFILE_MAX_RULES)
		return perr(ps, line, "more than %d packets", PROFILE_MAX_RULES);
	if (!it) {
		if (p->n_interrupts >= PROFILE_MAX_INTERRUPTS)
			return perr(ps, line, "more than %d endpoints",
				    PROFILE_MAX_INTERRUPTS);
		it = &p->interrupts[p->n_interrupts++];
		*it = (struct profile_interrupt){ .ep = (uint8_t)ep, .line = line };
	}
	if (grow(ps, &it->packets, it->n_packets, sizeof(*it->packets)))
		return -1;
	struct profile_blob *b = &it->packets[it->n_packets];
	if (get_bytes(ps, ps->f + 3, ps->n - 3, &b->data, &b->len))
		return -1;
	b->line = line;
	it->n_packets++;
	return 0;
}

static const struct {
	const char *kw;
	int (*fn)(struct parser *ps);
} statements[] = {
	{ HEADER_KEYWORD, st_header },
	{ "name", st_name },
	{ "description", st_description },
	{ "source", st_source },
	{ "speed", st_speed },
	{ "device", st_device },
	{ "qualifier", st_qualifier },
	{ "config", st_config },
	{ "bos", st_bos },
	{ "string", st_string },
	{ "get", st_get },
	{ "set", st_set },
	{ "interrupt", st_interrupt },
};

static int statement(struct parser *ps)
{
	struct profile *p = ps->p;
	const struct field *kw = &ps->f[0];

	for (size_t i = 0; i < sizeof(statements) / sizeof(statements[0]); i++) {
		if (!field_is(kw, statements[i].kw))
			continue;
		ps->stmt = statements[i].kw;
		if (!p->header_line && statements[i].fn != st_header)
			return perr(ps, kw->line, "the first statement must be "
				    "'" HEADER_KEYWORD " %d'", PROFILE_VERSION);
		if (statements[i].fn == st_header) {
			if (once(ps, p->header_line))
				return -1;
			if (st_header(ps))
				return -1;
			p->header_line = kw->line;
			return 0;
		}
		return statements[i].fn(ps);
	}
	ps->stmt = NULL;
	return perr(ps, kw->line, "%s: unknown statement%s", SHOW(kw),
		    p->header_line ? "" : " (the first statement must be '"
		    HEADER_KEYWORD " 1')");
}

/* The keyword for messages about the statement starting at @s. */
static const char *keyword_at(const char *s, size_t n)
{
	size_t k = 0;

	while (k < n && !is_blank(s[k]) && s[k] != '#' && s[k] != '"')
		k++;
	for (size_t i = 0; i < sizeof(statements) / sizeof(statements[0]); i++)
		if (strlen(statements[i].kw) == k && !memcmp(s, statements[i].kw, k))
			return statements[i].kw;
	return NULL;
}

static int check_required(struct parser *ps)
{
	struct profile *p = ps->p;

	ps->stmt = NULL;
	if (!p->header_line)
		return perr(ps, 0, "no '" HEADER_KEYWORD " %d' statement: not a "
			    "profile", PROFILE_VERSION);
	ps->stmt = "name";
	if (!p->name_line)
		return perr(ps, 0, "missing (a profile needs one 'name' statement)");
	ps->stmt = "speed";
	if (!p->speed_line)
		return perr(ps, 0, "missing (a profile needs one 'speed' statement)");
	ps->stmt = "device";
	if (!p->device_line)
		return perr(ps, 0, "missing (a profile needs one 'device' statement)");
	ps->stmt = "config";
	if (!p->n_configs)
		return perr(ps, 0, "missing (a profile needs at least one 'config')");
	return 0;
}

static int parse_lines(struct parser *ps, const char *text, size_t len)
{
	size_t pos = 0;
	unsigned line = 0;

	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		size_t i = 0;

		pos += n + (nl ? 1 : 0);
		line++;
		if (n > PROFILE_MAX_LINE || memchr(s, 0, n))
			ps->stmt = NULL;        /* errors of the line, not a statement */
		if (n > PROFILE_MAX_LINE)
			return perr(ps, line, "the line is longer than %d bytes",
				    PROFILE_MAX_LINE);
		if (memchr(s, 0, n))
			return perr(ps, line, "the line contains a NUL byte");
		while (i < n && is_blank(s[i]))
			i++;
		if (i == n || s[i] == '#')
			continue;               /* blank or comment line */
		if (s[0] == ' ' || s[0] == '\t') {
			if (ps->n == 0)
				return perr(ps, line, "continuation line (it starts with "
					    "a blank) without a statement before it");
			if (split_line(ps, s, n, line))
				return -1;
			continue;
		}
		if (ps->n && statement(ps))
			return -1;
		ps->n = 0;
		ps->stmt = keyword_at(s + i, n - i);
		if (split_line(ps, s, n, line))
			return -1;
		if (ps->n && ps->f[0].quoted) {
			ps->stmt = NULL;
			return perr(ps, line, "a statement starts with a keyword, not a "
				    "string");
		}
	}
	if (ps->n && statement(ps))
		return -1;
	return check_required(ps);
}

int profile_parse(const char *text, size_t len, const char *filename,
		  struct profile *out, char *err, size_t errsize)
{
	struct parser ps = {
		.file = filename ? filename : "<profile>",
		.err = err, .errsize = errsize, .p = out,
	};
	int rc;

	memset(out, 0, sizeof(*out));
	if (err && errsize)
		err[0] = 0;
	if (len > PROFILE_MAX_INPUT) {
		perr(&ps, 0, "larger than %u bytes", PROFILE_MAX_INPUT);
		return -1;
	}
	out->interrupts = calloc(PROFILE_MAX_INTERRUPTS, sizeof(*out->interrupts));
	out->filename = strdup(ps.file);
	if (!out->interrupts || !out->filename) {
		profile_free(out);
		perr(&ps, 0, "out of memory");
		return -1;
	}
	rc = parse_lines(&ps, text ? text : "", text ? len : 0);
	free(ps.f);
	if (rc) {
		profile_free(out);
		return -1;
	}
	return 0;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	free(p->filename);
	free(p->description);
	for (size_t i = 0; i < p->n_sources; i++)
		free(p->sources[i].text);
	for (size_t i = 0; i < p->n_configs; i++)
		free(p->configs[i].data);
	free(p->bos.data);
	for (size_t i = 0; i < p->n_strings; i++)
		free(p->strings[i].text);
	free(p->strings);
	for (size_t i = 0; i < p->n_gets; i++)
		free(p->gets[i].data);
	free(p->gets);
	free(p->sets);
	if (p->interrupts) {
		for (size_t i = 0; i < p->n_interrupts; i++) {
			for (size_t k = 0; k < p->interrupts[i].n_packets; k++)
				free(p->interrupts[i].packets[k].data);
			free(p->interrupts[i].packets);
		}
	}
	free(p->interrupts);
	memset(p, 0, sizeof(*p));
}

int profile_load_file(const char *path, struct profile *out, char *err, size_t errsize)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!f) {
		errf(err, errsize, path, 0, NULL, "%s", strerror(errno));
		return -1;
	}
	buf = malloc(PROFILE_MAX_INPUT + 1);
	if (!buf) {
		fclose(f);
		errf(err, errsize, path, 0, NULL, "out of memory");
		return -1;
	}
	len = fread(buf, 1, PROFILE_MAX_INPUT + 1, f);
	if (ferror(f)) {
		errf(err, errsize, path, 0, NULL, "read error");
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	rc = profile_parse(buf, len, path, out, err, errsize);
	free(buf);
	if (rc == 0 && profile_validate(out, err, errsize)) {
		profile_free(out);
		rc = -1;
	}
	return rc;
}

/* ---- Descriptors ----------------------------------------------------------- */

void profile_desc_iter_init(struct profile_desc_iter *it, const uint8_t *cfg, size_t len)
{
	*it = (struct profile_desc_iter){ cfg, len, 0, -1, -1 };
}

int profile_desc_next(struct profile_desc_iter *it, const uint8_t **desc)
{
	const uint8_t *d;

	if (it->off >= it->len)
		return 0;
	d = it->cfg + it->off;
	if (it->len - it->off < 2 || d[0] < 2 || d[0] > it->len - it->off)
		return -1;
	if (d[1] == USB_DT_INTERFACE && d[0] >= 4) {
		it->iface = d[2];
		it->alt = d[3];
	}
	it->off += d[0];
	*desc = d;
	return 1;
}

int profile_find_endpoint(const struct profile *p, uint8_t ep, uint8_t *type,
			  uint16_t *maxpacket, uint8_t *interval)
{
	for (size_t c = 0; c < p->n_configs; c++) {
		struct profile_desc_iter it;
		const uint8_t *d;

		profile_desc_iter_init(&it, p->configs[c].data, p->configs[c].len);
		while (profile_desc_next(&it, &d) > 0) {
			if (d[1] != USB_DT_ENDPOINT || d[0] < 7 || d[2] != ep)
				continue;
			if (type)
				*type = d[3] & 3;
			if (maxpacket)
				*maxpacket = (uint16_t)le16(&d[4]);
			if (interval)
				*interval = d[6];
			return 0;
		}
	}
	return -1;
}

/* ---- HID report descriptors ------------------------------------------------ */

/* Linux's HID_GLOBAL_STACK_SIZE: Push beyond it is an error there. */
#define HID_STACK 4
/* Input bits of one report are counted up to here (a report this long
 * fits no endpoint), so that Report Size x Report Count cannot overflow. */
#define HID_MAX_BITS ((uint64_t)1 << 40)

struct hid_globals {
	uint32_t size, count;           /* Report Size (bits), Report Count */
	uint32_t page;                  /* Usage Page */
	uint8_t id;                     /* Report ID; 0: none yet */
};

int profile_hid_input_reports(const uint8_t *desc, size_t len,
			      struct profile_hid_report *out, size_t *bad)
{
	struct hid_globals g = { 0 }, stack[HID_STACK];
	uint64_t bits[PROFILE_HID_MAX_REPORTS] = { 0 };
	int where[PROFILE_HID_MAX_REPORTS];     /* position in @out; -1 */
	size_t depth = 0, n = 0, i = 0;
	/* local items, until the next main item: the first usage, its page */
	uint32_t usage = 0, usage_page = 0;
	bool have_usage = false;

	for (size_t k = 0; k < PROFILE_HID_MAX_REPORTS; k++)
		where[k] = -1;
	while (i < len) {
		size_t at = i, sz;
		uint8_t b = desc[i];
		uint32_t v = 0;
		uint64_t add;

		if (b == 0xfe) {
			/* long item: bDataSize, bLongItemTag, then the data */
			if (len - i < 3 || len - i - 3 < desc[i + 1])
				goto malformed;
			i += 3 + (size_t)desc[i + 1];
			continue;
		}
		sz = (b & 3) == 3 ? 4 : b & 3;
		if (len - i - 1 < sz)
			goto malformed;
		for (size_t k = 0; k < sz; k++)
			v |= (uint32_t)desc[i + 1 + k] << (8 * k);
		i += 1 + sz;
		switch (b & 0xfc) {
		case 0x74:              /* global: Report Size */
			g.size = v;
			break;
		case 0x94:              /* global: Report Count */
			g.count = v;
			break;
		case 0x84:              /* global: Report ID, 1 to 255 */
			if (v == 0 || v > 255) {
				i = at;
				goto malformed;
			}
			g.id = (uint8_t)v;
			break;
		case 0xa4:              /* global: Push */
			if (depth == HID_STACK) {
				i = at;
				goto malformed;
			}
			stack[depth++] = g;
			break;
		case 0xb4:              /* global: Pop */
			if (depth == 0) {
				i = at;
				goto malformed;
			}
			g = stack[--depth];
			break;
		case 0x04:              /* global: Usage Page */
			g.page = v;
			break;
		case 0x08:              /* local: Usage */
		case 0x18:              /* local: Usage Minimum */
			if (!have_usage || (b & 0xfc) == 0x18) {
				/* a 4-byte usage carries its page in the high half */
				usage = sz == 4 ? (v & 0xffff) : v;
				usage_page = sz == 4 ? v >> 16 : 0;
				have_usage = true;
			}
			break;
		case 0x80:              /* main: Input */
			if (where[g.id] < 0) {
				where[g.id] = (int)n;
				out[n++] = (struct profile_hid_report){ .id = g.id };
			}
			if (!(v & 1) && (usage_page ? usage_page : g.page) == 0x07 &&
			    g.size && g.size <= 32 && g.count && bits[g.id] < (1u << 24)) {
				struct profile_hid_report *r = &out[where[g.id]];

				if (r->n_keys < PROFILE_HID_MAX_KEYS)
					r->keys[r->n_keys++] = (struct profile_hid_keys){
						.bit = (uint32_t)bits[g.id], .size = g.size,
						.count = g.count, .usage_min = usage,
						.array = !(v & 2) };
			}
			add = (uint64_t)g.size * g.count;
			if (add > HID_MAX_BITS - bits[g.id])
				bits[g.id] = HID_MAX_BITS;
			else
				bits[g.id] += add;
			break;
		default:                /* Output, Feature, collections, local items */
			break;
		}
		if ((b & 0x0c) == 0x00) {       /* a main item ends the local items */
			usage = usage_page = 0;
			have_usage = false;
		}
	}
	for (size_t k = 0; k < n; k++)
		out[k].len = (size_t)((bits[out[k].id] + 7) / 8) + (out[k].id ? 1 : 0);
	return (int)n;
malformed:
	if (bad)
		*bad = i;
	return -1;
}

size_t profile_hid_fitting(struct profile_hid_report *r, size_t n, unsigned maxpacket)
{
	size_t longest = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		if (r[i].len > longest)
			longest = r[i].len;
	for (size_t i = 0; i < n; i++) {
		if (r[i].len == 0 || r[i].len > maxpacket ||
		    (r[i].len == maxpacket && longest > maxpacket))
			continue;
		r[k++] = r[i];
	}
	return k;
}

int profile_interrupt_interface(const struct profile *p, uint8_t ep, uint8_t *klass)
{
	for (size_t c = 0; c < p->n_configs; c++) {
		struct profile_desc_iter it;
		const uint8_t *d, *intf = NULL;

		profile_desc_iter_init(&it, p->configs[c].data, p->configs[c].len);
		while (profile_desc_next(&it, &d) > 0) {
			if (d[1] == USB_DT_INTERFACE && d[0] >= 9)
				intf = d;
			if (d[1] != USB_DT_ENDPOINT || d[0] < 7 || d[2] != ep ||
			    (d[3] & 3) != 3 || !intf)
				continue;
			if (klass)
				*klass = intf[5];
			return intf[2];
		}
	}
	return -1;
}

unsigned profile_interrupt_maxpacket(const struct profile *p, uint8_t ep, uint8_t *interval)
{
	unsigned best = 0;

	for (size_t c = 0; c < p->n_configs; c++) {
		struct profile_desc_iter it;
		const uint8_t *d;

		profile_desc_iter_init(&it, p->configs[c].data, p->configs[c].len);
		while (profile_desc_next(&it, &d) > 0) {
			unsigned mps;

			if (d[1] != USB_DT_ENDPOINT || d[0] < 7 || d[2] != ep || (d[3] & 3) != 3)
				continue;
			mps = le16(&d[4]) & 0x7ff;
			if (!best || mps < best) {
				best = mps;
				if (interval)
					*interval = d[6];
			}
		}
	}
	return best;
}

const struct profile_get *profile_hid_report_rule(const struct profile *p, uint8_t iface)
{
	const struct profile_get *g = profile_find_get(p, 0x81, 0x06, 0x2200, iface);

	return g && !g->stall && g->len ? g : NULL;
}

size_t profile_hid_reports(const struct profile *p, uint8_t ep,
			   struct profile_hid_report *out)
{
	const struct profile_get *g;
	uint8_t klass = 0;
	int iface = profile_interrupt_interface(p, ep, &klass), n;

	if (iface < 0 || klass != 0x03)
		return 0;
	g = profile_hid_report_rule(p, (uint8_t)iface);
	if (!g)
		return 0;
	n = profile_hid_input_reports(g->data, g->len, out, NULL);
	if (n <= 0)
		return 0;
	return profile_hid_fitting(out, (size_t)n, profile_interrupt_maxpacket(p, ep, NULL));
}

/* ---- Checks ---------------------------------------------------------------- */

struct checker {
	const struct profile *p;
	char *err;
	size_t errsize;
};

static int cerr(struct checker *c, unsigned line, const char *stmt, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int cerr(struct checker *c, unsigned line, const char *stmt, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(c->err, c->errsize, c->p->filename, line, stmt, fmt, ap);
	va_end(ap);
	return -1;
}

/* String index @idx, named by field @what of statement @stmt, exists in
 * every language of string 0. */
static int check_string_index(struct checker *c, unsigned line, const char *stmt,
			      const char *what, uint8_t idx)
{
	const struct profile *p = c->p;

	if (idx == 0)
		return 0;
	if (!p->has_string0 || p->string0_len == 0)
		return cerr(c, line, stmt, "%s %u names a string, but there is no "
			    "'string 0' (LANGID list)", what, idx);
	for (size_t l = 0; l + 1 < p->string0_len; l += 2) {
		unsigned langid = le16(&p->string0[l]);
		bool found = false;

		for (size_t i = 0; i < p->n_strings && !found; i++)
			found = p->strings[i].langid == langid && p->strings[i].index == idx;
		if (!found)
			return cerr(c, line, stmt, "%s %u has no 'string 0x%04x %u' "
				    "(language 0x%04x of string 0)", what, idx, langid,
				    idx, langid);
	}
	return 0;
}

static int check_config(struct checker *c, size_t ci)
{
	const struct profile *p = c->p;
	const struct profile_blob *b = &p->configs[ci];
	const uint8_t *cfg = b->data;
	struct profile_desc_iter it;
	const uint8_t *d;
	uint8_t seen[256] = { 0 };
	unsigned n_if = 0;
	int rc;

	if (b->len < 9 || cfg[0] < 9)
		return cerr(c, b->line, "config", "%s, a configuration descriptor has 9",
			    b->len < 9 ? "shorter than 9 bytes" : "bLength below 9");
	if (cfg[1] != USB_DT_CONFIG)
		return cerr(c, b->line, "config", "bDescriptorType 0x%02x, a "
			    "configuration descriptor has 0x02", cfg[1]);
	if (le16(&cfg[2]) != b->len)
		return cerr(c, b->line, "config", "wTotalLength %u but the config has %zu "
			    "bytes", le16(&cfg[2]), b->len);
	for (size_t k = 0; k < ci; k++) {
		if (p->configs[k].len >= 9 && p->configs[k].data[5] == cfg[5])
			return cerr(c, b->line, "config", "bConfigurationValue %u repeated "
				    "(config on line %u)", cfg[5], p->configs[k].line);
	}
	if (check_string_index(c, b->line, "config", "iConfiguration", cfg[6]))
		return -1;
	profile_desc_iter_init(&it, cfg, b->len);
	while ((rc = profile_desc_next(&it, &d)) > 0) {
		size_t off = (size_t)(d - cfg);

		if (d[1] == USB_DT_INTERFACE) {
			if (d[0] < 9)
				return cerr(c, b->line, "config", "interface descriptor at "
					    "offset %zu has bLength %u, below 9", off, d[0]);
			if (!seen[d[2]]) {
				seen[d[2]] = 1;
				n_if++;
			}
			if (check_string_index(c, b->line, "config", "iInterface", d[8]))
				return -1;
		} else if (d[1] == USB_DT_ENDPOINT && d[0] < 7) {
			return cerr(c, b->line, "config", "endpoint descriptor at offset "
				    "%zu has bLength %u, below 7", off, d[0]);
		}
	}
	if (rc < 0) {
		d = cfg + it.off;
		if (it.len - it.off < 2)
			return cerr(c, b->line, "config", "descriptor at offset %zu runs "
				    "past the end of the config (%zu bytes)", it.off, b->len);
		if (d[0] < 2)
			return cerr(c, b->line, "config", "descriptor at offset %zu has "
				    "bLength %u, below 2", it.off, d[0]);
		return cerr(c, b->line, "config", "descriptor at offset %zu (type 0x%02x, "
			    "bLength %u) runs past the end of the config (%zu bytes)",
			    it.off, d[1], d[0], b->len);
	}
	if (cfg[4] != n_if)
		return cerr(c, b->line, "config", "bNumInterfaces %u but %u interface%s "
			    "present", cfg[4], n_if, n_if == 1 ? " is" : "s are");
	return 0;
}

static const char *const xfer_names[] = { "control", "isochronous", "bulk",
					   "interrupt" };

/* Pattern hid: the endpoint's interface is HID and its report descriptor
 * declares an input report that fits in @mps (profile_hid_reports()). */
static int check_hid(struct checker *c, const struct profile_interrupt *in, unsigned mps)
{
	struct profile_hid_report r[PROFILE_HID_MAX_REPORTS];
	const struct profile_get *g;
	uint8_t klass = 0;
	int iface = profile_interrupt_interface(c->p, in->ep, &klass), n;
	size_t bad = 0, shortest = 0, longest = 0;

	if (iface < 0)
		return cerr(c, in->line, "interrupt", "pattern hid: endpoint 0x%02x is in "
			    "no interface", in->ep);
	if (klass != 0x03)
		return cerr(c, in->line, "interrupt", "pattern hid: endpoint 0x%02x is in "
			    "interface %d, class 0x%02x, not a HID interface (class 0x03)",
			    in->ep, iface, klass);
	g = profile_hid_report_rule(c->p, (uint8_t)iface);
	if (!g)
		return cerr(c, in->line, "interrupt", "pattern hid: endpoint 0x%02x: HID "
			    "interface %d has no report descriptor (a 'get 0x81 0x06 0x2200 "
			    "%d = ...' line)", in->ep, iface, iface);
	n = profile_hid_input_reports(g->data, g->len, r, &bad);
	if (n < 0)
		return cerr(c, in->line, "interrupt", "pattern hid: endpoint 0x%02x: the "
			    "report descriptor of interface %d (line %u) is malformed at "
			    "offset %zu", in->ep, iface, g->line, bad);
	for (int k = 0; k < n; k++) {
		if (r[k].len && (!shortest || r[k].len < shortest))
			shortest = r[k].len;
		if (r[k].len > longest)
			longest = r[k].len;
	}
	if (!shortest)
		return cerr(c, in->line, "interrupt", "pattern hid: endpoint 0x%02x: the "
			    "report descriptor of interface %d (line %u) declares no input "
			    "report", in->ep, iface, g->line);
	if (profile_hid_fitting(r, (size_t)n, mps))
		return 0;
	if (shortest == mps)
		return cerr(c, in->line, "interrupt", "pattern hid: endpoint 0x%02x: the "
			    "report descriptor of interface %d (line %u) declares no input "
			    "report that fits in wMaxPacketSize %u (its %u-byte reports fill "
			    "the packet, not usbhid's %zu-byte URB)", in->ep, iface, g->line,
			    mps, mps, longest);
	return cerr(c, in->line, "interrupt", "pattern hid: endpoint 0x%02x: the "
		    "report descriptor of interface %d (line %u) declares no input "
		    "report that fits in wMaxPacketSize %u (the shortest is %zu bytes)",
		    in->ep, iface, g->line, mps, shortest);
}

static int check_interrupt(struct checker *c, const struct profile_interrupt *in)
{
	const struct profile *p = c->p;
	unsigned mps = 0xffff;
	int other = -1;
	bool found = false;

	for (size_t ci = 0; ci < p->n_configs; ci++) {
		struct profile_desc_iter it;
		const uint8_t *d;

		profile_desc_iter_init(&it, p->configs[ci].data, p->configs[ci].len);
		while (profile_desc_next(&it, &d) > 0) {
			if (d[1] != USB_DT_ENDPOINT || d[0] < 7 || d[2] != in->ep)
				continue;
			if ((d[3] & 3) != 3) {
				other = d[3] & 3;
				continue;
			}
			found = true;
			if ((le16(&d[4]) & 0x7ff) < mps)
				mps = le16(&d[4]) & 0x7ff;
		}
	}
	if (!found && other >= 0)
		return cerr(c, in->line, "interrupt", "endpoint 0x%02x is a%s %s endpoint, "
			    "not an interrupt one", in->ep, other == 1 ? "n" : "",
			    xfer_names[other]);
	if (!found)
		return cerr(c, in->line, "interrupt", "no configuration has an endpoint "
			    "0x%02x", in->ep);
	if (in->pattern == PROFILE_PATTERN_HID)
		return check_hid(c, in, mps);
	if (in->pattern != PROFILE_PATTERN_PACKETS && mps < 2)
		return cerr(c, in->line, "interrupt", "endpoint 0x%02x has wMaxPacketSize "
			    "%u: too small for a pattern (packets are 1 to "
			    "wMaxPacketSize-1 bytes)", in->ep, mps);
	for (size_t k = 0; k < in->n_packets; k++) {
		const struct profile_blob *b = &in->packets[k];

		if (b->len > mps)
			return cerr(c, b->line, "interrupt", "packet of %zu bytes: endpoint "
				    "0x%02x has wMaxPacketSize %u and a packet cannot be "
				    "longer", b->len, in->ep, mps);
	}
	return 0;
}

int profile_validate(const struct profile *p, char *err, size_t errsize)
{
	struct checker c = { p, err, errsize };
	const uint8_t *dev = p->device;

	if (err && errsize)
		err[0] = 0;
	if (!p->name[0])
		return cerr(&c, 0, "name", "missing");
	if ((unsigned)p->speed > PROFILE_SPEED_SUPER)
		return cerr(&c, p->speed_line, "speed", "not a speed");
	if (dev[0] != 18 || dev[1] != 1)
		return cerr(&c, p->device_line, "device", "bLength %u bDescriptorType "
			    "0x%02x; a device descriptor has 18 and 0x01", dev[0], dev[1]);
	if (p->n_configs == 0 || p->n_configs > PROFILE_MAX_CONFIGS)
		return cerr(&c, 0, "config", "a profile needs 1 to %d configs",
			    PROFILE_MAX_CONFIGS);
	if (dev[17] != p->n_configs)
		return cerr(&c, p->device_line, "device", "bNumConfigurations %u but the "
			    "profile has %zu config statement%s", dev[17], p->n_configs,
			    p->n_configs == 1 ? "" : "s");
	if (check_string_index(&c, p->device_line, "device", "iManufacturer", dev[14]) ||
	    check_string_index(&c, p->device_line, "device", "iProduct", dev[15]) ||
	    check_string_index(&c, p->device_line, "device", "iSerialNumber", dev[16]))
		return -1;
	if (p->has_qualifier && (p->qualifier[0] != 10 || p->qualifier[1] != USB_DT_QUALIFIER))
		return cerr(&c, p->qualifier_line, "qualifier", "bLength %u "
			    "bDescriptorType 0x%02x; a device qualifier has 10 and 0x06",
			    p->qualifier[0], p->qualifier[1]);
	for (size_t i = 0; i < p->n_configs; i++)
		if (check_config(&c, i))
			return -1;
	if (p->has_bos) {
		const struct profile_blob *b = &p->bos;

		if (b->len < 5 || b->data[0] < 5 || b->data[0] > b->len)
			return cerr(&c, b->line, "bos", "the BOS descriptor needs bLength 5 "
				    "to %zu", b->len < 5 ? (size_t)5 : b->len);
		if (b->data[1] != USB_DT_BOS)
			return cerr(&c, b->line, "bos", "bDescriptorType 0x%02x, a BOS "
				    "descriptor has 0x0f", b->data[1]);
		if (le16(&b->data[2]) != b->len)
			return cerr(&c, b->line, "bos", "wTotalLength %u but the bos has "
				    "%zu bytes", le16(&b->data[2]), b->len);
	}
	if (p->has_string0 && (p->string0_len == 0 || p->string0_len % 2 ||
			       p->string0_len > PROFILE_STRING0_MAX))
		return cerr(&c, p->string0_line, "string", "string 0 has %zu bytes",
			    p->string0_len);
	for (size_t i = 0; i < p->n_interrupts; i++)
		if (check_interrupt(&c, &p->interrupts[i]))
			return -1;
	return 0;
}

/* ---- Lookups ---------------------------------------------------------------- */

static bool match(uint8_t rt, uint8_t rr, int32_t rv, int32_t ri, uint8_t type,
		  uint8_t req, uint16_t value, uint16_t index)
{
	return rt == type && rr == req && (rv == PROFILE_ANY || rv == value) &&
	       (ri == PROFILE_ANY || ri == index);
}

const struct profile_get *profile_find_get(const struct profile *p, uint8_t type,
					   uint8_t req, uint16_t value, uint16_t index)
{
	for (size_t i = 0; i < p->n_gets; i++) {
		const struct profile_get *g = &p->gets[i];

		if (match(g->type, g->req, g->value, g->index, type, req, value, index))
			return g;
	}
	return NULL;
}

const struct profile_set *profile_find_set(const struct profile *p, uint8_t type,
					   uint8_t req, uint16_t value, uint16_t index)
{
	for (size_t i = 0; i < p->n_sets; i++) {
		const struct profile_set *s = &p->sets[i];

		if (match(s->type, s->req, s->value, s->index, type, req, value, index))
			return s;
	}
	return NULL;
}

int profile_set_store(struct profile *p, const struct profile_set *s,
		      uint16_t value, uint16_t index, const uint8_t *data, size_t len)
{
	uint8_t type = s->type | 0x80;
	size_t at = p->n_gets;
	uint8_t *copy = NULL;
	struct profile_get *g;

	if (!s->store || len > PROFILE_MAX_BLOB || (len && !data))
		return -1;
	for (size_t i = 0; i < p->n_gets; i++) {
		g = &p->gets[i];
		if (match(g->type, g->req, g->value, g->index, type, s->store_req,
			  value, index)) {
			at = i;
			break;
		}
	}
	if (len) {
		copy = malloc(len);
		if (!copy)
			return -1;
		memcpy(copy, data, len);
	}
	if (at < p->n_gets && p->gets[at].value == value && p->gets[at].index == index) {
		g = &p->gets[at];
		free(g->data);
		g->data = copy;
		g->len = len;
		g->stall = false;
		return 0;
	}
	if (p->n_gets >= PROFILE_MAX_RULES) {
		free(copy);
		return -1;
	}
	g = realloc(p->gets, (p->n_gets + 1) * sizeof(*g));
	if (!g) {
		free(copy);
		return -1;
	}
	p->gets = g;
	memmove(&g[at + 1], &g[at], (p->n_gets - at) * sizeof(*g));
	g[at] = (struct profile_get){
		.type = type, .req = s->store_req, .value = value, .index = index,
		.data = copy, .len = len, .line = s->line,
	};
	p->n_gets++;
	return 0;
}

int profile_string_descriptor(const struct profile *p, uint16_t langid, uint8_t index,
			      uint8_t *buf, size_t size)
{
	uint8_t d[2 + 2 * PROFILE_STRING_UNITS];
	size_t n = 2;

	if (index == 0) {
		if (!p->has_string0 || p->string0_len > PROFILE_STRING0_MAX)
			return -1;
		memcpy(d + 2, p->string0, p->string0_len);
		n += p->string0_len;
	} else {
		const struct profile_string *s = NULL;

		for (size_t i = 0; i < p->n_strings && !s; i++)
			if (p->strings[i].langid == langid && p->strings[i].index == index)
				s = &p->strings[i];
		if (!s)
			return -1;
		const uint8_t *u = (const uint8_t *)s->text;
		size_t len = strlen(s->text), k;
		uint32_t cp;

		/* Parsed strings fit; a longer one built in memory is cut at a
		 * whole character. */
		for (size_t i = 0; i < len; i += k) {
			k = utf8_decode(u + i, len - i, &cp);
			if (!k)
				break;
			if (cp >= 0x10000) {
				if (n + 4 > sizeof(d))
					break;
				cp -= 0x10000;
				uint32_t hi = 0xd800 | (cp >> 10), lo = 0xdc00 | (cp & 0x3ff);
				d[n++] = (uint8_t)hi;
				d[n++] = (uint8_t)(hi >> 8);
				d[n++] = (uint8_t)lo;
				d[n++] = (uint8_t)(lo >> 8);
			} else {
				if (n + 2 > sizeof(d))
					break;
				d[n++] = (uint8_t)cp;
				d[n++] = (uint8_t)(cp >> 8);
			}
		}
	}
	d[0] = (uint8_t)n;
	d[1] = 0x03;
	if (n > size)
		n = size;
	if (n)
		memcpy(buf, d, n);
	return (int)n;
}

/* ---- Equality --------------------------------------------------------------- */

static bool blob_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int profile_equal(const struct profile *a, const struct profile *b)
{
	if (strcmp(a->name, b->name) || !str_eq(a->description, b->description) ||
	    a->n_sources != b->n_sources || a->speed != b->speed ||
	    memcmp(a->device, b->device, sizeof(a->device)) ||
	    a->has_qualifier != b->has_qualifier ||
	    (a->has_qualifier && memcmp(a->qualifier, b->qualifier, sizeof(a->qualifier))) ||
	    a->n_configs != b->n_configs || a->has_bos != b->has_bos ||
	    (a->has_bos && !blob_eq(a->bos.data, a->bos.len, b->bos.data, b->bos.len)) ||
	    a->has_string0 != b->has_string0 ||
	    (a->has_string0 && !blob_eq(a->string0, a->string0_len, b->string0,
					b->string0_len)) ||
	    a->n_strings != b->n_strings || a->n_gets != b->n_gets ||
	    a->n_sets != b->n_sets || a->n_interrupts != b->n_interrupts)
		return 0;
	for (size_t i = 0; i < a->n_sources; i++)
		if (!str_eq(a->sources[i].text, b->sources[i].text))
			return 0;
	for (size_t i = 0; i < a->n_configs; i++)
		if (!blob_eq(a->configs[i].data, a->configs[i].len, b->configs[i].data,
			     b->configs[i].len))
			return 0;
	for (size_t i = 0; i < a->n_strings; i++) {
		const struct profile_string *x = &a->strings[i], *y = &b->strings[i];

		if (x->langid != y->langid || x->index != y->index || !str_eq(x->text, y->text))
			return 0;
	}
	for (size_t i = 0; i < a->n_gets; i++) {
		const struct profile_get *x = &a->gets[i], *y = &b->gets[i];

		if (x->type != y->type || x->req != y->req || x->value != y->value ||
		    x->index != y->index || x->stall != y->stall ||
		    !blob_eq(x->data, x->len, y->data, y->len))
			return 0;
	}
	for (size_t i = 0; i < a->n_sets; i++) {
		const struct profile_set *x = &a->sets[i], *y = &b->sets[i];

		if (x->type != y->type || x->req != y->req || x->value != y->value ||
		    x->index != y->index || x->store != y->store ||
		    (x->store && x->store_req != y->store_req))
			return 0;
	}
	for (size_t i = 0; i < a->n_interrupts; i++) {
		const struct profile_interrupt *x = &a->interrupts[i], *y = &b->interrupts[i];

		if (x->ep != y->ep || x->pattern != y->pattern || x->n_packets != y->n_packets)
			return 0;
		for (size_t k = 0; k < x->n_packets; k++)
			if (!blob_eq(x->packets[k].data, x->packets[k].len,
				     y->packets[k].data, y->packets[k].len))
				return 0;
	}
	return 1;
}

/* ---- Writer ------------------------------------------------------------------ */

static void write_bytes(FILE *f, const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		fprintf(f, "%s%02x", i == 0 ? " " : i % 16 ? " " : "\n\t", b[i]);
	fputc('\n', f);
}

static void write_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
		if (*u == '"' || *u == '\\')
			fprintf(f, "\\%c", *u);
		else if (*u < 0x20 || *u == 0x7f)
			fprintf(f, "\\x%02x", *u);
		else
			fputc(*u, f);
	}
	fputc('"', f);
}

static void write_num(FILE *f, int32_t v)
{
	if (v == PROFILE_ANY)
		fputs(" *", f);
	else
		fprintf(f, " 0x%04x", (unsigned)v & 0xffff);
}

static const char *class_name(uint8_t c)
{
	switch (c) {
	case 0x00: return "per interface";
	case 0x01: return "audio";
	case 0x02: return "CDC";
	case 0x03: return "HID";
	case 0x05: return "physical";
	case 0x06: return "still image";
	case 0x07: return "printer";
	case 0x08: return "mass storage";
	case 0x09: return "hub";
	case 0x0a: return "CDC data";
	case 0x0b: return "smart card";
	case 0x0d: return "content security";
	case 0x0e: return "video";
	case 0x0f: return "personal healthcare";
	case 0x10: return "audio/video";
	case 0x11: return "billboard";
	case 0xdc: return "diagnostic";
	case 0xe0: return "wireless controller";
	case 0xef: return "miscellaneous";
	case 0xfe: return "application specific";
	case 0xff: return "vendor specific";
	}
	return NULL;
}

static void write_class(FILE *f, uint8_t cls, uint8_t sub, uint8_t proto)
{
	const char *n = class_name(cls);

	fprintf(f, "class 0x%02x", cls);
	if (n)
		fprintf(f, " (%s)", n);
	fprintf(f, " subclass 0x%02x protocol 0x%02x", sub, proto);
}

/* Names of class-specific interface descriptors of the classes met most. */
static const char *cs_name(uint8_t cls, uint8_t sub, uint8_t subtype)
{
	static const char *const vc[] = { NULL, "VC header", "VC input terminal",
		"VC output terminal", "VC selector unit", "VC processing unit",
		"VC extension unit", "VC encoding unit" };
	static const char *const vs[] = { NULL, "VS input header", "VS output header",
		"VS still image frame", "VS uncompressed format",
		"VS uncompressed frame", "VS MJPEG format", "VS MJPEG frame", NULL,
		NULL, "VS MPEG-2 TS format", NULL, "VS DV format",
		"VS color matching", NULL, NULL, "VS frame-based format",
		"VS frame-based frame", "VS stream-based format" };
	static const char *const cdc[] = { "CDC header", "CDC call management",
		"CDC ACM", NULL, NULL, NULL, "CDC union" };

	if (cls == 0x0e && sub == 0x01 && subtype < sizeof(vc) / sizeof(vc[0]))
		return vc[subtype];
	if (cls == 0x0e && sub == 0x02 && subtype < sizeof(vs) / sizeof(vs[0]))
		return vs[subtype];
	if (cls == 0x02 && subtype < sizeof(cdc) / sizeof(cdc[0]))
		return cdc[subtype];
	if (cls == 0x02 && subtype == 0x0f)
		return "CDC ethernet networking";
	if (cls == 0x02 && subtype == 0x1a)
		return "CDC NCM";
	return NULL;
}

static void comment_config(FILE *f, const struct profile *p, const struct profile_blob *b)
{
	struct profile_desc_iter it;
	const uint8_t *d;
	uint8_t cls = 0, sub = 0;
	int rc;

	profile_desc_iter_init(&it, b->data, b->len);
	while ((rc = profile_desc_next(&it, &d)) > 0) {
		switch (d[1]) {
		case USB_DT_CONFIG:
			if (d[0] < 9)
				break;
			fprintf(f, "# configuration %u: %u interface%s, bmAttributes 0x%02x, "
				"bMaxPower %u mA, wTotalLength %u", d[5], d[4],
				d[4] == 1 ? "" : "s", d[7],
				d[8] * (p->speed == PROFILE_SPEED_SUPER ? 8u : 2u),
				le16(&d[2]));
			if (d[6])
				fprintf(f, ", iConfiguration %u", d[6]);
			fputc('\n', f);
			continue;
		case USB_DT_IAD:
			if (d[0] < 8)
				break;
			fprintf(f, "# interface association: interfaces %u-%u, ", d[2],
				d[2] + (d[3] ? d[3] - 1 : 0));
			write_class(f, d[4], d[5], d[6]);
			fputc('\n', f);
			continue;
		case USB_DT_INTERFACE:
			if (d[0] < 9)
				break;
			cls = d[5];
			sub = d[6];
			fprintf(f, "# interface %u alt %u: ", d[2], d[3]);
			write_class(f, d[5], d[6], d[7]);
			fprintf(f, ", %u endpoint%s", d[4], d[4] == 1 ? "" : "s");
			if (d[8])
				fprintf(f, ", iInterface %u", d[8]);
			fputc('\n', f);
			continue;
		case USB_DT_ENDPOINT: {
			unsigned mps;

			if (d[0] < 7)
				break;
			mps = le16(&d[4]);
			fprintf(f, "# endpoint 0x%02x %s %s, wMaxPacketSize %u", d[2],
				xfer_names[d[3] & 3], d[2] & 0x80 ? "IN" : "OUT",
				mps & 0x7ff);
			if (mps >> 11 & 3)
				fprintf(f, " x%u", (mps >> 11 & 3) + 1);
			fprintf(f, ", bInterval %u\n", d[6]);
			continue;
		}
		case USB_DT_CS_INTERFACE: {
			const char *n = d[0] >= 3 ? cs_name(cls, sub, d[2]) : NULL;

			if (n && d[0] >= 4 && cls == 0x0e && sub == 0x01 && d[2] >= 2)
				fprintf(f, "#   %s %u, %u bytes\n", n, d[3], d[0]);
			else if (n)
				fprintf(f, "#   %s, %u bytes\n", n, d[0]);
			else if (d[0] >= 3)
				fprintf(f, "#   class-specific interface descriptor, subtype "
					"0x%02x, %u bytes\n", d[2], d[0]);
			else
				break;
			continue;
		}
		case USB_DT_CS_ENDPOINT:
			if (d[0] < 3)
				break;
			fprintf(f, "#   class-specific endpoint descriptor, subtype 0x%02x, "
				"%u bytes\n", d[2], d[0]);
			continue;
		case USB_DT_HID:
			fprintf(f, "#   HID descriptor, %u bytes\n", d[0]);
			continue;
		}
		fprintf(f, "# descriptor type 0x%02x, %u bytes\n", d[1], d[0]);
	}
	if (rc < 0)
		fprintf(f, "# (malformed: the descriptor at offset %zu runs past the end or "
			"has bLength below 2)\n", it.off);
}

static void comment_bos(FILE *f, const struct profile_blob *b)
{
	struct profile_desc_iter it;
	const uint8_t *d;
	int rc;

	profile_desc_iter_init(&it, b->data, b->len);
	while ((rc = profile_desc_next(&it, &d)) > 0) {
		if (d[1] == USB_DT_BOS && d[0] >= 5)
			fprintf(f, "# BOS: %u capabilit%s, wTotalLength %u\n", d[4],
				d[4] == 1 ? "y" : "ies", le16(&d[2]));
		else if (d[1] == USB_DT_DEVICE_CAP && d[0] >= 3)
			fprintf(f, "#   device capability 0x%02x%s, %u bytes\n", d[2],
				d[2] == 0x02 ? " (USB 2.0 extension)" :
				d[2] == 0x03 ? " (SuperSpeed)" :
				d[2] == 0x05 ? " (platform)" : "", d[0]);
		else
			fprintf(f, "# descriptor type 0x%02x, %u bytes\n", d[1], d[0]);
	}
	if (rc < 0)
		fprintf(f, "# (malformed at offset %zu)\n", it.off);
}

static void write_bcd(FILE *f, unsigned v)
{
	fprintf(f, "%x.%02x", v >> 8, v & 0xff);
}

int profile_write(FILE *f, const struct profile *p)
{
	const uint8_t *d = p->device;

	fprintf(f, HEADER_KEYWORD " %d\n", PROFILE_VERSION);
	fprintf(f, "name %s\n", p->name);
	if (p->description) {
		fputs("description ", f);
		write_quoted(f, p->description);
		fputc('\n', f);
	}
	for (size_t i = 0; i < p->n_sources; i++) {
		fputs("source ", f);
		write_quoted(f, p->sources[i].text);
		fputc('\n', f);
	}
	fprintf(f, "speed %s\n", profile_speed_name(p->speed));

	fputs("\n# device: USB ", f);
	write_bcd(f, le16(&d[2]));
	fputs(", ", f);
	write_class(f, d[4], d[5], d[6]);
	fprintf(f, ", ep0 %u bytes, %04x:%04x bcdDevice ", d[7], le16(&d[8]),
		le16(&d[10]));
	write_bcd(f, le16(&d[12]));
	fprintf(f, ", strings %u/%u/%u, %u configuration%s\n", d[14], d[15], d[16],
		d[17], d[17] == 1 ? "" : "s");
	fputs("device", f);
	write_bytes(f, p->device, sizeof(p->device));
	if (p->has_qualifier) {
		fputs("qualifier", f);
		write_bytes(f, p->qualifier, sizeof(p->qualifier));
	}
	for (size_t i = 0; i < p->n_configs; i++) {
		fputc('\n', f);
		comment_config(f, p, &p->configs[i]);
		fputs("config", f);
		write_bytes(f, p->configs[i].data, p->configs[i].len);
	}
	if (p->has_bos) {
		fputc('\n', f);
		comment_bos(f, &p->bos);
		fputs("bos", f);
		write_bytes(f, p->bos.data, p->bos.len);
	}
	if (p->has_string0 || p->n_strings)
		fputc('\n', f);
	if (p->has_string0) {
		fputs("string 0", f);
		write_bytes(f, p->string0, p->string0_len);
	}
	for (size_t i = 0; i < p->n_strings; i++) {
		fprintf(f, "string 0x%04x %u ", p->strings[i].langid, p->strings[i].index);
		write_quoted(f, p->strings[i].text);
		fputc('\n', f);
	}
	if (p->n_gets || p->n_sets)
		fputc('\n', f);
	for (size_t i = 0; i < p->n_gets; i++) {
		const struct profile_get *g = &p->gets[i];

		fprintf(f, "get 0x%02x 0x%02x", g->type, g->req);
		write_num(f, g->value);
		write_num(f, g->index);
		if (g->stall) {
			fputs(" stall\n", f);
		} else {
			fputs(" =", f);
			write_bytes(f, g->data, g->len);
		}
	}
	for (size_t i = 0; i < p->n_sets; i++) {
		const struct profile_set *s = &p->sets[i];

		fprintf(f, "set 0x%02x 0x%02x", s->type, s->req);
		write_num(f, s->value);
		write_num(f, s->index);
		if (s->store)
			fprintf(f, " store 0x%02x\n", s->store_req);
		else
			fputs(" ack\n", f);
	}
	if (p->n_interrupts)
		fputc('\n', f);
	for (size_t i = 0; i < p->n_interrupts; i++) {
		const struct profile_interrupt *in = &p->interrupts[i];

		if (in->pattern != PROFILE_PATTERN_PACKETS) {
			fprintf(f, "interrupt 0x%02x pattern %s\n", in->ep,
				profile_pattern_name(in->pattern));
			continue;
		}
		for (size_t k = 0; k < in->n_packets; k++) {
			fprintf(f, "interrupt 0x%02x packet", in->ep);
			write_bytes(f, in->packets[k].data, in->packets[k].len);
		}
	}
	return ferror(f) ? -1 : 0;
}
