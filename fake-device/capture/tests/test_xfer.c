// SPDX-License-Identifier: MIT
/* The transfer function and the interface bookkeeping (xfer.c), against
 * fake device operations. */
#include <libusb.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "tests.h"
#include "xfer.h"

/* A fake device: what each operation returns, and what was done to it. */
struct fake {
	int control_rc;                 /* >= 0: answer that many 0xab bytes */
	int active[256];                /* driver_active's answer per interface */
	char driver[256][16];
	int detach_rc, attach_rc, claim_rc, release_rc;
	unsigned controls, detaches, attaches, claims, releases;
	int claimed[256], detached[256];
	uint8_t last_type, last_req;
};

static int f_control(void *dev, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		     uint8_t *buf, uint16_t len, unsigned timeout_ms)
{
	struct fake *f = dev;

	(void)value;
	(void)index;
	(void)timeout_ms;
	f->controls++;
	f->last_type = type;
	f->last_req = req;
	if (f->control_rc >= 0)
		memset(buf, 0xab, len);
	return f->control_rc;
}

static int f_active(void *dev, uint8_t iface)
{
	return ((struct fake *)dev)->active[iface];
}

static int f_name(void *dev, uint8_t iface, char *name, size_t size)
{
	snprintf(name, size, "%s", ((struct fake *)dev)->driver[iface]);
	return 0;
}

static int f_detach(void *dev, uint8_t iface)
{
	struct fake *f = dev;

	f->detaches++;
	if (f->detach_rc == 0) {
		f->detached[iface] = 1;
		f->active[iface] = 0;
	}
	return f->detach_rc;
}

static int f_attach(void *dev, uint8_t iface)
{
	struct fake *f = dev;

	f->attaches++;
	if (f->attach_rc == 0) {
		f->detached[iface] = 0;
		f->active[iface] = 1;
	}
	return f->attach_rc;
}

static int f_claim(void *dev, uint8_t iface)
{
	struct fake *f = dev;

	f->claims++;
	if (f->claim_rc == 0)
		f->claimed[iface] = 1;
	return f->claim_rc;
}

static int f_release(void *dev, uint8_t iface)
{
	struct fake *f = dev;

	f->releases++;
	f->claimed[iface] = 0;
	return f->release_rc;
}

static const struct cap_ops fake_ops = {
	f_control, f_active, f_name, f_detach, f_attach, f_claim, f_release,
};

static int ask(struct cap_xfer *x, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
	       uint16_t len, char *why, size_t why_size)
{
	static uint8_t buf[65536];

	why[0] = '\0';
	return cap_xfer_fn(x, type, req, value, index, buf, len, why, why_size);
}

static void test_allowed(void **state)
{
	char why[160];

	(void)state;
	/* what the plan asks */
	assert_true(cap_request_allowed(0x80, 0x06, 0x0100, why, sizeof(why)));   /* device */
	assert_true(cap_request_allowed(0x81, 0x06, 0x0100, why, sizeof(why)));   /* HID report */
	assert_true(cap_request_allowed(0xa1, 0x81, 2, why, sizeof(why)));        /* UVC GET_CUR */
	assert_true(cap_request_allowed(0xa1, 0x21, 7, why, sizeof(why)));        /* GET_LINE_CODING */
	assert_true(cap_request_allowed(0xa0, 0x00, 1, why, sizeof(why)));        /* class, device */
	assert_true(cap_request_allowed(0xa2, 0x81, 3, why, sizeof(why)));        /* class, endpoint */

	/* every OUT request, whatever its type */
	for (unsigned t = 0; t < 0x80; t++) {
		assert_false(cap_request_allowed((uint8_t)t, 0x06, 18, why, sizeof(why)));
		assert_non_null(strstr(why, "OUT"));
	}
	/* every vendor IN request */
	for (unsigned r = 0; r < 4; r++) {
		assert_false(cap_request_allowed((uint8_t)(0xc0 | r), 0x01, 1, why, sizeof(why)));
		assert_non_null(strstr(why, "vendor"));
	}
	assert_false(cap_request_allowed(0xe0, 0x01, 1, why, sizeof(why)));      /* reserved type */
	assert_false(cap_request_allowed(0xa4, 0x01, 1, why, sizeof(why)));      /* reserved recip. */
	/* standard requests other than GET_DESCRIPTOR, though they read */
	assert_false(cap_request_allowed(0x80, 0x00, 2, why, sizeof(why)));      /* GET_STATUS */
	assert_false(cap_request_allowed(0x80, 0x08, 1, why, sizeof(why)));      /* GET_CONFIGURATION */
	assert_false(cap_request_allowed(0x81, 0x0a, 1, why, sizeof(why)));      /* GET_INTERFACE */
	assert_false(cap_request_allowed(0x82, 0x06, 9, why, sizeof(why)));      /* to an endpoint */
	/* no data stage: not a read */
	assert_false(cap_request_allowed(0xa1, 0x81, 0, why, sizeof(why)));
	assert_non_null(strstr(why, "wLength 0"));
}

