// SPDX-License-Identifier: MIT
/* Test profiles shared by several test groups. */
#include "fixtures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#ifndef FAKE_DEVICE_DIR
#define FAKE_DEVICE_DIR "."
#endif

const char fx_multi[] =
	"dmaharness-usb-profile 1\n"
	"name pm-test\n"
	"speed high\n"
	"device 12 01 01 02 00 00 00 40 34 12 78 56 00 01 01 02 03 02\n"
	"qualifier 0a 06 00 02 00 00 00 40 01 00\n"
	"config 09 02 79 00 04 01 00 c0 32\n"
	"\t09 04 00 00 01 0e 01 00 00\n"
	"\t07 05 83 03 10 00 04\n"
	"\t09 04 02 00 00 0e 02 00 00\n"
	"\t09 04 02 01 01 0e 02 00 00\n"
	"\t07 05 81 05 00 02 01\n"
	"\t09 04 03 00 01 03 00 00 00\n"
	"\t09 21 11 01 00 01 22 05 00\n"
	"\t07 05 84 03 08 00 0a\n"
	"\t09 04 04 00 01 ff 00 00 00\n"
	"\t07 05 85 03 20 00 01\n"
	"\t09 04 04 01 03 ff 00 00 00\n"
	"\t07 05 82 02 00 02 00\n"
	"\t07 05 02 02 00 02 00\n"
	"\t07 05 85 03 06 00 01\n"
	"config 09 02 12 00 01 02 00 80 32\n"
	"\t09 04 00 00 00 ff 00 00 00\n"
	"bos 05 0f 0c 00 01 07 10 02 02 00 00 00\n"
	"string 0 09 04 07 04\n"
	"string 0x0409 1 \"Acme\"\n"
	"string 0x0409 2 \"Test Device\"\n"
	"string 0x0409 3 \"0001\"\n"
	"string 0x0407 1 \"Acme GmbH\"\n"
	"string 0x0407 2 \"Testger\\xc3\\xa4t\"\n"
	"string 0x0407 3 \"0001\"\n"
	"get 0x81 0x06 0x2200 0x0003 = 05 01 09 02 a1\n"
	"get 0xa1 0x81 0x0200 0x0100 = 34 12\n"
	"get 0xa1 0x81 0x0300 0x0200 = 07\n"
	"get 0xa1 0x81 0x0400 0x0100 stall\n"
	"get 0xa1 0x81 0x0100 0x0002 = 01 02 03 04\n"
	"get 0xa1 0x87 * 0x0100 = aa bb\n"
	"get 0xa1 0x84 * * = 0f\n"
	"get 0xa1 0x82 * * stall\n"
	"get 0xc0 0x05 0x0000 0x0001 = de ad be ef\n"
	"set 0x21 0x01 * * store 0x81\n"
	"set 0x21 0x0a * * ack\n"
	"set 0x40 0x07 * * ack\n"
	"interrupt 0x83 pattern uvc-control\n"
	"interrupt 0x84 packet 01 02 03\n"
	"interrupt 0x84 packet 04\n"
	"interrupt 0x84 packet 05 06 07 08 09 0a 0b\n";

const char fx_hid[] =
	"dmaharness-usb-profile 1\n"
	"name rt-hid\n"
	"description \"a small HID mouse for the round trip\"\n"
	"source \"hand-written\"\n"
	"speed full\n"
	"device 12 01 01 02 00 00 00 08 6d 04 3c c0 10 02 01 02 00 01\n"
	"config 09 02 22 00 01 01 00 a0 32\n"
	"\t09 04 00 00 01 03 01 02 00\n"
	"\t09 21 11 01 00 01 22 04 00\n"
	"\t07 05 81 03 08 00 0a\n"
	"bos 05 0f 0c 00 01 07 10 02 02 00 00 00\n"
	"string 0 09 04 07 04\n"
	"string 0x0409 1 \"Acme\"\n"
	"string 0x0409 2 \"Mouse\"\n"
	"string 0x0407 1 \"Acme\"\n"
	"string 0x0407 2 \"Maus\"\n"
	"get 0x81 0x06 0x2200 0x0000 = 05 01 09 02\n"
	"get 0xc0 0x01 0x0000 0x0000 = 42\n"
	"set 0x21 0x09 * * ack\n"
	"set 0x21 0x0a * * ack\n"
	"set 0x21 0x0b * * ack\n"
	"interrupt 0x81 packet 01 00 00\n"
	"interrupt 0x81 packet 02 00 00\n";

