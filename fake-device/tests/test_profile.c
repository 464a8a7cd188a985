// SPDX-License-Identifier: MIT
/* Profiles (profiles/FORMAT.md): parsing, the load-time checks, the
 * canonical writer's round trip, the lookups, and the built-in camera
 * expressed as a profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "desc.h"
#include "profile.h"
#include "tests.h"

#define FILE_NAME "t.profile"

/* A full-speed HID mouse with one config, two languages' worth of
 * statements and every kind of rule. */
static const char mouse[] =
	"# a comment before the header\n"
	"dmaharness-usb-profile 1\n"
	"name test-mouse\n"
	"description \"A \\\"mouse\\\" \\\\ with # and \\xc3\\xa9\"  # comment\n"
	"source \"hand-written\"\n"
	"source \"second\"\n"
	"speed full\n"
	"device 12 01 00 02 00 00 00 40 34 12 78 56 00 01 01 02\n"
	"\t00 01\t\t# continuation\n"
	"\n"
	"config 09 02 22 00 01 01 00 a0 32\n"
	"\t09 04 00 00 01 03 01 02 00\n"
	"# a comment line inside a statement does not end it\n"
	"\t09 21 11 01 00 01 22 3e 00   # HID\n"
	"  07 05 81 03 08 00 0a\n"
	"string 0 09 04\n"
	"string 0x0409 1 \"Acme\"\n"
	"string 1033 2 \"M\xc3\xa4uschen\"\n"
	"get 0x81 0x06 0x2200 0 = 05 01 09 02\n"
	"get 0xa1 0x01 * 0x0000 = 00 00 00\n"
	"get 0xa1 0x01 * * stall\n"
	"get 0xc0 0x01 0x0000 0x0000 =\n"
	"set 0x21 0x0a * * ack\n"
	"set 0x21 0x09 0x0200 * store 0x01\n"
	"interrupt 0x81 packet 01 02 03\n"
	"interrupt 0x81 packet 00 00 00 00 00 00 00\n";

static void parse_ok(const char *text, size_t len, struct profile *p)
{
	char err[256];

	if (profile_parse(text, len, FILE_NAME, p, err, sizeof(err)))
		fail_msg("parse: %s", err);
	if (profile_validate(p, err, sizeof(err))) {
		profile_free(p);
		fail_msg("validate: %s", err);
	}
}

static void parse_str(const char *text, struct profile *p)
{
	parse_ok(text, strlen(text), p);
}

/* Line number of the first line starting with @prefix. */
static unsigned line_of(const char *text, const char *prefix)
{
	unsigned line = 1;

	for (const char *s = text; *s; line++) {
		const char *nl = strchr(s, '\n');

		if (!strncmp(s, prefix, strlen(prefix)))
			return line;
		if (!nl)
			break;
		s = nl + 1;
	}
	fail_msg("no line starts with '%s'", prefix);
	return 0;
}

/* @text with the first occurrence of @from replaced by @to (in one of four
 * static buffers, so that edits can be nested). */
static const char *edit(const char *text, const char *from, const char *to)
{
	static char bufs[4][8192];
	static unsigned next;
	char *buf = bufs[next++ % 4];
	const char *at = strstr(text, from);

	assert_non_null(at);
	assert_true(strlen(text) - strlen(from) + strlen(to) < sizeof(bufs[0]));
	snprintf(buf, sizeof(bufs[0]), "%.*s%s%s", (int)(at - text), text, to,
		 at + strlen(from));
	return buf;
}

static void expect_err(const char *text, size_t len, bool parse_fails, const char *want)
{
	struct profile p;
	char err[256];
	int rc = profile_parse(text, len, FILE_NAME, &p, err, sizeof(err));

	if (parse_fails) {
		assert_int_equal(rc, -1);
		assert_null(p.gets);            /* nothing left to free */
	} else {
		if (rc)
			fail_msg("parse: %s", err);
		rc = profile_validate(&p, err, sizeof(err));
		profile_free(&p);
		assert_int_equal(rc, -1);
	}
	if (strcmp(err, want) != 0 && !strstr(err, want))
		fail_msg("error '%s' does not contain '%s'", err, want);
}

static void parse_err(const char *text, const char *want)
{
	expect_err(text, strlen(text), true, want);
}

static void check_err(const char *text, const char *want)
{
	expect_err(text, strlen(text), false, want);
}

static void test_parse_fields(void **state)
{
	static const uint8_t device[18] = {
		0x12, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x40, 0x34, 0x12, 0x78, 0x56,
		0x00, 0x01, 0x01, 0x02, 0x00, 0x01,
	};
	static const uint8_t config[34] = {
		0x09, 0x02, 0x22, 0x00, 0x01, 0x01, 0x00, 0xa0, 0x32,
		0x09, 0x04, 0x00, 0x00, 0x01, 0x03, 0x01, 0x02, 0x00,
		0x09, 0x21, 0x11, 0x01, 0x00, 0x01, 0x22, 0x3e, 0x00,
		0x07, 0x05, 0x81, 0x03, 0x08, 0x00, 0x0a,
	};
	struct profile p;

	(void)state;
	parse_str(mouse, &p);
	assert_string_equal(p.filename, FILE_NAME);
	assert_int_equal(p.header_line, 2);
	assert_string_equal(p.name, "test-mouse");
	assert_int_equal(p.name_line, 3);
	assert_string_equal(p.description, "A \"mouse\" \\ with # and \xc3\xa9");
	assert_int_equal(p.n_sources, 2);
	assert_string_equal(p.sources[0].text, "hand-written");
	assert_string_equal(p.sources[1].text, "second");
	assert_int_equal(p.speed, PROFILE_SPEED_FULL);
	assert_memory_equal(p.device, device, 18);
	assert_int_equal(p.device_line, 8);
	assert_false(p.has_qualifier);
	assert_int_equal(p.n_configs, 1);
	assert_int_equal(p.configs[0].len, sizeof(config));
	assert_memory_equal(p.configs[0].data, config, sizeof(config));
	assert_int_equal(p.configs[0].line, 11);
	assert_false(p.has_bos);
	assert_true(p.has_string0);
	assert_int_equal(p.string0_len, 2);
	assert_int_equal(p.string0[0], 0x09);
	assert_int_equal(p.string0[1], 0x04);
	assert_int_equal(p.n_strings, 2);
	assert_int_equal(p.strings[0].langid, 0x0409);
	assert_int_equal(p.strings[0].index, 1);
	assert_string_equal(p.strings[0].text, "Acme");
	assert_int_equal(p.strings[1].langid, 0x0409);
	assert_int_equal(p.strings[1].index, 2);
	assert_string_equal(p.strings[1].text, "M\xc3\xa4uschen");

	assert_int_equal(p.n_gets, 4);
	assert_int_equal(p.gets[0].type, 0x81);
	assert_int_equal(p.gets[0].req, 0x06);
	assert_int_equal(p.gets[0].value, 0x2200);
	assert_int_equal(p.gets[0].index, 0);
	assert_false(p.gets[0].stall);
	assert_int_equal(p.gets[0].len, 4);
	assert_memory_equal(p.gets[0].data, "\x05\x01\x09\x02", 4);
	assert_int_equal(p.gets[1].value, PROFILE_ANY);
	assert_int_equal(p.gets[1].index, 0);
	assert_int_equal(p.gets[1].len, 3);
	assert_true(p.gets[2].stall);
	assert_int_equal(p.gets[2].value, PROFILE_ANY);
	assert_int_equal(p.gets[2].index, PROFILE_ANY);
	assert_int_equal(p.gets[3].type, 0xc0);
	assert_false(p.gets[3].stall);
	assert_int_equal(p.gets[3].len, 0);
	assert_int_equal(p.gets[3].line, line_of(mouse, "get 0xc0"));

	assert_int_equal(p.n_sets, 2);
	assert_int_equal(p.sets[0].type, 0x21);
	assert_int_equal(p.sets[0].req, 0x0a);
	assert_false(p.sets[0].store);
	assert_int_equal(p.sets[1].req, 0x09);
	assert_int_equal(p.sets[1].value, 0x0200);
	assert_int_equal(p.sets[1].index, PROFILE_ANY);
	assert_true(p.sets[1].store);
	assert_int_equal(p.sets[1].store_req, 0x01);

	assert_int_equal(p.n_interrupts, 1);
	assert_int_equal(p.interrupts[0].ep, 0x81);
	assert_int_equal(p.interrupts[0].pattern, PROFILE_PATTERN_PACKETS);
	assert_int_equal(p.interrupts[0].n_packets, 2);
	assert_int_equal(p.interrupts[0].packets[0].len, 3);
	assert_memory_equal(p.interrupts[0].packets[0].data, "\x01\x02\x03", 3);
	assert_int_equal(p.interrupts[0].packets[1].len, 7);
	assert_int_equal(p.interrupts[0].packets[1].line,
			 line_of(mouse, "interrupt 0x81 packet 00"));
	profile_free(&p);
}

