/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The probe and disconnect paths: for N = 1, 2, ... put the device in the
 * path's starting state without faults, do the path's write with fail-nth
 * N, let the driver settle, record and print the step; stop at the first N
 * the operation did not reach, at --max, or when a task dies or hangs; bind
 * the set again at the end.  The kernel is reached through struct fn_ops
 * only (failnth_sys.c; a model in the tests).
 */
#ifndef DMAHARNESS_FAILNTH_STEPS_H
#define DMAHARNESS_FAILNTH_STEPS_H

#include <stdint.h>

#include "failnth.h"

/* What one write did. */
struct fn_write {
	int pid;		/* the task that wrote */
	int injected;		/* 1, 0, -1 unknown (n == 0: 0) */
	int err;		/* errno of the write, 0 success */
	char died[64];		/* "" or how the task ended abnormally */
	bool hung;		/* not back within the timeout: stop everything */
};

struct fn_ops {
	void *ctx;
	int out_fd;		/* markers go here */
	/*
	 * Which of the set's interfaces are bound to the driver now (bit i for
	 * set->name[i]); -1 with a message in err when that cannot be read.
	 */
	int (*bound)(void *ctx, const struct fn_names *set, uint32_t *mask,
		     char *err, size_t errlen);
	/*
	 * Write intf to the driver's attr ("bind" or "unbind") from a task of
	 * its own, under fail-nth n when n > 0 (that task prints the begin
	 * marker of path p first).  Returns 0 when the task reported back
	 * (w->err is the write's errno), -1 when it died or hung (w->died).
	 */
	int (*write)(void *ctx, const char *attr, const char *intf,
		     unsigned int n, enum fn_path p, struct fn_write *w);
	void (*settle)(void *ctx, unsigned int ms);
};

/* Run one path; -1 when a task hung (nothing more should be tried). */
int fn_run_path(struct fn_state *s, const struct fn_ops *ops, enum fn_path p);
/* Run the selected paths in order (stopping after a hang). */
void fn_run_paths(struct fn_state *s, const struct fn_ops *ops);
/* Free the steps. */
void fn_state_free(struct fn_state *s);

#endif
