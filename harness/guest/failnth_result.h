/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dmaharness-failnth's output: the step markers and the result line.
 *
 * The result line, `DMAHARNESS-FAILNTH {json}`, JSON version 1:
 *   version        1
 *   driver         the driver given
 *   interfaces     the set, sorted; interfaces[0] is the one written
 *   max, settle_ms the options
 *   paths          an object, one member per path run, in the order run:
 *     "probe" | "disconnect": {
 *       steps        [{n, pid, injected (true, false, null: unknown),
 *                      errno (of the bind/unbind write, 0 success),
 *                      bound_after (the set's interfaces bound after
 *                      settling), died (null, or how the task ended:
 *                      "timeout", "signal-9", ...)}]
 *       completed    an N was reached that the operation did not get to
 *                    (its step has injected false): every call was tried
 *       capped       stopped at max with every N injected
 *       error        null, or why the path stopped otherwise
 *       bound_at_end the set's interfaces bound after the path (and its
 *                    rebind)
 *     }
 *   error          null, or why nothing ran (set-up)
 *   exit_code      the tool's exit status
 */
#ifndef DMAHARNESS_FAILNTH_RESULT_H
#define DMAHARNESS_FAILNTH_RESULT_H

#include <stddef.h>

#include "failnth.h"
#include "json.h"

/* The marker lines, newline included; the length written (< len). */
size_t fn_format_begin(char *out, size_t len, enum fn_path p, unsigned int n,
		       int pid);
size_t fn_format_end(char *out, size_t len, const struct fn_names *set,
		     enum fn_path p, const struct fn_step *st);
/* The JSON document (without prefix) into w. */
void fn_result_json(struct jw *w, const struct fn_state *s);
/* Write the result line to fd in one write; 0, or -1 (errno set). */
int fn_emit_result(int fd, const struct fn_state *s);
/* snprintf for messages where a cut is fine (no truncation warning). */
void fn_fmt(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
