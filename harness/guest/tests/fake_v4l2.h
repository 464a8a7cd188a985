/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The simulated uvcvideo camera of the agent's unit tests (fake_v4l2.c):
 * the model's state, which the tests set up and check against, and its
 * set-up functions.
 */
#ifndef DMAHARNESS_AGENT_FAKE_V4L2_H
#define DMAHARNESS_AGENT_FAKE_V4L2_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/input.h>

#define SIM_FD_BASE	4000
#define SIM_MAX_FH	64
#define SIM_MAX_CAM	2
#define SIM_NCTRL	5
#define SIM_INPUT_Q	256

enum sim_kind { SIM_VIDEO, SIM_META, SIM_INPUT, SIM_OTHER_INPUT };

struct sim_fh {
	bool used;
	enum sim_kind kind;
	int cam;
	bool dead;
	/* video */
	uint32_t sequence;
	bool sub[SIM_NCTRL];
	bool pend[SIM_NCTRL];
	uint32_t pend_seq[SIM_NCTRL];
	bool have_dq;
	uint32_t last_dq;
	uint64_t dequeued;
	/* buffers (vb2): the handle that did REQBUFS owns the queue */
	bool owner;
	uint32_t nbufs, queued;
	bool streaming;
	/* input */
	struct input_event q[SIM_INPUT_Q];
	size_t qh, qn;
};

struct sim_cam {
	bool plugged;
	char bus_info[32];
	char card[32];
	int video_num, meta_num, input_num;
	int users;
	/*
	 * false: the status URB runs while a video handle is open (up to
	 * 6.12); true: only while a handle streams (7.x, whose open() takes
	 * no status reference; the transient references of power-managed
	 * ioctls are not modelled)
	 */
	bool pm_granular;
	int streamers;		/* handles between STREAMON and STREAMOFF */
	bool queue_owned;
	bool refuse_reqbufs;	/* REQBUFS -> ENOMEM */
	uint64_t streamons;
	uint64_t plug_at;	/* 0: plugged from the start */
	uint64_t unplug_at;	/* 0: never */
	uint64_t replug_at;	/* 0: never */
	int replug_video_num, replug_meta_num, replug_input_num;
	uint64_t emit_period_ns;
	uint64_t next_emit;
	uint64_t tick;
	bool key_down;
	/* truth */
	uint64_t key_press, key_release;
	uint64_t video_opens;
	uint64_t phys_ioctls;
	uint64_t corrupt_phys_on;	/* n-th EVIOCGPHYS returns garbage */
	const char *phys_suffix;	/* instead of "/button" */
	bool no_ext_ctrl;	/* VIDIOC_QUERY_EXT_CTRL -> ENOTTY (old kernel) */
	bool no_input;		/* no input device (6.12 without trigger) */
	uint64_t emitted_seen;	/* per closed fh: last dequeued seq + 1 */
	uint64_t dequeued;
	uint64_t subscribe_ok;
	int32_t value[SIM_NCTRL];	/* G_CTRL/S_CTRL, range 0..255 */
	uint64_t s_ctrl_ok;
};

struct sim {
	bool active;
	uint64_t now;
	struct sim_cam cam[SIM_MAX_CAM];
	int ncam;
	struct sim_fh fh[SIM_MAX_FH];
	/* one directory stream at a time */
	bool dir_open;
	char names[16][32];
	int nnames, pos;
	struct dirent de;
	int dir_token;
	uint64_t sigterm_at;	/* deliver "SIGTERM" then (0: never) */
	uint64_t stray_fds;	/* non-simulated fds seen while active */
};

/* The model (test code: the wrappers have no context argument). */
extern struct sim sim;

/* An empty model whose clock stands at 1000 s. */
void sim_reset(void);
/* A camera with /dev/videoN, its metadata node and /dev/input/eventN. */
struct sim_cam *sim_add_cam(const char *bus, int video, int meta, int input);
/* Number of simulated handles still open (leak check). */
int sim_open_handles(void);

#endif