static void assert_same_profile(const struct profile *a, const struct profile *b)
{
	assert_string_equal(a->name, b->name);
	if (a->description)
		assert_string_equal(a->description, b->description);
	else
		assert_null(b->description);
	assert_int_equal(a->n_sources, b->n_sources);
	for (size_t i = 0; i < a->n_sources; i++)
		assert_string_equal(a->sources[i].text, b->sources[i].text);
	assert_int_equal(a->speed, b->speed);
	assert_memory_equal(a->device, b->device, 18);
	assert_int_equal(a->has_qualifier, b->has_qualifier);
	if (a->has_qualifier)
		assert_memory_equal(a->qualifier, b->qualifier, 10);
	assert_int_equal(a->n_configs, b->n_configs);
	for (size_t i = 0; i < a->n_configs; i++) {
		assert_int_equal(a->configs[i].len, b->configs[i].len);
		assert_memory_equal(a->configs[i].data, b->configs[i].data, a->configs[i].len);
	}
	assert_int_equal(a->has_bos, b->has_bos);
	if (a->has_bos) {
		assert_int_equal(a->bos.len, b->bos.len);
		assert_memory_equal(a->bos.data, b->bos.data, a->bos.len);
	}
	assert_int_equal(a->has_string0, b->has_string0);
	assert_int_equal(a->string0_len, b->string0_len);
	if (a->string0_len)
		assert_memory_equal(a->string0, b->string0, a->string0_len);
	assert_int_equal(a->n_strings, b->n_strings);
	for (size_t i = 0; i < a->n_strings; i++) {
		assert_int_equal(a->strings[i].langid, b->strings[i].langid);
		assert_int_equal(a->strings[i].index, b->strings[i].index);
		assert_string_equal(a->strings[i].text, b->strings[i].text);
	}
	assert_int_equal(a->n_gets, b->n_gets);
	for (size_t i = 0; i < a->n_gets; i++) {
		const struct profile_get *x = &a->gets[i], *y = &b->gets[i];

		assert_int_equal(x->type, y->type);
		assert_int_equal(x->req, y->req);
		assert_int_equal(x->value, y->value);
		assert_int_equal(x->index, y->index);
		assert_int_equal(x->stall, y->stall);
		assert_int_equal(x->len, y->len);
		if (x->len)
			assert_memory_equal(x->data, y->data, x->len);
	}
	assert_int_equal(a->n_sets, b->n_sets);
	for (size_t i = 0; i < a->n_sets; i++) {
		const struct profile_set *x = &a->sets[i], *y = &b->sets[i];

		assert_int_equal(x->type, y->type);
		assert_int_equal(x->req, y->req);
		assert_int_equal(x->value, y->value);
		assert_int_equal(x->index, y->index);
		assert_int_equal(x->store, y->store);
		assert_int_equal(x->store_req, y->store_req);
	}
	assert_int_equal(a->n_interrupts, b->n_interrupts);
	for (size_t i = 0; i < a->n_interrupts; i++) {
		const struct profile_interrupt *x = &a->interrupts[i], *y = &b->interrupts[i];

		assert_int_equal(x->ep, y->ep);
		assert_int_equal(x->pattern, y->pattern);
		assert_int_equal(x->n_packets, y->n_packets);
		for (size_t k = 0; k < x->n_packets; k++) {
			assert_int_equal(x->packets[k].len, y->packets[k].len);
			assert_memory_equal(x->packets[k].data, y->packets[k].data,
					    x->packets[k].len);
		}
	}
	assert_true(profile_equal(a, b));
}

/* The canonical text of @p (malloc'd). */
static char *write_text(const struct profile *p, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	assert_int_equal(profile_write(f, p), 0);
	assert_int_equal(fclose(f), 0);
	if (len)
		*len = n;
	return buf;
}

static void test_roundtrip(void **state)
{
	struct profile a, b, c;
	size_t n1, n2;
	char *t1, *t2;

	(void)state;
	parse_str(mouse, &a);
	t1 = write_text(&a, &n1);
	parse_ok(t1, n1, &b);
	assert_same_profile(&a, &b);
	t2 = write_text(&b, &n2);
	assert_string_equal(t1, t2);            /* the text is a fixed point */

	/* Canonical form: order of FORMAT.md, hex bytes 16 a line. */
	static const char head[] = "dmaharness-usb-profile 1\nname test-mouse\n"
		"description \"A \\\"mouse\\\" \\\\ with # and \xc3\xa9\"\n"
		"source \"hand-written\"\nsource \"second\"\nspeed full\n";
	assert_true(strncmp(t1, head, strlen(head)) == 0);
	assert_non_null(strstr(t1, "\ndevice 12 01 00 02 00 00 00 40 34 12 78 56 00 01 01 02"
			       "\n\t00 01\n"));
	assert_non_null(strstr(t1, "\nconfig 09 02 22 00 01 01 00 a0 32 09 04 00 00 01 03 01"
			       "\n\t02 00 09 21 11 01 00 01 22 3e 00 07 05 81 03 08\n\t00 0a\n"));
	assert_non_null(strstr(t1, "\nstring 0 09 04\nstring 0x0409 1 \"Acme\"\n"
			       "string 0x0409 2 \"M\xc3\xa4uschen\"\n"));
	assert_non_null(strstr(t1, "\nget 0x81 0x06 0x2200 0x0000 = 05 01 09 02\n"
			       "get 0xa1 0x01 * 0x0000 = 00 00 00\n"
			       "get 0xa1 0x01 * * stall\n"
			       "get 0xc0 0x01 0x0000 0x0000 =\n"
			       "set 0x21 0x0a * * ack\n"
			       "set 0x21 0x09 0x0200 * store 0x01\n"));
	assert_non_null(strstr(t1, "\ninterrupt 0x81 packet 01 02 03\n"
			       "interrupt 0x81 packet 00 00 00 00 00 00 00\n"));
	/* Comments for people, before the config. */
	assert_non_null(strstr(t1, "# configuration 1: 1 interface, bmAttributes 0xa0, "
			       "bMaxPower 100 mA, wTotalLength 34\n"));
	assert_non_null(strstr(t1, "# interface 0 alt 0: class 0x03 (HID) subclass 0x01 "
			       "protocol 0x02, 1 endpoint\n"));
	assert_non_null(strstr(t1, "# endpoint 0x81 interrupt IN, wMaxPacketSize 8, "
			       "bInterval 10\n"));
	assert_true(strstr(t1, "# endpoint 0x81") < strstr(t1, "\nconfig "));

	/* profile_equal sees a change in any field. */
	parse_str(mouse, &c);
	assert_true(profile_equal(&a, &c));
	c.gets[1].data[2] ^= 1;
	assert_false(profile_equal(&a, &c));
	c.gets[1].data[2] ^= 1;
	c.sets[1].store_req++;
	assert_false(profile_equal(&a, &c));
	c.sets[1].store_req--;
	c.interrupts[0].packets[1].data[6] = 1;
	assert_false(profile_equal(&a, &c));

	free(t1);
	free(t2);
	profile_free(&a);
	profile_free(&b);
	profile_free(&c);
}

