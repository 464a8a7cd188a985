/* SPDX-License-Identifier: MIT */
/*
 * The fake camera as a usbredir "usb-host": a usbredirparser in usb_host
 * mode, the camera state model and the flood engine.  The transport is two
 * callbacks, so the same object runs on a socket (main.c), against an
 * in-process usb-guest parser (tests) or on fuzz input (fuzz/).
 */
#ifndef FAKE_UVC_DEVICE_H
#define FAKE_UVC_DEVICE_H

#include <stdint.h>
#include <stdio.h>

#include <usbredirproto.h>

#include "camera.h"
#include "desc.h"
#include "flood.h"
#include "pmodel.h"
#include "profile.h"

#define FAKE_UVC_VERSION "0.1"
#define FAKE_UVC_JSON_VERSION 1

struct fake_io {
	void *ctx;
	/* Same contract as usbredirparser_read/_write: bytes moved, 0 when
	 * it would block, -1 on error or end of stream. */
	int (*read)(void *ctx, uint8_t *data, int count);
	int (*write)(void *ctx, uint8_t *data, int count);
};

struct fake_cfg {
	struct flood_cfg flood;
	double hotplug_period;      /* seconds between disconnects; 0: never */
	double hotplug_off;         /* seconds disconnected per cycle */
	double batch;               /* seconds between flood wakeups */
	uint64_t max_buffered;      /* stop generating above this many queued
				       output bytes (peer not reading) */
	const char *serial;         /* iSerialNumber string; NULL: default */
	int bulk_in;                /* profile: bulk IN reads are 0 held (a quiet
				       device), 1 answered with random bytes,
				       2 with zeros, paced by --rate */
	const char *profile;        /* a profile file (profiles/FORMAT.md) to
				       serve instead of the built-in camera */
	int verbose;                /* 0 errors, 1 +warnings, 2 +info, 3 debug */
	FILE *log;                  /* NULL: no log at all */
};

struct fake_counters {
	uint64_t control_requests, control_stalls;
	uint64_t standard_requests, class_get, class_set, other_requests;
	uint64_t set_configuration, set_interface, resets;
	uint64_t connects, disconnects, hotplug_cycles;
	uint64_t hellos, parse_errors, cancels;
	uint64_t unsupported;       /* bulk/iso/OUT data, streams: refused */
	uint64_t unexpected;        /* usb-guest only messages */
	uint64_t socket_throttled;
	uint64_t bad_endpoint;      /* start/stop on an endpoint we lack */
	uint64_t bulk_out, bulk_out_bytes;  /* profile: bulk OUT data taken */
	uint64_t bulk_in_held;      /* profile: bulk IN reads never answered */
	uint64_t bulk_in_sent, bulk_in_bytes;   /* --bulk-in: reads answered */
};

#define FAKE_MAX_HELD 64        /* bulk IN reads held (a quiet device) */

struct usbredirparser;

struct fake_dev {
	struct fake_cfg cfg;
	struct fake_io io;
	struct usbredirparser *parser;
	struct cam_descriptors desc;
	struct cam_state cam;
	struct flood flood;
	struct fake_counters c;

	/* --profile: the profile's device instead of the built-in camera */
	int use_profile;
	struct profile prof;
	struct pmodel pm;
	struct pm_gen gens[PROFILE_MAX_INTERRUPTS];
	size_t n_gens;
	struct {
		uint64_t id;
		struct usb_redir_bulk_packet_header h;
	} held[FAKE_MAX_HELD];
	size_t n_held;
	struct flood bulk_fl;       /* --bulk-in: the pace of the answers */
	uint64_t bulk_prng;

	double now;                 /* time of the last call in */
	double started_at;
	int peer_hello;
	int connected;              /* device_connect sent, not disconnected */
	double next_disconnect;     /* hotplug: < 0 when not scheduled */
	double reconnect_at;
	uint64_t irq_id;
	char peer_version[65];
};

/* Create the device; on error returns NULL with a message in @err. */
struct fake_dev *fake_dev_new(const struct fake_cfg *cfg,
			      const struct fake_io *io, double now,
			      char *err, size_t err_size);
void fake_dev_free(struct fake_dev *d);

/* Parse what the peer sent.  Returns 0, or -1 when the transport failed
 * (the read callback returned -1); parse errors are counted, not fatal. */
int fake_dev_read(struct fake_dev *d, double now);

/* Run timers (flood, hotplug) up to @now. */
void fake_dev_tick(struct fake_dev *d, double now);

/* Bytes waiting to be written: flush with fake_dev_write(). */
int fake_dev_want_write(const struct fake_dev *d);
int fake_dev_write(struct fake_dev *d);

/* Next time fake_dev_tick() has work; < 0 if none. */
double fake_dev_deadline(const struct fake_dev *d, double now);

/* Flood finished (count or duration reached). */
int fake_dev_done(const struct fake_dev *d);

/* The counters as one JSON line (with trailing newline). */
void fake_dev_json(const struct fake_dev *d, FILE *out, const char *event,
		   const char *reason, double now);

#endif
