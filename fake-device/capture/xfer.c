// SPDX-License-Identifier: MIT
/* The capture's transfer function and interface bookkeeping (xfer.h). */
#include "xfer.h"

#include <libusb.h>
#include <stdarg.h>
#include <string.h>

#include "plan.h"

#define RECIP_MASK      0x1f
#define RECIP_DEVICE    0x00
#define RECIP_INTERFACE 0x01
#define TYPE_MASK       0x60
#define TYPE_STANDARD   0x00
#define TYPE_CLASS      0x20
#define TYPE_VENDOR     0x40
#define GET_DESCRIPTOR  0x06

void cap_xfer_init(struct cap_xfer *x, const struct cap_ops *ops, void *dev,
		   unsigned timeout_ms, bool detach)
{
	memset(x, 0, sizeof(*x));
	x->ops = ops;
	x->dev = dev;
	x->timeout_ms = timeout_ms;
	x->detach = detach;
}

int cap_request_allowed(uint8_t type, uint8_t req, uint16_t len, char *why, size_t why_size)
{
	const char *no = NULL;

	if (!(type & 0x80))
		no = "an OUT request (capture only reads)";
	else if ((type & TYPE_MASK) == TYPE_VENDOR)
		no = "a vendor request (capture never sends one)";
	else if ((type & TYPE_MASK) != TYPE_STANDARD && (type & TYPE_MASK) != TYPE_CLASS)
		no = "a request of the reserved type";
	else if ((type & RECIP_MASK) > 3)
		no = "a request to a reserved recipient";
	else if ((type & TYPE_MASK) == TYPE_STANDARD && req != GET_DESCRIPTOR)
		no = "a standard request other than GET_DESCRIPTOR";
	else if ((type & TYPE_MASK) == TYPE_STANDARD && (type & RECIP_MASK) != RECIP_DEVICE &&
		 (type & RECIP_MASK) != RECIP_INTERFACE)
		no = "a GET_DESCRIPTOR to an endpoint or other recipient";
	else if (len == 0)
		no = "an IN request without a data stage (wLength 0)";
	if (!no)
		return 1;
	snprintf(why, why_size, "not sent: %s", no);
	return 0;
}

const char *cap_error_text(int code)
{
	switch (code) {
	case LIBUSB_ERROR_IO:            return "I/O error (see dmesg)";
	case LIBUSB_ERROR_INVALID_PARAM: return "invalid parameter";
	case LIBUSB_ERROR_ACCESS:        return "permission denied";
	case LIBUSB_ERROR_NO_DEVICE:     return "the device is gone (unplugged or reset)";
	case LIBUSB_ERROR_NOT_FOUND:     return "not found";
	case LIBUSB_ERROR_BUSY:          return "busy";
	case LIBUSB_ERROR_TIMEOUT:       return "timed out";
	case LIBUSB_ERROR_OVERFLOW:      return "the device sent more than was asked (overflow)";
	case LIBUSB_ERROR_PIPE:          return "stalled";
	case LIBUSB_ERROR_INTERRUPTED:   return "interrupted";
	case LIBUSB_ERROR_NO_MEM:        return "out of memory";
	case LIBUSB_ERROR_NOT_SUPPORTED: return "not supported by libusb here";
	default:                         return "libusb error";
	}
}