static void test_refused_not_sent(void **state)
{
	struct fake f = { .control_rc = 4 };
	struct cap_xfer x;
	char why[160];

	(void)state;
	cap_xfer_init(&x, &fake_ops, &f, 1000, true);
	assert_int_equal(ask(&x, 0x21, 0x01, 0x0100, 1, 26, why, sizeof(why)), PLAN_ERROR);
	assert_non_null(strstr(why, "not sent"));
	assert_int_equal(ask(&x, 0xc0, 0x01, 0, 0, 1, why, sizeof(why)), PLAN_ERROR);
	assert_int_equal(ask(&x, 0x40, 0x01, 0, 0, 1, why, sizeof(why)), PLAN_ERROR);
	assert_int_equal(ask(&x, 0x00, 0x09, 1, 0, 0, why, sizeof(why)), PLAN_ERROR);
	assert_int_equal(x.refused, 4);
	/* nothing reached the device, no interface was touched */
	assert_int_equal(f.controls, 0);
	assert_int_equal(f.claims + f.detaches, 0);
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0100, 0, 18, why, sizeof(why)), 4);
	assert_int_equal(f.controls, 1);
	assert_int_equal(x.refused, 4);
}

static void test_errors(void **state)
{
	struct fake f = { .control_rc = LIBUSB_ERROR_PIPE };
	struct cap_xfer x;
	char why[160];

	(void)state;
	cap_xfer_init(&x, &fake_ops, &f, 250, false);
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0300, 0, 255, why, sizeof(why)), PLAN_STALL);
	assert_int_equal(ask(&x, 0xa1, 0x84, 0x0200, 0x0300, 2, why, sizeof(why)), PLAN_STALL);
	assert_int_equal(x.n_stalls, 2);
	assert_string_equal(x.stalls, "string 0 (the languages)\n"
			    "GET_RES, class request to interface 0 (0xa1 0x84 0x0200 0x0300)\n");
	f.control_rc = LIBUSB_ERROR_TIMEOUT;
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0300, 0, 255, why, sizeof(why)), PLAN_ERROR);
	assert_string_equal(why, "timed out after 250 ms");
	f.control_rc = LIBUSB_ERROR_OVERFLOW;
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0300, 0, 255, why, sizeof(why)), PLAN_ERROR);
	assert_non_null(strstr(why, "overflow"));
	f.control_rc = LIBUSB_ERROR_IO;
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0300, 0, 255, why, sizeof(why)), PLAN_ERROR);
	assert_non_null(strstr(why, "I/O error"));
	/* a device that answers more than asked is cut to the length asked */
	f.control_rc = 300;
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0300, 0, 255, why, sizeof(why)), 255);
	/* once the device is gone, nothing more is sent */
	f.control_rc = LIBUSB_ERROR_NO_DEVICE;
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0300, 0, 255, why, sizeof(why)), PLAN_ERROR);
	assert_non_null(strstr(why, "gone"));
	assert_true(x.gone);
	f.control_rc = 18;
	f.controls = 0;
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0100, 0, 18, why, sizeof(why)), PLAN_ERROR);
	assert_non_null(strstr(why, "not sent"));
	assert_int_equal(f.controls, 0);
}

static void test_interrupted(void **state)
{
	struct fake f = { .control_rc = 18 };
	volatile sig_atomic_t stop = 0;
	struct cap_xfer x;
	char why[160];

	(void)state;
	cap_xfer_init(&x, &fake_ops, &f, 1000, false);
	x.stop = &stop;
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0100, 0, 18, why, sizeof(why)), 18);
	stop = 2;
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0100, 0, 18, why, sizeof(why)), PLAN_ERROR);
	assert_non_null(strstr(why, "interrupted"));
	assert_int_equal(f.controls, 1);
}

