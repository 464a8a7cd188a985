/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dmaharness-failnth's command line: defaults, the --help text and the
 * parser.  No I/O.
 */
#ifndef DMAHARNESS_FAILNTH_OPTIONS_H
#define DMAHARNESS_FAILNTH_OPTIONS_H

#include <stddef.h>

#include "failnth.h"

extern const char failnth_usage[];

void fn_options_default(struct fn_options *o);
/* "probe disconnect", "probe,disconnect", "disconnect": o->paths, in order. */
int fn_parse_paths(const char *s, struct fn_options *o, char *err, size_t errlen);
/* 0 (o->help set for --help) or -1 with a message in err. */
int fn_parse_args(int argc, char **argv, struct fn_options *o,
		  char *err, size_t errlen);

#endif
