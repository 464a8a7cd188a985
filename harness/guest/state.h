/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's state, types only: one struct agent for the whole run, one
 * struct camera per camera slot.  agent, camera, input, video, run and
 * result all work on it.  It is a header of its own so that their headers
 * take the types from here rather than from each other, and the includes
 * run one way: state.h <- agent.h, camera.h, input.h, video.h, ...
 */
#ifndef DMAHARNESS_AGENT_STATE_H
#define DMAHARNESS_AGENT_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "counters.h"
#include "options.h"
#include "timing.h"

struct camera {
	unsigned int index;
	bool found;		/* seen as a uvcvideo camera at least once */
	bool present_at_end;
	char video_path[64];
	char bus_info[48];
	char card[48];
	int fd;			/* video fd, -1 when closed or absent */
	bool absent;		/* disconnected, waiting to come back */
	uint64_t absent_since_ns;

	char input_path[64];
	char input_name[80];
	char input_phys[80];	/* as read when found */
	char input_match[8];	/* "phys" or "name" */
	int input_fd;
	char phys_bad[80];	/* last phys string that differed */
	char input_error[320];	/* why no input device, while there is none */
	uint64_t attached_ns;	/* last (re)attach */
	uint64_t input_error_ns;	/* when input_error was written */

	/* --hold stream: a second fd of the video node, streaming */
	int hold_fd;		/* -1 when none */
	bool hold_streaming;	/* STREAMON succeeded on hold_fd */
	bool hold_at_end;	/* still streaming when the run ended */
	uint64_t hold_starts;	/* STREAMONs that succeeded */
	uint64_t hold_failures;	/* attempts that failed */
	uint64_t hold_buffers;	/* buffers queued by the last start */

	struct ctrltab ctrls;
	struct seqtrack seq;

	uint64_t class_controls;
	uint64_t subscribed;
	uint64_t subscribe_failed;
	uint64_t async_sets;	/* --set-async: S_CTRLs that succeeded */
	uint64_t async_set_failures;
	bool used_queryctrl;	/* VIDIOC_QUERY_EXT_CTRL unsupported */
	uint64_t ev_value;	/* V4L2_EVENT_CTRL_CH_VALUE set */
	uint64_t ev_flags;	/* V4L2_EVENT_CTRL_CH_FLAGS set */
	uint64_t ev_range;	/* V4L2_EVENT_CTRL_CH_RANGE set */
	uint64_t ev_other_type;
	uint64_t key_press;
	uint64_t key_release;
	uint64_t key_repeat;
	uint64_t key_other_codes;	/* EV_KEY with code != KEY_CAMERA */
	uint64_t input_events;	/* all struct input_event read */
	uint64_t syn_dropped;
	uint64_t phys_reads;
	uint64_t phys_mismatches;
	uint64_t opens;
	uint64_t open_failures;
	uint64_t cycles;
	uint64_t disconnects;
	uint64_t reconnects;
	uint64_t input_found;
	uint64_t input_disconnects;
	uint64_t absent_ns;	/* total time disconnected */
	uint64_t attach_ns_total;	/* open + enumerate + subscribe + input */
	uint64_t attach_ns_max;
	uint64_t cycle_ns_max;	/* drain + close + open + subscribe */
};

struct agent {
	struct options opt;
	uint64_t t0_ns;		/* agent start */
	uint64_t run_start_ns;	/* end of the wait phase */
	uint64_t run_end_ns;
	uint64_t wait_done_ns;
	struct camera cam[MAX_CAMERAS];
	unsigned int ncam;	/* slots in use (found, or given by --device) */
	enum hold_mode hold;	/* resolved: HOLD_STREAM or HOLD_NONE */
	char hold_reason[320];	/* why (auto's evidence, or the option) */
	struct errtab errs;
	struct series series;
	struct ticker cycle, phys, rescan, input_rescan, live;
	uint64_t wakeups;	/* main-loop ppoll() returns */
	uint64_t naps;		/* --batch waits before polling */
	/* guest-wide non-idle CPU ticks (/proc/stat) at the run's start, end */
	uint64_t busy_start, busy_end;
	bool busy_known;
	uint64_t next_poll_ns;	/* with --batch: no poll before this */
	char last_scan_note[160];	/* why the last scan found nothing */
	const char *stopped_by;
	char stop_signal[16];
	char error[256];
	bool running;
};

#endif