/* A driver holds interface 1; without --detach it is left alone. */
static void test_driver_no_detach(void **state)
{
	struct fake f = { .control_rc = 2 };
	struct cap_xfer x;
	char why[160], problems[512] = "";

	(void)state;
	f.active[1] = 1;
	snprintf(f.driver[1], sizeof(f.driver[1]), "uvcvideo");
	cap_xfer_init(&x, &fake_ops, &f, 1000, false);
	/* interface 0 is free: claimed once, asked twice */
	assert_int_equal(ask(&x, 0xa1, 0x81, 0x0200, 0x0200, 2, why, sizeof(why)), 2);
	assert_int_equal(ask(&x, 0xa1, 0x82, 0x0200, 0x0200, 2, why, sizeof(why)), 2);
	assert_int_equal(f.claims, 1);
	assert_true(f.claimed[0]);
	/* interface 1 (wIndex low byte) has a driver */
	assert_int_equal(ask(&x, 0xa1, 0x81, 0x0100, 0x0001, 26, why, sizeof(why)), PLAN_ERROR);
	assert_string_equal(why, "interface 1 is bound to kernel driver uvcvideo: use --detach");
	assert_int_equal(ask(&x, 0xa1, 0x82, 0x0100, 0x0001, 26, why, sizeof(why)), PLAN_ERROR);
	assert_string_equal(why, "interface 1 is bound to kernel driver uvcvideo: use --detach");
	assert_int_equal(x.ifaces[1].state, CAP_IF_HELD);
	assert_int_equal(x.ifaces[1].not_sent, 2);
	assert_int_equal(f.controls, 2);
	assert_int_equal(f.detaches, 0);
	assert_int_equal(f.claims, 1);
	/* the device recipient needs no interface */
	f.control_rc = 18;
	assert_int_equal(ask(&x, 0x80, 0x06, 0x0100, 0x0001, 18, why, sizeof(why)), 18);
	assert_int_equal(cap_xfer_finish(&x, problems, sizeof(problems)), 0);
	assert_int_equal(f.releases, 1);
	assert_false(f.claimed[0]);
	assert_int_equal(f.attaches, 0);
	assert_int_equal(f.active[1], 1);
	assert_string_equal(problems, "");
}

/* With --detach: detached, claimed, and given back at the end. */
static void test_driver_detach(void **state)
{
	struct fake f = { .control_rc = 7 };
	struct cap_xfer x;
	char why[160], problems[512] = "";

	(void)state;
	f.active[2] = 1;
	snprintf(f.driver[2], sizeof(f.driver[2]), "cdc_acm");
	cap_xfer_init(&x, &fake_ops, &f, 1000, true);
	assert_int_equal(ask(&x, 0xa1, 0x21, 0, 2, 7, why, sizeof(why)), 7);
	assert_int_equal(ask(&x, 0xa1, 0x21, 0, 2, 7, why, sizeof(why)), 7);
	assert_int_equal(f.detaches, 1);
	assert_int_equal(f.claims, 1);
	assert_true(f.detached[2]);
	assert_true(f.claimed[2]);
	assert_true(x.ifaces[2].detached);
	assert_string_equal(x.ifaces[2].driver, "cdc_acm");
	assert_int_equal(cap_xfer_finish(&x, problems, sizeof(problems)), 0);
	assert_int_equal(f.releases, 1);
	assert_int_equal(f.attaches, 1);
	assert_false(f.claimed[2]);
	assert_false(f.detached[2]);
	assert_int_equal(f.active[2], 1);
	/* twice is harmless */
	assert_int_equal(cap_xfer_finish(&x, problems, sizeof(problems)), 0);
	assert_int_equal(f.releases, 1);
	assert_int_equal(f.attaches, 1);
}

