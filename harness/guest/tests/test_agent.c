// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the pure logic of the guest agent (JSON writer, argument
 * parsing, sequence-gap counting, rate scheduling, per-second series, error
 * and control tables) and command-line checks of the built binary (argv[1]).
 *
 * It links the agent's objects (all but main.o) and tests/fake_v4l2.c, a
 * simulated camera.  The last line printed is "N passed, N failed".
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "camera.h"
#include "counters.h"
#include "input.h"
#include "json.h"
#include "options.h"
#include "result.h"
#include "run.h"
#include "timing.h"

#include "fake_v4l2.h"

struct tctx {
	int checks_failed;
};

#define CHECK(t, cond)							\
	do {								\
		if (!(cond)) {						\
			(t)->checks_failed++;				\
			fprintf(stderr, "    %s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
		}							\
	} while (0)

#define CHECK_STR(t, got, want)						\
	do {								\
		const char *g_ = (got), *w_ = (want);			\
		if (!g_ || strcmp(g_, w_) != 0) {			\
			(t)->checks_failed++;				\
			fprintf(stderr, "    %s:%d: got '%s', want '%s'\n", \
				__FILE__, __LINE__, g_ ? g_ : "(null)", w_); \
		}							\
	} while (0)

/* ------------------------------------------------------------------------
 * A small strict JSON validator (test-only), to check what the writer and
 * the binary produce.
 */

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

static bool json_valid(const char *s)
{
	struct jp p = { s, 0, 0 };

	jp_ws(&p);
	if (!jp_value(&p))
		return false;
	jp_ws(&p);
	return s[p.i] == '\0';
}

/* The raw text of the value of the first "key": in s (test-only). */
static bool json_field(const char *s, const char *key, char *out, size_t len)
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

/* ------------------------------------------------------------------------
 * JSON writer
 */

static void test_json_validator_self(struct tctx *t)
{
	CHECK(t, json_valid("{\"a\":[1,2.5,-3e2,true,false,null,\"x\"]}"));
	CHECK(t, json_valid("[]"));
	CHECK(t, !json_valid("{\"a\":1,}"));
	CHECK(t, !json_valid("[1 2]"));
	CHECK(t, !json_valid("{\"a\" 1}"));
	CHECK(t, !json_valid("\"ctl\x01\""));
	CHECK(t, !json_valid("01"));
	CHECK(t, !json_valid("{} {}"));
}

static void test_json_document(struct tctx *t)
{
	struct jw w;

	jw_init(&w);
	jw_obj(&w, NULL);
	jw_u64(&w, "version", 1);
	jw_str(&w, "s", "a\"b\\c");
	jw_null(&w, "n");
	jw_str(&w, "nul", NULL);
	jw_arr(&w, "a");
	jw_i64(&w, NULL, -5);
	jw_bool(&w, NULL, true);
	jw_obj(&w, NULL);
	jw_obj_end(&w);
	jw_arr(&w, NULL);
	jw_arr_end(&w);
	jw_arr_end(&w);
	jw_dbl(&w, "d", 1.23456, 3);
	jw_obj_end(&w);
	CHECK(t, jw_done(&w));
	CHECK_STR(t, w.buf,
		  "{\"version\":1,\"s\":\"a\\\"b\\\\c\",\"n\":null,\"nul\":null,"
		  "\"a\":[-5,true,{},[]],\"d\":1.235}");
	CHECK(t, json_valid(w.buf));
	jw_free(&w);
}

static void test_json_escapes(struct tctx *t)
{
	struct jw w;

	jw_init(&w);
	jw_str(&w, NULL, "l1\nl2\r\t\b\f\x01\x1f\x7f");
	CHECK_STR(t, w.buf, "\"l1\\nl2\\r\\t\\b\\f\\u0001\\u001f\\u007f\"");
	CHECK(t, json_valid(w.buf));
	jw_free(&w);
}

static void test_json_utf8(struct tctx *t)
{
	static const struct {
		const char *in;
		const char *out;
	} cases[] = {
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },		/* valid 2-byte */
		{ "\xe2\x82\xac", "\"\xe2\x82\xac\"" },		/* euro sign */
		{ "\xf0\x9f\x93\xb7", "\"\xf0\x9f\x93\xb7\"" },	/* camera */
		{ "a\xff" "b", "\"a\\ufffdb\"" },		/* invalid byte */
		{ "\xc0\x80", "\"\\ufffd\\ufffd\"" },		/* overlong NUL */
		{ "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"" },	/* overlong */
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },	/* surrogate */
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
		{ "x\xe2\x82", "\"x\\ufffd\\ufffd\"" },		/* truncated */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jw w;

		jw_init(&w);
		jw_str(&w, NULL, cases[i].in);
		CHECK_STR(t, w.buf, cases[i].out);
		CHECK(t, json_valid(w.buf));
		jw_free(&w);
	}
}

static void test_json_misuse(struct tctx *t)
{
	struct jw w;

	jw_init(&w);			/* key inside an array */
	jw_arr(&w, NULL);
	jw_u64(&w, "k", 1);
	CHECK(t, w.failed);
	jw_free(&w);

	jw_init(&w);			/* value without key in an object */
	jw_obj(&w, NULL);
	jw_u64(&w, NULL, 1);
	CHECK(t, w.failed);
	jw_free(&w);

	jw_init(&w);			/* mismatched close */
	jw_obj(&w, NULL);
	jw_arr_end(&w);
	CHECK(t, w.failed);
	jw_free(&w);

	jw_init(&w);			/* two top-level values */
	jw_u64(&w, NULL, 1);
	jw_u64(&w, NULL, 2);
	CHECK(t, w.failed);
	jw_free(&w);

	jw_init(&w);			/* unclosed */
	jw_obj(&w, NULL);
	CHECK(t, !w.failed);
	CHECK(t, !jw_done(&w));
	jw_obj_end(&w);
	CHECK(t, jw_done(&w));
	jw_free(&w);

	jw_init(&w);			/* too deep */
	{
		int i;

		for (i = 0; i < JW_MAX_DEPTH + 2; i++)
			jw_arr(&w, NULL);
	}
	CHECK(t, w.failed);
	jw_free(&w);

	jw_init(&w);			/* nothing written */
	CHECK(t, !jw_done(&w));
	jw_free(&w);
}

static void test_json_numbers(struct tctx *t)
{
	struct jw w;
	double zero = 0.0;

	jw_init(&w);
	jw_arr(&w, NULL);
	jw_dbl(&w, NULL, zero / zero, 3);
	jw_dbl(&w, NULL, 1.0 / zero, 3);
	jw_dbl(&w, NULL, 0.5, 0);
	jw_dbl(&w, NULL, -2.25, 2);
	jw_u64(&w, NULL, UINT64_MAX);
	jw_i64(&w, NULL, INT64_MIN);
	jw_arr_end(&w);
	CHECK_STR(t, w.buf,
		  "[null,null,0,-2.25,18446744073709551615,-9223372036854775808]");
	CHECK(t, json_valid(w.buf));
	jw_free(&w);
}

