// SPDX-License-Identifier: MIT
/* Descriptor tables: self-consistency, parsed back from the serialized
 * bytes the guest reads, the way uvcvideo walks them. */
#include <string.h>

#include "desc.h"
#include "tests.h"

static unsigned le16(const uint8_t *p)
{
	return p[0] | (p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)le16(p) | ((uint32_t)le16(p + 2) << 16);
}

static struct cam_descriptors build(void)
{
	struct cam_descriptors d;

	assert_int_equal(cam_descriptors_build(&d, NULL), 0);
	return d;
}

/* Offsets of each descriptor in the configuration blob. */
struct walk {
	size_t at[128];
	size_t n;
};

static struct walk walk(const struct cam_descriptors *d)
{
	struct walk w = { .n = 0 };
	size_t off = 0;

	while (off < d->config_len) {
		assert_true(d->config[off] >= 2);
		assert_true(off + d->config[off] <= d->config_len);
		assert_true(w.n < 128);
		w.at[w.n++] = off;
		off += d->config[off];
	}
	assert_int_equal(off, d->config_len);
	return w;
}

static const uint8_t *find_cs(const struct cam_descriptors *d,
			      const struct walk *w, uint8_t subtype,
			      uint8_t iface, size_t *index)
{
	int cur_iface = -1;

	for (size_t i = 0; i < w->n; i++) {
		const uint8_t *p = &d->config[w->at[i]];

		if (p[1] == USB_DT_INTERFACE)
			cur_iface = p[2];
		if (p[1] == USB_DT_CS_INTERFACE && cur_iface == iface &&
		    p[2] == subtype) {
			if (index)
				*index = i;
			return p;
		}
	}
	return NULL;
}

static void test_device_descriptor(void **state)
{
	struct cam_descriptors d = build();

	(void)state;
	assert_int_equal(d.device[0], 18);
	assert_int_equal(d.device[1], USB_DT_DEVICE);
	assert_int_equal(le16(&d.device[2]), 0x0200);  /* no BOS needed */
	assert_int_equal(d.device[4], 0xef);           /* IAD device class */
	assert_int_equal(d.device[5], 0x02);
	assert_int_equal(d.device[6], 0x01);
	assert_int_equal(d.device[7], CAM_EP0_MAXPACKET);
	assert_int_equal(le16(&d.device[8]), CAM_VENDOR_ID);
	assert_int_equal(le16(&d.device[10]), CAM_PRODUCT_ID);
	assert_int_equal(d.device[17], 1);
	assert_int_equal(d.qualifier[0], 10);
	assert_int_equal(d.qualifier[1], USB_DT_DEVICE_QUALIFIER);
}

static void test_config_lengths(void **state)
{
	struct cam_descriptors d = build();
	struct walk w = walk(&d);
	uint8_t ifaces[8] = { 0 };
	int n_if = 0;

	(void)state;
	assert_int_equal(d.config[1], USB_DT_CONFIG);
	assert_int_equal(le16(&d.config[2]), d.config_len);
	/* Every interface's bNumEndpoints matches what follows it. */
	for (size_t i = 0; i < w.n; i++) {
		const uint8_t *p = &d.config[w.at[i]];
		unsigned eps = 0;

		if (p[1] != USB_DT_INTERFACE)
			continue;
		assert_int_equal(p[0], 9);
		for (size_t k = i + 1; k < w.n; k++) {
			const uint8_t *q = &d.config[w.at[k]];

			if (q[1] == USB_DT_INTERFACE)
				break;
			if (q[1] == USB_DT_ENDPOINT) {
				assert_int_equal(q[0], 7);
				eps++;
			}
		}
		assert_int_equal(p[4], eps);
		if (p[3] == 0) {
			assert_true(p[2] < 8);
			ifaces[p[2]] = 1;
			n_if++;
		}
	}
	assert_int_equal(d.config[4], n_if);
	assert_int_equal(n_if, CAM_NUM_INTERFACES);
	assert_true(ifaces[CAM_IF_CONTROL] && ifaces[CAM_IF_STREAMING]);

	/* The IAD groups both interfaces as one video function. */
	const uint8_t *iad = &d.config[w.at[1]];
	assert_int_equal(iad[1], USB_DT_IAD);
	assert_int_equal(iad[2], CAM_IF_CONTROL);
	assert_int_equal(iad[3], CAM_NUM_INTERFACES);
	assert_int_equal(iad[4], UVC_CC_VIDEO);
	assert_int_equal(iad[5], UVC_SC_VIDEO_INTERFACE_COLLECTION);
}