static void test_claim_failures(void **state)
{
	struct fake f = { .control_rc = 7 };
	struct cap_xfer x;
	char why[160], problems[512] = "";

	(void)state;
	/* another program holds it through usbfs */
	f.claim_rc = LIBUSB_ERROR_BUSY;
	snprintf(f.driver[0], sizeof(f.driver[0]), "usbfs");
	cap_xfer_init(&x, &fake_ops, &f, 1000, true);
	assert_int_equal(ask(&x, 0xa1, 0x21, 0, 0, 7, why, sizeof(why)), PLAN_ERROR);
	assert_non_null(strstr(why, "claimed by another program"));
	/* not in the active configuration */
	f.claim_rc = LIBUSB_ERROR_NOT_FOUND;
	assert_int_equal(ask(&x, 0xa1, 0x21, 0, 5, 7, why, sizeof(why)), PLAN_ERROR);
	assert_string_equal(why, "interface 5 is not in the active configuration");
	assert_int_equal(f.controls, 0);
	/* asked once only, however many requests go to it */
	assert_int_equal(ask(&x, 0xa1, 0x21, 0, 5, 7, why, sizeof(why)), PLAN_ERROR);
	assert_int_equal(f.claims, 2);
	assert_int_equal(x.ifaces[5].not_sent, 2);

	/* detached but not claimable: the driver goes straight back */
	f.active[3] = 1;
	snprintf(f.driver[3], sizeof(f.driver[3]), "usbhid");
	f.claim_rc = LIBUSB_ERROR_OTHER;
	assert_int_equal(ask(&x, 0x81, 0x06, 0x2200, 3, 64, why, sizeof(why)), PLAN_ERROR);
	assert_non_null(strstr(why, "cannot claim interface 3"));
	assert_int_equal(f.detaches, 1);
	assert_int_equal(f.attaches, 1);
	assert_false(x.ifaces[3].detached);

	/* the detach itself fails */
	f.active[4] = 1;
	snprintf(f.driver[4], sizeof(f.driver[4]), "usbhid");
	f.detach_rc = LIBUSB_ERROR_OTHER;
	assert_int_equal(ask(&x, 0x81, 0x06, 0x2200, 4, 64, why, sizeof(why)), PLAN_ERROR);
	assert_non_null(strstr(why, "cannot detach kernel driver usbhid from interface 4"));
	assert_int_equal(cap_xfer_finish(&x, problems, sizeof(problems)), 0);
	assert_int_equal(f.releases, 0);
}

static void test_reattach_failure(void **state)
{
	struct fake f = { .control_rc = 7 };
	struct cap_xfer x;
	char why[160], problems[512] = "";

	(void)state;
	f.active[0] = 1;
	snprintf(f.driver[0], sizeof(f.driver[0]), "cdc_acm");
	cap_xfer_init(&x, &fake_ops, &f, 1000, true);
	assert_int_equal(ask(&x, 0xa1, 0x21, 0, 0, 7, why, sizeof(why)), 7);
	f.attach_rc = LIBUSB_ERROR_BUSY;
	assert_int_equal(cap_xfer_finish(&x, problems, sizeof(problems)), 1);
	assert_non_null(strstr(problems, "cannot give interface 0 back to kernel driver cdc_acm"));
}


static void test_describe(void **state)
{
	char s[160];

	(void)state;
	cap_describe(0x80, 0x06, 0x0100, 0, s, sizeof(s));
	assert_string_equal(s, "device descriptor");
	cap_describe(0x80, 0x06, 0x0201, 0, s, sizeof(s));
	assert_string_equal(s, "configuration descriptor 1");
	cap_describe(0x80, 0x06, 0x0303, 0x0409, s, sizeof(s));
	assert_string_equal(s, "string 3 (language 0x0409)");
	cap_describe(0x80, 0x06, 0x0600, 0, s, sizeof(s));
	assert_string_equal(s, "device qualifier descriptor");
	cap_describe(0x80, 0x06, 0x0f00, 0, s, sizeof(s));
	assert_string_equal(s, "BOS descriptor");
	cap_describe(0x81, 0x06, 0x2200, 2, s, sizeof(s));
	assert_string_equal(s, "HID report descriptor of interface 2 (0x81 0x06 0x2200 0x0002)");
	cap_describe(0xa1, 0x21, 0, 1, s, sizeof(s));
	assert_string_equal(s, "GET_LINE_CODING, class request to interface 1 "
			    "(0xa1 0x21 0x0000 0x0001)");
	cap_describe(0xa1, 0x01, 0, 1, s, sizeof(s));
	assert_string_equal(s, "class request to interface 1 (0xa1 0x01 0x0000 0x0001)");
	cap_describe(0xa2, 0x81, 0x0100, 0x81, s, sizeof(s));
	assert_string_equal(s, "request 0xa2 0x81 0x0100 0x0081");
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_allowed),
	cmocka_unit_test(test_describe),
	cmocka_unit_test(test_refused_not_sent),
	cmocka_unit_test(test_errors),
	cmocka_unit_test(test_interrupted),
	cmocka_unit_test(test_driver_no_detach),
	cmocka_unit_test(test_driver_detach),
	cmocka_unit_test(test_claim_failures),
	cmocka_unit_test(test_reattach_failure),
};

const struct CMUnitTest *xfer_tests(size_t *n)
{
	*n = sizeof(tests) / sizeof(tests[0]);
	return tests;
}
