/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the host reads of the agent: its name, the prefixes of its output
 * lines, the version of the JSON they carry, and its exit codes.  A header
 * of its own so that options.c, whose --help quotes them, needs none of the
 * agent's state (state.h includes options.h).
 */
#ifndef DMAHARNESS_AGENT_PROTOCOL_H
#define DMAHARNESS_AGENT_PROTOCOL_H

#define AGENT_NAME		"dmaharness-agent"
#define AGENT_JSON_VERSION	1
#define AGENT_LINE_PREFIX	"DMAHARNESS-AGENT "
#define AGENT_TICK_PREFIX	"DMAHARNESS-AGENT-TICK "

/* Exit codes (documented in --help, stable). */
enum {
	EXIT_AGENT_OK = 0,
	EXIT_AGENT_RUNTIME = 1,	/* a camera was found but could not be used */
	EXIT_AGENT_NO_CAMERA = 2,	/* no camera appeared within --wait */
	EXIT_AGENT_FEWER = 3,	/* fewer cameras than --cameras appeared */
	EXIT_AGENT_USAGE = 64,	/* bad command line */
};

#endif
