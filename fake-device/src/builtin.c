// SPDX-License-Identifier: MIT
/* The built-in camera, read the way a capture reads a device. */
#include "builtin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "camera.h"
#include "desc.h"

static int cam_xfer(void *ctx, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		    uint8_t *buf, uint16_t len, char *why, size_t why_size)
{
	struct cam_state *st = ctx;
	struct usb_setup s = { type, req, value, index, len };
	struct req_result r = cam_control(st, &s, NULL, 0, buf, len);

	(void)why;
	(void)why_size;
	return r.len < 0 ? PLAN_STALL : r.len;
}

int builtin_profile(struct profile *p, const char *serial, struct plan_report *rep,
		    char *err, size_t errsize)
{
	static struct cam_descriptors desc;
	static struct cam_state st;

	memset(p, 0, sizeof(*p));
	if (cam_descriptors_build(&desc, serial) < 0) {
		snprintf(err, errsize, "bad serial (1-%d printable ASCII characters)",
			 CAM_SERIAL_MAX);
		return -1;
	}
	cam_state_init(&st, &desc);
	cam_set_configuration(&st, CAM_CONFIG_VALUE);
	snprintf(p->name, sizeof(p->name), "%s", BUILTIN_PROFILE_NAME);
	p->description = strdup("the built-in fake camera of fake-uvc (UVC 1.1, high speed)");
	p->sources[0].text = strdup("fake-uvc --dump-profile (fake-device/src/desc.c)");
	p->n_sources = p->sources[0].text != NULL;
	p->speed = PROFILE_SPEED_HIGH;
	if (!p->description || !p->n_sources) {
		snprintf(err, errsize, "out of memory");
		profile_free(p);
		return -1;
	}
	if (plan_capture(p, cam_xfer, &st, rep, err, errsize)) {
		profile_free(p);
		return -1;
	}
	return 0;
}
