// SPDX-License-Identifier: GPL-2.0-only
/*
 * A small strict JSON validator (test-only), to check what the writer and
 * the binary produce.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tests.h"

struct jp {
	const char *s;
	size_t i;
	int depth;
};

static void jp_ws(struct jp *p)
{
	while (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
	       p->s[p->i] == '\r')
		p->i++;
}

static bool jp_value(struct jp *p);

static bool jp_string(struct jp *p)
{
	if (p->s[p->i] != '"')
		return false;
	p->i++;
	for (;;) {
		unsigned char c = (unsigned char)p->s[p->i];

		if (c == '\0' || c < 0x20)
			return false;
		if (c == '"') {
			p->i++;
			return true;
		}
		if (c == '\\') {
			char e = p->s[p->i + 1];

			if (e == 'u') {
				int k;

				for (k = 2; k < 6; k++)
					if (!isxdigit((unsigned char)p->s[p->i + k]))
						return false;
				p->i += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", e) || e == '\0')
				return false;
			p->i += 2;
			continue;
		}
		p->i++;
	}
}

static bool jp_number(struct jp *p)
{
	size_t start = p->i;

	if (p->s[p->i] == '-')
		p->i++;
	if (p->s[p->i] == '0') {
		p->i++;
	} else if (p->s[p->i] >= '1' && p->s[p->i] <= '9') {
		while (isdigit((unsigned char)p->s[p->i]))
			p->i++;
	} else {
		return false;
	}
	if (p->s[p->i] == '.') {
		p->i++;
		if (!isdigit((unsigned char)p->s[p->i]))
			return false;
		while (isdigit((unsigned char)p->s[p->i]))
			p->i++;
	}
	if (p->s[p->i] == 'e' || p->s[p->i] == 'E') {
		p->i++;
		if (p->s[p->i] == '+' || p->s[p->i] == '-')
			p->i++;
		if (!isdigit((unsigned char)p->s[p->i]))
			return false;
		while (isdigit((unsigned char)p->s[p->i]))
			p->i++;
	}
	return p->i > start;
}

static bool jp_container(struct jp *p, char open, char close)
{
	bool first = true;

	if (p->s[p->i] != open || ++p->depth > 64)
		return false;
	p->i++;
	jp_ws(p);
	if (p->s[p->i] == close) {
		p->i++;
		p->depth--;
		return true;
	}
	for (;;) {
		if (!first) {
			jp_ws(p);
			if (p->s[p->i] == close) {
				p->i++;
				p->depth--;
				return true;
			}
			if (p->s[p->i] != ',')
				return false;
			p->i++;
		}
		first = false;
		jp_ws(p);
		if (open == '{') {
			if (!jp_string(p))
				return false;
			jp_ws(p);
			if (p->s[p->i] != ':')
				return false;
			p->i++;
			jp_ws(p);
		}
		if (!jp_value(p))
			return false;
	}
}

static bool jp_value(struct jp *p)
{
	const char *s = p->s + p->i;

	switch (*s) {
	case '{':
		return jp_container(p, '{', '}');
	case '[':
		return jp_container(p, '[', ']');
	case '"':
		return jp_string(p);
	case 't':
		if (strncmp(s, "true", 4))
			return false;
		p->i += 4;
		return true;
	case 'f':
		if (strncmp(s, "false", 5))
			return false;
		p->i += 5;
		return true;
	case 'n':
		if (strncmp(s, "null", 4))
			return false;
		p->i += 4;
		return true;
	default:
		return jp_number(p);
	}
}

bool json_valid(const char *s)
{
	struct jp p = { s, 0, 0 };

	jp_ws(&p);
	if (!jp_value(&p))
		return false;
	jp_ws(&p);
	return s[p.i] == '\0';
}

/* The raw text of the value of the first "key": in s (test-only). */
bool json_field(const char *s, const char *key, char *out, size_t len)
{
	char pat[64];
	const char *v;
	struct jp p;
	size_t n;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	v = strstr(s, pat);
	if (!v)
		return false;
	v += strlen(pat);
	p.s = v;
	p.i = 0;
	p.depth = 0;
	if (!jp_value(&p))
		return false;
	n = p.i < len - 1 ? p.i : len - 1;
	memcpy(out, v, n);
	out[n] = '\0';
	return true;
}
