/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The camera's evdev input device (the snapshot button uvcvideo registers):
 * find it, count its key events, read its phys string with EVIOCGPHYS, and
 * say why it is missing when it is.
 */
#ifndef DMAHARNESS_AGENT_INPUT_H
#define DMAHARNESS_AGENT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

void expected_input_phys(const char *bus_info, char *out, size_t len);
bool input_present(const char *bus_info);
void input_find(struct agent *a, struct camera *c);
void input_note_missing(struct camera *c, bool now_or_never);
void input_read(struct agent *a, struct camera *c, uint64_t now);
void input_read_phys(struct agent *a, struct camera *c, uint64_t now);
void input_lost(struct agent *a, struct camera *c);
void input_close(struct camera *c);

#endif