static void test_vc_header_total(void **state)
{
	struct cam_descriptors d = build();
	struct walk w = walk(&d);
	size_t hi;
	const uint8_t *h = find_cs(&d, &w, UVC_VC_HEADER, CAM_IF_CONTROL, &hi);
	unsigned total = 0;

	(void)state;
	assert_non_null(h);
	assert_int_equal(h[0], 12 + h[11]);
	assert_int_equal(le16(&h[3]), CAM_UVC_VERSION);
	for (size_t i = hi; i < w.n && d.config[w.at[i] + 1] ==
	     USB_DT_CS_INTERFACE; i++)
		total += d.config[w.at[i]];
	assert_int_equal(le16(&h[5]), total);
	assert_int_equal(le32(&h[7]), CAM_CLOCK_HZ);
	assert_int_equal(h[11], 1);
	assert_int_equal(h[12], CAM_IF_STREAMING);
}

struct unit {
	uint8_t id, subtype;
	uint8_t sources[4];
	int n_sources;
	const uint8_t *bm;
	int bm_size;
};

static int collect_units(const struct cam_descriptors *d,
			 const struct walk *w, struct unit *u)
{
	int n = 0, in_vc = 0;

	for (size_t i = 0; i < w->n; i++) {
		const uint8_t *p = &d->config[w->at[i]];

		if (p[1] == USB_DT_INTERFACE)
			in_vc = p[2] == CAM_IF_CONTROL;
		if (!in_vc || p[1] != USB_DT_CS_INTERFACE || p[2] == UVC_VC_HEADER)
			continue;
		struct unit *x = &u[n++];
		memset(x, 0, sizeof(*x));
		x->id = p[3];
		x->subtype = p[2];
		switch (p[2]) {
		case UVC_VC_INPUT_TERMINAL:
			assert_int_equal(le16(&p[4]), UVC_ITT_CAMERA);
			x->bm_size = p[14];
			x->bm = &p[15];
			assert_int_equal(p[0], 15 + x->bm_size);
			break;
		case UVC_VC_PROCESSING_UNIT:
			x->sources[x->n_sources++] = p[4];
			x->bm_size = p[7];
			x->bm = &p[8];
			assert_int_equal(p[0], 10 + x->bm_size);   /* UVC 1.1 */
			break;
		case UVC_VC_EXTENSION_UNIT: {
			int np = p[21];

			for (int k = 0; k < np; k++)
				x->sources[x->n_sources++] = p[22 + k];
			x->bm_size = p[22 + np];
			x->bm = &p[23 + np];
			assert_int_equal(p[0], 24 + np + x->bm_size);
			int bits = 0;
			for (int k = 0; k < x->bm_size; k++)
				bits += __builtin_popcount(x->bm[k]);
			assert_int_equal(p[20], bits);      /* bNumControls */
			break;
		}
		case UVC_VC_OUTPUT_TERMINAL:
			assert_int_equal(p[0], 9);
			assert_int_equal(le16(&p[4]), UVC_TT_STREAMING);
			x->sources[x->n_sources++] = p[7];
			break;
		default:
			fail_msg("unexpected VC descriptor subtype %u", p[2]);
		}
	}
	return n;
}

static void test_units_unique_and_linked(void **state)
{
	struct cam_descriptors d = build();
	struct walk w = walk(&d);
	struct unit u[16];
	int n = collect_units(&d, &w, u);
	int ot = -1;

	(void)state;
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++) {
		assert_int_not_equal(u[i].id, 0);
		for (int k = i + 1; k < n; k++)
			assert_int_not_equal(u[i].id, u[k].id);
		for (int s = 0; s < u[i].n_sources; s++) {
			int found = 0;

			for (int k = 0; k < n; k++)
				found |= u[k].id == u[i].sources[s] &&
					 u[k].subtype != UVC_VC_OUTPUT_TERMINAL;
			assert_true(found);
		}
		if (u[i].subtype == UVC_VC_OUTPUT_TERMINAL)
			ot = i;
		/* The static entity table agrees with the descriptors. */
		int listed = 0;
		for (size_t k = 0; k < cam_n_entities; k++)
			listed |= cam_entities[k].id == u[i].id &&
				  cam_entities[k].subtype == u[i].subtype;
		assert_true(listed);
	}
	/* Walk back from the output terminal: OT <- XU <- PU <- IT, one
	 * input pin each (uvcvideo rejects multi-input XUs). */
	assert_true(ot >= 0);
	int cur = ot, hops = 0;
	while (u[cur].subtype != UVC_VC_INPUT_TERMINAL) {
		assert_int_equal(u[cur].n_sources, 1);
		int next = -1;
		for (int k = 0; k < n; k++)
			if (u[k].id == u[cur].sources[0])
				next = k;
		assert_true(next >= 0);
		cur = next;
		assert_true(++hops < 8);
	}
	assert_int_equal(hops, 3);
}

