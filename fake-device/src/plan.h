/* SPDX-License-Identifier: MIT */
/*
 * What a capture asks a device, and what it writes besides the answers
 * (profiles/FORMAT.md, "What capture reads"): the class GET requests of
 * the interfaces the descriptors announce (UVC, HID, CDC ACM and NCM),
 * and the class defaults the fake device needs (set rules, one interrupt
 * rule per interrupt IN endpoint).  Shared by dmaharness-capture (asking
 * a real device through libusb) and fake-uvc --dump-profile (asking the
 * built-in camera), so both write the same profile for the same device.
 */
#ifndef FAKE_UVC_PLAN_H
#define FAKE_UVC_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct plan_req {
	uint8_t type, req;              /* bmRequestType (IN), bRequest */
	uint16_t value, index, length;
	const char *what;               /* for people: "brightness", "probe control" */
};

#define PLAN_MAX 4096

/* The requests to ask, in order, for the descriptors of @p (its configs);
 * returns how many were written to @out (at most @max). */
size_t plan_requests(const struct profile *p, struct plan_req *out, size_t max);

/* The wLength to ask @r with: its own, or for an extension unit's
 * control (length 0 in the plan) what the GET_LEN already recorded in @p
 * for the same control answered; 0 when that stalled: do not ask. */
uint16_t plan_length(const struct profile *p, const struct plan_req *r);

/* Record the answer to one planned request (@len bytes, or a stall when
 * @data is NULL) as a `get` rule of @p.  0, or -1 when out of room. */
int plan_record(struct profile *p, const struct plan_req *r, const uint8_t *data,
		size_t len);

/* Append the class defaults: set rules and one interrupt rule per
 * interrupt IN endpoint with a wMaxPacketSize of 2 or more: uvc-control on
 * a UVC VideoControl interface's; hid on a HID interface's when @p already
 * holds that interface's report descriptor (its `get`, as plan_capture
 * records it before) and the descriptor declares an input report that fits
 * (profile_hid_reports(): what the checker accepts); random on the
 * others.  0 or -1. */
int plan_defaults(struct profile *p);

/* ---- The capture itself ------------------------------------------------- */

/* One control IN transfer: the bytes the device answered (at most @len,
 * into @buf), PLAN_STALL when it stalled, PLAN_ERROR when it could not be
 * asked or answered (a timeout, an interface a driver holds); @why then
 * says why. */
#define PLAN_STALL (-1)
#define PLAN_ERROR (-2)
typedef int (*plan_xfer_fn)(void *ctx, uint8_t type, uint8_t req, uint16_t value,
			    uint16_t index, uint8_t *buf, uint16_t len,
			    char *why, size_t why_size);

struct plan_report {
	size_t asked, answered, stalled, failed;
	char failures[4096];            /* one line per request that failed */
};

/* Read everything a profile holds from a device through @fn: the device,
 * qualifier, configuration and BOS descriptors, every string named by the
 * device, configuration, interface and association descriptors in every
 * language, the planned class requests (plan_requests) and the class
 * defaults (plan_defaults).  @p is empty on entry; its name, description,
 * sources and speed are the caller's.  0, or -1 with @err when not even
 * the device descriptor could be read. */
int plan_capture(struct profile *p, plan_xfer_fn fn, void *ctx, struct plan_report *rep,
		 char *err, size_t errsize);

/* Reduce @p to what a capture of a device replaying @orig can give back
 * (FORMAT.md, "the round trip"): the gets the plan asks for @orig's
 * descriptors but those a `set ... store` rule of @orig may replace (a
 * driver's SET_CUR or SET_LINE_CODING at probe changes them), the sets its
 * class defaults write, no source, no `interrupt ... packet` endpoints.  Applied to @orig itself and to its
 * capture, profile_equal() then tells whether the capture is faithful.
 * 0, or -1 when out of memory. */
int plan_comparable(struct profile *p, const struct profile *orig);

#endif