static void test_lexical(void **state)
{
	struct profile p, q;
	char *t;
	size_t n;

	(void)state;
	/* CRLF line ends, a comment-only continuation line, tabs between
	 * fields, decimal and hex numbers, control bytes in a string. */
	char *crlf = malloc(2 * sizeof(mouse));

	assert_non_null(crlf);
	n = 0;
	for (const char *c = mouse; *c; c++) {
		if (*c == '\n')
			crlf[n++] = '\r';
		crlf[n++] = *c;
	}
	parse_ok(crlf, n, &p);
	assert_string_equal(p.strings[0].text, "Acme");
	assert_int_equal(p.configs[0].len, 34);
	profile_free(&p);
	free(crlf);
	parse_str(edit(mouse, "source \"second\"\n",
		       "source \"tab\\x09 nl\\x0a quote\\\" back\\\\ \\x7f\"\n"
		       "\t# only a comment\n"), &p);
	assert_string_equal(p.sources[1].text, "tab\t nl\n quote\" back\\ \x7f");
	t = write_text(&p, &n);
	assert_non_null(strstr(t, "source \"tab\\x09 nl\\x0a quote\\\" back\\\\ \\x7f\"\n"));
	parse_ok(t, n, &q);
	assert_string_equal(q.sources[1].text, p.sources[1].text);
	free(t);
	profile_free(&p);
	profile_free(&q);

	/* Upper-case hex digits are read; 0x is lower case. */
	parse_str(edit(mouse, "get 0xa1 0x01 * * stall", "get 0xA1\t1  *\t* stall"), &p);
	assert_int_equal(p.gets[2].type, 0xa1);
	assert_int_equal(p.gets[2].req, 1);
	profile_free(&p);
	parse_str(edit(mouse, "09 04\n", "09\n\t04\n"), &p);     /* string 0 continued */
	assert_int_equal(p.string0_len, 2);
	profile_free(&p);

	/* A missing final newline is fine. */
	parse_ok(mouse, strlen(mouse) - 1, &p);
	assert_int_equal(p.interrupts[0].n_packets, 2);
	profile_free(&p);
}

static void test_parse_errors(void **state)
{
	static const char pre[] = "dmaharness-usb-profile 1\nname t\nspeed full\n";
	char buf[512], *big;

	(void)state;
#define E(body, want) do { \
		snprintf(buf, sizeof(buf), "%s%s", pre, body); \
		parse_err(buf, want); \
	} while (0)
	E("frob 1\n", "t.profile:4: frob: unknown statement");
	E("\nGet 0xa1 1 2 3 stall\n", "t.profile:5: Get: unknown statement");
	E("device 12 01 zz\n", "t.profile:4: device: 'zz' is not a byte");
	E("config 09 02\n\n\t012\n", "t.profile:6: config: '012' is not a byte");
	E("get 0xa1 0x81 0x12345 0 = 00\n",
	  "t.profile:4: get: wValue 0x12345 is larger than 0xffff");
	E("get 0x1a1 0x81 0 0 = 00\n", "t.profile:4: get: bmRequestType 0x1a1 is larger");
	E("get 0xa1 0x81 0 99999999999999999999 = 00\n", ":4: get: wIndex 9999");
	E("get 0xa1 0x81 0 0x = 00\n", ":4: get: wIndex '0x' is not a number");
	E("get 0xa1 0x81 0 -1 = 00\n", ":4: get: wIndex '-1' is not a number");
	E("get 0x21 0x81 0 0 = 00\n", ":4: get: bmRequestType 0x21 is an OUT request");
	E("set 0xa1 0x01 0 0 ack\n", ":4: set: bmRequestType 0xa1 is an IN request");
	E("string 0x0409 256 \"x\"\n", ":4: string: INDEX 256 is larger than 0xff");
	E("string 0x0409 0 \"x\"\n", ":4: string: index 0 is the LANGID list");
	E("string 0 09 04 09\n", ":4: string: 3 bytes");
	E("string 7 09 04\n", ":4: string: expected string 0");
	E("string 0x0409 1 \"a\"\nstring 1033 1 \"b\"\n",
	  ":5: string: language 0x0409 index 1 repeated (first on line 4)");
	E("interrupt 0x03 pattern random\n", ":4: interrupt: 0x03 is not the address of an IN");
	E("interrupt 0x81 pattern loud\n", ":4: interrupt: unknown pattern 'loud'");
	E("interrupt 0x81 packet 01\ninterrupt 0x81 pattern zero\n",
	  ":5: interrupt: endpoint 0x81 already has packets (line 4)");
	E("interrupt 0x81 pattern zero\ninterrupt 0x81 packet 01\n",
	  ":5: interrupt: endpoint 0x81 already has a pattern (line 4)");
	E("interrupt 0x81 packet\n", ":4: interrupt: missing field");

	/* Field counts. */
	E("description\n", ":4: description: missing field");
	E("description \"a\" \"b\"\n", ":4: description: extra field '\"b\"'");
	E("set 0x21 0x01 * * ack extra\n", ":4: set: extra field 'extra'");
	E("set 0x21 0x01 * * store\n", ":4: set: missing field");
	E("set 0x21 0x01 * *\n", ":4: set: missing field");
	E("get 0xa1 0x01 * * stall 00\n", ":4: get: extra field '00'");
	E("get 0xa1 0x01 * * 00\n", ":4: get: expected '=' or 'stall', not '00'");
	E("device 12 01\n", ":4: device: 2 bytes, a device descriptor has 18");
	E("qualifier 0a 06 00 02 00 00 00 40 01 00 00\n", ":4: qualifier: 11 bytes");
	E("source hand\n", ":4: source: 'hand' is not a quoted string");
	E("name Big\n", ":4: name: repeated (first on line 2)");
	E("speed fast\n", ":4: speed: repeated (first on line 3)");

	/* Strings. */
	E("description \"abc\n", "t.profile:4: description: unterminated string");
	E("description \"abc\\\"\n", ":4: description: unterminated string");
	E("description \"a\\nb\"\n", ":4: description: string: unknown escape '\\n'");
	E("description \"a\\x4\"\n", ":4: description: string: \\x must be followed");
	E("description \"\\xff\"\n", ":4: description: the string is not valid UTF-8 "
	  "(byte 0xff at offset 0)");
	E("description \"a\xc3\x28\"\n", ":4: description: the string is not valid UTF-8 "
	  "(byte 0xc3 at offset 1)");
	E("description \"\xed\xa0\x80\"\n", "not valid UTF-8");    /* a surrogate */
	E("description \"\xc0\xaf\"\n", "not valid UTF-8");        /* overlong */
	E("description \"a\\x00b\"\n", ":4: description: the string contains a NUL byte");
	E("description \"a\"b\n", ":4: description: a string must be followed by a blank");
	E("description x\"a\"\n", ":4: description: a string must follow a blank");
	E("\"description\" \"a\"\n", ":4: a statement starts with a keyword");

	/* Lines. */
	E("\t09 04\n", ":4: speed: extra field '09'");  /* continues `speed full` */
	parse_err("  # comment\n\t12 01\n", "t.profile:2: continuation line");
	memcpy(buf, pre, strlen(pre));
	memcpy(buf + strlen(pre), "description \"a\"\nx\0\n", 19);
	expect_err(buf, strlen(pre) + 19, true, "t.profile:5: the line contains a NUL byte");
	big = malloc(70000);
	assert_non_null(big);
	memset(big, ' ', 70000);
	memcpy(big, pre, strlen(pre));
	memcpy(big + strlen(pre), "description \"a\"", 15);
	big[70000 - 1] = '\n';
	expect_err(big, 70000, true, ":4: the line is longer than 65536 bytes");
	free(big);
#undef E
}

