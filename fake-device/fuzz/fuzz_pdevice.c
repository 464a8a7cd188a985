// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the profile-driven device (fake-uvc --profile) under
 * arbitrary usb-guest traffic.  The first input byte picks the profile and
 * the run's options; the rest is the usbredir stream after a well-formed
 * guest hello, as in fuzz_device.c.  Two profiles: the built-in camera as
 * `fake-uvc --dump-profile` writes it (uvc-control on 0x83, UVC class
 * rules, SET_CUR store) and an embedded composite device (two
 * configurations, alternate settings, HID, bulk endpoints held and
 * cancelled, wildcard/stall/vendor/store rules and one interrupt IN
 * endpoint per pattern; hid's reports are 4, 8, 20 and 2 bytes long on an
 * 8-byte endpoint, so the 20-byte one makes the 8-byte one stay out too).
 * Both are written to temporary files once, since fake_dev_new() loads
 * its profile from a file.
 *
 * Input byte 0: bit 0 the composite profile (else the built-in camera),
 * bit 1 --rate 500, bit 6 --count 40, bit 7 --hotplug 0.5.  The seeds
 * (fuzz/seeds-pdevice) are written by fuzz/pdevice_seeds.py; with
 * FUZZ_PDEVICE_LOG set in the environment the device logs what it does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <usbredirparser.h>

#include "builtin.h"
#include "device.h"
#include "stream.h"

static const char composite[] =
	"dmaharness-usb-profile 1\n"
	"name fuzz-composite\n"
	"speed full\n"
	"device 12 01 01 02 00 00 00 40 34 12 78 56 00 01 01 02 03 02\n"
	"qualifier 0a 06 00 02 00 00 00 40 01 00\n"
	"config 09 02 a5 00 05 01 00 c0 32\n"
	"\t09 04 00 00 01 0e 01 00 00\n"
	"\t07 05 83 03 10 00 01\n"
	"\t09 04 02 00 00 0e 02 00 00\n"
	"\t09 04 02 01 01 0e 02 00 00\n"
	"\t07 05 81 05 00 02 01\n"
	"\t09 04 03 00 02 03 00 00 00\n"
	"\t09 21 11 01 00 01 22 27 00\n"
	"\t07 05 84 03 08 00 0a\n"
	"\t07 05 8a 03 08 00 0a\n"
	"\t09 04 04 00 01 ff 00 00 00\n"
	"\t07 05 85 03 20 00 01\n"
	"\t09 04 04 01 03 ff 00 00 00\n"
	"\t07 05 82 02 40 00 00\n"
	"\t07 05 02 02 40 00 00\n"
	"\t07 05 85 03 06 00 01\n"
	"\t09 04 05 00 04 ff 00 00 00\n"
	"\t07 05 86 03 04 00 01\n"
	"\t07 05 87 03 02 00 01\n"
	"\t07 05 88 03 40 00 01\n"
	"\t07 05 89 03 10 00 02\n"
	"config 09 02 12 00 01 02 00 80 32\n"
	"\t09 04 00 00 00 ff 00 00 00\n"
	"bos 05 0f 0c 00 01 07 10 02 02 00 00 00\n"
	"string 0 09 04 07 04\n"
	"string 0x0409 1 \"Acme\"\n"
	"string 0x0409 2 \"Fuzz Device\"\n"
	"string 0x0409 3 \"0001\"\n"
	"string 0x0407 1 \"Acme\"\n"
	"string 0x0407 2 \"Fuzzger\\xc3\\xa4t\"\n"
	"string 0x0407 3 \"0001\"\n"
	"get 0x81 0x06 0x2200 0x0003 = 05 01 09 00 a1 01 85 01 75 08 95 03 81 02\n"
	"\t85 02 75 08 95 07 81 02 85 03 75 08 95 13 81 02 85 04 75 01 95 01 81 02\n"
	"\tc0\n"
	"get 0xa1 0x81 0x0200 0x0100 = 34 12\n"
	"get 0xa1 0x81 0x0300 0x0200 = 07 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"
	"get 0xa1 0x81 0x0400 0x0100 stall\n"
	"get 0xa1 0x81 0x0100 0x0002 = 01 02 03 04\n"
	"get 0xa1 0x87 * 0x0100 = aa bb\n"
	"get 0xa1 0x84 * * = 0f\n"
	"get 0xa1 0x82 * * stall\n"
	"get 0xa1 0x01 * * =\n"
	"get 0xc0 0x05 0x0000 0x0001 = de ad be ef\n"
	"set 0x21 0x01 * * store 0x81\n"
	"set 0x21 0x0a * * ack\n"
	"set 0x21 0x09 0x0200 * store 0x01\n"
	"set 0x40 0x07 * * ack\n"
	"interrupt 0x83 pattern uvc-mixed\n"
	"interrupt 0x84 packet 01 02 03\n"
	"interrupt 0x84 packet 04\n"
	"interrupt 0x84 packet 05 06 07 08 09 0a 0b 0c\n"
	"interrupt 0x85 pattern uvc-malformed\n"
	"interrupt 0x86 pattern random\n"
	"interrupt 0x87 pattern zero\n"
	"interrupt 0x88 pattern uvc-button\n"
	"interrupt 0x89 pattern uvc-random\n"
	"interrupt 0x8a pattern hid\n";

