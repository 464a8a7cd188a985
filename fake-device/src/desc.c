// SPDX-License-Identifier: MIT
/* Descriptor tables of the fake UVC camera and their serializer. */
#include "desc.h"

#include <string.h>

#define U16(v) (uint8_t)((unsigned)(v) & 0xffu), \
	       (uint8_t)(((unsigned)(v) >> 8) & 0xffu)
#define U32(v) U16((uint32_t)(v) & 0xffffu), U16((uint32_t)(v) >> 16)

/* ---- Standard descriptors ---------------------------------------------- */

#define USB_IFACE(num, alt, neps, sub) \
	9, USB_DT_INTERFACE, (num), (alt), (neps), UVC_CC_VIDEO, (sub), 0x00, 0
#define USB_ENDPOINT(addr, attr, maxp, interval) \
	7, USB_DT_ENDPOINT, (addr), (attr), U16(maxp), (interval)

static const uint8_t device_desc[18] = {
	18, USB_DT_DEVICE, U16(0x0200),
	0xef, 0x02, 0x01,               /* misc / common class / IAD */
	CAM_EP0_MAXPACKET,
	U16(CAM_VENDOR_ID), U16(CAM_PRODUCT_ID), U16(CAM_BCD_DEVICE),
	1, 2, 3,                        /* manufacturer, product, serial */
	1,                              /* bNumConfigurations */
};

static const uint8_t qualifier_desc[10] = {
	10, USB_DT_DEVICE_QUALIFIER, U16(0x0200),
	0xef, 0x02, 0x01, CAM_EP0_MAXPACKET, 1, 0,
};

static const uint8_t iad_desc[] = {
	8, USB_DT_IAD, CAM_IF_CONTROL, CAM_NUM_INTERFACES,
	UVC_CC_VIDEO, UVC_SC_VIDEO_INTERFACE_COLLECTION, 0x00, 0,
};

/* ---- VideoControl interface ---------------------------------------------- */

#define VC_HEADER_LEN 13
#define VC_IT_LEN     18
#define VC_PU_LEN     12
#define VC_XU_LEN     27
#define VC_OT_LEN      9
#define VC_TOTAL_LEN  (VC_HEADER_LEN + VC_IT_LEN + VC_PU_LEN + VC_XU_LEN + \
		       VC_OT_LEN)

static const uint8_t vc_iface_desc[] = {
	USB_IFACE(CAM_IF_CONTROL, 0, 1, UVC_SC_VIDEOCONTROL),
};

static const uint8_t vc_header_desc[VC_HEADER_LEN] = {
	VC_HEADER_LEN, USB_DT_CS_INTERFACE, UVC_VC_HEADER,
	U16(CAM_UVC_VERSION), U16(VC_TOTAL_LEN), U32(CAM_CLOCK_HZ),
	1, CAM_IF_STREAMING,            /* bInCollection, baInterfaceNr */
};

/* Camera terminal: AE mode (1), AE priority (2), exposure absolute (3),
 * focus absolute (5), zoom absolute (9), pan/tilt absolute (11),
 * focus auto (17), privacy (18). */
static const uint8_t vc_camera_desc[VC_IT_LEN] = {
	VC_IT_LEN, USB_DT_CS_INTERFACE, UVC_VC_INPUT_TERMINAL,
	CAM_ENTITY_CAMERA, U16(UVC_ITT_CAMERA), 0, 0,
	U16(0), U16(0), U16(0),         /* focal lengths */
	3, 0x2e, 0x0a, 0x06,            /* bControlSize, bmControls */
};

/* Processing unit: brightness (0), contrast (1), hue (2), saturation (3),
 * sharpness (4), gamma (5), white balance temperature (6), backlight
 * compensation (8), gain (9), power line frequency (10), hue auto (11),
 * white balance temperature auto (12). */
static const uint8_t vc_processing_desc[VC_PU_LEN] = {
	VC_PU_LEN, USB_DT_CS_INTERFACE, UVC_VC_PROCESSING_UNIT,
	CAM_ENTITY_PROCESSING, CAM_ENTITY_CAMERA, U16(0),
	2, 0x7f, 0x1f,                  /* bControlSize, bmControls */
	0, 0,                           /* iProcessing, bmVideoStandards */
};