static void test_header_and_required(void **state)
{
	static const char *const missing[] = { "name ", "speed ", "device ", "config " };
	const char *text;

	(void)state;
	parse_err(edit(mouse, "dmaharness-usb-profile 1", "dmaharness-usb-profile 2"),
		  "t.profile:2: dmaharness-usb-profile: format version 2 is newer than "
		  "this program reads (version 1)");
	parse_err(edit(mouse, "dmaharness-usb-profile 1", "dmaharness-usb-profile 0"),
		  "t.profile:2: dmaharness-usb-profile: there is no format version 0");
	parse_err(edit(mouse, "dmaharness-usb-profile 1\n", ""),
		  "t.profile:2: name: the first statement must be 'dmaharness-usb-profile 1'");
	parse_err(edit(mouse, "name test-mouse\n", "name test-mouse\n"
		       "dmaharness-usb-profile 1\n"),
		  "t.profile:4: dmaharness-usb-profile: repeated (first on line 2)");
	parse_err("", "t.profile: no 'dmaharness-usb-profile 1' statement");
	parse_err("# only comments\n\n", "t.profile: no 'dmaharness-usb-profile 1'");
	parse_err("hello\n", "t.profile:1: hello: unknown statement (the first statement "
		  "must be 'dmaharness-usb-profile 1')");
	for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
		char want[64];
		/* Comment the statement out: the rest still parses. */
		char from[8], to[8];

		snprintf(from, sizeof(from), "\n%s", missing[i]);
		snprintf(to, sizeof(to), "\n#%s", missing[i]);
		text = edit(mouse, from, to);
		if (!strcmp(missing[i], "device "))  /* its continuation line too */
			text = edit(text, "\t00 01\t", "#");
		if (!strcmp(missing[i], "config "))
			text = edit(edit(edit(text, "\t09 04 00", "#"), "\t09 21", "#"),
				    "  07 05", "#");
		snprintf(want, sizeof(want), "t.profile: %.*s: missing",
			 (int)strlen(missing[i]) - 1, missing[i]);
		parse_err(text, want);
	}
	/* Over 1 MiB is refused before reading further. */
	char *big = malloc(PROFILE_MAX_INPUT + 1);
	assert_non_null(big);
	memset(big, '\n', PROFILE_MAX_INPUT + 1);
	memcpy(big, mouse, strlen(mouse));
	expect_err(big, PROFILE_MAX_INPUT + 1, true, "t.profile: larger than 1048576 bytes");
	struct profile p;
	parse_ok(big, PROFILE_MAX_INPUT, &p);
	profile_free(&p);
	free(big);
}

static void test_validate_errors(void **state)
{
	char want[256];
	unsigned cfg = line_of(mouse, "config "), dev = line_of(mouse, "device ");
	unsigned irq = line_of(mouse, "interrupt 0x81 packet 00");

	(void)state;
	snprintf(want, sizeof(want), "t.profile:%u: config: wTotalLength 35 but the "
		 "config has 34 bytes", cfg);
	check_err(edit(mouse, "09 02 22 00", "09 02 23 00"), want);
	/* The endpoint's bLength 8 runs one byte past the end. */
	snprintf(want, sizeof(want), "t.profile:%u: config: descriptor at offset 27 "
		 "(type 0x05, bLength 8) runs past the end of the config (34 bytes)", cfg);
	check_err(edit(mouse, "07 05 81", "08 05 81"), want);
	snprintf(want, sizeof(want), "t.profile:%u: config: descriptor at offset 18 has "
		 "bLength 0", cfg);
	check_err(edit(mouse, "09 21 11", "00 21 11"), want);
	snprintf(want, sizeof(want), "t.profile:%u: config: bDescriptorType 0x03", cfg);
	check_err(edit(mouse, "config 09 02", "config 09 03"), want);
	snprintf(want, sizeof(want), "t.profile:%u: config: bNumInterfaces 2 but 1 "
		 "interface is present", cfg);
	check_err(edit(mouse, "09 02 22 00 01", "09 02 22 00 02"), want);
	snprintf(want, sizeof(want), "t.profile:%u: config: endpoint descriptor at offset "
		 "27 has bLength 6", cfg);
	check_err(edit(edit(mouse, "07 05 81 03 08 00 0a", "06 05 81 03 08 00"),
		       "09 02 22 00", "09 02 21 00"), want);

	snprintf(want, sizeof(want), "t.profile:%u: device: bNumConfigurations 2 but the "
		 "profile has 1 config statement", dev);
	check_err(edit(mouse, "\t00 01\t", "\t00 02\t"), want);
	snprintf(want, sizeof(want), "t.profile:%u: device: bLength 17", dev);
	check_err(edit(mouse, "device 12 01", "device 11 01"), want);
	/* Two configs with the same bConfigurationValue. */
	snprintf(want, sizeof(want), "t.profile:%u: config: bConfigurationValue 1 repeated "
		 "(config on line %u)", line_of(mouse, "string 0 "), cfg);
	check_err(edit(edit(mouse, "\t00 01\t", "\t00 02\t"), "string 0 09 04\n",
		       "config 09 02 09 00 00 01 00 80 32\nstring 0 09 04\n"), want);

	/* Strings named by descriptors. */
	snprintf(want, sizeof(want), "t.profile:%u: device: iProduct 3 has no "
		 "'string 0x0409 3' (language 0x0409 of string 0)", dev);
	check_err(edit(mouse, "00 01 01 02\n", "00 01 01 03\n"), want);
	snprintf(want, sizeof(want), "t.profile:%u: device: iManufacturer 1 has no "
		 "'string 0x0407 1'", dev);
	check_err(edit(mouse, "string 0 09 04", "string 0 09 04 07 04"), want);
	snprintf(want, sizeof(want), "t.profile:%u: config: iInterface 4 has no", cfg);
	check_err(edit(mouse, "01 03 01 02 00", "01 03 01 02 04"), want);
	snprintf(want, sizeof(want), "t.profile:%u: device: iManufacturer 1 names a "
		 "string, but there is no 'string 0'", dev);
	check_err(edit(mouse, "string 0 09 04\n", ""), want);

	/* Interrupt endpoints. */
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: no configuration has an "
		 "endpoint 0x82", line_of(mouse, "interrupt") + 1);
	check_err(edit(mouse, "interrupt 0x81 packet 00",
		       "interrupt 0x82 pattern random\ninterrupt 0x81 packet 00"), want);
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: endpoint 0x81 is a bulk "
		 "endpoint, not an interrupt one", line_of(mouse, "interrupt"));
	check_err(edit(mouse, "07 05 81 03", "07 05 81 02"), want);
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: endpoint 0x81 is an "
		 "isochronous endpoint", line_of(mouse, "interrupt"));
	check_err(edit(mouse, "07 05 81 03", "07 05 81 05"), want);
	/* a full-size packet is one (what fills a URB one packet long); a
	 * longer one is not */
	{
		struct profile p;

		parse_str(edit(mouse, "packet 00 00 00 00 00 00 00",
			       "packet 00 00 00 00 00 00 00 00"), &p);
		assert_int_equal(p.interrupts[0].packets[1].len, 8);
		profile_free(&p);
	}
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: packet of 9 bytes: endpoint "
		 "0x81 has wMaxPacketSize 8 and a packet cannot be longer", irq);
	check_err(edit(mouse, "packet 00 00 00 00 00 00 00",
		       "packet 00 00 00 00 00 00 00 00 00"), want);
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: endpoint 0x81 has "
		 "wMaxPacketSize 1: too small", line_of(mouse, "interrupt"));
	check_err(edit(edit(mouse, "03 08 00 0a", "03 01 00 0a"), "interrupt 0x81 packet 01 02 "
		       "03\ninterrupt 0x81 packet 00 00 00 00 00 00 00\n",
		       "interrupt 0x81 pattern zero\n"), want);

	/* BOS and qualifier. */
	check_err(edit(mouse, "string 0 ", "bos 05 0f 06 00 00\nstring 0 "),
		  ": bos: wTotalLength 6 but the bos has 5 bytes");
	check_err(edit(mouse, "string 0 ", "bos 05 10 05 00 00\nstring 0 "),
		  ": bos: bDescriptorType 0x10");
	check_err(edit(mouse, "string 0 ", "qualifier 0a 07 00 02 00 00 00 40 01 00\n"
		       "string 0 "), ": qualifier: bLength 10 bDescriptorType 0x07");
}

/* The K120's report descriptors (profiles/logitech-k120.profile): a boot
 * keyboard, and consumer/system controls with Report IDs 1 to 4. */