void cap_describe(uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		  char *out, size_t size)
{
	static const char *const uvc[] = {
		[0x81] = "GET_CUR", [0x82] = "GET_MIN", [0x83] = "GET_MAX",
		[0x84] = "GET_RES", [0x85] = "GET_LEN", [0x86] = "GET_INFO", [0x87] = "GET_DEF",
	};
	unsigned t = value >> 8, i = value & 0xff;

	if (type == 0x80 && req == GET_DESCRIPTOR) {
		if (t == 1)
			snprintf(out, size, "device descriptor");
		else if (t == 2)
			snprintf(out, size, "configuration descriptor %u", i);
		else if (t == 3 && i == 0)
			snprintf(out, size, "string 0 (the languages)");
		else if (t == 3)
			snprintf(out, size, "string %u (language 0x%04x)", i, index);
		else if (t == 6)
			snprintf(out, size, "device qualifier descriptor");
		else if (t == 0x0f)
			snprintf(out, size, "BOS descriptor");
		else
			snprintf(out, size, "descriptor type 0x%02x index %u", t, i);
		return;
	}
	if (type == 0x81 && req == GET_DESCRIPTOR) {
		snprintf(out, size, "%s of interface %u (0x81 0x06 0x%04x 0x%04x)",
			 t == 0x22 ? "HID report descriptor" : "class descriptor", index & 0xff,
			 value, index);
		return;
	}
	if ((type & (TYPE_MASK | RECIP_MASK)) == (TYPE_CLASS | RECIP_INTERFACE)) {
		const char *name = req < sizeof(uvc) / sizeof(uvc[0]) ? uvc[req] : NULL;

		if (req == 0x21)
			name = "GET_LINE_CODING";
		else if (req == 0x80)
			name = "GET_NTB_PARAMETERS";
		snprintf(out, size, "%s%sclass request to interface %u (0x%02x 0x%02x 0x%04x "
			 "0x%04x)", name ? name : "", name ? ", " : "", index & 0xff, type, req,
			 value, index);
		return;
	}
	snprintf(out, size, "request 0x%02x 0x%02x 0x%04x 0x%04x", type, req, value, index);
}

static void setf(char *s, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void setf(char *s, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, size, fmt, ap);
	va_end(ap);
}

/* Make interface @n usable for requests: 0, or -1 with why in @why. */
static int prepare_iface(struct cap_xfer *x, uint8_t n, char *why, size_t why_size)
{
	struct cap_iface *in = &x->ifaces[n];
	int r;

	if (in->state == CAP_IF_CLAIMED)
		return 0;
	if (in->state != CAP_IF_UNTOUCHED)
		goto fail;

	r = x->ops->driver_active(x->dev, n);
	if (r < 0 && r != LIBUSB_ERROR_NOT_FOUND) {
		if (r == LIBUSB_ERROR_NO_DEVICE)
			x->gone = true;
		in->state = CAP_IF_FAILED;
		setf(in->reason, sizeof(in->reason), "cannot ask the kernel who holds "
		     "interface %u: %s", n, cap_error_text(r));
		goto fail;
	}
	if (r == 1) {
		if (x->ops->driver_name(x->dev, n, in->driver, sizeof(in->driver)) || !in->driver[0])
			snprintf(in->driver, sizeof(in->driver), "(unknown)");
		if (!x->detach) {
			in->state = CAP_IF_HELD;
			setf(in->reason, sizeof(in->reason), "interface %u is bound to kernel "
			     "driver %s: use --detach", n, in->driver);
			goto fail;
		}
		r = x->ops->detach(x->dev, n);
		if (r < 0) {
			in->state = CAP_IF_FAILED;
			setf(in->reason, sizeof(in->reason), "cannot detach kernel driver %s "
			     "from interface %u: %s", in->driver, n, cap_error_text(r));
			goto fail;
		}
		in->detached = true;
		if (x->verbose && x->log)
			fprintf(x->log, "interface %u: detached kernel driver %s\n", n, in->driver);
	}
	r = x->ops->claim(x->dev, n);
	if (r < 0) {
		char other[64] = "";

		in->state = CAP_IF_FAILED;
		if (r == LIBUSB_ERROR_NOT_FOUND)
			setf(in->reason, sizeof(in->reason), "interface %u is not in the active "
			     "configuration", n);
		else if (r == LIBUSB_ERROR_BUSY &&
			 x->ops->driver_name(x->dev, n, other, sizeof(other)) == 0 &&
			 !strcmp(other, "usbfs"))
			setf(in->reason, sizeof(in->reason), "interface %u is claimed by another "
			     "program (through usbfs): close it first", n);
		else
			setf(in->reason, sizeof(in->reason), "cannot claim interface %u: %s", n,
			     cap_error_text(r));
		if (r == LIBUSB_ERROR_NO_DEVICE)
			x->gone = true;
		if (in->detached && x->ops->attach(x->dev, n) == 0)
			in->detached = false;
		goto fail;
	}
	in->state = CAP_IF_CLAIMED;
	if (x->verbose && x->log)
		fprintf(x->log, "interface %u: claimed\n", n);
	return 0;
fail:
	in->not_sent++;
	snprintf(why, why_size, "%s", in->reason);
	return -1;
}

