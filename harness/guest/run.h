/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's phases: signals, the wait for the cameras (and for their
 * status endpoint to be set up), and the main loop that drives them until
 * --duration or a signal.
 */
#ifndef DMAHARNESS_AGENT_RUN_H
#define DMAHARNESS_AGENT_RUN_H

#include <signal.h>
#include <stdbool.h>

#include "state.h"

/* Longest wait for a camera's input device before the first open. */
#define SETTLE_MAX_S	3.0

/*
 * Handle SIGTERM, SIGINT and SIGHUP: they end the run.  They stay blocked
 * except inside ppoll() with *wait_mask.
 */
int setup_signals(sigset_t *wait_mask);
/* The handler: what a stop signal does (also the tests' simulated one). */
void on_signal(int sig);
/* Forget a stop signal (the tests run the agent more than once). */
void clear_signal(void);

bool wait_for_cameras(struct agent *a, const sigset_t *mask);
void run_loop(struct agent *a, const sigset_t *mask);

#endif
