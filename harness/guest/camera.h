/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A camera's life: find (bind) cameras by scanning /dev/video* or the
 * --device paths, attach an open node (enumerate, subscribe, find the input
 * device), cycle close/open, notice a disconnect and reattach the camera
 * when it comes back.
 */
#ifndef DMAHARNESS_AGENT_CAMERA_H
#define DMAHARNESS_AGENT_CAMERA_H

#include <stdbool.h>
#include <stdint.h>

#include "state.h"

void scan_cameras(struct agent *a, uint64_t now);
void camera_attach(struct agent *a, struct camera *c, int fd,
		   const char *path, uint64_t now);
void camera_cycle(struct agent *a, struct camera *c, uint64_t now);
void camera_mark_absent(struct agent *a, struct camera *c, uint64_t now);
/* A slot without an open camera, or fewer cameras than asked for? */
bool any_absent(const struct agent *a);

#endif
