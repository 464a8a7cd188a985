// SPDX-License-Identifier: MIT
/*
 * plan_capture() through the capture's transfer function, against a device
 * that replays a profile: every shipped profile (the .profile files in ../profiles, or
 * $CAPTURE_PROFILES_DIR) and a HID + CDC ACM composite (tests/combo.profile).
 *
 * - the plan never asks what capture refuses (an OUT, a vendor request, a
 *   standard request other than GET_DESCRIPTOR): nothing is refused and
 *   the device sees only reads;
 * - the round trip of FORMAT.md: capture(replay(P)) == P but for vendor
 *   gets, sources and `interrupt ... packet` lines;
 * - a driver's interface without --detach: its requests fail with the
 *   reason, the rest is captured.
 */
#include <glob.h>
#include <libusb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "plan.h"
#include "profile.h"
#include "tests.h"
#include "xfer.h"

/* ---- A device replaying a profile ------------------------------------------ */

struct replay {
	const struct profile *p;
	unsigned controls, writes, vendor, other_std;
	int active[256];                /* a kernel driver on the interface */
	int claimed[256], detached[256];
};

static int copy(uint8_t *buf, uint16_t len, const uint8_t *data, size_t n)
{
	size_t k = n < len ? n : len;

	memcpy(buf, data, k);
	return (int)k;
}

/* The answers fake-uvc gives (pmodel.c, FORMAT.md "Requests"), for the
 * reads a capture makes. */
static int r_control(void *dev, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		     uint8_t *buf, uint16_t len, unsigned timeout_ms)
{
	struct replay *r = dev;
	const struct profile *p = r->p;
	const struct profile_get *g;

	(void)timeout_ms;
	r->controls++;
	if (!(type & 0x80))
		r->writes++;
	if ((type & 0x60) == 0x40)
		r->vendor++;
	if ((type & 0x60) == 0 && req != 0x06)
		r->other_std++;
	if ((type & 0x80) == 0 || (type & 0x60) == 0x40)
		return LIBUSB_ERROR_IO;
	if (type == 0x80 && req == 0x06) {
		unsigned i = value & 0xff;
		int n;

		switch (value >> 8) {
		case 0x01:
			return copy(buf, len, p->device, sizeof(p->device));
		case 0x02:
			if (i >= p->n_configs)
				return LIBUSB_ERROR_PIPE;
			return copy(buf, len, p->configs[i].data, p->configs[i].len);
		case 0x03:
			n = profile_string_descriptor(p, index, (uint8_t)i, buf, len);
			return n < 0 ? LIBUSB_ERROR_PIPE : n;
		case 0x06:
			if (!p->has_qualifier)
				return LIBUSB_ERROR_PIPE;
			return copy(buf, len, p->qualifier, sizeof(p->qualifier));
		case 0x0f:
			if (!p->has_bos)
				return LIBUSB_ERROR_PIPE;
			return copy(buf, len, p->bos.data, p->bos.len);
		default:
			return LIBUSB_ERROR_PIPE;
		}
	}
	if ((type & 0x60) == 0 && req != 0x06)
		return LIBUSB_ERROR_PIPE;
	g = profile_find_get(p, type, req, value, index);
	if (!g || g->stall)
		return LIBUSB_ERROR_PIPE;
	return copy(buf, len, g->data, g->len);
}

static int r_active(void *dev, uint8_t iface)
{
	return ((struct replay *)dev)->active[iface];
}

static int r_name(void *dev, uint8_t iface, char *name, size_t size)
{
	snprintf(name, size, "%s", ((struct replay *)dev)->active[iface] ? "some_driver" : "");
	return 0;
}

static int r_detach(void *dev, uint8_t iface)
{
	struct replay *r = dev;

	r->active[iface] = 0;
	r->detached[iface] = 1;
	return 0;
}

static int r_attach(void *dev, uint8_t iface)
{
	struct replay *r = dev;

	r->active[iface] = 1;
	r->detached[iface] = 0;
	return 0;
}

static int r_claim(void *dev, uint8_t iface)
{
	struct replay *r = dev;

	if (r->active[iface])
		return LIBUSB_ERROR_BUSY;
	r->claimed[iface] = 1;
	return 0;
}

static int r_release(void *dev, uint8_t iface)
{
	((struct replay *)dev)->claimed[iface] = 0;
	return 0;
}

static const struct cap_ops replay_ops = {
	r_control, r_active, r_name, r_detach, r_attach, r_claim, r_release,
};

/* ---- A HID keyboard + CDC ACM composite ---------------------------------------- */