/* uvcvideo's uvc_ctrls[] index -> selector for the camera terminal and the
 * processing unit (drivers/media/usb/uvc/uvc_ctrl.c), with the sizes it
 * expects.  A set bmControls bit without a matching control here would be
 * an uninitialized control in the driver. */
struct uvc_std_ctrl {
	uint8_t unit, index, selector, size;
};
static const struct uvc_std_ctrl linux_ctrls[] = {
	{ CAM_ENTITY_PROCESSING, 0, 0x02, 2 }, { CAM_ENTITY_PROCESSING, 1, 0x03, 2 },
	{ CAM_ENTITY_PROCESSING, 2, 0x06, 2 }, { CAM_ENTITY_PROCESSING, 3, 0x07, 2 },
	{ CAM_ENTITY_PROCESSING, 4, 0x08, 2 }, { CAM_ENTITY_PROCESSING, 5, 0x09, 2 },
	{ CAM_ENTITY_PROCESSING, 6, 0x0a, 2 }, { CAM_ENTITY_PROCESSING, 7, 0x0c, 4 },
	{ CAM_ENTITY_PROCESSING, 8, 0x01, 2 }, { CAM_ENTITY_PROCESSING, 9, 0x04, 2 },
	{ CAM_ENTITY_PROCESSING, 10, 0x05, 1 }, { CAM_ENTITY_PROCESSING, 11, 0x10, 1 },
	{ CAM_ENTITY_PROCESSING, 12, 0x0b, 1 }, { CAM_ENTITY_PROCESSING, 13, 0x0d, 1 },
	{ CAM_ENTITY_PROCESSING, 14, 0x0e, 2 }, { CAM_ENTITY_PROCESSING, 15, 0x0f, 2 },
	{ CAM_ENTITY_PROCESSING, 16, 0x11, 1 }, { CAM_ENTITY_PROCESSING, 17, 0x12, 1 },
	{ CAM_ENTITY_CAMERA, 0, 0x01, 1 }, { CAM_ENTITY_CAMERA, 1, 0x02, 1 },
	{ CAM_ENTITY_CAMERA, 2, 0x03, 1 }, { CAM_ENTITY_CAMERA, 3, 0x04, 4 },
	{ CAM_ENTITY_CAMERA, 4, 0x05, 1 }, { CAM_ENTITY_CAMERA, 5, 0x06, 2 },
	{ CAM_ENTITY_CAMERA, 6, 0x07, 2 }, { CAM_ENTITY_CAMERA, 7, 0x09, 2 },
	{ CAM_ENTITY_CAMERA, 8, 0x0a, 1 }, { CAM_ENTITY_CAMERA, 9, 0x0b, 2 },
	{ CAM_ENTITY_CAMERA, 10, 0x0c, 3 }, { CAM_ENTITY_CAMERA, 11, 0x0d, 8 },
	{ CAM_ENTITY_CAMERA, 12, 0x0e, 4 }, { CAM_ENTITY_CAMERA, 13, 0x0f, 2 },
	{ CAM_ENTITY_CAMERA, 14, 0x10, 2 }, { CAM_ENTITY_CAMERA, 17, 0x08, 1 },
	{ CAM_ENTITY_CAMERA, 18, 0x11, 1 },
};

static const struct uvc_std_ctrl *linux_ctrl(uint8_t unit, unsigned index)
{
	for (size_t i = 0; i < sizeof(linux_ctrls) / sizeof(linux_ctrls[0]); i++)
		if (linux_ctrls[i].unit == unit && linux_ctrls[i].index == index)
			return &linux_ctrls[i];
	return NULL;
}