static void test_json_large(struct tctx *t)
{
	struct jw w;
	int i;

	jw_init(&w);
	jw_obj(&w, NULL);
	jw_arr(&w, "series");
	for (i = 0; i < 20000; i++)
		jw_u64(&w, NULL, (uint64_t)i * 7919);
	jw_arr_end(&w);
	jw_obj_end(&w);
	CHECK(t, jw_done(&w));
	CHECK(t, w.len > 100000);
	CHECK(t, strlen(w.buf) == w.len);
	CHECK(t, json_valid(w.buf));
	CHECK(t, strstr(w.buf, ",158372081]}") != NULL);	/* 19999*7919 */
	jw_free(&w);
}

/* ------------------------------------------------------------------------
 * Arguments
 */

static int parse(struct options *o, char *err, size_t len, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	char *s;

	argv[argc++] = (char *)"agent";
	va_start(ap, len);
	while ((s = va_arg(ap, char *)) != NULL && argc < 31)
		argv[argc++] = s;
	va_end(ap);
	argv[argc] = NULL;
	options_default(o);
	err[0] = '\0';
	return parse_args(argc, argv, o, err, len);
}

static bool near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

static void test_args_defaults(struct tctx *t)
{
	struct options o;
	char err[256];

	CHECK(t, parse(&o, err, sizeof(err), NULL) == 0);
	CHECK(t, near(o.duration_s, 10.0));
	CHECK(t, near(o.wait_s, 30.0));
	CHECK(t, near(o.cycle_hz, 0.0) && near(o.phys_hz, 0.0));
	CHECK(t, o.cameras == 1 && o.ndevices == 0);
	CHECK(t, !o.series && !o.live && !o.initial && !o.help && !o.output);
}

static void test_args_values(struct tctx *t)
{
	struct options o;
	char err[256];

	CHECK(t, parse(&o, err, sizeof(err), "--duration", "20s", "--wait=5",
		       "--cycle-hz", "2.5", "--phys-hz=100hz", "--series",
		       "--live", "--initial", "--output", "/dev/hvc1",
		       "--cameras", "3", NULL) == 0);
	CHECK(t, near(o.duration_s, 20.0));
	CHECK(t, near(o.wait_s, 5.0));
	CHECK(t, near(o.cycle_hz, 2.5));
	CHECK(t, near(o.phys_hz, 100.0));
	CHECK(t, o.series && o.live && o.initial);
	CHECK_STR(t, o.output, "/dev/hvc1");
	CHECK(t, o.cameras == 3);

	CHECK(t, parse(&o, err, sizeof(err), "--duration", "500ms", NULL) == 0);
	CHECK(t, near(o.duration_s, 0.5));
	CHECK(t, parse(&o, err, sizeof(err), "--duration=2m", NULL) == 0);
	CHECK(t, near(o.duration_s, 120.0));
	CHECK(t, parse(&o, err, sizeof(err), "--duration", "0", NULL) == 0);
	CHECK(t, near(o.duration_s, 0.0));
	CHECK(t, parse(&o, err, sizeof(err), "--batch", "2ms", NULL) == 0);
	CHECK(t, near(o.batch_s, 0.002));
	CHECK(t, parse(&o, err, sizeof(err), "--phys-hz", "10/s", NULL) == 0);
	CHECK(t, near(o.phys_hz, 10.0));
	CHECK(t, parse(&o, err, sizeof(err), "--help", "--bogus", NULL) == 0);
	CHECK(t, o.help);
}

