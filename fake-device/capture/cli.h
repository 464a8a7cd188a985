/* SPDX-License-Identifier: MIT */
/*
 * dmaharness-capture's command line, and the text helpers the defaults
 * need (profile names, UTF-8 checks, JSON strings).  No I/O, no libusb:
 * the unit tests exercise all of it.
 */
#ifndef CAPTURE_CLI_H
#define CAPTURE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "profile.h"

/* Exit codes (README.md, --help). */
#define CAP_EXIT_OK      0      /* every request answered or stalled */
#define CAP_EXIT_FATAL   1      /* nothing written */
#define CAP_EXIT_USAGE   2
#define CAP_EXIT_PARTIAL 3      /* written, but some requests failed */

#define CAP_TIMEOUT_DEFAULT 1000
#define CAP_TIMEOUT_MAX     60000

enum cap_select {
	CAP_SEL_NONE,
	CAP_SEL_DEVICE,                 /* --device VID:PID */
	CAP_SEL_BUSADDR,                /* --bus N --address N */
	CAP_SEL_NODE,                   /* --node PATH */
};

struct cap_opts {
	enum cap_select sel;
	uint16_t vid, pid;
	unsigned bus, address;          /* 0: not given */
	const char *node;
	const char *output;             /* NULL: stdout */
	const char *name, *description, *source;    /* NULL: defaults */
	int speed;                      /* enum profile_speed, or -1: detect */
	bool detach, json, help;
	unsigned timeout_ms;
	int verbose;
};

/* Parse argv into @o.  0, or -1 with a message in @err (a usage error). */
int cap_parse_args(int argc, char *const argv[], struct cap_opts *o,
		   char *err, size_t errsize);

void cap_usage(FILE *f);

/* "VID:PID", four hex digits or fewer each.  0 or -1. */
int cap_parse_vidpid(const char *s, uint16_t *vid, uint16_t *pid);

/* A profile name: [a-z0-9][a-z0-9-]*, at most PROFILE_NAME_MAX chars. */
bool cap_name_valid(const char *s);

/* Valid UTF-8 without NUL (what the profile format allows in a string). */
bool cap_utf8_valid(const char *s);

/* The default name: @product lowercased, every run of other characters
 * made one '-', no '-' at either end, cut to PROFILE_NAME_MAX; when nothing
 * is left (or @product is NULL), "usb-VVVV-PPPP".  @out holds
 * PROFILE_NAME_MAX + 1 bytes. */
void cap_default_name(const char *product, uint16_t vid, uint16_t pid, char *out);

/* "<manufacturer> <product> (vvvv:pppp)", leaving out what is NULL or
 * empty ("USB device (vvvv:pppp)" when both are).  Heap; NULL: no memory. */
char *cap_default_description(const char *manufacturer, const char *product,
			      uint16_t vid, uint16_t pid);

/* "capture of vvvv:pppp on YYYY-MM-DD" (UTC).  Heap; NULL: no memory. */
char *cap_default_source(uint16_t vid, uint16_t pid, time_t now);

/* The text of string @index in the profile: in US English (0x0409) when
 * the device has it, else in its first language; NULL if none. */
const char *cap_profile_string(const struct profile *p, uint8_t index);

/* @s as a JSON string, quotes included. */
void cap_json_string(FILE *f, const char *s);

#endif
