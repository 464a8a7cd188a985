/* SPDX-License-Identifier: MIT */
/*
 * The built-in camera as a profile: what a capture of it reads (plan.c,
 * asking camera.c's cam_control the way dmaharness-capture asks a real
 * device), so that `fake-uvc --dump-profile` writes the profile a capture
 * of the built-in camera in a guest writes too.
 */
#ifndef FAKE_UVC_BUILTIN_H
#define FAKE_UVC_BUILTIN_H

#include <stddef.h>

#include "plan.h"
#include "profile.h"

#define BUILTIN_PROFILE_NAME "builtin-uvc"

/* 0, or -1 with @err.  @serial: the camera's serial (NULL: the default). */
int builtin_profile(struct profile *p, const char *serial, struct plan_report *rep,
		    char *err, size_t errsize);

#endif
