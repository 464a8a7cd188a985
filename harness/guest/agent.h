/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The functions on the agent's state as a whole (agent.c): fresh state, the
 * --device slots, error recording, the exit code after a run, counts and
 * sums over the cameras.  The state itself (struct agent, struct camera) is
 * in state.h, the names and exit codes in protocol.h.  The modules that
 * drive the devices (video.c, input.c, camera.c), the phases (run.c) and the
 * output (result.c) work on this state.
 */
#ifndef DMAHARNESS_AGENT_AGENT_H
#define DMAHARNESS_AGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

/* Fresh state (a is zeroed by the caller). */
void agent_init(struct agent *a);
/* After option parsing: --device slots exist from the start. */
void agent_apply_options(struct agent *a);
/* The wait phase found nothing: say why. */
void agent_wait_failed(struct agent *a);
/* Exit code after a run; sets the error string for failures. */
int agent_final_code(struct agent *a);

/* Record an error; the first of each kind is also reported on stderr. */
void agent_err(struct agent *a, const char *op, int err,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Does this errno say the device went away? */
bool is_gone_errno(int err);

/* Cameras seen at least once. */
unsigned int cameras_found(const struct agent *a);

/* A uint64_t field of struct camera summed over the cameras. */
uint64_t sum_cam(const struct agent *a, size_t off);
#define SUM(a, field) sum_cam((a), offsetof(struct camera, field))

#endif
