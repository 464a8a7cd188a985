// SPDX-License-Identifier: GPL-2.0-only
/* Command-line options of dmaharness-failnth (see failnth_options.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failnth.h"
#include "io.h"
#include "failnth_options.h"

const char *const fn_path_names[FN_NPATHS] = { "probe", "disconnect" };

const char failnth_usage[] =
"Usage: " FAILNTH_NAME " --driver NAME [OPTIONS]\n"
"\n"
"Make the Nth fault-injectable call (slab and page allocations) of a USB\n"
"driver's probe or disconnect fail, for N = 1, 2, ... until the operation\n"
"completes with fewer than N such calls or N reaches --max, and record what\n"
"each step left behind.  Fault injection is per task (/proc/thread-self/\n"
"fail-nth): each step's bind or unbind is written by a new child process,\n"
"whose pid is printed (kmemleak names the task of a leaked allocation).\n"
"\n"
"Set-up: in /sys/kernel/debug/failslab/ ignore-gfp-wait=N, in\n"
"/sys/kernel/debug/fail_page_alloc/ ignore-gfp-wait=N, ignore-gfp-highmem=N\n"
"and min-order=0 (so that GFP_KERNEL allocations of any order count), and\n"
"verbose=2 in both (the kernel prints \"FAULT_INJECTION: forcing a failure.\"\n"
"and the failing call's stack).  The kernel needs CONFIG_FAULT_INJECTION,\n"
"CONFIG_FAULT_INJECTION_DEBUG_FS, CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC.\n"
"\n"
"The interfaces bound to the driver at start (/sys/bus/usb/drivers/NAME/,\n"
"entries like 1-1:1.0), of the first device in numeric order, are the set;\n"
"the first of them is the one written to bind and unbind (for uvcvideo the\n"
"control interface, whose probe claims the streaming ones).\n"
"  probe       unbind the set, then bind the first interface with fail-nth N\n"
"  disconnect  bind the set, then unbind the first interface with fail-nth N\n"
"After each path the set is bound again.\n"
"\n"
"Options (VALUE may also be given as --option=VALUE):\n"
"  --driver NAME       the USB driver (e.g. uvcvideo); required\n"
"  --paths LIST        probe, disconnect or both, separated by spaces or\n"
"                      commas, run in that order (default \"probe disconnect\")\n"
"  --max N             the largest N tried on a path (default 500)\n"
"  --settle-ms MS      wait after each step before listing what is bound\n"
"                      (work the probe queued; default 200)\n"
"  --step-timeout S    a write not back after S seconds is stuck in the\n"
"                      kernel: the run stops there (default 120)\n"
"  --root DIR          prefix of /sys and /proc (for tests on a fake tree)\n"
"  -h, --help          show this help and exit\n"
"\n"
"Output (stdout), one line per write:\n"
"  " FAILNTH_STEP_PREFIX "path=P n=N pid=PID begin\n"
"  " FAILNTH_STEP_PREFIX "path=P n=N pid=PID end injected=1|0|? errno=E\n"
"      bound=IF,IF|- [died=WHY]\n"
"around each step, and at the end `" FAILNTH_LINE_PREFIX "{json}` (fields in\n"
"harness/guest/failnth_result.h).  injected=1: the Nth call failed;\n"
"0: the operation made fewer than N such calls (the path is complete).\n"
"\n"
"Exit status: 0 the paths ran (their findings are in the JSON); 5 set-up\n"
"failed (a fault-injection file is missing, no interface is bound to the\n"
"driver; the JSON's \"error\" says which); 64 bad command line.\n";

void fn_options_default(struct fn_options *o)
{
	memset(o, 0, sizeof(*o));
	o->paths[0] = FN_PROBE;
	o->paths[1] = FN_DISCONNECT;
	o->npaths = 2;
	o->max = FN_DEFAULT_MAX;
	o->settle_ms = 200;
	o->step_timeout_s = 120.0;
	o->root = "";
}

int fn_parse_paths(const char *s, struct fn_options *o, char *err, size_t errlen)
{
	const char *p = s;
	unsigned int n = 0;

	while (*p) {
		size_t len = strcspn(p, " ,\t");
		int k, found = -1;

		if (len == 0) {
			p++;
			continue;
		}
		for (k = 0; k < FN_NPATHS; k++)
			if (strlen(fn_path_names[k]) == len &&
			    strncmp(p, fn_path_names[k], len) == 0)
				found = k;
		if (found < 0) {
			snprintf(err, errlen,
				 "--paths: unknown path '%.*s' (probe, disconnect)",
				 (int)(len < 40 ? len : 40), p);
			return -1;
		}
		for (k = 0; k < (int)n; k++)
			if (o->paths[k] == (enum fn_path)found) {
				snprintf(err, errlen, "--paths: '%s' given twice",
					 fn_path_names[found]);
				return -1;
			}
		o->paths[n++] = (enum fn_path)found;
		p += len;
	}
	if (n == 0) {
		snprintf(err, errlen, "--paths: no path given (probe, disconnect)");
		return -1;
	}
	o->npaths = n;
	return 0;
}

/* A driver's folder name: no path separators, not . or .. */
static bool driver_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 64 && !strchr(s, '/') && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0;
}

