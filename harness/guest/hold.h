/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The status hold (--hold): what keeps uvcvideo's status interrupt URB
 * running for the whole run, and the auto decision.
 *
 * Up to 6.12, uvcvideo starts the status URB at the first open() of the
 * video node and stops it at the last close(): the agent's open node holds
 * it.  Its power-management rework (uvc_pm_get()/uvc_pm_put(), after 6.12)
 * takes a status reference (uvc_status_get/put) only around power-managed
 * ioctls, SEND_INITIAL subscriptions (during the subscribe), streaming
 * (STREAMON to STREAMOFF) and a pending asynchronous control set, so an open
 * node holds nothing and the flood never reaches the driver.  HOLD_STREAM
 * keeps one more file descriptor per camera streaming (MMAP buffers queued,
 * STREAMON; no frame is ever dequeued) from before the camera's first
 * subscription to the end of the run, so status_users stays above zero.
 */
#ifndef DMAHARNESS_AGENT_HOLD_H
#define DMAHARNESS_AGENT_HOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "options.h"
#include "state.h"

/* Buffers the hold asks REQBUFS for (the driver may give more). */
#define HOLD_BUFFERS	2

/*
 * --hold auto: HOLD_STREAM when the symbol table at path (the format of
 * /proc/kallsyms) has uvc_pm_get, HOLD_NONE otherwise; why says which
 * evidence decided (or that the table could not be read).
 */
enum hold_mode hold_auto(const char *path, char *why, size_t len);

/* Resolve --hold into a->hold and a->hold_reason (once, before the run). */
void hold_choose(struct agent *a);

/*
 * With a->hold == HOLD_STREAM: open the camera's node once more and start
 * streaming on it (any previous hold fd is closed first).  Returns false
 * when it could not (the error is recorded); nothing to do returns true.
 */
bool hold_start(struct agent *a, struct camera *c);

/* Stop streaming and close the hold fd; gone: the device went away. */
void hold_stop(struct agent *a, struct camera *c, bool gone);

#endif