static const uint8_t k120_keyboard[] = {
	0x05, 0x01, 0x09, 0x06, 0xa1, 0x01, 0x05, 0x07, 0x19, 0xe0, 0x29, 0xe7,
	0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x08, 0x81, 0x02, 0x95, 0x01,
	0x75, 0x08, 0x81, 0x01, 0x95, 0x05, 0x75, 0x01, 0x05, 0x08, 0x19, 0x01,
	0x29, 0x05, 0x91, 0x02, 0x95, 0x01, 0x75, 0x03, 0x91, 0x01, 0x95, 0x06,
	0x75, 0x08, 0x15, 0x00, 0x26, 0xff, 0x00, 0x05, 0x07, 0x19, 0x00, 0x2a,
	0xff, 0x00, 0x81, 0x00, 0xc0,
};

static const uint8_t k120_consumer[] = {
	0x05, 0x0c, 0x09, 0x01, 0xa1, 0x01, 0x85, 0x01, 0x15, 0x00, 0x25, 0x01,
	0x75, 0x01, 0x95, 0x18, 0x09, 0xe2, 0x09, 0xe9, 0x09, 0xea, 0x09, 0xcd,
	0x09, 0xb7, 0x09, 0xb6, 0x09, 0xb5, 0x09, 0xb8, 0x09, 0xb3, 0x09, 0xb4,
	0x09, 0x30, 0x0a, 0x83, 0x01, 0x0a, 0x8a, 0x01, 0x0a, 0x92, 0x01, 0x0a,
	0x94, 0x01, 0x0a, 0x96, 0x01, 0x0a, 0xa7, 0x01, 0x0a, 0x21, 0x02, 0x0a,
	0x23, 0x02, 0x0a, 0x24, 0x02, 0x0a, 0x25, 0x02, 0x0a, 0x26, 0x02, 0x0a,
	0x27, 0x02, 0x0a, 0x2a, 0x02, 0x81, 0x02, 0xc0, 0x05, 0x01, 0x09, 0x80,
	0xa1, 0x01, 0x85, 0x02, 0x19, 0x81, 0x29, 0x83, 0x15, 0x00, 0x25, 0x01,
	0x75, 0x01, 0x95, 0x03, 0x81, 0x02, 0x95, 0x05, 0x81, 0x01, 0xc0, 0x05,
	0x0c, 0x09, 0x01, 0xa1, 0x01, 0x85, 0x03, 0x19, 0x00, 0x2a, 0x3c, 0x02,
	0x15, 0x00, 0x26, 0x3c, 0x02, 0x95, 0x01, 0x75, 0x10, 0x81, 0x00, 0xc0,
	0x06, 0x00, 0xff, 0x09, 0x01, 0xa1, 0x01, 0x85, 0x04, 0x15, 0x00, 0x26,
	0xff, 0x00, 0x75, 0x08, 0x95, 0x03, 0x09, 0x01, 0x81, 0x02, 0x09, 0x01,
	0x91, 0x02, 0xc0,
};

/* profile_hid_input_reports() of @desc: @n_want reports, each "ID:LEN". */
static void expect_reports(const uint8_t *desc, size_t len, const char *want)
{
	struct profile_hid_report r[PROFILE_HID_MAX_REPORTS];
	char got[256] = "";
	size_t o = 0;
	int n = profile_hid_input_reports(desc, len, r, NULL);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%u:%zu", i ? " " : "",
				      r[i].id, r[i].len);
	assert_string_equal(got, want);
}

static void expect_malformed(const uint8_t *desc, size_t len, size_t at)
{
	struct profile_hid_report r[PROFILE_HID_MAX_REPORTS];
	size_t bad = 12345;

	assert_int_equal(profile_hid_input_reports(desc, len, r, &bad), -1);
	assert_int_equal(bad, at);
}

#define REPORTS(want, ...) do {                                                 \
		static const uint8_t d_[] = { __VA_ARGS__ };                    \
		expect_reports(d_, sizeof(d_), want);                           \
	} while (0)
#define MALFORMED(at, ...) do {                                                 \
		static const uint8_t d_[] = { __VA_ARGS__ };                    \
		expect_malformed(d_, sizeof(d_), at);                           \
	} while (0)