static void test_args_errors(struct tctx *t)
{
	static const char *const bad[][3] = {
		{ "--duration", "-1", NULL },
		{ "--duration", "abc", NULL },
		{ "--duration", "10x", NULL },
		{ "--duration", "", NULL },
		{ "--duration", "nan", NULL },
		{ "--duration", "inf", NULL },
		{ "--duration", "1e9", NULL },
		{ "--duration", NULL, NULL },		/* missing value */
		{ "--wait=", NULL, NULL },
		{ "--cycle-hz", "-1", NULL },
		{ "--cycle-hz", "2000000", NULL },
		{ "--phys-hz", "fast", NULL },
		{ "--batch", "2", NULL },		/* over 1 s */
		{ "--batch", "-1ms", NULL },
		{ "--cameras", "0", NULL },
		{ "--cameras", "9", NULL },
		{ "--cameras", "-1", NULL },
		{ "--cameras", "2x", NULL },
		{ "--device", "", NULL },
		{ "--series=1", NULL, NULL },
		{ "--bogus", NULL, NULL },
		{ "positional", NULL, NULL },
		{ "--a-very-long-option-name-that-is-unknown=1", NULL, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct options o;
		char err[256];
		char *argv[4];
		int argc = 0;

		argv[argc++] = (char *)"agent";
		argv[argc++] = (char *)bad[i][0];
		if (bad[i][1])
			argv[argc++] = (char *)bad[i][1];
		argv[argc] = NULL;
		options_default(&o);
		err[0] = '\0';
		if (parse_args(argc, argv, &o, err, sizeof(err)) != -1 ||
		    err[0] == '\0') {
			t->checks_failed++;
			fprintf(stderr, "    accepted bad arguments: %s %s\n",
				bad[i][0], bad[i][1] ? bad[i][1] : "");
		}
	}
}

static void test_args_devices(struct tctx *t)
{
	struct options o;
	char err[256];

	CHECK(t, parse(&o, err, sizeof(err), "--device", "/dev/video0",
		       "--device=/dev/video2", NULL) == 0);
	CHECK(t, o.ndevices == 2 && o.cameras == 2);
	CHECK_STR(t, o.devices[1], "/dev/video2");

	CHECK(t, parse(&o, err, sizeof(err), "--cameras", "2", "--device",
		       "/dev/video0", "--device", "/dev/video2", NULL) == 0);
	CHECK(t, parse(&o, err, sizeof(err), "--cameras", "3", "--device",
		       "/dev/video0", NULL) == -1);
	CHECK(t, strstr(err, "contradicts") != NULL);
	CHECK(t, parse(&o, err, sizeof(err), "--device", "a", "--device", "b",
		       "--device", "c", "--device", "d", "--device", "e",
		       "--device", "f", "--device", "g", "--device", "h",
		       "--device", "i", NULL) == -1);
	CHECK(t, strstr(err, "at most") != NULL);
}

/* ------------------------------------------------------------------------
 * Sequence tracking
 */

static void test_seq_contiguous(struct tctx *t)
{
	struct seqtrack s;
	struct seq_delta d;
	uint32_t i;

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	for (i = 0; i < 3; i++) {
		d = seqtrack_feed(&s, i);
		CHECK(t, d.emitted == 1 && d.dropped == 0);
	}
	CHECK(t, s.dequeued == 3 && s.emitted == 3 && s.dropped == 0);
	CHECK(t, s.anomalies == 0);
}

static void test_seq_gaps(struct tctx *t)
{
	static const uint32_t seqs[] = { 5, 6, 9, 10, 20 };
	struct seqtrack s;
	struct seq_delta d;
	size_t i;

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	d = seqtrack_feed(&s, seqs[0]);
	CHECK(t, d.emitted == 6 && d.dropped == 5);	/* 0..4 overwritten */
	for (i = 1; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		seqtrack_feed(&s, seqs[i]);
	CHECK(t, s.dequeued == 5);
	CHECK(t, s.emitted == 21);		/* 0..20 */
	CHECK(t, s.dropped == 16);
	CHECK(t, s.emitted == s.dequeued + s.dropped);
}

static void test_seq_anomalies(struct tctx *t)
{
	struct seqtrack s;
	struct seq_delta d;

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	seqtrack_feed(&s, 0);
	seqtrack_feed(&s, 4);
	d = seqtrack_feed(&s, 4);		/* duplicate */
	CHECK(t, d.emitted == 0 && d.dropped == 0);
	d = seqtrack_feed(&s, 2);		/* backwards */
	CHECK(t, d.emitted == 0 && d.dropped == 0);
	CHECK(t, s.anomalies == 2);
	CHECK(t, s.emitted == 5 && s.dropped == 3 && s.dequeued == 4);
	d = seqtrack_feed(&s, 5);		/* continues from 4 */
	CHECK(t, d.emitted == 1 && d.dropped == 0);
}

static void test_seq_wrap_and_sessions(struct tctx *t)
{
	struct seqtrack s;
	struct seq_delta d;
	uint32_t i;

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	for (i = 0; i < 10; i++)
		seqtrack_feed(&s, i);
	seqtrack_new_session(&s);		/* reopen: numbering restarts */
	d = seqtrack_feed(&s, 0);
	CHECK(t, d.emitted == 1 && d.dropped == 0);
	CHECK(t, s.emitted == 11 && s.anomalies == 0);

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	s.have = true;
	s.last = 0xfffffffeu;
	d = seqtrack_feed(&s, 1);		/* ...fe, ff, 0, 1 */
	CHECK(t, d.emitted == 3 && d.dropped == 2);
	CHECK(t, s.anomalies == 0);
}

/* ------------------------------------------------------------------------
 * Ticker
 */

static void test_cpu_busy(struct tctx *t)
{
	char path[] = "/tmp/agent-stat-XXXXXX";
	int fd = mkstemp(path);
	uint64_t ticks = 0;
	FILE *f;

	CHECK(t, fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	fputs("cpu  100 2 30 5000 7 4 5 1 0 0\ncpu0 100 2 30 5000 7 4 5 1 0 0\n", f);
	fclose(f);
	CHECK(t, cpu_busy_ticks(path, &ticks));
	CHECK(t, ticks == 100 + 2 + 30 + 4 + 5 + 1);	/* not idle, iowait */

	f = fopen(path, "w");
	fputs("intr 12 34\n", f);
	fclose(f);
	CHECK(t, !cpu_busy_ticks(path, &ticks));
	unlink(path);
	CHECK(t, !cpu_busy_ticks(path, &ticks));
}

static void test_ticker_off(struct tctx *t)
{
	struct ticker k;

	ticker_init(&k, 0.0, 1000);
	CHECK(t, !k.on);
	CHECK(t, ticker_due(&k, UINT64_MAX / 2, 10) == 0);
	CHECK(t, ticker_wait_ns(&k, 5) == UINT64_MAX);
	ticker_init(&k, -3.0, 1000);
	CHECK(t, !k.on);
}

static void test_ticker_grid(struct tctx *t)
{
	const uint64_t t0 = 5 * NSEC_PER_SEC, ms = 1000000;
	struct ticker k;

	ticker_init(&k, 10.0, t0);
	CHECK(t, k.period_ns == 100 * ms);
	CHECK(t, ticker_wait_ns(&k, t0) == 100 * ms);
	CHECK(t, ticker_due(&k, t0 + 99 * ms, 0) == 0);
	CHECK(t, ticker_wait_ns(&k, t0 + 99 * ms) == ms);
	CHECK(t, ticker_due(&k, t0 + 100 * ms, 0) == 1);
	CHECK(t, ticker_due(&k, t0 + 100 * ms, 0) == 0);	/* once */
	CHECK(t, ticker_due(&k, t0 + 250 * ms, 0) == 1);	/* 200 */
	/* late wake-up does not shift the grid: next is at 300 ms */
	CHECK(t, k.next_ns == t0 + 300 * ms);
	CHECK(t, ticker_wait_ns(&k, t0 + 250 * ms) == 50 * ms);
	CHECK(t, ticker_due(&k, t0 + 1000 * ms, 0) == 8);	/* 300..1000 */
	CHECK(t, k.fired == 10 && k.skipped == 0);
	CHECK(t, ticker_wait_ns(&k, t0 + 1500 * ms) == 0);
}

static void test_ticker_burst(struct tctx *t)
{
	const uint64_t t0 = 0, ms = 1000000;
	struct ticker k;

	ticker_init(&k, 1000.0, t0);
	CHECK(t, k.period_ns == ms);
	CHECK(t, ticker_due(&k, t0 + 50 * ms, 1) == 1);
	CHECK(t, k.skipped == 49);
	CHECK(t, k.next_ns == t0 + 51 * ms);
	CHECK(t, ticker_due(&k, t0 + 60 * ms, 4) == 4);
	CHECK(t, k.skipped == 55 && k.fired == 5);

	ticker_init(&k, MAX_HZ, t0);
	CHECK(t, k.period_ns == 1000);
	ticker_init(&k, 3.0, t0);			/* rounding */
	CHECK(t, k.period_ns == 333333333);
}

/* ------------------------------------------------------------------------
 * Series, error table, control table
 */

static void test_series(struct tctx *t)
{
	const uint64_t t0 = 100 * NSEC_PER_SEC;
	struct series s;
	struct bucket *b;

	series_init(&s, t0);
	series_at(&s, t0 + NSEC_PER_SEC / 2)->dequeued += 3;
	series_at(&s, t0 + NSEC_PER_SEC)->dequeued += 5;
	series_at(&s, t0 + 3 * NSEC_PER_SEC - 1)->keys += 7;
	series_at(&s, t0 - 10)->dequeued += 1;	/* before start: bucket 0 */
	CHECK(t, s.n == 3);
	CHECK(t, s.b[0].dequeued == 4 && s.b[1].dequeued == 5);
	CHECK(t, s.b[2].keys == 7 && s.b[2].dequeued == 0);
	b = series_at(&s, t0 + 1000 * NSEC_PER_SEC);
	b->emitted = 9;
	CHECK(t, s.n == 1001 && s.cap >= 1001);
	CHECK(t, s.b[500].emitted == 0 && s.b[1000].emitted == 9);
	CHECK(t, s.b[0].dequeued == 4);		/* survived realloc */
	CHECK(t, !s.oom);
	series_free(&s);
}

static void test_errtab(struct tctx *t)
{
	struct errtab e;
	char nb[16];
	int i;

	memset(&e, 0, sizeof(e));
	CHECK(t, errtab_add(&e, "VIDIOC_DQEVENT", ENODEV, "cam 0", 1.0));
	CHECK(t, !errtab_add(&e, "VIDIOC_DQEVENT", ENODEV, "cam 1", 2.0));
	CHECK(t, errtab_add(&e, "VIDIOC_DQEVENT", EIO, "cam 0", 3.0));
	CHECK(t, errtab_add(&e, "open", ENODEV, NULL, 4.0));
	CHECK(t, e.n == 3 && e.total == 4);
	CHECK(t, e.e[0].count == 2);
	CHECK_STR(t, e.e[0].first_ctx, "cam 0");
	CHECK(t, e.e[0].first_t == 1.0);
	CHECK_STR(t, e.e[2].first_ctx, "");
	for (i = 0; i < MAX_ERRS + 5; i++)
		errtab_add(&e, "ioctl", 1000 + i, "x", 0.0);
	CHECK(t, e.n == MAX_ERRS);
	CHECK(t, e.unrecorded == 8);		/* 3 + 48 + 5 = 56 kinds */
	CHECK_STR(t, errno_name(ENODEV, nb, sizeof(nb)), "ENODEV");
	CHECK_STR(t, errno_name(EAGAIN, nb, sizeof(nb)), "EAGAIN");
	CHECK_STR(t, errno_name(9999, nb, sizeof(nb)), "E9999");
}

static void test_ctrltab(struct tctx *t)
{
	struct ctrltab *c = calloc(1, sizeof(*c));
	struct ctrlinfo *ci;
	uint32_t i;

	if (!c) {
		t->checks_failed++;
		return;
	}
	CHECK(t, ctrltab_add(c, 0x00980900, 1, 0, "Brightness") != NULL);
	CHECK(t, ctrltab_add(c, 0x00980901, 1, 0, "Contrast") != NULL);
	ci = ctrltab_add(c, 0x00980900, 1, 4, "Brightness 2");
	CHECK(t, c->n == 2);			/* re-add updates */
	CHECK_STR(t, ci->name, "Brightness 2");
	ctrltab_count(c, 0x00980901);
	ctrltab_count(c, 0x00980901);
	ctrltab_count(c, 0x12345678);
	CHECK(t, ctrltab_find(c, 0x00980901)->events == 2);
	CHECK(t, ctrltab_find(c, 0x00980900)->events == 0);
	CHECK(t, c->unknown_events == 1);
	ctrltab_add(c, 0x00980902, 1, 0,
		    "A name that is far longer than thirty-one bytes");
	CHECK(t, strlen(ctrltab_find(c, 0x00980902)->name) == 31);
	for (i = 0; i < MAX_CTRLS + 2; i++)
		ctrltab_add(c, 0x00990000 + i, 1, 0, "x");
	CHECK(t, c->n == MAX_CTRLS);
	CHECK(t, c->overflow == 5);
	free(c);
}

static void test_input_phys(struct tctx *t)
{
	char buf[80];

	expected_input_phys("usb-0000:00:04.0-1", buf, sizeof(buf));
	CHECK_STR(t, buf, "usb-0000:00:04.0-1/button");
	expected_input_phys("usb-dummy_hcd.0-1", buf, sizeof(buf));
	CHECK_STR(t, buf, "usb-dummy_hcd.0-1/button");
}

/* ------------------------------------------------------------------------
 * Runs against the simulated camera (tests/fake_v4l2.c), in virtual time
 */

static struct agent *sim_agent(void)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	sim.active = true;	/* t0 in virtual time */
	agent_init(a);
	sim.active = false;
	return a;
}

/* Wait phase and run, as main() does; returns whether a camera was found. */
static bool sim_run(struct agent *a)
{
	sigset_t none;
	bool found;

	sigemptyset(&none);
	sim.active = true;
	agent_apply_options(a);
	found = wait_for_cameras(a, &none);
	if (!found)
		agent_wait_failed(a);
	else if (!a->stopped_by)
		run_loop(a, &none);
	sim.active = false;
	return found;
}

/* Build the result JSON and check it is valid; caller frees. */
static void sim_json(struct tctx *t, struct agent *a, int code, struct jw *w)
{
	jw_init(w);
	sim.active = true;
	json_build(w, a, code, now_ns());
	sim.active = false;
	CHECK(t, jw_done(w));
	CHECK(t, w->buf && json_valid(w->buf));
}

static void sim_free(struct agent *a)
{
	series_free(&a->series);
	free(a);
}

static uint64_t series_sum(const struct series *s, size_t off)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		sum += *(const uint64_t *)((const char *)&s->b[i] + off);
	return sum;
}

#define SERIES_SUM(s, f) series_sum((s), offsetof(struct bucket, f))

/* Counts that must agree with the model in every scenario. */
static void check_truth(struct tctx *t, const struct camera *c,
			const struct sim_cam *sc)
{
	uint64_t per_ctrl = 0;
	size_t i;

	CHECK(t, c->seq.dequeued == sc->dequeued);
	CHECK(t, c->seq.emitted == sc->emitted_seen);
	CHECK(t, c->seq.dropped == c->seq.emitted - c->seq.dequeued);
	CHECK(t, c->seq.anomalies == 0);
	CHECK(t, c->key_press == sc->key_press);
	CHECK(t, c->key_release == sc->key_release);
	CHECK(t, c->key_other_codes == 0 && c->syn_dropped == 0);
	CHECK(t, c->input_events == 2 * (sc->key_press + sc->key_release));
	for (i = 0; i < c->ctrls.n; i++)
		per_ctrl += c->ctrls.c[i].events;
	CHECK(t, per_ctrl == c->seq.dequeued);
	CHECK(t, c->ctrls.unknown_events == 0);
	CHECK(t, c->ev_value == c->seq.dequeued);
}

/* Every field the JSON comment in result.h documents is present. */
static void check_documented_fields(struct tctx *t, const char *j)
{
	static const char *const keys[] = {
		"version", "tool", "error", "exit_code", "stopped_by", "options",
		"duration_s", "wait_s", "cycle_hz", "phys_hz", "cameras",
		"devices", "initial", "series", "wait_elapsed_s",
		"run_elapsed_s", "cameras_requested", "cameras_found", "totals",
		"events_dequeued", "events_emitted", "events_dropped",
		"seq_anomalies", "key_events", "syn_dropped", "phys_reads",
		"phys_mismatches", "cycles", "opens", "disconnects",
		"reconnects", "errors", "scheduling", "cycle_ticks",
		"cycle_ticks_skipped", "phys_ticks", "phys_ticks_skipped",
		"index", "video_device", "bus_info", "card", "found",
		"present_at_end", "input_device", "input_name", "input_phys",
		"input_match", "events_value_change", "events_flags_change",
		"events_range_change", "events_other_type",
		"events_unknown_control", "controls", "class_controls",
		"used_queryctrl", "subscriptions", "subscribe_failures",
		"per_control", "id", "name", "type", "subscribed", "events",
		"key_press", "key_release", "key_repeat", "key_other_codes",
		"input_events", "phys_last_mismatch", "open_failures",
		"absent_s", "attach_s_total", "attach_s_max", "cycle_s_max",
		"input_found", "input_disconnects", "errors_unrecorded",
		"interval_s", "truncated", "input_error", "controls_untracked",
		"agent_start_s", "run_start_s", "wakeups", "cpu_user_s", "cpu_sys_s",
		"batch_s", "naps", "guest_cpu_busy_s",
	};
	char v[64];
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!json_field(j, keys[i], v, sizeof(v))) {
			t->checks_failed++;
			fprintf(stderr, "    field \"%s\" missing\n", keys[i]);
		}
	}
}

