/* SPDX-License-Identifier: MIT */
/*
 * Small hand-written profiles shared by the pmodel, plan and loopback
 * tests, and helpers to load them.
 */
#ifndef FAKE_UVC_FIXTURES_H
#define FAKE_UVC_FIXTURES_H

#include <stddef.h>

#include "profile.h"

/* High speed, bcdUSB 2.01 (BOS), two configurations, two languages.
 * Configuration 1 (self powered): interface 0 UVC VideoControl (interrupt
 * IN 0x83, wMaxPacketSize 16, bInterval 4); interface 2 UVC VideoStreaming
 * (alt 1: iso IN 0x81); interface 3 HID (report descriptor of 5 bytes,
 * interrupt IN 0x84, wMaxPacketSize 8, bInterval 10); interface 4 vendor
 * (alt 0: interrupt IN 0x85 wMaxPacketSize 32; alt 1: bulk 0x82/0x02 and
 * 0x85 with wMaxPacketSize 6).  Configuration 2 (bus powered): one vendor
 * interface without endpoints.  Class, wildcard, stall, vendor and store
 * rules; 0x83 floods uvc-control, 0x84 replays three packets. */
extern const char fx_multi[];

/* Full-speed HID mouse, bcdUSB 2.01 with a BOS, two languages, a vendor
 * get and replayed packets: the round trip. */
extern const char fx_hid[];

/* High-speed CDC ACM (IAD, notification 0x82, bulk 0x81/0x01), canonical
 * as a capture writes it. */
extern const char fx_cdc[];

/* Full-speed HID mouse (interrupt IN 0x81, wMaxPacketSize 8, bInterval 10,
 * three `packet` lines) plus a vendor interface with bulk 0x82/0x02. */
extern const char fx_loop[];

/* Parse and validate @text (fails the test on error). */
void fx_parse(const char *text, struct profile *p);

/* Write @text to a new temporary file; returns its malloc'd path. */
char *fx_tempfile(const char *text);

/* FAKE_DEVICE_DIR (the Makefile's directory) + "/" + @rel, malloc'd. */
char *fx_path(const char *rel);

#endif