int cap_xfer_fn(void *ctx, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		uint8_t *buf, uint16_t len, char *why, size_t why_size)
{
	struct cap_xfer *x = ctx;
	int r;

	if (!cap_request_allowed(type, req, len, why, why_size)) {
		/* plan.c never asks these (tests/test_xfer.c checks it on every
		 * shipped profile); were it to, the request is still not sent */
		x->refused++;
		r = PLAN_ERROR;
		goto out;
	}
	if (x->stop && *x->stop) {
		snprintf(why, why_size, "not sent: interrupted by a signal");
		r = PLAN_ERROR;
		goto out;
	}
	if (x->gone) {
		snprintf(why, why_size, "not sent: %s", cap_error_text(LIBUSB_ERROR_NO_DEVICE));
		r = PLAN_ERROR;
		goto out;
	}
	if ((type & RECIP_MASK) == RECIP_INTERFACE &&
	    prepare_iface(x, (uint8_t)(index & 0xff), why, why_size)) {
		r = PLAN_ERROR;
		goto out;
	}
	r = x->ops->control(x->dev, type, req, value, index, buf, len, x->timeout_ms);
	if (r > len)
		r = len;
	if (r == LIBUSB_ERROR_PIPE) {
		size_t n = strlen(x->stalls);
		char what[160];

		cap_describe(type, req, value, index, what, sizeof(what));
		x->n_stalls++;
		if (n + strlen(what) + 2 < sizeof(x->stalls))
			snprintf(x->stalls + n, sizeof(x->stalls) - n, "%s\n", what);
		r = PLAN_STALL;
	} else if (r < 0) {
		if (r == LIBUSB_ERROR_TIMEOUT)
			snprintf(why, why_size, "timed out after %u ms", x->timeout_ms);
		else
			snprintf(why, why_size, "%s", cap_error_text(r));
		if (r == LIBUSB_ERROR_NO_DEVICE)
			x->gone = true;
		r = PLAN_ERROR;
	}
out:
	if (x->verbose && x->log) {
		fprintf(x->log, "%02x %02x %04x %04x %5u: ", type, req, value, index, len);
		if (r == PLAN_STALL)
			fputs("stall\n", x->log);
		else if (r < 0)
			fprintf(x->log, "%s\n", why);
		else
			fprintf(x->log, "%d bytes\n", r);
	}
	return r;
}

int cap_xfer_finish(struct cap_xfer *x, char *problems, size_t size)
{
	int bad = 0;

	/* Every interface is released before any driver comes back: a driver
	 * that binds one interface and claims the others from its probe
	 * (uvcvideo: the control interface claims the streaming ones) fails
	 * its probe while this process still holds one of them. */
	for (unsigned n = 0; n < 256; n++) {
		struct cap_iface *in = &x->ifaces[n];
		int r;

		if (in->state == CAP_IF_CLAIMED) {
			r = x->ops->release(x->dev, (uint8_t)n);
			in->state = CAP_IF_UNTOUCHED;
			if (r < 0 && r != LIBUSB_ERROR_NO_DEVICE) {
				bad++;
				if (problems) {
					size_t len = strlen(problems);

					snprintf(problems + len, size - len, "cannot release "
						 "interface %u: %s\n", n, cap_error_text(r));
				}
			}
		}
	}
	for (unsigned n = 0; n < 256; n++) {
		struct cap_iface *in = &x->ifaces[n];
		int r;

		if (in->detached) {
			r = x->ops->attach(x->dev, (uint8_t)n);
			in->detached = false;
			if (r < 0) {
				bad++;
				if (problems) {
					size_t len = strlen(problems);

					snprintf(problems + len, size - len, "cannot give interface "
						 "%u back to kernel driver %s: %s (unplug and replug "
						 "the device)\n", n, in->driver, cap_error_text(r));
				}
			} else if (x->verbose && x->log) {
				fprintf(x->log, "interface %u: kernel driver %s re-attached\n", n,
					in->driver);
			}
		}
	}
	return bad;
}