static void test_hid_reports(void **state)
{
	struct profile_hid_report r[PROFILE_HID_MAX_REPORTS];

	(void)state;
	/* the boot keyboard: 8 modifier bits, a reserved byte, 6 key codes;
	 * the 5 LED bits and their padding are Output, not counted */
	expect_reports(k120_keyboard, sizeof(k120_keyboard), "0:8");
	/* 24 bits, 3 + 5 bits, 16 bits, 24 bits (its Output not counted) */
	expect_reports(k120_consumer, sizeof(k120_consumer), "1:4 2:2 3:3 4:4");
	/* bits round up to bytes; Feature and Output items do not count */
	REPORTS("0:1", 0x75, 0x01, 0x95, 0x01, 0x81, 0x02, 0xb1, 0x02, 0x91, 0x02);
	REPORTS("0:2", 0x75, 0x09, 0x95, 0x01, 0x81, 0x02);
	REPORTS("", 0x05, 0x01, 0x09, 0x02, 0x75, 0x08, 0x95, 0x04, 0xb1, 0x02);
	/* data of 2 and 4 bytes, little-endian: Report Count 0x0102 of 1 bit */
	REPORTS("0:33", 0x75, 0x01, 0x96, 0x02, 0x01, 0x81, 0x02);
	REPORTS("9:3", 0x87, 0x09, 0x00, 0x00, 0x00, 0x77, 0x10, 0x00, 0x00, 0x00,
		0x95, 0x01, 0x81, 0x02);
	/* in the order of their first Input item; an ID's Input items add up */
	REPORTS("2:2 1:3", 0x75, 0x08, 0x95, 0x01, 0x85, 0x02, 0x81, 0x02,
		0x85, 0x01, 0x95, 0x02, 0x81, 0x02, 0x85, 0x02, 0x95, 0x00, 0x81, 0x02);
	/* Push saves Report Size, Count and ID, Pop restores them: report 2
	 * gets 5 bytes, report 1 after the Pop 2 bytes again */
	REPORTS("2:6 1:3", 0x85, 0x01, 0x75, 0x08, 0x95, 0x02, 0xa4, 0x85, 0x02,
		0x95, 0x05, 0x81, 0x02, 0xb4, 0x81, 0x02);
	/* a long item is skipped whole: its data (81 02, an Input item if it
	 * were read as items) is not counted */
	REPORTS("0:1", 0x75, 0x08, 0x95, 0x04, 0xfe, 0x02, 0x10, 0x81, 0x02,
		0x95, 0x01, 0x81, 0x02);
	/* Report Size x Report Count saturates instead of overflowing */
	{
		static const uint8_t d[] = { 0x77, 0xff, 0xff, 0xff, 0xff, 0x97, 0xff,
					     0xff, 0xff, 0xff, 0x81, 0x02, 0x81, 0x02 };

		assert_int_equal(profile_hid_input_reports(d, sizeof(d), r, NULL), 1);
		assert_true(r[0].len >= (size_t)1 << 32);
	}
	/* what Linux's parser refuses: an item past the end, Report ID 0 or
	 * above 255, Pop without Push, a fifth Push, a long item past the end */
	MALFORMED(4, 0x75, 0x08, 0x95, 0x01, 0x81);
	MALFORMED(2, 0x75, 0x08, 0x96, 0x01);
	MALFORMED(0, 0x85, 0x00, 0x81, 0x02);
	MALFORMED(0, 0x86, 0x00, 0x01);
	MALFORMED(2, 0x75, 0x08, 0xb4);
	MALFORMED(4, 0xa4, 0xa4, 0xa4, 0xa4, 0xa4);
	MALFORMED(2, 0x75, 0x08, 0xfe, 0x05, 0x10, 0x00);
	REPORTS("", 0xa4, 0xa4, 0xa4, 0xa4, 0xb4, 0xb4, 0xb4, 0xb4);

	/* Keyboard fields (usage page 7, not constant): the boot keyboard's
	 * modifiers (variable, from usage 0xe0) and its 6 key codes (an array
	 * after the constant reserved byte) */
	assert_int_equal(profile_hid_input_reports(k120_keyboard, sizeof(k120_keyboard), r,
						   NULL), 1);
	assert_int_equal(r[0].n_keys, 2);
	assert_int_equal(r[0].keys[0].bit, 0);
	assert_int_equal(r[0].keys[0].size, 1);
	assert_int_equal(r[0].keys[0].count, 8);
	assert_int_equal(r[0].keys[0].usage_min, 0xe0);
	assert_false(r[0].keys[0].array);
	assert_int_equal(r[0].keys[1].bit, 16);
	assert_int_equal(r[0].keys[1].size, 8);
	assert_int_equal(r[0].keys[1].count, 6);
	assert_true(r[0].keys[1].array);
	/* the consumer page is not a keyboard; a 4-byte usage names its page */
	assert_int_equal(profile_hid_input_reports(k120_consumer, sizeof(k120_consumer), r,
						   NULL), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(r[i].n_keys, 0);
	{
		static const uint8_t d[] = { 0x05, 0x0c, 0x1b, 0x04, 0x00, 0x07, 0x00,
					     0x75, 0x08, 0x95, 0x02, 0x81, 0x00,
					     0x75, 0x08, 0x95, 0x01, 0x81, 0x00 };

		assert_int_equal(profile_hid_input_reports(d, sizeof(d), r, NULL), 1);
		assert_int_equal(r[0].n_keys, 1);       /* the locals end at a main item */
		assert_int_equal(r[0].keys[0].usage_min, 4);
		assert_int_equal(r[0].keys[0].count, 2);
	}

	/* Every Report ID, 1 to 255: all counted. */
	{
		uint8_t d[255 * 4];

		for (unsigned id = 1; id <= 255; id++) {
			d[4 * (id - 1)] = 0x85;
			d[4 * (id - 1) + 1] = (uint8_t)id;
			d[4 * (id - 1) + 2] = 0x81;
			d[4 * (id - 1) + 3] = 0x02;
		}
		assert_int_equal(profile_hid_input_reports(d, sizeof(d), r, NULL), 255);
		assert_int_equal(r[254].id, 255);
		assert_int_equal(r[254].len, 1);
	}
}

static void test_hid_fitting(void **state)
{
	struct profile_hid_report r[4];

	(void)state;
	/* longer than wMaxPacketSize: skipped (it would span packets); and with
	 * one so long the URB is longer than a packet, so the 8-byte report,
	 * a full-size packet, would be joined with the next one: skipped too */
	r[0] = (struct profile_hid_report){ .id = 1, .len = 4 };
	r[1] = (struct profile_hid_report){ .id = 2, .len = 9 };
	r[2] = (struct profile_hid_report){ .id = 3, .len = 8 };
	r[3] = (struct profile_hid_report){ .id = 4, .len = 3 };
	assert_int_equal(profile_hid_fitting(r, 4, 8), 2);
	assert_int_equal(r[0].id, 1);
	assert_int_equal(r[1].id, 4);
	/* with the URB one packet long, the full-size report is sent */
	r[0] = (struct profile_hid_report){ .id = 1, .len = 4 };
	r[1] = (struct profile_hid_report){ .id = 3, .len = 8 };
	r[2] = (struct profile_hid_report){ .id = 0, .len = 0 };  /* empty: nothing to send */
	assert_int_equal(profile_hid_fitting(r, 3, 8), 2);
	assert_int_equal(r[1].id, 3);
	assert_int_equal(r[1].len, 8);
	assert_int_equal(profile_hid_fitting(r, 2, 3), 0);
}

/* mouse with `interrupt 0x81 pattern hid` (and @from replaced by @to) */
static const char *hid_mouse(const char *from, const char *to)
{
	return edit(edit(mouse, "interrupt 0x81 packet 01 02 03\n"
			 "interrupt 0x81 packet 00 00 00 00 00 00 00\n",
			 "interrupt 0x81 pattern hid\n"), from, to);
}

static void test_validate_hid(void **state)
{
	char want[320];
	unsigned irq = line_of(hid_mouse("#", "#"), "interrupt 0x81 pattern hid");
	unsigned rd = line_of(mouse, "get 0x81 0x06 0x2200");
	struct profile p;

	(void)state;
	/* 8 bytes without ID: a full-size report, and wMaxPacketSize is what
	 * usbhid's URB will be */
	parse_str(hid_mouse("= 05 01 09 02\n", "= 75 08 95 08 81 02\n"), &p);
	assert_int_equal(p.interrupts[0].pattern, PROFILE_PATTERN_HID);
	{
		struct profile_hid_report r[PROFILE_HID_MAX_REPORTS];

		assert_int_equal(profile_hid_reports(&p, 0x81, r), 1);
		assert_int_equal(r[0].len, 8);
	}
	profile_free(&p);
	/* the rule may use wildcards, as a lookup does */
	parse_str(hid_mouse("get 0x81 0x06 0x2200 0 = 05 01 09 02\n",
			    "get 0x81 0x06 * * = 75 08 95 02 81 02\n"), &p);
	profile_free(&p);

	snprintf(want, sizeof(want), "t.profile:%u: interrupt: pattern hid: endpoint 0x81 "
		 "is in interface 0, class 0xff, not a HID interface (class 0x03)", irq);
	check_err(hid_mouse("01 03 01 02 00", "01 ff 01 02 00"), want);
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: pattern hid: endpoint 0x81: "
		 "HID interface 0 has no report descriptor (a 'get 0x81 0x06 0x2200 0 = "
		 "...' line)", irq - 1);
	check_err(hid_mouse("get 0x81 0x06 0x2200 0 = 05 01 09 02\n", ""), want);
	/* a stall, or a descriptor for another interface, is not one */
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: pattern hid: endpoint 0x81: "
		 "HID interface 0 has no report descriptor", irq);
	check_err(hid_mouse("get 0x81 0x06 0x2200 0 = 05 01 09 02",
			    "get 0x81 0x06 0x2200 0 stall"), want);
	check_err(hid_mouse("get 0x81 0x06 0x2200 0 =", "get 0x81 0x06 0x2200 1 ="), want);
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: pattern hid: endpoint 0x81: "
		 "the report descriptor of interface 0 (line %u) declares no input report",
		 irq, rd);
	check_err(hid_mouse("#", "#"), want);
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: pattern hid: endpoint 0x81: "
		 "the report descriptor of interface 0 (line %u) declares no input report "
		 "that fits in wMaxPacketSize 8 (the shortest is 9 bytes)", irq, rd);
	check_err(hid_mouse("= 05 01 09 02\n", "= 75 08 95 09 81 02\n"), want);
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: pattern hid: endpoint 0x81: "
		 "the report descriptor of interface 0 (line %u) declares no input report "
		 "that fits in wMaxPacketSize 8 (its 8-byte reports fill the packet, not "
		 "usbhid's 9-byte URB)", irq, rd);
	check_err(hid_mouse("= 05 01 09 02\n", "= 75 08 85 01 95 07 81 02 85 02 95 08 81 "
			    "02\n"), want);
	snprintf(want, sizeof(want), "t.profile:%u: interrupt: pattern hid: endpoint 0x81: "
		 "the report descriptor of interface 0 (line %u) is malformed at offset 2",
		 irq, rd);
	check_err(hid_mouse("= 05 01 09 02\n", "= 05 01 09\n"), want);
}