static void test_sim_basic(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct camera *c;
	struct jw w;
	char v[256];

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.0;
	a->opt.wait_s = 1.0;
	a->opt.phys_hz = 100.0;
	a->opt.series = true;
	CHECK(t, sim_run(a));
	c = &a->cam[0];
	CHECK(t, a->ncam == 1 && cameras_found(a) == 1);
	CHECK_STR(t, c->video_path, "/dev/video0");
	CHECK_STR(t, c->bus_info, "usb-0000:00:04.0-1");
	CHECK_STR(t, c->card, "Fake UVC Camera");
	CHECK_STR(t, c->input_path, "/dev/input/event3");
	CHECK_STR(t, c->input_phys, "usb-0000:00:04.0-1/button");
	CHECK_STR(t, c->input_match, "phys");
	CHECK(t, c->present_at_end);
	CHECK(t, c->ctrls.n == SIM_NCTRL && c->class_controls == 1);
	CHECK(t, c->subscribed == SIM_NCTRL && c->subscribe_failed == 0);
	CHECK(t, c->opens == 1 && c->cycles == 0 && c->disconnects == 0);
	check_truth(t, c, sc);
	/* nothing was lost at close: every emitted event is accounted */
	CHECK(t, c->seq.dequeued >= 1900 && c->seq.dequeued <= 2001);
	CHECK(t, c->seq.dropped >= 380 && c->seq.dropped <= 401);
	CHECK(t, c->key_press >= 490 && c->key_press <= 501);
	/* one EVIOCGPHYS more: the settle step's look before the first open */
	CHECK(t, c->phys_reads == sc->phys_ioctls - c->input_found - 1);
	CHECK(t, c->phys_reads >= 195 && c->phys_reads <= 200);
	CHECK(t, c->phys_mismatches == 0);
	CHECK(t, a->errs.total == 0);
	CHECK_STR(t, a->stopped_by, "duration");
	CHECK(t, a->series.n == 2 || a->series.n == 3);
	CHECK(t, SERIES_SUM(&a->series, dequeued) == c->seq.dequeued);
	CHECK(t, SERIES_SUM(&a->series, emitted) == c->seq.emitted);
	CHECK(t, SERIES_SUM(&a->series, keys) ==
		 c->key_press + c->key_release);
	CHECK(t, a->series.b[0].dequeued > 900 && a->series.b[1].dequeued > 900);
	CHECK(t, sim_open_handles() == 0);
	CHECK(t, agent_final_code(a) == EXIT_AGENT_OK);

	/* the --live record for the second 1 .. 2 */
	jw_init(&w);
	tick_json(&w, a, a->run_start_ns + 2 * NSEC_PER_SEC + 5);
	CHECK(t, jw_done(&w) && json_valid(w.buf));
	if (w.buf) {
		char want[96];

		CHECK(t, json_field(w.buf, "t", v, sizeof(v)));
		CHECK_STR(t, v, "1");
		snprintf(want, sizeof(want), "%" PRIu64,
			 a->series.b[1].dequeued);
		CHECK(t, json_field(w.buf, "events_dequeued", v, sizeof(v)));
		CHECK_STR(t, v, want);
		snprintf(want, sizeof(want), "%" PRIu64, c->seq.emitted);
		CHECK(t, json_field(w.buf, "total_events_emitted", v,
				    sizeof(v)));
		CHECK_STR(t, v, want);
	}
	jw_free(&w);

	sim_json(t, a, 0, &w);
	if (w.buf) {
		CHECK(t, json_field(w.buf, "version", v, sizeof(v)));
		CHECK_STR(t, v, "1");
		CHECK(t, json_field(w.buf, "error", v, sizeof(v)));
		CHECK_STR(t, v, "null");
		CHECK(t, json_field(w.buf, "video_device", v, sizeof(v)));
		CHECK_STR(t, v, "\"/dev/video0\"");
		CHECK(t, json_field(w.buf, "input_device", v, sizeof(v)));
		CHECK_STR(t, v, "\"/dev/input/event3\"");
		CHECK(t, strstr(w.buf, "\"name\":\"Brightness\"") != NULL);
		CHECK(t, strstr(w.buf, "\"series\":{\"interval_s\":1,") != NULL);
		check_documented_fields(t, w.buf);
		/* the model's clock starts at 1000 s; the camera and its input
		 * device are there at once: only the settle step's 50 ms */
		CHECK(t, json_field(w.buf, "run_start_s", v, sizeof(v)));
		CHECK_STR(t, v, "1000.050000");
	}
	jw_free(&w);
	sim_free(a);
}