int fn_parse_args(int argc, char **argv, struct fn_options *o,
		  char *err, size_t errlen)
{
	static const char *const valued[] = {
		"--driver", "--paths", "--max", "--settle-ms", "--step-timeout",
		"--root",
	};
	int i;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = NULL;
		char name[32];
		bool known = false;
		size_t k;

		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			o->help = true;
			return 0;
		}
		if (strncmp(arg, "--", 2) != 0) {
			snprintf(err, errlen, "unexpected argument '%s'", arg);
			return -1;
		}
		if (split_option(arg, name, sizeof(name), &val) < 0) {
			snprintf(err, errlen, "unknown option '%.40s' (see --help)", arg);
			return -1;
		}
		for (k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
			if (strcmp(name, valued[k]) == 0)
				known = true;
		if (!known) {
			snprintf(err, errlen, "unknown option '%s' (see --help)", name);
			return -1;
		}
		if (!val) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs a value", name);
				return -1;
			}
			val = argv[++i];
		}

		if (strcmp(name, "--driver") == 0) {
			if (!driver_name_ok(val)) {
				snprintf(err, errlen,
					 "--driver: '%.64s' is not a driver name", val);
				return -1;
			}
			o->driver = val;
		} else if (strcmp(name, "--paths") == 0) {
			if (fn_parse_paths(val, o, err, errlen) < 0)
				return -1;
		} else if (strcmp(name, "--max") == 0) {
			if (parse_uint(val, 1, FN_LIMIT_MAX, &o->max)) {
				snprintf(err, errlen,
					 "--max: '%.40s' is not a number between 1 and %d",
					 val, FN_LIMIT_MAX);
				return -1;
			}
		} else if (strcmp(name, "--settle-ms") == 0) {
			if (parse_uint(val, 0, 60000, &o->settle_ms)) {
				snprintf(err, errlen,
					 "--settle-ms: '%.40s' is not a number of milliseconds between 0 and 60000",
					 val);
				return -1;
			}
		} else if (strcmp(name, "--step-timeout") == 0) {
			char *end;
			double v;

			errno = 0;
			v = strtod(val, &end);
			if (errno || end == val || *end || !(v >= 0.1) || v > 86400.0) {
				snprintf(err, errlen,
					 "--step-timeout: '%.40s' is not a number of seconds between 0.1 and 86400",
					 val);
				return -1;
			}
			o->step_timeout_s = v;
		} else { /* --root */
			o->root = val;
		}
	}
	if (!o->driver) {
		snprintf(err, errlen, "--driver is required (e.g. --driver uvcvideo)");
		return -1;
	}
	return 0;
}
