// SPDX-License-Identifier: MIT
/* The command line and the text helpers (cli.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tests.h"

#define ARGS(...) ((char *const[]){ "dmaharness-capture", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((const char *[]){ "x", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(o, err, ...) \
	cap_parse_args(ARGC(__VA_ARGS__), ARGS(__VA_ARGS__), (o), (err), sizeof(err))

static void test_parse_device(void **state)
{
	struct cap_opts o;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&o, err, "--device", "046d:0825"), 0);
	assert_int_equal(o.sel, CAP_SEL_DEVICE);
	assert_int_equal(o.vid, 0x046d);
	assert_int_equal(o.pid, 0x0825);
	assert_null(o.output);
	assert_null(o.name);
	assert_int_equal(o.timeout_ms, CAP_TIMEOUT_DEFAULT);
	assert_int_equal(o.speed, -1);
	assert_false(o.detach);
	assert_false(o.json);

	assert_int_equal(PARSE(&o, err, "--device=1D6B:2", "-o", "out.profile", "--detach",
			       "--json", "-v", "-v", "--timeout", "250", "--name", "my-cam",
			       "--description", "Caf\xc3\xa9 cam", "--source", "fixed",
			       "--speed", "high"), 0);
	assert_int_equal(o.vid, 0x1d6b);
	assert_int_equal(o.pid, 0x0002);
	assert_string_equal(o.output, "out.profile");
	assert_true(o.detach);
	assert_true(o.json);
	assert_int_equal(o.verbose, 2);
	assert_int_equal(o.timeout_ms, 250);
	assert_string_equal(o.name, "my-cam");
	assert_string_equal(o.description, "Caf\xc3\xa9 cam");
	assert_string_equal(o.source, "fixed");
	assert_int_equal(o.speed, PROFILE_SPEED_HIGH);

	/* --timeout, the old spelling of --request-timeout, sets the same */
	assert_int_equal(PARSE(&o, err, "--device", "1:2", "--request-timeout", "300"), 0);
	assert_int_equal(o.timeout_ms, 300);
	assert_int_equal(PARSE(&o, err, "--device", "1:2", "--request-timeout=301"), 0);
	assert_int_equal(o.timeout_ms, 301);
	assert_int_equal(PARSE(&o, err, "--device", "1:2", "--timeout=302"), 0);
	assert_int_equal(o.timeout_ms, 302);

	assert_int_equal(PARSE(&o, err, "--device", "1:2", "-ox.profile"), 0);
	assert_string_equal(o.output, "x.profile");
	assert_int_equal(PARSE(&o, err, "--device", "1:2", "-o", "-"), 0);
	assert_null(o.output);          /* `-`: stdout */
}

static void test_parse_bus_node(void **state)
{
	struct cap_opts o;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&o, err, "--bus", "3", "--address", "17"), 0);
	assert_int_equal(o.sel, CAP_SEL_BUSADDR);
	assert_int_equal(o.bus, 3);
	assert_int_equal(o.address, 17);

	assert_int_equal(PARSE(&o, err, "--node", "/dev/bus/usb/001/002", "--source", "fixed",
			       "-o", "/tmp/x.profile"), 0);
	assert_int_equal(o.sel, CAP_SEL_NODE);
	assert_string_equal(o.node, "/dev/bus/usb/001/002");
	assert_string_equal(o.source, "fixed");

	assert_int_equal(PARSE(&o, err, "--help"), 0);
	assert_true(o.help);
	assert_int_equal(PARSE(&o, err, "--node", "x", "-h"), 0);
	assert_true(o.help);
}

static void expect_usage_error(int argc, char *const argv[], const char *words)
{
	struct cap_opts o;
	char err[256];

	assert_int_equal(cap_parse_args(argc, argv, &o, err, sizeof(err)), -1);
	if (!strstr(err, words))
		fail_msg("error \"%s\" does not say \"%s\"", err, words);
}

#define USAGE_ERROR(words, ...) expect_usage_error(ARGC(__VA_ARGS__), ARGS(__VA_ARGS__), words)

