/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's command line: the options, their defaults, the --help text
 * and the parser.  No I/O.
 */
#ifndef DMAHARNESS_AGENT_OPTIONS_H
#define DMAHARNESS_AGENT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#define MAX_CAMERAS		8

/* Limits for options. */
#define MAX_DURATION_S		(7.0 * 24 * 3600)
#define MAX_HZ			1000000.0

struct options {
	double duration_s;
	double wait_s;
	double cycle_hz;
	double phys_hz;
	double batch_s;
	unsigned int cameras;
	unsigned int ndevices;
	const char *devices[MAX_CAMERAS];
	const char *output;
	bool series;
	bool live;
	bool initial;
	bool help;
};

/* The --help text. */
extern const char usage_text[];

void options_default(struct options *o);
int parse_args(int argc, char **argv, struct options *o,
	       char *err, size_t errlen);

#endif