/*
 * --batch: the same flood read in batches.  Every event is still counted
 * (the model's truth), with far fewer wake-ups than one per event.
 */
static uint64_t sim_batch_wakeups(struct tctx *t, double batch_s,
				  uint64_t *naps)
{
	struct agent *a;
	struct sim_cam *sc;
	uint64_t wakeups;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return 0;
	}
	a->opt.duration_s = 2.0;
	a->opt.wait_s = 1.0;
	a->opt.batch_s = batch_s;
	CHECK(t, sim_run(a));
	check_truth(t, &a->cam[0], sc);
	CHECK(t, a->cam[0].seq.emitted >= 1900);
	CHECK(t, a->cam[0].key_press >= 490);
	CHECK_STR(t, a->stopped_by, "duration");
	CHECK(t, sim_open_handles() == 0);
	wakeups = a->wakeups;
	*naps = a->naps;
	sim_free(a);
	return wakeups;
}

static void test_sim_batch(struct tctx *t)
{
	uint64_t naps0, naps;
	uint64_t every = sim_batch_wakeups(t, 0.0, &naps0);
	uint64_t batched = sim_batch_wakeups(t, 0.010, &naps);

	CHECK(t, naps0 == 0);
	CHECK(t, every >= 1000);		/* one per status interrupt */
	CHECK(t, batched >= 150 && batched <= 210);	/* one per 10 ms */
	CHECK(t, naps >= 150 && naps <= 210);
}

static void test_sim_cycles(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct camera *c;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.0;
	a->opt.cycle_hz = 10.0;
	CHECK(t, sim_run(a));
	c = &a->cam[0];
	CHECK(t, c->cycles == 19);		/* 0.1 s .. 1.9 s */
	CHECK(t, c->opens == c->cycles + 1);
	CHECK(t, sc->video_opens == c->opens + 1);	/* + wait-phase probe */
	CHECK(t, sc->subscribe_ok == SIM_NCTRL * c->opens);
	CHECK(t, c->subscribed == SIM_NCTRL * c->opens);
	CHECK(t, c->disconnects == 0 && c->open_failures == 0);
	check_truth(t, c, sc);
	CHECK(t, c->seq.dequeued > 1800);
	CHECK(t, SERIES_SUM(&a->series, cycles) == c->cycles);
	CHECK(t, a->cycle.fired == 19 && a->cycle.skipped == 0);
	CHECK(t, sim_open_handles() == 0);
	sim_free(a);
}