/* Extension unit with four vendor controls (selectors 1-4). */
#define CAM_XU_GUID 0x5a, 0x8f, 0x3c, 0x27, 0x9e, 0x41, 0x4d, 0x1b, \
		    0xa6, 0x02, 0xd7, 0x6c, 0x15, 0xe0, 0x33, 0x9a
static const uint8_t vc_extension_desc[VC_XU_LEN] = {
	VC_XU_LEN, USB_DT_CS_INTERFACE, UVC_VC_EXTENSION_UNIT,
	CAM_ENTITY_EXTENSION, CAM_XU_GUID,
	4, 1, CAM_ENTITY_PROCESSING,    /* bNumControls, bNrInPins, source */
	2, 0x0f, 0x00,                  /* bControlSize, bmControls */
	0,                              /* iExtension */
};

static const uint8_t vc_output_desc[VC_OT_LEN] = {
	VC_OT_LEN, USB_DT_CS_INTERFACE, UVC_VC_OUTPUT_TERMINAL,
	CAM_ENTITY_OUTPUT, U16(UVC_TT_STREAMING), 0, CAM_ENTITY_EXTENSION, 0,
};

static const uint8_t vc_status_ep_desc[] = {
	USB_ENDPOINT(CAM_EP_STATUS, 0x03, CAM_EP_STATUS_MAXPACKET,
		     CAM_EP_STATUS_INTERVAL),
	5, USB_DT_CS_ENDPOINT, UVC_EP_INTERRUPT, U16(CAM_EP_STATUS_MAXPACKET),
};

/* ---- VideoStreaming interface -------------------------------------------- */

static const struct cam_frame mjpeg_frames[] = {
	{ 640, 480, 640 * 480 * 2, 333333, 3, { 333333, 666666, 1000000 } },
	{ 1280, 720, 1280 * 720 * 2, 333333, 3, { 333333, 666666, 1000000 } },
	{ 1920, 1080, 1920 * 1080 * 2, 333333, 3, { 333333, 666666, 1000000 } },
};

static const struct cam_frame yuyv_frames[] = {
	{ 640, 480, 640 * 480 * 2, 333333, 3, { 333333, 666666, 1000000 } },
	{ 320, 240, 320 * 240 * 2, 333333, 3, { 333333, 666666, 1000000 } },
	{ 160, 120, 160 * 120 * 2, 333333, 3, { 333333, 666666, 1000000 } },
};

const struct cam_format cam_formats[] = {
	{ 1, UVC_VS_FORMAT_MJPEG, 3, mjpeg_frames },
	{ 2, UVC_VS_FORMAT_UNCOMPRESSED, 3, yuyv_frames },
};
const size_t cam_n_formats = sizeof(cam_formats) / sizeof(cam_formats[0]);

const uint16_t cam_vs_alt_maxpacket[CAM_VS_NUM_ALTS] = { 0, 128, 512, 1024 };

static const uint8_t yuy2_guid[16] = {
	'Y', 'U', 'Y', '2', 0x00, 0x00, 0x10, 0x00,
	0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71,
};

/* Color matching: BT.709 primaries and transfer, SMPTE 170M matrix. */
static const uint8_t vs_color_desc[] = {
	6, USB_DT_CS_INTERFACE, UVC_VS_COLORFORMAT, 1, 1, 4,
};

/* ---- Controls --------------------------------------------------------------
 * Ranges are what a typical 720p/1080p webcam reports.  Flags say how the
 * state model checks SET_CUR and whether uvcvideo maps the control (the
 * `control` flood pattern only uses mapped ones).
 */
#define CT CAM_ENTITY_CAMERA
#define PU CAM_ENTITY_PROCESSING
#define XU CAM_ENTITY_EXTENSION
#define GS (UVC_INFO_GET | UVC_INFO_SET)
#define GSA (UVC_INFO_GET | UVC_INFO_SET | UVC_INFO_AUTOUPDATE)

