/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dmaharness-failnth: the state shared by its files.
 *
 * The tool makes the Nth fault-injectable call (slab and page allocations,
 * with the debugfs knobs it sets) of one bind or unbind of a USB driver fail,
 * for N = 1, 2, ... (Documentation/fault-injection/fault-injection.rst,
 * /proc/thread-self/fail-nth), and records what each step left behind.
 *
 * Source layout, one concern a file (each with its header):
 *   failnth_main.c     the command line, the phases in order, the exit code
 *   failnth_options.c  options, --help text, argument parsing
 *   failnth_names.c    USB interface names: filter, order, sets, lists
 *   failnth_steps.c    the probe and disconnect paths over struct fn_ops
 *   failnth_sys.c      the kernel side of fn_ops: debugfs knobs, the
 *                      driver's sysfs folder, the forked task of each write
 *   failnth_result.c   the step markers and the result line
 * and, shared with the agent, json.c, timing.c and io.c (write_all,
 * parse_uint).
 * tests/test_failnth.c runs the paths against a modelled driver.
 *
 * Output on stdout (the init sends it to /dev/console), one write a line:
 *   DMAHARNESS-FAILNTH step path=probe n=3 pid=93 begin
 *   DMAHARNESS-FAILNTH step path=probe n=3 pid=93 end injected=1 errno=12 bound=-
 *   DMAHARNESS-FAILNTH {json}
 * (fields: failnth_result.h).  The begin line is written by the task that
 * then does the write, before it arms fail-nth; the end line after the task
 * ended and the driver had --settle-ms to finish, so the kernel's messages
 * of the step (the fault's stack, any report) fall between the two.
 */
#ifndef DMAHARNESS_FAILNTH_H
#define DMAHARNESS_FAILNTH_H

#include <stdbool.h>
#include <stdint.h>

#define FAILNTH_NAME		"dmaharness-failnth"
#define FAILNTH_JSON_VERSION	1
#define FAILNTH_LINE_PREFIX	"DMAHARNESS-FAILNTH "
#define FAILNTH_STEP_PREFIX	"DMAHARNESS-FAILNTH step "

enum {
	EXIT_FAILNTH_OK = 0,	/* the paths ran (whatever they found) */
	EXIT_FAILNTH_SETUP = 5,	/* fault injection or the driver unusable */
	EXIT_FAILNTH_USAGE = 64,	/* bad command line */
};

#define FN_MAX_IFACES		32	/* interfaces of one device (a mask bit each) */
#define FN_IFNAME_MAX		48	/* "1-1.2.3.4.5.6:1.10" and room to spare */
#define FN_DEFAULT_MAX		500
#define FN_LIMIT_MAX		1000000

enum fn_path { FN_PROBE, FN_DISCONNECT, FN_NPATHS };

/* "probe", "disconnect" */
extern const char *const fn_path_names[FN_NPATHS];

/* A sorted set of interface names; masks over it use bit i for name[i]. */
struct fn_names {
	unsigned int n;
	char name[FN_MAX_IFACES][FN_IFNAME_MAX];
};

struct fn_options {
	const char *driver;
	enum fn_path paths[FN_NPATHS];	/* in the order given */
	unsigned int npaths;
	unsigned int max;		/* the largest N tried */
	unsigned int settle_ms;		/* wait after a step before looking */
	double step_timeout_s;		/* a task not back by then is stuck */
	const char *root;		/* prefix of /sys and /proc (tests) */
	bool help;
};

/* One N of one path. */
struct fn_step {
	unsigned int n;
	int pid;		/* the task that wrote (kmemleak names it) */
	int injected;		/* 1 the Nth call failed, 0 not reached, -1 unknown */
	int err;		/* errno of the bind/unbind write, 0 success */
	uint32_t bound_after;	/* the set's interfaces bound after settling */
	char died[64];		/* "" or how the task ended abnormally */
};

struct fn_path_run {
	bool ran;
	struct fn_step *steps;
	unsigned int nsteps;
	unsigned int cap;
	bool completed;		/* reached an N the operation did not get to */
	bool capped;		/* stopped at --max, every N failed a call */
	char error[200];	/* why it stopped otherwise, "" if it did not */
	uint32_t bound_at_end;
};

struct fn_state {
	struct fn_options opt;
	struct fn_names set;	/* the device's interfaces; [0] is written */
	struct fn_path_run path[FN_NPATHS];
	char error[512];	/* setup failure, "" if none */
	int exit_code;
};

#endif