/* A HID keyboard + CDC ACM composite (tests/combo.profile, in
 * $CAPTURE_TESTS_DIR, default "tests"). */
static const char *combo_path(void)
{
	static char path[512];
	const char *dir = getenv("CAPTURE_TESTS_DIR");

	snprintf(path, sizeof(path), "%s/combo.profile", dir && *dir ? dir : "tests");
	return path;
}

/* ---- Helpers -------------------------------------------------------------------- */

static void load(const char *path, struct profile *p)
{
	char err[512];

	if (profile_load_file(path, p, err, sizeof(err)))
		fail_msg("%s", err);
}

/* Capture @src through cap_xfer_fn; the result in @out (name, description
 * and speed copied from @src, as the command line would give them). */
static int capture(const struct profile *src, struct replay *r, bool detach,
		   struct profile *out, struct plan_report *rep, struct cap_xfer *x)
{
	char err[256];
	int rc;

	r->p = src;
	memset(out, 0, sizeof(*out));
	out->speed = src->speed;
	cap_xfer_init(x, &replay_ops, r, 1000, detach);
	rc = plan_capture(out, cap_xfer_fn, x, rep, err, sizeof(err));
	cap_xfer_finish(x, NULL, 0);
	if (rc)
		fail_msg("plan_capture: %s", err);
	snprintf(out->name, sizeof(out->name), "%s", src->name);
	if (src->description)
		out->description = strdup(src->description);
	return rc;
}

/* What the round trip leaves out: sources, vendor gets and the endpoints
 * that replay packets. */
static void expect_round_trip(struct profile *orig, const char *what)
{
	static struct replay r;
	struct plan_report rep;
	struct cap_xfer x;
	struct profile got, want;
	char err[512];
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	memset(&r, 0, sizeof(r));
	capture(orig, &r, false, &got, &rep, &x);

	/* only reads reached the device; nothing was refused */
	assert_int_equal(x.refused, 0);
	assert_int_equal(r.writes, 0);
	assert_int_equal(r.vendor, 0);
	assert_int_equal(r.other_std, 0);
	assert_int_equal(r.controls, rep.asked);
	if (rep.failed)
		fail_msg("%s: %zu requests failed:\n%s", what, rep.failed, rep.failures);
	assert_int_equal(rep.asked, rep.answered + rep.stalled);
	if (profile_validate(&got, err, sizeof(err)))
		fail_msg("%s: the capture does not validate: %s", what, err);

	/* re-parse the original so that normalising it leaves @orig alone */
	f = open_memstream(&text, &len);
	assert_int_equal(profile_write(f, orig), 0);
	fclose(f);
	assert_int_equal(profile_parse(text, len, what, &want, err, sizeof(err)), 0);
	free(text);
	assert_int_equal(plan_comparable(&want, orig), 0);
	assert_int_equal(plan_comparable(&got, orig), 0);
	if (!profile_equal(&want, &got)) {
		char a[] = "/tmp/capture-want-XXXXXX", b[] = "/tmp/capture-got-XXXXXX";
		FILE *fa = fdopen(mkstemp(a), "w"), *fb = fdopen(mkstemp(b), "w");

		profile_write(fa, &want);
		profile_write(fb, &got);
		fclose(fa);
		fclose(fb);
		fail_msg("%s: capture(replay(P)) != P; diff -u %s %s", what, a, b);
	}
	profile_free(&want);
	profile_free(&got);
}

/* ---- Tests ----------------------------------------------------------------------- */

static void test_composite_round_trip(void **state)
{
	struct profile p;

	(void)state;
	load(combo_path(), &p);
	expect_round_trip(&p, "composite");
	profile_free(&p);
}

static void test_shipped_round_trip(void **state)
{
	const char *dir = getenv("CAPTURE_PROFILES_DIR");
	char pattern[512];
	glob_t g;

	(void)state;
	snprintf(pattern, sizeof(pattern), "%s/*.profile", dir && *dir ? dir : "../profiles");
	assert_int_equal(glob(pattern, 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 1);     /* at least builtin-uvc.profile */
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct profile p;
		char err[512];

		if (profile_load_file(g.gl_pathv[i], &p, err, sizeof(err)))
			fail_msg("%s", err);
		expect_round_trip(&p, g.gl_pathv[i]);
		profile_free(&p);
	}
	globfree(&g);
}

/* usbhid holds the keyboard and no --detach: its report descriptor is not
 * read and says why; the serial port's line coding is. */