const struct ctrl_def cam_ctrls[] = {
	/* VideoControl interface controls (entity 0). */
	{ .name = "Video Power Mode", .unit = 0, .selector = 0x01, .len = 1,
	  .info = GS, .flags = CTRL_NO_RANGE,
	  .min = { 0x00 }, .max = { 0x00 }, .res = { 0x00 }, .def = { 0x00 } },
	{ .name = "Request Error Code", .unit = 0, .selector = 0x02, .len = 1,
	  .info = UVC_INFO_GET, .flags = 0,
	  .min = { 0 }, .max = { 0xff }, .res = { 1 }, .def = { 0 } },

	/* Camera terminal. */
	{ .name = "Auto Exposure Mode", .unit = CT, .selector = 0x02,
	  .len = 1, .info = GS, .flags = CTRL_BITMAP | CTRL_MAPPED,
	  .min = { 0x01 }, .max = { 0x08 }, .res = { 0x09 }, .def = { 0x08 } },
	{ .name = "Auto Exposure Priority", .unit = CT, .selector = 0x03,
	  .len = 1, .info = GS, .flags = CTRL_MAPPED,
	  .min = { 0 }, .max = { 1 }, .res = { 1 }, .def = { 0 } },
	{ .name = "Exposure Time, Absolute", .unit = CT, .selector = 0x04,
	  .len = 4, .info = GSA, .flags = CTRL_MAPPED,
	  .min = { U32(3) }, .max = { U32(2047) }, .res = { U32(1) },
	  .def = { U32(156) } },
	/*
	 * Asynchronous, as on many real cameras: a SET_CUR returns at once and
	 * the camera reports the change on the status endpoint when the lens
	 * got there.  uvcvideo keeps the control pending, with a power and
	 * status reference (7.x), until that status packet arrives.  This
	 * camera's lens never gets there: no flood pattern reports the
	 * control (flood.c), so a set stays pending until its handle closes.
	 */
	{ .name = "Focus, Absolute", .unit = CT, .selector = 0x06, .len = 2,
	  .info = GSA | UVC_INFO_ASYNC, .flags = CTRL_MAPPED,
	  .min = { U16(0) }, .max = { U16(250) }, .res = { U16(5) },
	  .def = { U16(0) } },
	{ .name = "Focus, Auto", .unit = CT, .selector = 0x08, .len = 1,
	  .info = GS, .flags = CTRL_MAPPED,
	  .min = { 0 }, .max = { 1 }, .res = { 1 }, .def = { 1 } },
	{ .name = "Zoom, Absolute", .unit = CT, .selector = 0x0b, .len = 2,
	  .info = GS, .flags = CTRL_MAPPED,
	  .min = { U16(100) }, .max = { U16(500) }, .res = { U16(1) },
	  .def = { U16(100) } },
	{ .name = "Pan/Tilt, Absolute", .unit = CT, .selector = 0x0d,
	  .len = 8, .info = GS, .flags = CTRL_SIGNED | CTRL_NO_RANGE | CTRL_MAPPED,
	  .min = { U32(-36000), U32(-36000) }, .max = { U32(36000), U32(36000) },
	  .res = { U32(3600), U32(3600) }, .def = { U32(0), U32(0) } },
	{ .name = "Privacy", .unit = CT, .selector = 0x11, .len = 1,
	  .info = UVC_INFO_GET | UVC_INFO_AUTOUPDATE, .flags = CTRL_MAPPED,
	  .min = { 0 }, .max = { 1 }, .res = { 1 }, .def = { 0 } },

	/* Processing unit. */
	{ .name = "Backlight Compensation", .unit = PU, .selector = 0x01,
	  .len = 2, .info = GS, .flags = CTRL_MAPPED,
	  .min = { U16(0) }, .max = { U16(2) }, .res = { U16(1) },
	  .def = { U16(1) } },
	{ .name = "Brightness", .unit = PU, .selector = 0x02, .len = 2,
	  .info = GS, .flags = CTRL_SIGNED | CTRL_MAPPED,
	  .min = { U16(-64) }, .max = { U16(64) }, .res = { U16(1) },
	  .def = { U16(0) } },
	{ .name = "Contrast", .unit = PU, .selector = 0x03, .len = 2,
	  .info = GS, .flags = CTRL_MAPPED,
	  .min = { U16(0) }, .max = { U16(95) }, .res = { U16(1) },
	  .def = { U16(32) } },
	{ .name = "Gain", .unit = PU, .selector = 0x04, .len = 2,
	  .info = GS, .flags = CTRL_MAPPED,
	  .min = { U16(0) }, .max = { U16(100) }, .res = { U16(1) },
	  .def = { U16(0) } },
	{ .name = "Power Line Frequency", .unit = PU, .selector = 0x05,
	  .len = 1, .info = GS, .flags = CTRL_MAPPED,
	  .min = { 0 }, .max = { 2 }, .res = { 1 }, .def = { 1 } },
	{ .name = "Hue", .unit = PU, .selector = 0x06, .len = 2,
	  .info = GSA, .flags = CTRL_SIGNED | CTRL_MAPPED,
	  .min = { U16(-2000) }, .max = { U16(2000) }, .res = { U16(1) },
	  .def = { U16(0) } },
	{ .name = "Saturation", .unit = PU, .selector = 0x07, .len = 2,
	  .info = GS, .flags = CTRL_MAPPED,
	  .min = { U16(0) }, .max = { U16(128) }, .res = { U16(1) },
	  .def = { U16(64) } },
	{ .name = "Sharpness", .unit = PU, .selector = 0x08, .len = 2,
	  .info = GS, .flags = CTRL_MAPPED,
	  .min = { U16(0) }, .max = { U16(7) }, .res = { U16(1) },
	  .def = { U16(3) } },
	{ .name = "Gamma", .unit = PU, .selector = 0x09, .len = 2,
	  .info = GS, .flags = CTRL_MAPPED,
	  .min = { U16(72) }, .max = { U16(500) }, .res = { U16(1) },
	  .def = { U16(100) } },
	{ .name = "White Balance Temperature", .unit = PU, .selector = 0x0a,
	  .len = 2, .info = GSA, .flags = CTRL_MAPPED,
	  .min = { U16(2800) }, .max = { U16(6500) }, .res = { U16(1) },
	  .def = { U16(4600) } },
	{ .name = "White Balance Temperature, Auto", .unit = PU,
	  .selector = 0x0b, .len = 1, .info = GS, .flags = CTRL_MAPPED,
	  .min = { 0 }, .max = { 1 }, .res = { 1 }, .def = { 1 } },
	{ .name = "Hue, Auto", .unit = PU, .selector = 0x10, .len = 1,
	  .info = GS, .flags = CTRL_MAPPED,
	  .min = { 0 }, .max = { 1 }, .res = { 1 }, .def = { 0 } },

	/* Extension unit (vendor controls; uvcvideo maps none of them). */
	{ .name = "Vendor LED Mode", .unit = XU, .selector = 0x01, .len = 1,
	  .info = GS, .flags = 0,
	  .min = { 0 }, .max = { 3 }, .res = { 1 }, .def = { 0 } },
	{ .name = "Vendor Gain Trim", .unit = XU, .selector = 0x02, .len = 2,
	  .info = GS, .flags = 0,
	  .min = { U16(0) }, .max = { U16(1023) }, .res = { U16(1) },
	  .def = { U16(512) } },
	{ .name = "Vendor Frame Counter", .unit = XU, .selector = 0x03,
	  .len = 4, .info = UVC_INFO_GET | UVC_INFO_AUTOUPDATE, .flags = 0,
	  .min = { U32(0) }, .max = { U32(0xffffffff) }, .res = { U32(1) },
	  .def = { U32(0) } },
	{ .name = "Vendor Tuning Blob", .unit = XU, .selector = 0x04,
	  .len = 8, .info = GS, .flags = CTRL_NO_RANGE,
	  .min = { 0 }, .max = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	  .res = { 1 }, .def = { 0 } },
};
const size_t cam_n_ctrls = sizeof(cam_ctrls) / sizeof(cam_ctrls[0]);

