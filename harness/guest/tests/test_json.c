// SPDX-License-Identifier: GPL-2.0-only
/* The JSON writer (json.c). */
#include <stdint.h>
#include <string.h>

#include "json.h"
#include "tests.h"

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

TEST_LIST(json_tests,
	{ "json_validator_self", test_json_validator_self, false },
	{ "json_document", test_json_document, false },
	{ "json_escapes", test_json_escapes, false },
	{ "json_utf8", test_json_utf8, false },
	{ "json_misuse", test_json_misuse, false },
	{ "json_numbers", test_json_numbers, false },
	{ "json_large", test_json_large, false }
)