static void test_lookup_order(void **state)
{
	struct profile p;
	const struct profile_get *g;
	const struct profile_set *s;

	(void)state;
	parse_str(mouse, &p);
	g = profile_find_get(&p, 0x81, 0x06, 0x2200, 0);
	assert_ptr_equal(g, &p.gets[0]);
	assert_null(profile_find_get(&p, 0x81, 0x06, 0x2200, 1));
	assert_null(profile_find_get(&p, 0x81, 0x06, 0x2201, 0));
	/* `* 0x0000` before `* *`: the first match in file order wins. */
	assert_ptr_equal(profile_find_get(&p, 0xa1, 0x01, 0x0100, 0), &p.gets[1]);
	assert_ptr_equal(profile_find_get(&p, 0xa1, 0x01, 0xffff, 0), &p.gets[1]);
	assert_ptr_equal(profile_find_get(&p, 0xa1, 0x01, 0x0100, 1), &p.gets[2]);
	assert_true(profile_find_get(&p, 0xa1, 0x01, 0x0100, 1)->stall);
	assert_null(profile_find_get(&p, 0xa1, 0x02, 0, 0));
	assert_null(profile_find_get(&p, 0xa2, 0x01, 0, 0));

	s = profile_find_set(&p, 0x21, 0x0a, 0x1234, 0x5678);
	assert_ptr_equal(s, &p.sets[0]);
	assert_ptr_equal(profile_find_set(&p, 0x21, 0x09, 0x0200, 7), &p.sets[1]);
	assert_null(profile_find_set(&p, 0x21, 0x09, 0x0300, 7));
	assert_null(profile_find_set(&p, 0x22, 0x0a, 0, 0));
	profile_free(&p);

	/* A specific rule after a wildcard one is never reached. */
	parse_str(edit(mouse, "get 0xa1 0x01 * 0x0000 = 00 00 00\n",
		       "get 0xa1 0x01 * * = 01\nget 0xa1 0x01 5 0 = 02\n"), &p);
	g = profile_find_get(&p, 0xa1, 0x01, 5, 0);
	assert_int_equal(g->len, 1);
	assert_int_equal(g->data[0], 0x01);
	profile_free(&p);
}

static void test_store(void **state)
{
	static const uint8_t d1[2] = { 0xaa, 0xbb }, d2[3] = { 1, 2, 3 };
	struct profile p;
	const struct profile_get *g;
	const struct profile_set *s;
	size_t n;

	(void)state;
	parse_str(mouse, &p);
	n = p.n_gets;
	s = profile_find_set(&p, 0x21, 0x09, 0x0200, 0);
	assert_non_null(s);
	/* The first get matching (0xa1 0x01 0x0200 0) is `* 0x0000`: a new
	 * exact rule goes before it. */
	assert_int_equal(profile_set_store(&p, s, 0x0200, 0, d1, sizeof(d1)), 0);
	assert_int_equal(p.n_gets, n + 1);
	g = profile_find_get(&p, 0xa1, 0x01, 0x0200, 0);
	assert_ptr_equal(g, &p.gets[1]);
	assert_int_equal(g->value, 0x0200);
	assert_int_equal(g->index, 0);
	assert_false(g->stall);
	assert_int_equal(g->len, 2);
	assert_memory_equal(g->data, d1, 2);
	assert_int_equal(g->line, s->line);
	/* The wildcard rule still answers the other values. */
	g = profile_find_get(&p, 0xa1, 0x01, 0x0300, 0);
	assert_int_equal(g->len, 3);
	/* Storing again replaces the exact rule's answer. */
	assert_int_equal(profile_set_store(&p, s, 0x0200, 0, d2, sizeof(d2)), 0);
	assert_int_equal(p.n_gets, n + 1);
	g = profile_find_get(&p, 0xa1, 0x01, 0x0200, 0);
	assert_int_equal(g->len, 3);
	assert_memory_equal(g->data, d2, 3);
	/* A stalled request becomes answered. */
	assert_true(profile_find_get(&p, 0xa1, 0x01, 0x0200, 9)->stall);
	assert_int_equal(profile_set_store(&p, s, 0x0200, 9, d1, 0), 0);
	g = profile_find_get(&p, 0xa1, 0x01, 0x0200, 9);
	assert_false(g->stall);
	assert_int_equal(g->len, 0);
	assert_true(profile_find_get(&p, 0xa1, 0x01, 0x0200, 8)->stall);
	assert_int_equal(p.n_gets, n + 2);
	profile_free(&p);

	/* An exact get is the first match: its answer is replaced in place. */
	parse_str(edit(mouse, "get 0xa1 0x01 * 0x0000", "get 0xa1 0x01 0x0200 0"), &p);
	n = p.n_gets;
	s = &p.sets[1];
	assert_int_equal(profile_set_store(&p, s, 0x0200, 0, d1, sizeof(d1)), 0);
	assert_int_equal(p.n_gets, n);
	assert_int_equal(p.gets[1].len, 2);
	assert_memory_equal(p.gets[1].data, d1, 2);
	profile_free(&p);

	/* Not a store rule; too long; the rule limit. */
	parse_str(mouse, &p);
	n = p.n_gets;
	assert_int_equal(profile_set_store(&p, &p.sets[0], 0, 0, d1, 2), -1);
	s = &p.sets[1];
	assert_int_equal(profile_set_store(&p, s, 0, 0, d1, PROFILE_MAX_BLOB + 1), -1);
	assert_int_equal(p.n_gets, n);
	for (unsigned v = 0; p.n_gets < PROFILE_MAX_RULES; v++)
		assert_int_equal(profile_set_store(&p, s, (uint16_t)v, 1, d1, 2), 0);
	assert_int_equal(profile_set_store(&p, s, 0xffff, 1, d1, 2), -1);
	assert_int_equal(p.n_gets, PROFILE_MAX_RULES);
	/* ... while replacing an existing answer still works. */
	assert_int_equal(profile_set_store(&p, s, 7, 1, d2, 3), 0);
	assert_int_equal(profile_find_get(&p, 0xa1, 0x01, 7, 1)->len, 3);
	profile_free(&p);
}

static void test_string_descriptor(void **state)
{
	static const uint8_t maus[] = {
		18, 3, 'M', 0, 0xe4, 0, 'u', 0, 's', 0, 'c', 0, 'h', 0, 'e', 0, 'n', 0,
	};
	uint8_t buf[300];
	char text[600], line[700], want[128];
	struct profile p;

	(void)state;
	parse_str(edit(mouse, "string 1033 2", "string 0x0407 2 \"x\"\nstring 1033 2"), &p);
	assert_int_equal(profile_string_descriptor(&p, 0, 0, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "\x04\x03\x09\x04", 4);
	assert_int_equal(profile_string_descriptor(&p, 0x0409, 2, buf, sizeof(buf)), 18);
	assert_memory_equal(buf, maus, sizeof(maus));
	/* Cut to the buffer, bLength still the whole length (wLength 2). */
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(profile_string_descriptor(&p, 0x0409, 2, buf, 2), 2);
	assert_int_equal(buf[0], 18);
	assert_int_equal(buf[2], 0xee);
	assert_int_equal(profile_string_descriptor(&p, 0x0407, 2, buf, sizeof(buf)), 4);
	assert_int_equal(profile_string_descriptor(&p, 0x0409, 3, buf, sizeof(buf)), -1);
	assert_int_equal(profile_string_descriptor(&p, 0x0407, 1, buf, sizeof(buf)), -1);
	profile_free(&p);

	/* Outside the BMP: a surrogate pair (U+1F600), 3-byte UTF-8 (U+20AC). */
	parse_str(edit(mouse, "\"Acme\"", "\"\xf0\x9f\x98\x80\xe2\x82\xac\""), &p);
	assert_int_equal(profile_string_descriptor(&p, 0x0409, 1, buf, sizeof(buf)), 8);
	assert_memory_equal(buf, "\x08\x03\x3d\xd8\x00\xde\xac\x20", 8);
	profile_free(&p);

	/* 126 UTF-16 units fit (bLength 254); 127 are refused when parsed. */
	memset(text, 'a', 126);
	text[126] = 0;
	snprintf(line, sizeof(line), "\"%s\"", text);
	parse_str(edit(mouse, "\"Acme\"", line), &p);
	assert_int_equal(profile_string_descriptor(&p, 0x0409, 1, buf, sizeof(buf)), 254);
	assert_int_equal(buf[0], 254);
	assert_int_equal(buf[253], 0);
	assert_int_equal(buf[252], 'a');
	profile_free(&p);
	snprintf(line, sizeof(line), "\"%sa\"", text);
	snprintf(want, sizeof(want), "t.profile:%u: string: the string has more than 126 "
		 "UTF-16 units", line_of(mouse, "string 0x0409 1"));
	parse_err(edit(mouse, "\"Acme\"", line), want);
	/* 125 + one surrogate pair = 127 units: refused too. */
	snprintf(line, sizeof(line), "\"%.125s\xf0\x9f\x98\x80\"", text);
	parse_err(edit(mouse, "\"Acme\"", line), "more than 126 UTF-16 units");
	/* 63 two-byte characters = 126 bytes' worth of units but 63 units. */
	for (int i = 0; i < 126; i++)
		text[i] = (char)(i % 2 ? 0xa4 : 0xc3);
	snprintf(line, sizeof(line), "\"%s\"", text);
	parse_str(edit(mouse, "\"Acme\"", line), &p);
	assert_int_equal(profile_string_descriptor(&p, 0x0409, 1, buf, sizeof(buf)), 128);
	profile_free(&p);

	/* A profile built in memory with a longer string: cut at 126 units. */
	parse_str(mouse, &p);
	free(p.strings[0].text);
	memset(text, 'b', 300);
	text[300] = 0;
	p.strings[0].text = strdup(text);
	assert_int_equal(profile_string_descriptor(&p, 0x0409, 1, buf, sizeof(buf)), 254);
	profile_free(&p);
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/profile-test-XXXXXX";
	char err[256];
	struct profile p;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, mouse, strlen(mouse)), (ssize_t)strlen(mouse));
	close(fd);
	assert_int_equal(profile_load_file(path, &p, err, sizeof(err)), 0);
	assert_string_equal(p.name, "test-mouse");
	assert_string_equal(p.filename, path);
	profile_free(&p);

	/* Validation runs too, and messages name the path. */
	unlink(path);
	assert_int_equal(profile_load_file(path, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "No such file"));

	strcpy(path, "/tmp/profile-test-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *bad = edit(mouse, "09 02 22 00", "09 02 21 00");
	assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
	close(fd);
	assert_int_equal(profile_load_file(path, &p, err, sizeof(err)), -1);
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_non_null(strstr(err, ":11: config: wTotalLength 33"));
	unlink(path);
}