const struct entity_def cam_entities[] = {
	{ CAM_ENTITY_CAMERA, UVC_VC_INPUT_TERMINAL, "Camera" },
	{ CAM_ENTITY_PROCESSING, UVC_VC_PROCESSING_UNIT, "Processing" },
	{ CAM_ENTITY_EXTENSION, UVC_VC_EXTENSION_UNIT, "Extension" },
	{ CAM_ENTITY_OUTPUT, UVC_VC_OUTPUT_TERMINAL, "Output" },
};
const size_t cam_n_entities = sizeof(cam_entities) / sizeof(cam_entities[0]);

const struct ctrl_def *cam_find_ctrl(uint8_t unit, uint8_t selector)
{
	for (size_t i = 0; i < cam_n_ctrls; i++)
		if (cam_ctrls[i].unit == unit &&
		    cam_ctrls[i].selector == selector)
			return &cam_ctrls[i];
	return NULL;
}

/* ---- Strings --------------------------------------------------------------- */

static const char *const cam_strings[] = {
	NULL,                   /* 0: language IDs */
	"dmaharness",
	"Fake UVC Camera",
	NULL,                   /* 3: serial number, per device */
};

int cam_string_descriptor(const struct cam_descriptors *d, uint8_t index,
			  uint8_t *buf, size_t size)
{
	size_t n = sizeof(cam_strings) / sizeof(cam_strings[0]);

	if (size < 4 || index >= n)
		return -1;
	if (index == 0) {
		const uint8_t langids[4] = { 4, USB_DT_STRING, U16(0x0409) };

		memcpy(buf, langids, sizeof(langids));
		return 4;
	}

	size_t len = 2;
	const char *str = index == 3 ? d->serial : cam_strings[index];
	for (const char *s = str; *s && len + 2 <= size &&
	     len + 2 <= 254; s++) {
		buf[len++] = (uint8_t)*s;
		buf[len++] = 0;
	}
	buf[0] = (uint8_t)len;
	buf[1] = USB_DT_STRING;
	return (int)len;
}