static void test_sim_hotplug(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct camera *c;
	struct jw w;
	size_t i;
	bool enodev = false;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->unplug_at = sim.now + 700 * 1000000ULL;
	sc->replug_at = sim.now + 1200 * 1000000ULL;
	sc->replug_video_num = 2;	/* comes back under other numbers */
	sc->replug_meta_num = 3;
	sc->replug_input_num = 5;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.0;
	a->opt.phys_hz = 50.0;
	a->opt.series = true;
	CHECK(t, sim_run(a));
	c = &a->cam[0];
	CHECK(t, c->disconnects == 1 && c->reconnects == 1);
	CHECK(t, c->input_disconnects == 1 && c->input_found == 2);
	CHECK(t, c->absent_ns >= 500000000ULL && c->absent_ns <= 560000000ULL);
	CHECK(t, c->present_at_end);
	CHECK_STR(t, c->video_path, "/dev/video2");
	CHECK_STR(t, c->input_path, "/dev/input/event5");
	CHECK(t, c->opens == 2);
	check_truth(t, c, sc);
	CHECK(t, a->series.n >= 2);
	CHECK(t, SERIES_SUM(&a->series, disconnects) == 1);
	/* events flowed again after the reconnect (second 1 .. 2) */
	CHECK(t, a->series.n >= 2 && a->series.b[1].dequeued > 400);
	for (i = 0; i < a->errs.n; i++)
		if (a->errs.e[i].err == ENODEV)
			enodev = true;
	CHECK(t, enodev);
	CHECK(t, sim_open_handles() == 0);
	CHECK(t, agent_final_code(a) == EXIT_AGENT_OK);
	sim_json(t, a, 0, &w);
	if (w.buf)
		CHECK(t, strstr(w.buf, "\"errno\":\"ENODEV\"") != NULL);
	jw_free(&w);
	sim_free(a);
}

static void test_sim_phys_mismatch(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct camera *c;
	struct jw w;
	char v[256];

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->corrupt_phys_on = 11;	/* the 1st read is input discovery */
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.5;
	a->opt.phys_hz = 100.0;
	CHECK(t, sim_run(a));
	c = &a->cam[0];
	CHECK(t, c->phys_reads >= 45);
	CHECK(t, c->phys_mismatches == 1);
	CHECK_STR(t, c->phys_bad, "usb-0000:00:04.0-1/bu\x7ftton");
	sim_json(t, a, 0, &w);
	if (w.buf) {
		CHECK(t, json_field(w.buf, "phys_last_mismatch", v, sizeof(v)));
		CHECK_STR(t, v, "\"usb-0000:00:04.0-1/bu\\u007ftton\"");
	}
	jw_free(&w);
	sim_free(a);
}

static void test_sim_late_camera(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	double waited;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->plugged = false;
	sc->plug_at = sim.now + 500 * 1000000ULL;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 1.0;
	a->opt.wait_s = 2.0;
	CHECK(t, sim_run(a));
	waited = secs_since(a->t0_ns, a->wait_done_ns);
	CHECK(t, waited >= 0.5 && waited <= 0.56);
	CHECK(t, a->cam[0].seq.dequeued > 900);
	CHECK(t, a->cam[0].reconnects == 0 && a->cam[0].disconnects == 0);
	check_truth(t, &a->cam[0], sc);
	sim_free(a);
}

static void test_sim_no_camera(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->plugged = false;		/* never appears */
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.wait_s = 1.0;
	CHECK(t, !sim_run(a));
	CHECK(t, secs_since(a->t0_ns, a->wait_done_ns) >= 1.0);
	CHECK(t, secs_since(a->t0_ns, a->wait_done_ns) < 1.06);
	CHECK_STR(t, a->stopped_by, "wait-timeout");
	CHECK(t, strstr(a->error, "no uvcvideo camera appeared within 1.0 s") &&
		 strstr(a->error, "no /dev/video* node"));
	CHECK(t, sim_open_handles() == 0);
	sim_free(a);
}

static void test_sim_two_cameras(struct tctx *t)
{
	struct sim_cam *s0, *s1;
	struct agent *a;

	sim_reset();
	s0 = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	s1 = sim_add_cam("usb-0000:00:04.0-2", 2, 3, 4);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 1.0;
	a->opt.cameras = 2;
	a->opt.cycle_hz = 4.0;
	CHECK(t, sim_run(a));
	CHECK(t, a->ncam == 2 && cameras_found(a) == 2);
	CHECK_STR(t, a->cam[0].bus_info, "usb-0000:00:04.0-1");
	CHECK_STR(t, a->cam[1].bus_info, "usb-0000:00:04.0-2");
	CHECK_STR(t, a->cam[1].input_path, "/dev/input/event4");
	check_truth(t, &a->cam[0], s0);
	check_truth(t, &a->cam[1], s1);
	CHECK(t, a->cam[0].cycles == 3 && a->cam[1].cycles == 3);
	CHECK(t, SUM(a, seq.dequeued) ==
		 a->cam[0].seq.dequeued + a->cam[1].seq.dequeued);
	CHECK(t, a->cam[1].seq.dequeued > 900);
	CHECK(t, sim_open_handles() == 0);
	sim_free(a);
}

static void test_sim_device_option(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *s1;

	sim_reset();
	sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	s1 = sim_add_cam("usb-0000:00:04.0-2", 2, 3, 4);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.5;
	a->opt.devices[0] = "/dev/video2";
	a->opt.ndevices = 1;
	CHECK(t, sim_run(a));
	CHECK(t, a->ncam == 1);
	CHECK_STR(t, a->cam[0].bus_info, "usb-0000:00:04.0-2");
	CHECK_STR(t, a->cam[0].input_path, "/dev/input/event4");
	check_truth(t, &a->cam[0], s1);
	CHECK(t, sim.cam[0].video_opens == 0);	/* the other was not touched */
	sim_free(a);
}

static void test_sim_fewer_cameras(struct tctx *t)
{
	struct agent *a;
	struct jw w;
	char v[64];

	sim_reset();
	sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.3;
	a->opt.wait_s = 0.2;
	a->opt.cameras = 2;
	CHECK(t, sim_run(a));
	CHECK(t, cameras_found(a) == 1);
	CHECK(t, a->cam[0].seq.dequeued > 200);
	CHECK(t, agent_final_code(a) == EXIT_AGENT_FEWER);
	CHECK(t, strstr(a->error, "only 1 of 2 cameras") != NULL);
	sim_json(t, a, EXIT_AGENT_FEWER, &w);
	if (w.buf) {
		CHECK(t, json_field(w.buf, "cameras_found", v, sizeof(v)));
		CHECK_STR(t, v, "1");
		CHECK(t, json_field(w.buf, "exit_code", v, sizeof(v)));
		CHECK_STR(t, v, "3");
	}
	jw_free(&w);
	sim_free(a);
}

static void test_sim_input_by_name(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *s0, *s1;

	sim_reset();
	s0 = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	s1 = sim_add_cam("usb-0000:00:04.0-2", 2, 3, 4);
	s0->phys_suffix = "/input0";	/* not what uvcvideo writes */
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.3;
	a->opt.cameras = 2;
	CHECK(t, sim_run(a));
	/* same card name on both: camera 0 must not take camera 1's device */
	CHECK_STR(t, a->cam[0].input_path, "/dev/input/event3");
	CHECK_STR(t, a->cam[0].input_match, "name");
	CHECK_STR(t, a->cam[0].input_phys, "usb-0000:00:04.0-1/input0");
	CHECK_STR(t, a->cam[1].input_path, "/dev/input/event4");
	CHECK_STR(t, a->cam[1].input_match, "phys");
	check_truth(t, &a->cam[0], s0);
	check_truth(t, &a->cam[1], s1);
	sim_free(a);
}

