/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel side of dmaharness-failnth: the fault-injection knobs in
 * debugfs, the driver's folder in sysfs, and the writes to its bind and
 * unbind files, each from a forked task (fail-nth is per task) that is
 * given a time limit.
 */
#ifndef DMAHARNESS_FAILNTH_SYS_H
#define DMAHARNESS_FAILNTH_SYS_H

#include <limits.h>
#include <stddef.h>

#include "failnth.h"
#include "failnth_steps.h"

struct fn_sys {
	char drvdir[PATH_MAX];		/* <root>/sys/bus/usb/drivers/<driver> */
	char failnth[PATH_MAX];		/* <root>/proc/thread-self/fail-nth */
	char debugfs[PATH_MAX];		/* <root>/sys/kernel/debug */
	double timeout_s;
	int out_fd;
};

void fn_sys_init(struct fn_sys *y, const struct fn_options *o, int out_fd);
/* Set the debugfs knobs; -1 with a message naming the missing file. */
int fn_sys_setup_faults(struct fn_sys *y, char *err, size_t errlen);
/* The interfaces bound to the driver now, sorted; -1 with a message. */
int fn_sys_list(struct fn_sys *y, struct fn_names *out, char *err, size_t errlen);
/* ops reaching the kernel through y. */
void fn_sys_ops(struct fn_sys *y, struct fn_ops *ops);

#endif