/* ---- Serializer -------------------------------------------------------------- */

struct writer {
	uint8_t *buf;
	size_t len, size;
	int overflow;
};

static uint8_t *put(struct writer *w, const void *data, size_t len)
{
	if (w->overflow || w->len + len > w->size) {
		w->overflow = 1;
		return NULL;
	}
	uint8_t *at = w->buf + w->len;
	memcpy(at, data, len);
	w->len += len;
	return at;
}

static void put_u16(uint8_t *at, unsigned v)
{
	at[0] = (uint8_t)(v & 0xff);
	at[1] = (uint8_t)((v >> 8) & 0xff);
}

static void put_u32(uint8_t *at, uint32_t v)
{
	put_u16(at, v & 0xffff);
	put_u16(at + 2, v >> 16);
}

static void put_format(struct writer *w, const struct cam_format *f)
{
	if (f->subtype == UVC_VS_FORMAT_MJPEG) {
		const uint8_t d[11] = {
			11, USB_DT_CS_INTERFACE, UVC_VS_FORMAT_MJPEG,
			f->index, f->n_frames,
			0x01,           /* bmFlags: fixed size samples */
			1, 0, 0, 0, 0,  /* default frame, aspect, interlace, copy */
		};
		put(w, d, sizeof(d));
	} else {
		uint8_t d[27] = {
			27, USB_DT_CS_INTERFACE, UVC_VS_FORMAT_UNCOMPRESSED,
			f->index, f->n_frames,
		};
		memcpy(&d[5], yuy2_guid, 16);
		d[21] = 16;             /* bBitsPerPixel */
		d[22] = 1;              /* bDefaultFrameIndex */
		put(w, d, sizeof(d));
	}

	uint8_t frame_subtype = f->subtype == UVC_VS_FORMAT_MJPEG ?
		UVC_VS_FRAME_MJPEG : UVC_VS_FRAME_UNCOMPRESSED;
	for (uint8_t i = 0; i < f->n_frames; i++) {
		const struct cam_frame *fr = &f->frames[i];
		uint8_t d[26 + 4 * 4] = { 0 };
		uint8_t len = (uint8_t)(26 + 4 * fr->n_intervals);
		uint32_t bits = (uint32_t)fr->width * fr->height * 16;

		d[0] = len;
		d[1] = USB_DT_CS_INTERFACE;
		d[2] = frame_subtype;
		d[3] = (uint8_t)(i + 1);
		d[4] = 0;                               /* bmCapabilities */
		put_u16(&d[5], fr->width);
		put_u16(&d[7], fr->height);
		put_u32(&d[9], bits * 10);              /* 10 fps */
		put_u32(&d[13], bits * 30);             /* 30 fps */
		put_u32(&d[17], fr->max_frame_size);
		put_u32(&d[21], fr->default_interval);
		d[25] = fr->n_intervals;
		for (uint8_t k = 0; k < fr->n_intervals; k++)
			put_u32(&d[26 + 4 * k], fr->intervals[k]);
		put(w, d, len);
	}

	/* Still image frame (method 2): every frame size, and for MJPEG one
	 * compression pattern. */
	uint8_t still[6 + 4 * 8 + 1] = { 0 };
	uint8_t n = f->n_frames, m = f->subtype == UVC_VS_FORMAT_MJPEG;
	uint8_t slen = (uint8_t)(6 + 4 * n + m);

	still[0] = slen;
	still[1] = USB_DT_CS_INTERFACE;
	still[2] = UVC_VS_STILL_IMAGE_FRAME;
	still[3] = 0;                   /* bEndpointAddress: method 2 */
	still[4] = n;
	for (uint8_t i = 0; i < n; i++) {
		put_u16(&still[5 + 4 * i], f->frames[i].width);
		put_u16(&still[7 + 4 * i], f->frames[i].height);
	}
	still[5 + 4 * n] = m;
	if (m)
		still[6 + 4 * n] = 5;   /* bCompression: ratio 1:5 */
	put(w, still, slen);

	put(w, vs_color_desc, sizeof(vs_color_desc));
}

