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

/*
 * --hold: what keeps uvcvideo's status interrupt URB running for the run
 * (hold.c).  HOLD_AUTO is resolved to one of the others before the run.
 */
enum hold_mode { HOLD_AUTO, HOLD_STREAM, HOLD_NONE };

#define DEFAULT_KALLSYMS	"/proc/kallsyms"

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
	enum hold_mode hold;
	const char *kallsyms;	/* where --hold auto looks */
	bool series;
	bool live;
	bool initial;
	bool set_async;		/* --set-async */
	bool check;		/* --check: parse only, run nothing */
	bool help;
};

/* The --help text. */
extern const char usage_text[];

void options_default(struct options *o);
/* "auto", "stream", "none" */
const char *hold_mode_name(enum hold_mode m);
int parse_args(int argc, char **argv, struct options *o,
	       char *err, size_t errlen);

#endif
