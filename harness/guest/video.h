/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The camera's V4L2 video node: probe it (a uvcvideo video-capture node?),
 * enumerate its controls, subscribe to their events, dequeue and count
 * them, close it.
 */
#ifndef DMAHARNESS_AGENT_VIDEO_H
#define DMAHARNESS_AGENT_VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/videodev2.h>

#include "state.h"

enum probe_result { PROBE_OK, PROBE_NOT_UVC, PROBE_ERRNO };

enum probe_result video_probe(const char *path, int *fdp,
			      struct v4l2_capability *cap, int *errp,
			      const char **opp);
void video_enum_controls(struct agent *a, struct camera *c);
bool video_subscribe(struct agent *a, struct camera *c);
bool video_set_async(struct agent *a, struct camera *c);
bool video_drain(struct agent *a, struct camera *c, uint64_t now,
		 unsigned int max);
void video_close(struct agent *a, struct camera *c, uint64_t now);

/* A fixed-size, maybe unterminated char array of V4L2 into dst. */
void copy_cstr(char *dst, size_t len, const void *src, size_t srclen);

#endif
