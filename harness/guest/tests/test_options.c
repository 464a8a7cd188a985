// SPDX-License-Identifier: GPL-2.0-only
/* Argument parsing (options.c). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "tests.h"

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
	CHECK(t, !o.set_async);
	CHECK(t, o.hold == HOLD_AUTO);
	CHECK_STR(t, o.kallsyms, "/proc/kallsyms");
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
	CHECK(t, !o.set_async);
	CHECK_STR(t, o.output, "/dev/hvc1");
	CHECK(t, o.cameras == 3);
	CHECK(t, parse(&o, err, sizeof(err), "--set-async", NULL) == 0);
	CHECK(t, o.set_async && !o.initial);

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
		{ "--hold", NULL, NULL },		/* missing value */
		{ "--hold", "bogus", NULL },
		{ "--hold", "Stream", NULL },		/* case matters */
		{ "--hold=", NULL, NULL },
		{ "--hold", "", NULL },
		{ "--kallsyms=", NULL, NULL },
		{ "--series=1", NULL, NULL },
		{ "--set-async=1", NULL, NULL },
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

static void test_args_hold(struct tctx *t)
{
	struct options o;
	char err[256];

	CHECK(t, parse(&o, err, sizeof(err), "--hold", "stream", NULL) == 0);
	CHECK(t, o.hold == HOLD_STREAM);
	CHECK(t, parse(&o, err, sizeof(err), "--hold=none", NULL) == 0);
	CHECK(t, o.hold == HOLD_NONE);
	/* the last one wins, as for every option */
	CHECK(t, parse(&o, err, sizeof(err), "--hold", "none", "--hold=auto",
		       NULL) == 0);
	CHECK(t, o.hold == HOLD_AUTO);
	CHECK(t, parse(&o, err, sizeof(err), "--kallsyms", "/tmp/k",
		       "--hold", "auto", NULL) == 0);
	CHECK_STR(t, o.kallsyms, "/tmp/k");
	CHECK(t, parse(&o, err, sizeof(err), "--hold", "always", NULL) == -1);
	CHECK(t, strstr(err, "auto, stream or none") != NULL);
	CHECK_STR(t, hold_mode_name(HOLD_AUTO), "auto");
	CHECK_STR(t, hold_mode_name(HOLD_STREAM), "stream");
	CHECK_STR(t, hold_mode_name(HOLD_NONE), "none");
}

TEST_LIST(options_tests,
	{ "args_defaults", test_args_defaults, false },
	{ "args_values", test_args_values, false },
	{ "args_errors", test_args_errors, false },
	{ "args_devices", test_args_devices, false },
	{ "args_hold", test_args_hold, false }
)