static void test_sim_queryctrl_fallback(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->no_ext_ctrl = true;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.3;
	CHECK(t, sim_run(a));
	CHECK(t, a->cam[0].used_queryctrl);
	CHECK(t, a->cam[0].ctrls.n == SIM_NCTRL);
	CHECK(t, a->cam[0].class_controls == 1);
	CHECK(t, a->cam[0].subscribed == SIM_NCTRL);
	CHECK_STR(t, a->cam[0].ctrls.c[3].name, "Hue");
	CHECK(t, a->cam[0].seq.dequeued > 200);
	CHECK(t, a->errs.total == 0);
	check_truth(t, &a->cam[0], sc);
	sim_free(a);
}

static void test_sim_no_input_device(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct jw w;
	char v[320];

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->no_input = true;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 1.2;	/* shorter than the grace: noted at end */
	a->opt.phys_hz = 100.0;
	CHECK(t, sim_run(a));
	CHECK(t, a->cam[0].input_fd < 0 && a->cam[0].input_found == 0);
	CHECK(t, strstr(a->cam[0].input_error,
			"phys usb-0000:00:04.0-1/button") != NULL);
	CHECK(t, a->cam[0].phys_reads == 0 && a->cam[0].key_press == 0);
	CHECK(t, a->cam[0].seq.dequeued > 1000);	/* events still counted */
	/* before the first open the settle step waited for the input device
	 * (uvcvideo makes it right before the status URB) and gave up */
	CHECK(t, secs_since(a->t0_ns, a->run_start_ns) >= SETTLE_MAX_S);
	CHECK(t, secs_since(a->t0_ns, a->run_start_ns) < SETTLE_MAX_S + 0.1);
	CHECK(t, sim_open_handles() == 0);
	sim_json(t, a, 0, &w);
	if (w.buf) {
		CHECK(t, json_field(w.buf, "input_device", v, sizeof(v)));
		CHECK_STR(t, v, "null");
		CHECK(t, json_field(w.buf, "input_error", v, sizeof(v)));
		CHECK(t, strncmp(v, "\"no /dev/input/event* with phys", 31) == 0);
	}
	jw_free(&w);
	sim_free(a);

	/* noted during the run once the grace time has passed */
	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->no_input = true;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.6;
	sim.active = true;
	agent_apply_options(a);
	CHECK(t, wait_for_cameras(a, &(sigset_t){ 0 }));
	sim.sigterm_at = sim.now + 1900 * 1000000ULL;
	run_loop(a, &(sigset_t){ 0 });
	sim.active = false;
	clear_signal();
	/* not during the run (grace), only at its end */
	CHECK(t, a->cam[0].input_error[0] != '\0');
	CHECK(t, a->cam[0].input_error_ns - a->run_start_ns ==
		 1900 * 1000000ULL);
	sim_free(a);

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->no_input = true;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.6;
	sim.active = true;
	agent_apply_options(a);
	CHECK(t, wait_for_cameras(a, &(sigset_t){ 0 }));
	sim.sigterm_at = sim.now + 2600 * 1000000ULL - 1;
	run_loop(a, &(sigset_t){ 0 });
	sim.active = false;
	clear_signal();
	/* the input rescan at 2.0 s, once the grace has passed */
	CHECK(t, a->cam[0].input_error[0] != '\0');
	CHECK(t, a->cam[0].input_error_ns - a->run_start_ns ==
		 2000 * 1000000ULL);
	sim_free(a);

	/* with an input device the field is null */
	sim_reset();
	sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.2;
	CHECK(t, sim_run(a));
	CHECK(t, a->cam[0].input_error[0] == '\0');
	sim_free(a);
}

static void test_sim_sigterm(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	double ran;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sim.sigterm_at = sim.now + 1300 * 1000000ULL;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 10.0;
	CHECK(t, sim_run(a));
	clear_signal();
	CHECK_STR(t, a->stopped_by, "signal:SIGTERM");
	ran = secs_since(a->run_start_ns, sim.now);
	/* SIGTERM 1.3 s after the start; the run began after the 50 ms settle */
	CHECK(t, ran >= 1.25 && ran < 1.26);
	CHECK(t, a->cam[0].seq.dequeued > 1000);
	check_truth(t, &a->cam[0], sc);
	CHECK(t, sim_open_handles() == 0);
	CHECK(t, agent_final_code(a) == EXIT_AGENT_OK);
	sim_free(a);
}

/* ------------------------------------------------------------------------
 * Command-line checks of the built binary
 */

struct run {
	int status;		/* exit code, or 128 + signal */
	char out[65536];
	double secs;
};