static void test_parse_errors(void **state)
{
	(void)state;
	expect_usage_error(1, (char *const[]){ "dmaharness-capture", NULL }, "no device chosen");
	USAGE_ERROR("VID:PID", "--device", "046d");
	USAGE_ERROR("VID:PID", "--device", "046d:08250");
	USAGE_ERROR("VID:PID", "--device", "xyz:0825");
	USAGE_ERROR("VID:PID", "--device", ":0825");
	USAGE_ERROR("needs a value", "--device");
	USAGE_ERROR("given twice", "--device", "1:2", "--device", "1:3");
	USAGE_ERROR("go together", "--bus", "1");
	USAGE_ERROR("go together", "--address", "4");
	USAGE_ERROR("bus number", "--bus", "0", "--address", "1");
	USAGE_ERROR("bus number", "--bus", "-1", "--address", "1");
	USAGE_ERROR("address", "--bus", "1", "--address", "128");
	USAGE_ERROR("address", "--bus", "1", "--address", "4x");
	USAGE_ERROR("one way", "--device", "1:2", "--node", "/dev/bus/usb/001/002");
	USAGE_ERROR("one way", "--bus", "1", "--address", "2", "--node", "n");
	USAGE_ERROR("a name is", "--device", "1:2", "--name", "My Cam");
	USAGE_ERROR("a name is", "--device", "1:2", "--name", "-cam");
	USAGE_ERROR("a name is", "--device", "1:2", "--name",
		    "a23456789012345678901234567890123456789012");
	USAGE_ERROR("UTF-8", "--device", "1:2", "--description", "bad \xff byte");
	USAGE_ERROR("UTF-8", "--device", "1:2", "--source", "\xc3");
	USAGE_ERROR("milliseconds", "--device", "1:2", "--timeout", "0");
	USAGE_ERROR("milliseconds", "--device", "1:2", "--timeout", "60001");
	USAGE_ERROR("--request-timeout 0: expected milliseconds", "--device", "1:2",
		    "--request-timeout", "0");
	USAGE_ERROR("--request-timeout needs a value", "--device", "1:2", "--request-timeout");
	USAGE_ERROR("low, full", "--device", "1:2", "--speed", "wireless");
	USAGE_ERROR("unknown option --frobnicate", "--device", "1:2", "--frobnicate");
	USAGE_ERROR("unknown option --detached", "--device", "1:2", "--detached");
	USAGE_ERROR("unexpected argument", "--device", "1:2", "extra");
	USAGE_ERROR("file name", "--device", "1:2", "-o", "");
}

static void test_name_valid(void **state)
{
	(void)state;
	assert_true(cap_name_valid("c922"));
	assert_true(cap_name_valid("hd-pro-webcam-c920"));
	assert_true(cap_name_valid("0"));
	assert_true(cap_name_valid("a234567890123456789012345678901234567890"));   /* 40 */
	assert_false(cap_name_valid(""));
	assert_false(cap_name_valid("-a"));
	assert_false(cap_name_valid("A"));
	assert_false(cap_name_valid("a_b"));
	assert_false(cap_name_valid("a2345678901234567890123456789012345678901"));  /* 41 */
}

static void expect_name(const char *product, const char *want)
{
	char name[PROFILE_NAME_MAX + 1];

	cap_default_name(product, 0x046d, 0x0825, name);
	assert_string_equal(name, want);
	assert_true(cap_name_valid(name));
}

static void test_default_name(void **state)
{
	(void)state;
	expect_name("HD Pro Webcam C920", "hd-pro-webcam-c920");
	expect_name("  USB2.0 Camera  ", "usb2-0-camera");
	expect_name("Keyboard K120 (TM)!", "keyboard-k120-tm");
	expect_name("Cam\xc3\xa9ra \xe2\x80\x94 Pro", "cam-ra-pro");
	expect_name("___", "usb-046d-0825");
	expect_name("", "usb-046d-0825");
	expect_name(NULL, "usb-046d-0825");
	expect_name("\xe6\x91\x84\xe5\x83\x8f\xe5\xa4\xb4", "usb-046d-0825");
	/* 40 characters at most, never ending in a dash */
	expect_name("Very Long Product Name Of Some Camera Module Vendor",
		    "very-long-product-name-of-some-camera");
	expect_name("abcdefghijabcdefghijabcdefghijabcdefghi jk",
		    "abcdefghijabcdefghijabcdefghijabcdefghi");
	expect_name("abcdefghijabcdefghijabcdefghijabcdefghijXYZ",
		    "abcdefghijabcdefghijabcdefghijabcdefghij");
}

