/* SPDX-License-Identifier: MIT */
/*
 * The transfer function plan_capture() reads a device through
 * (plan_xfer_fn), and the interface bookkeeping usbfs needs for class
 * requests: an interface must be claimed before a request to it; one a
 * kernel driver holds is left alone unless --detach, and with --detach its
 * driver is given back at the end (cap_xfer_finish).
 *
 * The device operations go through struct cap_ops (libusb in capture.c,
 * fakes in the tests); the error codes are libusb's (LIBUSB_ERROR_*).
 *
 * Only reads leave this file: cap_request_allowed() is checked before
 * every request and a request it refuses is never sent.
 */
#ifndef CAPTURE_XFER_H
#define CAPTURE_XFER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cap_ops {
	/* A control IN transfer: bytes received, or LIBUSB_ERROR_*. */
	int (*control)(void *dev, uint8_t type, uint8_t req, uint16_t value,
		       uint16_t index, uint8_t *buf, uint16_t len, unsigned timeout_ms);
	/* 1 when a kernel driver (not usbfs) is bound to @iface, 0 when none,
	 * or LIBUSB_ERROR_*. */
	int (*driver_active)(void *dev, uint8_t iface);
	/* The name of the driver bound to @iface into @name; 0, or -1. */
	int (*driver_name)(void *dev, uint8_t iface, char *name, size_t size);
	int (*detach)(void *dev, uint8_t iface);    /* 0 or LIBUSB_ERROR_* */
	int (*attach)(void *dev, uint8_t iface);
	int (*claim)(void *dev, uint8_t iface);
	int (*release)(void *dev, uint8_t iface);
};

enum cap_iface_state {
	CAP_IF_UNTOUCHED,               /* no request to it yet */
	CAP_IF_CLAIMED,                 /* claimed by us (maybe after a detach) */
	CAP_IF_HELD,                    /* a kernel driver holds it; no --detach */
	CAP_IF_FAILED,                  /* could not be claimed: see reason */
};

struct cap_iface {
	enum cap_iface_state state;
	bool detached;                  /* its driver is to be re-attached */
	char driver[64];                /* the kernel driver, "" if none */
	char reason[160];               /* HELD, FAILED: why its requests fail */
	unsigned not_sent;              /* requests not sent because of that */
};

struct cap_xfer {
	const struct cap_ops *ops;
	void *dev;
	unsigned timeout_ms;
	bool detach;                    /* --detach */
	int verbose;                    /* log each request to @log */
	FILE *log;
	volatile sig_atomic_t *stop;    /* set by a signal handler; may be NULL */
	bool gone;                      /* the device went away */
	size_t refused;                 /* requests refused (a bug in the plan) */
	size_t n_stalls;                /* requests the device stalled */
	char stalls[4096];              /* one line each (while there is room) */
	struct cap_iface ifaces[256];
};

void cap_xfer_init(struct cap_xfer *x, const struct cap_ops *ops, void *dev,
		   unsigned timeout_ms, bool detach);

/* 1 when the request may be sent: an IN request with a data stage that
 * is a standard GET_DESCRIPTOR (to the device or an interface) or a
 * class request; else 0 with why in @why. */
int cap_request_allowed(uint8_t type, uint8_t req, uint16_t len, char *why, size_t why_size);

/* The plan_xfer_fn; @ctx is a struct cap_xfer. */
int cap_xfer_fn(void *ctx, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		uint8_t *buf, uint16_t len, char *why, size_t why_size);

/* Release every interface claimed and give every detached one back to its
 * driver.  Each problem is a line appended to @problems (may be NULL);
 * returns how many there were.  Safe to call twice. */
int cap_xfer_finish(struct cap_xfer *x, char *problems, size_t size);

/* A request for people: "string 3 (language 0x0409)", "GET_CUR, interface 0
 * (0xa1 0x81 0x0200 0x0200)". */
void cap_describe(uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		  char *out, size_t size);

/* A libusb error code for people: "timed out", "the device is gone". */
const char *cap_error_text(int code);

#endif