static char builtin_path[64], composite_path[64];

static void remove_files(void)
{
	if (builtin_path[0])
		unlink(builtin_path);
	if (composite_path[0])
		unlink(composite_path);
}

static FILE *temp_file(char *path, size_t size)
{
	int fd;
	FILE *f;

	snprintf(path, size, "/tmp/fuzz-pdevice-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		perror("fuzz-pdevice: temporary profile");
		abort();
	}
	return f;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct plan_report rep;
	struct profile p;
	char err[256];
	FILE *f;

	(void)argc;
	(void)argv;
	atexit(remove_files);
	if (builtin_profile(&p, NULL, &rep, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz-pdevice: %s\n", err);
		abort();
	}
	f = temp_file(builtin_path, sizeof(builtin_path));
	if (profile_write(f, &p) < 0 || fclose(f) != 0)
		abort();
	profile_free(&p);
	f = temp_file(composite_path, sizeof(composite_path));
	if (fputs(composite, f) < 0 || fclose(f) != 0)
		abort();
	/* both must load, or every run would test the error path only */
	for (int i = 0; i < 2; i++) {
		if (profile_load_file(i ? composite_path : builtin_path, &p, err,
				      sizeof(err)) < 0) {
			fprintf(stderr, "fuzz-pdevice: %s\n", err);
			abort();
		}
		profile_free(&p);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct fuzz_hello *h = fuzz_guest_hello();
	uint8_t opt = size ? data[0] : 0;
	size_t rest = size ? size - 1 : 0;
	uint8_t *buf = malloc(h->len + rest + 1);
	struct fuzz_input in = { buf, h->len + rest, 0 };
	struct fake_io io = { &in, fuzz_input_read, fuzz_sink_write };
	struct fake_cfg cfg;
	struct fake_dev *d;
	char err[256];
	double now;

	if (!buf)
		return 0;
	memcpy(buf, h->data, h->len);
	if (rest)
		memcpy(buf + h->len, data + 1, rest);

	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = opt & 0x01 ? composite_path : builtin_path;
	cfg.flood.pattern = PATTERN_CONTROL;
	cfg.flood.seed = size;
	cfg.flood.rate = opt & 0x02 ? 500 : 0;
	cfg.flood.count = opt & 0x40 ? 40 : 0;
	cfg.flood.window = 64;
	cfg.hotplug_period = opt & 0x80 ? 0.5 : 0;
	cfg.hotplug_off = 0.1;
	cfg.batch = 0.001;
	cfg.max_buffered = 1u << 16;
	cfg.log = NULL;
	if (getenv("FUZZ_PDEVICE_LOG")) {  /* to see what a seed reaches */
		cfg.log = stderr;
		cfg.verbose = 3;
	}

	d = fake_dev_new(&cfg, &io, 0.0, err, sizeof(err));
	if (!d) {
		fprintf(stderr, "fuzz-pdevice: %s\n", err);
		abort();
	}
	now = fuzz_drive(d, &in);
	{
		/* the JSON line walks every endpoint's counters */
		static FILE *null;

		if (!null)
			null = fopen("/dev/null", "w");
		if (null)
			fake_dev_json(d, null, "exit", "fuzz", now + 1.0);
	}
	fake_dev_free(d);
	free(buf);
	return 0;
}