static void test_defaults_text(void **state)
{
	char *s;

	(void)state;
	s = cap_default_description("Logitech", "HD Webcam C270", 0x046d, 0x0825);
	assert_string_equal(s, "Logitech HD Webcam C270 (046d:0825)");
	free(s);
	s = cap_default_description(NULL, "Webcam", 0x046d, 0x0825);
	assert_string_equal(s, "Webcam (046d:0825)");
	free(s);
	s = cap_default_description("Acme", "", 0x1, 0x2);
	assert_string_equal(s, "Acme (0001:0002)");
	free(s);
	s = cap_default_description(NULL, NULL, 0xabcd, 0xef01);
	assert_string_equal(s, "USB device (abcd:ef01)");
	free(s);
	s = cap_default_source(0x046d, 0x0825, (time_t)1764892800); /* 2025-12-05 00:00 UTC */
	assert_string_equal(s, "capture of 046d:0825 on 2025-12-05");
	free(s);
}

static void test_utf8(void **state)
{
	(void)state;
	assert_true(cap_utf8_valid(""));
	assert_true(cap_utf8_valid("plain"));
	assert_true(cap_utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x93\xb7"));
	assert_false(cap_utf8_valid("\x80"));
	assert_false(cap_utf8_valid("\xc0\xaf"));               /* overlong */
	assert_false(cap_utf8_valid("\xed\xa0\x80"));           /* surrogate */
	assert_false(cap_utf8_valid("\xf4\x90\x80\x80"));       /* > U+10FFFF */
	assert_false(cap_utf8_valid("\xe2\x82"));               /* cut short */
}

static void test_json_string(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	cap_json_string(f, "a\"b\\c\nd\x01\xc3\xa9");
	fclose(f);
	assert_string_equal(buf, "\"a\\\"b\\\\c\\nd\\u0001\xc3\xa9\"");
	free(buf);
}

static void test_profile_string(void **state)
{
	struct profile p;
	struct profile_string s[] = {
		{ 0x0407, 2, (char *)"Kamera", 0 },
		{ 0x0409, 2, (char *)"Camera", 0 },
		{ 0x0407, 1, (char *)"Firma", 0 },
	};

	(void)state;
	memset(&p, 0, sizeof(p));
	p.strings = s;
	p.n_strings = 3;
	assert_null(cap_profile_string(&p, 2));         /* no string 0 */
	p.has_string0 = true;
	p.string0_len = 4;
	memcpy(p.string0, "\x07\x04\x09\x04", 4);
	assert_string_equal(cap_profile_string(&p, 2), "Camera");   /* English first */
	assert_null(cap_profile_string(&p, 1));         /* not in English */
	assert_null(cap_profile_string(&p, 0));
	p.string0_len = 2;
	assert_string_equal(cap_profile_string(&p, 2), "Kamera");
	assert_string_equal(cap_profile_string(&p, 1), "Firma");
}

static void test_usage_text(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	cap_usage(f);
	fclose(f);
	/* the questions --help must answer */
	assert_non_null(strstr(buf, "--device VID:PID"));
	assert_non_null(strstr(buf, "--bus N --address N"));
	assert_non_null(strstr(buf, "--node PATH"));
	assert_non_null(strstr(buf, "--detach"));
	assert_non_null(strstr(buf, "Exit status"));
	assert_non_null(strstr(buf, "  3  the profile was written"));
	assert_non_null(strstr(buf, "on stderr when the profile"));
	assert_non_null(strstr(buf, "never a vendor request"));
	free(buf);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_parse_device),
	cmocka_unit_test(test_parse_bus_node),
	cmocka_unit_test(test_parse_errors),
	cmocka_unit_test(test_name_valid),
	cmocka_unit_test(test_default_name),
	cmocka_unit_test(test_defaults_text),
	cmocka_unit_test(test_utf8),
	cmocka_unit_test(test_json_string),
	cmocka_unit_test(test_profile_string),
	cmocka_unit_test(test_usage_text),
};

const struct CMUnitTest *cli_tests(size_t *n)
{
	*n = sizeof(tests) / sizeof(tests[0]);
	return tests;
}