static void test_bmcontrols_match_controls(void **state)
{
	struct cam_descriptors d = build();
	struct walk w = walk(&d);
	struct unit u[16];
	int n = collect_units(&d, &w, u);

	(void)state;
	for (int i = 0; i < n; i++) {
		unsigned declared = 0, implemented = 0;

		if (!u[i].bm)
			continue;
		for (unsigned bit = 0; bit < 8u * u[i].bm_size; bit++) {
			if (!(u[i].bm[bit / 8] & (1u << (bit % 8))))
				continue;
			declared++;
			uint8_t sel;
			if (u[i].subtype == UVC_VC_EXTENSION_UNIT) {
				sel = (uint8_t)(bit + 1);
			} else {
				const struct uvc_std_ctrl *lc =
					linux_ctrl(u[i].id, bit);
				assert_non_null(lc);
				sel = lc->selector;
				const struct ctrl_def *c =
					cam_find_ctrl(u[i].id, sel);
				assert_non_null(c);
				assert_int_equal(c->len, lc->size);
			}
			assert_non_null(cam_find_ctrl(u[i].id, sel));
		}
		for (size_t k = 0; k < cam_n_ctrls; k++)
			implemented += cam_ctrls[k].unit == u[i].id;
		assert_int_equal(declared, implemented);
	}
}

static void test_ctrl_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < cam_n_ctrls; i++) {
		const struct ctrl_def *c = &cam_ctrls[i];

		assert_true(c->len >= 1 && c->len <= CTRL_MAX_LEN);
		assert_true(c->info & 0x01 || c->info & 0x02);
		/* unique (unit, selector) */
		assert_ptr_equal(cam_find_ctrl(c->unit, c->selector), c);
		/* a mapped control fits a status packet */
		if (c->flags & CTRL_MAPPED)
			assert_true(5u + c->len <= CAM_STATUS_MAX_LEN);
	}
	assert_null(cam_find_ctrl(CAM_ENTITY_EXTENSION, 0));
	assert_null(cam_find_ctrl(CAM_ENTITY_OUTPUT, 1));
}

static void test_status_endpoint(void **state)
{
	struct cam_descriptors d = build();
	struct walk w = walk(&d);
	int found = 0;

	(void)state;
	for (size_t i = 0; i < w.n; i++) {
		const uint8_t *p = &d.config[w.at[i]];

		if (p[1] != USB_DT_ENDPOINT || p[2] != CAM_EP_STATUS)
			continue;
		found++;
		assert_int_equal(p[3], 0x03);                    /* interrupt */
		assert_int_equal(le16(&p[4]), 16);
		assert_int_equal(p[6], 1);
		const uint8_t *cs = &d.config[w.at[i + 1]];
		assert_int_equal(cs[0], 5);
		assert_int_equal(cs[1], USB_DT_CS_ENDPOINT);
		assert_int_equal(cs[2], UVC_EP_INTERRUPT);
		assert_int_equal(le16(&cs[3]), 16);
	}
	assert_int_equal(found, 1);
	assert_true(CAM_STATUS_MAX_LEN < CAM_EP_STATUS_MAXPACKET);
}