int cam_descriptors_build(struct cam_descriptors *d, const char *serial)
{
	struct writer w = { d->config, 0, sizeof(d->config), 0 };
	static const uint8_t config_head[9] = {
		9, USB_DT_CONFIG, U16(0), CAM_NUM_INTERFACES, CAM_CONFIG_VALUE,
		0, 0x80, 250,           /* bus powered, 500 mA */
	};

	if (!serial)
		serial = CAM_DEFAULT_SERIAL;
	if (!*serial || strlen(serial) > CAM_SERIAL_MAX)
		return -1;
	for (const char *s = serial; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return -1;
	strcpy(d->serial, serial);
	memcpy(d->device, device_desc, sizeof(d->device));
	memcpy(d->qualifier, qualifier_desc, sizeof(d->qualifier));

	put(&w, config_head, sizeof(config_head));
	put(&w, iad_desc, sizeof(iad_desc));

	put(&w, vc_iface_desc, sizeof(vc_iface_desc));
	put(&w, vc_header_desc, sizeof(vc_header_desc));
	put(&w, vc_camera_desc, sizeof(vc_camera_desc));
	put(&w, vc_processing_desc, sizeof(vc_processing_desc));
	put(&w, vc_extension_desc, sizeof(vc_extension_desc));
	put(&w, vc_output_desc, sizeof(vc_output_desc));
	put(&w, vc_status_ep_desc, sizeof(vc_status_ep_desc));

	/* VideoStreaming alt 0 carries all class-specific descriptors. */
	const uint8_t vs_alt0[] = { USB_IFACE(CAM_IF_STREAMING, 0, 0,
					      UVC_SC_VIDEOSTREAMING) };
	put(&w, vs_alt0, sizeof(vs_alt0));

	const uint8_t n_formats = (uint8_t)cam_n_formats;
	uint8_t header[13 + 8] = {
		(uint8_t)(13 + n_formats), USB_DT_CS_INTERFACE,
		UVC_VS_INPUT_HEADER, n_formats, U16(0) /* patched below */,
		CAM_EP_VIDEO, 0,        /* bmInfo */
		CAM_ENTITY_OUTPUT,
		2,                      /* bStillCaptureMethod */
		/* bTriggerSupport 1, bTriggerUsage 1 (general purpose button):
		 * since 6.x uvcvideo creates the input device only then. */
		1, 1,
		1,                      /* bControlSize; bmaControls all 0 */
	};
	size_t header_at = w.len;
	put(&w, header, header[0]);
	for (size_t i = 0; i < cam_n_formats; i++)
		put_format(&w, &cam_formats[i]);
	if (!w.overflow)
		put_u16(&d->config[header_at + 4], (unsigned)(w.len - header_at));

	for (uint8_t alt = 1; alt < CAM_VS_NUM_ALTS; alt++) {
		const uint8_t a[] = {
			USB_IFACE(CAM_IF_STREAMING, alt, 1,
				  UVC_SC_VIDEOSTREAMING),
			USB_ENDPOINT(CAM_EP_VIDEO, 0x05,
				     cam_vs_alt_maxpacket[alt],
				     CAM_EP_VIDEO_INTERVAL),
		};
		put(&w, a, sizeof(a));
	}

	if (w.overflow)
		return -1;
	put_u16(&d->config[2], (unsigned)w.len);
	d->config_len = w.len;
	return 0;
}

_Static_assert(sizeof(vc_header_desc) == VC_HEADER_LEN, "VC header");
_Static_assert(sizeof(vc_camera_desc) == VC_IT_LEN, "camera terminal");
_Static_assert(sizeof(vc_processing_desc) == VC_PU_LEN, "processing unit");
_Static_assert(sizeof(vc_extension_desc) == VC_XU_LEN, "extension unit");
_Static_assert(sizeof(vc_output_desc) == VC_OT_LEN, "output terminal");