/* Every prefix and many one-byte changes of a valid profile: no crash, no
 * leak (ASan), and an error message whenever parsing fails. */
static void test_no_crash(void **state)
{
	size_t len = strlen(mouse);
	char *buf = malloc(len);
	char err[256];
	struct profile p;
	uint32_t x = 12345;

	(void)state;
	assert_non_null(buf);
	for (size_t n = 0; n <= len; n++) {
		memcpy(buf, mouse, n);
		if (profile_parse(buf, n, NULL, &p, err, sizeof(err)) == 0) {
			profile_validate(&p, err, sizeof(err));
			profile_free(&p);
		} else {
			assert_true(strncmp(err, "<profile>", 9) == 0);
		}
	}
	for (int i = 0; i < 4000; i++) {
		memcpy(buf, mouse, len);
		x = x * 1103515245u + 12345u;
		buf[(x >> 8) % len] = (char)(x >> 24);
		if (profile_parse(buf, len, NULL, &p, err, sizeof(err)) == 0) {
			uint8_t d[256];

			profile_validate(&p, err, sizeof(err));
			profile_string_descriptor(&p, 0x0409, 1, d, sizeof(d));
			profile_free(&p);
		} else {
			assert_true(err[0] != 0);
		}
	}
	free(buf);
}

/* The built-in camera as a profile: its descriptors and strings fit the
 * format and pass the load-time checks. */
static void test_builtin_camera(void **state)
{
	struct cam_descriptors d;
	struct profile p, q;
	uint8_t sd[256], pd[256];
	char *text = NULL, *t2;
	size_t len = 0, n2;
	FILE *f;
	int n;

	(void)state;
	assert_int_equal(cam_descriptors_build(&d, NULL), 0);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	fprintf(f, "dmaharness-usb-profile 1\nname fake-uvc\nspeed high\ndevice");
	for (size_t i = 0; i < sizeof(d.device); i++)
		fprintf(f, " %02x", d.device[i]);
	fprintf(f, "\nqualifier");
	for (size_t i = 0; i < sizeof(d.qualifier); i++)
		fprintf(f, " %02x", d.qualifier[i]);
	fprintf(f, "\nconfig");
	for (size_t i = 0; i < d.config_len; i++)
		fprintf(f, "%s%02x", i % 16 ? " " : "\n\t", d.config[i]);
	n = cam_string_descriptor(&d, 0, sd, sizeof(sd));
	assert_true(n >= 4);
	fprintf(f, "\nstring 0");
	for (int i = 2; i < n; i++)
		fprintf(f, " %02x", sd[i]);
	fputc('\n', f);
	for (uint8_t idx = 1; (n = cam_string_descriptor(&d, idx, sd, sizeof(sd))) > 0; idx++) {
		fprintf(f, "string 0x0409 %u \"", idx);
		for (int i = 2; i < n; i += 2) {
			assert_int_equal(sd[i + 1], 0);         /* ASCII */
			assert_true(sd[i] >= 0x20 && sd[i] < 0x7f && sd[i] != '"');
			fputc(sd[i], f);
		}
		fputs("\"\n", f);
	}
	fprintf(f, "set 0x21 0x01 * * store 0x81\ninterrupt 0x%02x pattern uvc-control\n",
		CAM_EP_STATUS);
	assert_int_equal(fclose(f), 0);

	parse_ok(text, len, &p);
	assert_int_equal(p.n_strings, 3);
	for (uint8_t idx = 0; idx <= 3; idx++) {
		int a = cam_string_descriptor(&d, idx, sd, sizeof(sd));
		int b = profile_string_descriptor(&p, 0x0409, idx, pd, sizeof(pd));

		assert_int_equal(a, b);
		assert_memory_equal(sd, pd, (size_t)a);
	}
	uint8_t type = 0, interval = 0;
	uint16_t mps = 0;
	assert_int_equal(profile_find_endpoint(&p, CAM_EP_STATUS, &type, &mps, &interval), 0);
	assert_int_equal(type, 3);
	assert_int_equal(mps, CAM_EP_STATUS_MAXPACKET);
	assert_int_equal(interval, CAM_EP_STATUS_INTERVAL);
	assert_int_equal(profile_find_endpoint(&p, CAM_EP_VIDEO, &type, NULL, NULL), 0);
	assert_int_equal(type, 1);
	assert_int_equal(profile_find_endpoint(&p, 0x82, NULL, NULL, NULL), -1);

	/* Its canonical text says what the descriptors are, and reads back. */
	t2 = write_text(&p, &n2);
	assert_non_null(strstr(t2, "# interface 0 alt 0: class 0x0e (video) subclass 0x01 "
			       "protocol 0x00, 1 endpoint\n"));
	assert_non_null(strstr(t2, "# endpoint 0x83 interrupt IN, wMaxPacketSize 16, "
			       "bInterval 1\n"));
	assert_non_null(strstr(t2, "#   VC extension unit 3, 27 bytes\n"));
	assert_non_null(strstr(t2, "# endpoint 0x81 isochronous IN, wMaxPacketSize"));
	assert_non_null(strstr(t2, "# interface association: interfaces 0-1, class 0x0e"));
	parse_ok(t2, n2, &q);
	assert_same_profile(&p, &q);
	free(t2);
	free(text);
	profile_free(&p);
	profile_free(&q);
}

TEST_LIST(profile_tests,
	cmocka_unit_test(test_parse_fields),
	cmocka_unit_test(test_roundtrip),
	cmocka_unit_test(test_lexical),
	cmocka_unit_test(test_parse_errors),
	cmocka_unit_test(test_header_and_required),
	cmocka_unit_test(test_validate_errors),
	cmocka_unit_test(test_hid_reports),
	cmocka_unit_test(test_hid_fitting),
	cmocka_unit_test(test_validate_hid),
	cmocka_unit_test(test_lookup_order),
	cmocka_unit_test(test_store),
	cmocka_unit_test(test_string_descriptor),
	cmocka_unit_test(test_load_file),
	cmocka_unit_test(test_no_crash),
	cmocka_unit_test(test_builtin_camera),
)