static void test_streaming_descriptors(void **state)
{
	struct cam_descriptors d = build();
	struct walk w = walk(&d);
	size_t hi;
	const uint8_t *h = find_cs(&d, &w, UVC_VS_INPUT_HEADER,
				   CAM_IF_STREAMING, &hi);
	unsigned total = 0, formats = 0;

	(void)state;
	assert_non_null(h);
	assert_int_equal(h[0], 13 + h[3] * h[12]);
	assert_int_equal(h[3], cam_n_formats);
	assert_int_equal(h[6], CAM_EP_VIDEO);
	assert_int_equal(h[8], CAM_ENTITY_OUTPUT);
	assert_int_equal(h[9], 2);                      /* still method 2 */
	assert_int_equal(h[10], 1);                     /* trigger support */
	assert_int_equal(h[11], 1);                     /* general button */

	for (size_t i = hi; i < w.n; i++) {
		const uint8_t *p = &d.config[w.at[i]];

		if (p[1] != USB_DT_CS_INTERFACE)
			break;
		total += p[0];
		if (p[2] != UVC_VS_FORMAT_MJPEG &&
		    p[2] != UVC_VS_FORMAT_UNCOMPRESSED)
			continue;
		formats++;
		assert_int_equal(p[3], formats);            /* bFormatIndex */
		if (p[2] == UVC_VS_FORMAT_UNCOMPRESSED) {
			assert_int_equal(p[0], 27);
			assert_memory_equal(&p[5], "YUY2", 4);
			assert_int_equal(p[21], 16);
		} else {
			assert_int_equal(p[0], 11);
		}
		uint8_t frame_type = p[2] + 1, nframes = p[4];
		size_t k = i + 1;
		for (uint8_t f = 1; f <= nframes; f++, k++) {
			const uint8_t *fr = &d.config[w.at[k]];
			uint8_t nint = fr[25];

			assert_int_equal(fr[2], frame_type);
			assert_int_equal(fr[3], f);
			assert_true(nint >= 1);
			assert_int_equal(fr[0], 26 + 4 * nint);
			uint32_t def = le32(&fr[21]);
			int ok = 0;
			for (uint8_t q = 0; q < nint; q++)
				ok |= le32(&fr[26 + 4 * q]) == def;
			assert_true(ok);
			if (p[2] == UVC_VS_FORMAT_UNCOMPRESSED)
				assert_int_equal(le32(&fr[17]),
						 le16(&fr[5]) * le16(&fr[7]) * 2u);
		}
		/* still image frame, then color matching */
		const uint8_t *still = &d.config[w.at[k]];
		assert_int_equal(still[2], UVC_VS_STILL_IMAGE_FRAME);
		assert_int_equal(still[4], nframes);
		assert_int_equal(still[0], 6 + 4 * still[4] + still[5 + 4 * still[4]]);
		assert_int_equal(d.config[w.at[k + 1] + 2], UVC_VS_COLORFORMAT);
	}
	assert_int_equal(formats, cam_n_formats);
	assert_int_equal(le16(&h[4]), total);

	/* Alternate settings 1..n each carry the iso endpoint. */
	unsigned alts = 0;
	uint16_t prev = 0;
	for (size_t i = 0; i < w.n; i++) {
		const uint8_t *p = &d.config[w.at[i]];

		if (p[1] != USB_DT_INTERFACE || p[2] != CAM_IF_STREAMING ||
		    p[3] == 0)
			continue;
		alts++;
		const uint8_t *ep = &d.config[w.at[i + 1]];
		assert_int_equal(ep[1], USB_DT_ENDPOINT);
		assert_int_equal(ep[2], CAM_EP_VIDEO);
		assert_int_equal(ep[3] & 3, 1);             /* isochronous */
		assert_true(le16(&ep[4]) > prev && le16(&ep[4]) <= 1024);
		assert_int_equal(le16(&ep[4]), cam_vs_alt_maxpacket[p[3]]);
		/* quiet: a stream polls it every 64 ms (desc.h) */
		assert_int_equal(ep[6], CAM_EP_VIDEO_INTERVAL);
		prev = (uint16_t)le16(&ep[4]);
	}
	assert_int_equal(alts, CAM_VS_NUM_ALTS - 1);
}

static void test_strings(void **state)
{
	struct cam_descriptors d = build();
	uint8_t buf[256];
	int n;

	(void)state;
	n = cam_string_descriptor(&d, 0, buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_int_equal(le16(&buf[2]), 0x0409);
	for (uint8_t i = 1; i <= 3; i++) {
		n = cam_string_descriptor(&d, i, buf, sizeof(buf));
		assert_true(n > 2);
		assert_int_equal(buf[0], n);
		assert_int_equal(buf[1], USB_DT_STRING);
		assert_int_equal(n % 2, 0);
	}
	n = cam_string_descriptor(&d, 2, buf, sizeof(buf));
	assert_int_equal(n, 2 + 2 * (int)strlen("Fake UVC Camera"));
	assert_int_equal(cam_string_descriptor(&d, 4, buf, sizeof(buf)), -1);

	/* per-camera serial number */
	assert_int_equal(cam_descriptors_build(&d, "CAM-7"), 0);
	n = cam_string_descriptor(&d, 3, buf, sizeof(buf));
	assert_int_equal(n, 2 + 2 * 5);
	assert_int_equal(buf[2], 'C');
	assert_int_equal(buf[10], '7');
	assert_int_equal(cam_descriptors_build(&d, ""), -1);
	assert_int_equal(cam_descriptors_build(&d, "bad\nserial"), -1);
	assert_int_equal(cam_descriptors_build(&d,
		"0123456789012345678901234567890123"), -1);
}

TEST_LIST(desc_tests,
	cmocka_unit_test(test_device_descriptor),
	cmocka_unit_test(test_config_lengths),
	cmocka_unit_test(test_vc_header_total),
	cmocka_unit_test(test_units_unique_and_linked),
	cmocka_unit_test(test_bmcontrols_match_controls),
	cmocka_unit_test(test_ctrl_table),
	cmocka_unit_test(test_status_endpoint),
	cmocka_unit_test(test_streaming_descriptors),
	cmocka_unit_test(test_strings),
)