const char fx_cdc[] =
	"dmaharness-usb-profile 1\n"
	"name rt-cdc-acm\n"
	"speed high\n"
	"device 12 01 00 02 ef 02 01 40 83 04 40 57 00 02 01 02 03 01\n"
	"qualifier 0a 06 00 02 ef 02 01 40 01 00\n"
	"config 09 02 4b 00 02 01 00 c0 32\n"
	"\t08 0b 00 02 02 02 01 04\n"
	"\t09 04 00 00 01 02 02 01 00\n"
	"\t05 24 00 10 01\n"
	"\t05 24 01 00 01\n"
	"\t04 24 02 02\n"
	"\t05 24 06 00 01\n"
	"\t07 05 82 03 10 00 10\n"
	"\t09 04 01 00 02 0a 00 00 05\n"
	"\t07 05 81 02 00 02 00\n"
	"\t07 05 01 02 00 02 00\n"
	"string 0 09 04\n"
	"string 0x0409 1 \"STMicroelectronics\"\n"
	"string 0x0409 2 \"Virtual COM Port\"\n"
	"string 0x0409 3 \"00000001\"\n"
	"string 0x0409 4 \"CDC\"\n"
	"string 0x0409 5 \"data\"\n"
	"get 0xa1 0x21 0x0000 0x0000 = 00 c2 01 00 00 00 08\n"
	"set 0x21 0x20 * * store 0x21\n"
	"set 0x21 0x22 * * ack\n"
	"set 0x21 0x23 * * ack\n"
	"interrupt 0x82 pattern random\n";

const char fx_loop[] =
	"dmaharness-usb-profile 1\n"
	"name loop-hid\n"
	"speed full\n"
	"device 12 01 00 02 00 00 00 08 6d 04 3c c0 10 02 01 02 00 01\n"
	"config 09 02 39 00 02 01 00 a0 32\n"
	"\t09 04 00 00 01 03 01 02 00\n"
	"\t09 21 11 01 00 01 22 04 00\n"
	"\t07 05 81 03 08 00 0a\n"
	"\t09 04 01 00 02 ff 00 00 00\n"
	"\t07 05 82 02 40 00 00\n"
	"\t07 05 02 02 40 00 00\n"
	"string 0 09 04\n"
	"string 0x0409 1 \"Acme\"\n"
	"string 0x0409 2 \"Loop Mouse\"\n"
	"get 0x81 0x06 0x2200 0x0000 = 05 01 09 02\n"
	"set 0x21 0x0a * * ack\n"
	"interrupt 0x81 packet 01 00 00\n"
	"interrupt 0x81 packet 02 01 ff\n"
	"interrupt 0x81 packet 03 ff 01 7f\n";

void fx_parse(const char *text, struct profile *p)
{
	char err[256];

	if (profile_parse(text, strlen(text), "fixture", p, err, sizeof(err)))
		fail_msg("parse: %s", err);
	if (profile_validate(p, err, sizeof(err))) {
		profile_free(p);
		fail_msg("validate: %s", err);
	}
}

char *fx_tempfile(const char *text)
{
	char *path = strdup("/tmp/fake-uvc-test-XXXXXX");
	size_t len = strlen(text);
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	return path;
}

char *fx_path(const char *rel)
{
	size_t n = strlen(FAKE_DEVICE_DIR) + 1 + strlen(rel) + 1;
	char *s = malloc(n);

	assert_non_null(s);
	snprintf(s, n, "%s/%s", FAKE_DEVICE_DIR, rel);
	return s;
}
