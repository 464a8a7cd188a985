/* SPDX-License-Identifier: MIT */
/*
 * The device a profile describes (profiles/FORMAT.md): its state (the
 * configuration and alternate settings), its answers to control requests
 * and what its interrupt IN endpoints send.  Pure functions over struct
 * pmodel; no I/O.  device.c serves it over usbredir when fake-uvc runs
 * with --profile; without, the built-in camera (camera.c) answers.
 */
#ifndef FAKE_UVC_PMODEL_H
#define FAKE_UVC_PMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "camera.h"
#include "flood.h"
#include "profile.h"

#define PM_MAX_IFACES 32
#define PM_MAX_EPS    30

struct pm_iface {
	uint8_t number;
	uint8_t klass, subclass, protocol;   /* of alternate setting 0 */
};

struct pm_ep {
	uint8_t addr;                        /* bEndpointAddress */
	uint8_t type;                        /* 0 control, 1 iso, 2 bulk, 3 interrupt */
	uint8_t interval;                    /* bInterval */
	uint8_t iface;                       /* bInterfaceNumber */
	uint16_t maxpacket;                  /* wMaxPacketSize (with the mult bits) */
};

struct pmodel {
	struct profile *p;
	uint8_t configuration;               /* bConfigurationValue; 0: address state */
	int cfg_index;                       /* index in p->configs; -1 */
	struct pm_iface ifaces[PM_MAX_IFACES];
	size_t n_ifaces;
	uint8_t alt[PM_MAX_IFACES];          /* by position in ifaces[] */
};

void pm_init(struct pmodel *m, struct profile *p);

/* 0, or -1 when the profile has no such configuration (0 unconfigures). */
int pm_set_configuration(struct pmodel *m, uint8_t value);
/* 0, or -1 when the interface or the alternate setting does not exist. */
int pm_set_interface(struct pmodel *m, uint8_t iface, uint8_t alt);
/* The alternate setting of interface @iface; -1 when it does not exist. */
int pm_get_interface(const struct pmodel *m, uint8_t iface);

/* The endpoints of the current configuration's current alternate settings
 * (at most @max); returns how many. */
size_t pm_endpoints(const struct pmodel *m, struct pm_ep *out, size_t max);
/* One of them; 0 when found. */
int pm_endpoint(const struct pmodel *m, uint8_t addr, struct pm_ep *out);

/* Answer one control transfer (see camera.h's cam_control for the
 * contract): standard requests from the descriptors, the rest from the
 * profile's get/set rules; everything else stalls. */
struct req_result pm_control(struct pmodel *m, const struct usb_setup *s,
			     const uint8_t *out, int out_len,
			     uint8_t *in, size_t in_size);

/* Interrupt transfers per second an endpoint of this bInterval allows at
 * the profile's speed. */
double pm_ceiling(enum profile_speed speed, uint8_t interval);

/* One input report pattern hid sends. */
struct pm_hid_report {
	uint8_t id;                          /* Report ID; 0: no ID byte */
	uint16_t len;                        /* bytes, the ID byte included */
	uint8_t n_keys;                      /* keyboard fields: harmless keys only */
	struct profile_hid_keys keys[PROFILE_HID_MAX_KEYS];
};

/* The packets of one interrupt IN endpoint. */
struct pm_gen {
	uint8_t ep;
	uint16_t maxpacket;
	const struct profile_interrupt *rule;
	struct flood fl;                     /* pacing and counters */
	size_t next_packet;                  /* PACKETS: the next to replay */
	uint64_t prng;
	unsigned step;
	unsigned button;                     /* uvc-button: press, release, ... */
	size_t ctrl_cursor;                  /* uvc-*: the next GET_CUR rule */
	struct pm_hid_report hid[PROFILE_HID_MAX_REPORTS]; /* HID: what fits */
	size_t n_hid;
	size_t next_hid;                     /* HID: the next report */
	int hid_release;                     /* HID: next, the same report all zero */
};

#define PM_PACKET_MAX 1024

/* Returns 0, or -1 when the endpoint has nothing to send (pattern hid
 * without an input report that fits: profile_validate() refuses that, so
 * only a profile built in memory has it); leave such an endpoint idle. */
int pm_gen_init(struct pm_gen *g, const struct pmodel *m,
		const struct profile_interrupt *rule, const struct flood_cfg *cfg);
/* The next packet of the endpoint into @buf (PM_PACKET_MAX bytes); its
 * length.  A full-size packet (wMaxPacketSize bytes) ends a transfer only
 * when the driver's URB is one packet long; with a longer URB, QEMU's
 * usb-redir joins it with the next packet.  So the patterns made for any
 * driver (uvc-*, random, zero) send 1 to wMaxPacketSize-1 bytes; replayed
 * packets are sent as written (up to wMaxPacketSize, the checker's limit);
 * hid sends whole input reports, full-size only when usbhid's URB (the
 * longest input report) is one packet long (profile_hid_fitting()). */
size_t pm_gen_next(struct pm_gen *g, const struct pmodel *m, uint8_t *buf);

#endif