/* Run the agent with args; send SIGTERM after term_ms (0: never). */
static bool run_agent(const char *agent, const char *const *args,
		      int term_ms, struct run *r)
{
	const char *argv[32];
	int pfd[2], st, i, n = 0;
	uint64_t start = now_ns();
	size_t len = 0;
	pid_t pid;

	argv[n++] = agent;
	for (i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe(pfd) < 0)
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(pfd[1], STDOUT_FILENO);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		close(pfd[0]);
		execv(agent, (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	if (term_ms > 0) {
		struct timespec ts = { term_ms / 1000,
				       (long)(term_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		kill(pid, SIGTERM);
	}
	for (;;) {
		ssize_t k = read(pfd[0], r->out + len, sizeof(r->out) - 1 - len);

		if (k <= 0)
			break;
		len += (size_t)k;
	}
	r->out[len] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &st, 0) < 0)
		return false;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->secs = (double)(now_ns() - start) / 1e9;
	return true;
}

/* The JSON of the single result line, or NULL. */
static const char *result_json(struct tctx *t, struct run *r)
{
	char *line = strstr(r->out, AGENT_LINE_PREFIX);
	char *nl;

	CHECK(t, line == r->out);	/* nothing else on stdout before */
	if (!line)
		return NULL;
	nl = strchr(line, '\n');
	CHECK(t, nl && nl[1] == '\0');	/* exactly one line */
	if (nl)
		*nl = '\0';
	line += strlen(AGENT_LINE_PREFIX);
	CHECK(t, json_valid(line));
	return line;
}

static const char *agent_path;

static void test_cli_help(struct tctx *t)
{
	static const char *const args[] = { "--help", NULL };
	struct run *r = calloc(1, sizeof(*r));

	if (!r || !run_agent(agent_path, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == 0);
	CHECK(t, strstr(r->out, "--cycle-hz") && strstr(r->out, "--phys-hz"));
	CHECK(t, strstr(r->out, "Exit status") != NULL);
	/* no result line (the text mentions the prefix mid-line only) */
	CHECK(t, strncmp(r->out, AGENT_LINE_PREFIX, 17) != 0);
	CHECK(t, strstr(r->out, "\n" AGENT_LINE_PREFIX) == NULL);
	free(r);
}

static void test_cli_usage_error(struct tctx *t)
{
	static const char *const args[] = { "--duration", "soon", NULL };
	struct run *r = calloc(1, sizeof(*r));
	const char *j;
	char v[256];

	if (!r || !run_agent(agent_path, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == EXIT_AGENT_USAGE);
	j = result_json(t, r);
	if (j) {
		CHECK(t, json_field(j, "version", v, sizeof(v)));
		CHECK_STR(t, v, "1");
		CHECK(t, json_field(j, "error", v, sizeof(v)));
		CHECK(t, strncmp(v, "\"usage: --duration", 18) == 0);
		CHECK(t, json_field(j, "exit_code", v, sizeof(v)));
		CHECK_STR(t, v, "64");
	}
	free(r);
}

static void test_cli_no_camera(struct tctx *t)
{
	static const char *const args[] = { "--device", "/nonexistent/video9",
					    "--wait", "0.3", "--series", NULL };
	struct run *r = calloc(1, sizeof(*r));
	const char *j;
	char v[512];

	if (!r || !run_agent(agent_path, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == EXIT_AGENT_NO_CAMERA);
	CHECK(t, r->secs >= 0.25 && r->secs < 5.0);
	j = result_json(t, r);
	if (j) {
		CHECK(t, json_field(j, "error", v, sizeof(v)));
		CHECK(t, strstr(v, "no uvcvideo camera appeared within 0.3 s"));
		CHECK(t, strstr(v, "/nonexistent/video9: open: No such file"));
		CHECK(t, json_field(j, "stopped_by", v, sizeof(v)));
		CHECK_STR(t, v, "\"wait-timeout\"");
		CHECK(t, json_field(j, "cameras_found", v, sizeof(v)));
		CHECK_STR(t, v, "0");
	}
	free(r);
}

static void test_cli_not_v4l2(struct tctx *t)
{
	static const char *const args[] = { "--device", "/dev/null",
					    "--wait", "0", NULL };
	struct run *r = calloc(1, sizeof(*r));
	const char *j;
	char v[512];

	if (!r || !run_agent(agent_path, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == EXIT_AGENT_NO_CAMERA);
	j = result_json(t, r);
	if (j) {
		CHECK(t, json_field(j, "error", v, sizeof(v)));
		CHECK(t, strstr(v, "/dev/null: VIDIOC_QUERYCAP") != NULL);
	}
	free(r);
}

static void test_cli_output_file(struct tctx *t)
{
	char path[] = "/tmp/dmaharness-agent-test-XXXXXX";
	const char *args[] = { "--device", "/nonexistent/video9", "--wait",
			       "0", "--output", path, NULL };
	struct run *r = calloc(1, sizeof(*r));
	char file[65536];
	ssize_t n;
	int fd;

	fd = mkstemp(path);
	if (!r || fd < 0 || !run_agent(agent_path, args, 0, r)) {
		t->checks_failed++;
		free(r);
		if (fd >= 0)
			close(fd);
		return;
	}
	n = read(fd, file, sizeof(file) - 1);
	close(fd);
	unlink(path);
	CHECK(t, n > 0);
	if (n > 0) {
		file[n] = '\0';
		/* the same single line as on stdout */
		CHECK_STR(t, file, r->out);
		CHECK(t, strncmp(file, AGENT_LINE_PREFIX, 17) == 0);
	}
	CHECK(t, r->status == EXIT_AGENT_NO_CAMERA);
	free(r);
}

static void test_cli_sigterm(struct tctx *t)
{
	static const char *const args[] = { "--device", "/nonexistent/video9",
					    "--wait", "30", NULL };
	struct run *r = calloc(1, sizeof(*r));
	const char *j;
	char v[512];

	if (!r || !run_agent(agent_path, args, 300, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == EXIT_AGENT_NO_CAMERA);
	CHECK(t, r->secs < 5.0);
	j = result_json(t, r);
	if (j) {
		CHECK(t, json_field(j, "stopped_by", v, sizeof(v)));
		CHECK_STR(t, v, "\"signal:SIGTERM\"");
		CHECK(t, json_field(j, "error", v, sizeof(v)));
		CHECK(t, strstr(v, "before any camera appeared") != NULL);
	}
	free(r);
}

/* ------------------------------------------------------------------------ */

struct test {
	const char *name;
	void (*fn)(struct tctx *t);
	bool needs_agent;
};

static const struct test tests[] = {
	{ "json_validator_self", test_json_validator_self, false },
	{ "json_document", test_json_document, false },
	{ "json_escapes", test_json_escapes, false },
	{ "json_utf8", test_json_utf8, false },
	{ "json_misuse", test_json_misuse, false },
	{ "json_numbers", test_json_numbers, false },
	{ "json_large", test_json_large, false },
	{ "args_defaults", test_args_defaults, false },
	{ "args_values", test_args_values, false },
	{ "args_errors", test_args_errors, false },
	{ "args_devices", test_args_devices, false },
	{ "seq_contiguous", test_seq_contiguous, false },
	{ "seq_gaps", test_seq_gaps, false },
	{ "seq_anomalies", test_seq_anomalies, false },
	{ "seq_wrap_and_sessions", test_seq_wrap_and_sessions, false },
	{ "ticker_off", test_ticker_off, false },
	{ "ticker_grid", test_ticker_grid, false },
	{ "ticker_burst", test_ticker_burst, false },
	{ "series", test_series, false },
	{ "errtab", test_errtab, false },
	{ "ctrltab", test_ctrltab, false },
	{ "input_phys", test_input_phys, false },
	{ "sim_basic", test_sim_basic, false },
	{ "sim_batch", test_sim_batch, false },
	{ "cpu_busy", test_cpu_busy, false },
	{ "sim_cycles", test_sim_cycles, false },
	{ "sim_hotplug", test_sim_hotplug, false },
	{ "sim_phys_mismatch", test_sim_phys_mismatch, false },
	{ "sim_late_camera", test_sim_late_camera, false },
	{ "sim_no_camera", test_sim_no_camera, false },
	{ "sim_two_cameras", test_sim_two_cameras, false },
	{ "sim_device_option", test_sim_device_option, false },
	{ "sim_fewer_cameras", test_sim_fewer_cameras, false },
	{ "sim_input_by_name", test_sim_input_by_name, false },
	{ "sim_sigterm", test_sim_sigterm, false },
	{ "sim_no_input_device", test_sim_no_input_device, false },
	{ "sim_queryctrl_fallback", test_sim_queryctrl_fallback, false },
	{ "cli_help", test_cli_help, true },
	{ "cli_usage_error", test_cli_usage_error, true },
	{ "cli_no_camera", test_cli_no_camera, true },
	{ "cli_not_v4l2", test_cli_not_v4l2, true },
	{ "cli_sigterm", test_cli_sigterm, true },
	{ "cli_output_file", test_cli_output_file, true },
};

int main(int argc, char **argv)
{
	unsigned int passed = 0, failed = 0;
	size_t i;

	agent_path = argc > 1 ? argv[1] : NULL;
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		struct tctx t = { 0 };

		if (tests[i].needs_agent && !agent_path) {
			printf("FAIL %s (no agent binary given as argv[1])\n",
			       tests[i].name);
			failed++;
			continue;
		}
		tests[i].fn(&t);
		printf("%s %s\n", t.checks_failed ? "FAIL" : "ok  ",
		       tests[i].name);
		fflush(stdout);
		if (t.checks_failed)
			failed++;
		else
			passed++;
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