static void test_driver_held(void **state)
{
	static struct replay r;
	struct plan_report rep;
	struct cap_xfer x;
	struct profile p, got;

	(void)state;
	load(combo_path(), &p);
	memset(&r, 0, sizeof(r));
	r.active[0] = 1;
	capture(&p, &r, false, &got, &rep, &x);
	assert_int_equal(rep.failed, 1);
	assert_non_null(strstr(rep.failures, "HID report descriptor (0x81 0x06 0x2200 0x0000, "
			       "23 bytes): interface 0 is bound to kernel driver some_driver: "
			       "use --detach"));
	assert_int_equal(x.ifaces[0].not_sent, 1);
	assert_int_equal(got.n_gets, 1);       /* GET_LINE_CODING */
	assert_int_equal(got.gets[0].req, 0x21);
	assert_int_equal(r.active[0], 1);
	assert_false(r.claimed[1]);             /* released */
	profile_free(&got);

	/* with --detach everything is read, and the driver is back after */
	memset(&r, 0, sizeof(r));
	r.active[0] = 1;
	capture(&p, &r, true, &got, &rep, &x);
	assert_int_equal(rep.failed, 0);
	assert_int_equal(got.n_gets, 2);
	assert_int_equal(r.active[0], 1);
	assert_false(r.detached[0]);
	assert_false(r.claimed[0]);
	profile_free(&got);
	profile_free(&p);
}


static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	assert_non_null(f);
	assert_true(fread(buf, 1, (1 << 16) - 1, f) > 0);
	fclose(f);
	return buf;
}

/* What main() does after the capture: the identity, then the atomic write;
 * with --source the output is the same every time. */
static void test_write(void **state)
{
	static struct replay r;
	struct plan_report rep;
	struct cap_xfer x;
	struct profile src, got, back;
	struct cap_opts o;
	char dir[] = "/tmp/capture-out-XXXXXX", path[256], path2[256], err[512];
	char *a, *b;

	(void)state;
	assert_non_null(mkdtemp(dir));
	load(combo_path(), &src);
	memset(&o, 0, sizeof(o));
	o.source = "fixed";
	snprintf(path, sizeof(path), "%s/combo.profile", dir);
	snprintf(path2, sizeof(path2), "%s/again.profile", dir);
	for (int k = 0; k < 2; k++) {
		memset(&r, 0, sizeof(r));
		capture(&src, &r, false, &got, &rep, &x);
		free(got.description);
		got.description = NULL;
		got.name[0] = '\0';
		assert_int_equal(cap_fill_identity(&o, &got, (time_t)(k * 100000000)), 0);
		assert_string_equal(got.name, "combo-keyboard");
		assert_string_equal(got.description, "Acme Combo Keyboard (1234:5678)");
		assert_int_equal(cap_write_profile(k ? path2 : path, &got, err, sizeof(err)), 0);
		profile_free(&got);
	}
	a = slurp(path);
	b = slurp(path2);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\nsource \"fixed\"\n"));
	free(a);
	free(b);
	if (profile_load_file(path, &back, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(back.name, "combo-keyboard");
	profile_free(&back);

	/* the default source has the date */
	memset(&r, 0, sizeof(r));
	o.source = NULL;
	capture(&src, &r, false, &got, &rep, &x);
	free(got.description);
	got.description = NULL;
	assert_int_equal(cap_fill_identity(&o, &got, (time_t)1764892800), 0);
	assert_string_equal(got.sources[0].text, "capture of 1234:5678 on 2025-12-05");

	/* a failed write leaves the old file and no temporary one */
	assert_int_equal(chmod(path, 0444), 0);
	snprintf(path2, sizeof(path2), "%s/sub", dir);
	assert_int_equal(mkdir(path2, 0755), 0);
	assert_int_equal(cap_write_profile(path2, &got, err, sizeof(err)), -1);  /* a directory */
	assert_non_null(strstr(err, "sub"));
	snprintf(path2, sizeof(path2), "%s/missing/x.profile", dir);
	assert_int_equal(cap_write_profile(path2, &got, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot create"));
	{
		char cmd[512];

		snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 3 && "
			 "! ls '%s' | grep -q tmp", dir, dir);
		assert_int_equal(system(cmd), 0);
		profile_free(&got);
		a = slurp(path);
		assert_non_null(strstr(a, "name combo-keyboard\n"));
		free(a);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	profile_free(&src);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_composite_round_trip),
	cmocka_unit_test(test_shipped_round_trip),
	cmocka_unit_test(test_driver_held),
	cmocka_unit_test(test_write),
};

const struct CMUnitTest *plan_tests(size_t *n)
{
	*n = sizeof(tests) / sizeof(tests[0]);
	return tests;
}
