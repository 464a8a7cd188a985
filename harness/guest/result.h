/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Output: the result line at the end and the --live records.
 *
 * The result line is `DMAHARNESS-AGENT ` followed by one JSON object:
 *
 *   version            1 (bumped when a field changes meaning or goes away)
 *   tool               "dmaharness-agent"
 *   error              null, or what went wrong (usage, no camera, fewer
 *                      cameras than asked, camera never opened, ppoll error)
 *   exit_code          the process's exit status (see --help)
 *   stopped_by         "duration" | "signal:SIGTERM|SIGINT|SIGHUP" |
 *                      "wait-timeout" | "usage" | "error"
 *   options            the effective options (duration_s, wait_s, cycle_hz,
 *                      phys_hz, batch_s, cameras, devices[], initial, hold
 *                      (as given: "auto" | "stream" | "none"), series)
 *   hold               the status hold that ran: "stream" | "none" (null
 *                      when no camera appeared, so nothing was decided)
 *   hold_reason        why: "--hold X given", or auto's evidence ("auto:
 *                      /proc/kallsyms has uvc_pm_get, ...")
 *   wait_elapsed_s     time from start until the cameras were found
 *   run_elapsed_s      time from the end of the wait to the result
 *   agent_start_s, run_start_s: CLOCK_MONOTONIC seconds (the clock of
 *                      printk timestamps) of the agent's start and of
 *                      second 0 of the series (null before a run)
 *   cameras_requested, cameras_found
 *   totals             sums over cameras: events_dequeued, events_emitted,
 *                      events_dropped, seq_anomalies, key_events,
 *                      syn_dropped, phys_reads, phys_mismatches, cycles,
 *                      opens, disconnects, reconnects, hold_failures, errors
 *   scheduling         cycle_ticks(_skipped), phys_ticks(_skipped): ticks
 *                      of the rate schedulers and ticks given up because
 *                      the agent was late (achieved rate = ticks / run time);
 *                      wakeups (main-loop ppoll returns), naps (--batch
 *                      waits before a poll), guest_cpu_busy_s (non-idle
 *                      CPU seconds of the whole guest during the run,
 *                      from /proc/stat; null if unreadable), cpu_user_s and
 *                      cpu_sys_s (the agent's own CPU time, getrusage)
 *   cameras[]          per camera:
 *     index, video_device, bus_info, card, found, present_at_end,
 *     input_device, input_name, input_phys, input_match ("phys" | "name"),
 *     input_error (null, or why no input device was found)
 *     events_dequeued     V4L2 events read with VIDIOC_DQEVENT
 *     events_emitted      events the driver queued on our file handles,
 *                         from the sequence numbers (last seen + 1 per open
 *                         file handle); includes slave-control events and,
 *                         with --initial, the initial event per subscription
 *     events_dropped      emitted - dequeued: overwritten in the one-element
 *                         per-control queue before we read them
 *     seq_anomalies       sequence numbers that repeated or went backwards
 *     events_value_change / _flags_change / _range_change: changes bits
 *     events_other_type, events_unknown_control
 *     controls, class_controls, controls_untracked (beyond the table),
 *     used_queryctrl, subscriptions,
 *     subscribe_failures, per_control[] {id, name, type, subscribed, events}
 *     key_events (press + release), key_press, key_release, key_repeat,
 *     key_other_codes, input_events (all records read), syn_dropped
 *     (evdev buffer overruns), phys_reads, phys_mismatches,
 *     phys_last_mismatch (EVIOCGPHYS differing from the first read)
 *     hold_streaming      the hold fd was streaming when the run ended
 *     hold_starts, hold_failures: STREAMONs of the hold fd (one, and one
 *                         more per reconnect) and attempts that failed
 *     hold_buffers        MMAP buffers queued by the last start
 *     opens, open_failures, cycles, disconnects, reconnects, absent_s,
 *     attach_s_total, attach_s_max (open + enumerate + subscribe + input
 *     lookup after (re)appearing), cycle_s_max (drain + close + reopen +
 *     subscribe), input_found, input_disconnects
 *   errors[]           one per (op, errno): op, errno ("ENODEV"), message,
 *                      count, first_context, first_t_s (since agent start)
 *   errors_unrecorded  errors of kinds beyond the table's size
 *   series             with --series: interval_s (1), truncated, and arrays
 *                      indexed by second since the run started:
 *                      events_dequeued, events_emitted, events_dropped,
 *                      key_events, phys_reads, cycles, disconnects
 *
 * With --live, stderr gets `DMAHARNESS-AGENT-TICK {json}` each second: t (the
 * second's index), that second's events_dequeued, events_emitted,
 * key_events, phys_reads, cycles, disconnects, and total_events_dequeued,
 * total_events_emitted, total_key_events so far (progress survives a panic).
 *
 * Events emitted after the last drain before a close, or pending when the
 * device disappears, cannot be seen and are not counted.
 */

#ifndef DMAHARNESS_AGENT_RESULT_H
#define DMAHARNESS_AGENT_RESULT_H

#include <stdint.h>

#include "json.h"
#include "state.h"

/* The result object (without the line prefix) into w. */
void json_build(struct jw *w, const struct agent *a, int exit_code,
		uint64_t now);
/* Print the result line (and write it to --output); returns the exit code. */
int emit_result(struct agent *a, int exit_code);
/* The --live record for the second that ended at now. */
void tick_json(struct jw *w, const struct agent *a, uint64_t now);
void emit_tick(const struct agent *a, uint64_t now);

#endif
