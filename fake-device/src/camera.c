// SPDX-License-Identifier: MIT
/* State model of the fake camera: standard and UVC class requests. */
#include "camera.h"

#include <string.h>

#define REQ_DIR_IN      0x80
#define REQ_TYPE_MASK   0x60
#define REQ_TYPE_STD    0x00
#define REQ_TYPE_CLASS  0x20
#define REQ_RECIP_MASK  0x1f
#define REQ_RECIP_DEV   0x00
#define REQ_RECIP_IFACE 0x01
#define REQ_RECIP_EP    0x02

#define USB_REQ_GET_STATUS        0x00
#define USB_REQ_CLEAR_FEATURE     0x01
#define USB_REQ_SET_FEATURE       0x03
#define USB_REQ_SET_ADDRESS       0x05
#define USB_REQ_GET_DESCRIPTOR    0x06
#define USB_REQ_GET_CONFIGURATION 0x08
#define USB_REQ_SET_CONFIGURATION 0x09
#define USB_REQ_GET_INTERFACE     0x0a
#define USB_REQ_SET_INTERFACE     0x0b

#define FEATURE_ENDPOINT_HALT 0

static const struct req_result STALL_STD = { -1, REQ_STANDARD };

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	       ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void set_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v & 0xff);
	p[1] = (uint8_t)(v >> 8);
}

static void set_le32(uint8_t *p, uint32_t v)
{
	set_le16(p, (uint16_t)(v & 0xffff));
	set_le16(p + 2, (uint16_t)(v >> 16));
}

size_t cam_ctrl_index(const struct ctrl_def *c)
{
	return (size_t)(c - cam_ctrls);
}

int64_t ctrl_value(const struct ctrl_def *c, const uint8_t *bytes)
{
	uint64_t v = 0;
	unsigned n = c->len > 4 ? 4 : c->len;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)bytes[i] << (8 * i);
	if ((c->flags & CTRL_SIGNED) && n > 0 && (bytes[n - 1] & 0x80))
		v |= ~(uint64_t)0 << (8 * n);
	return (int64_t)v;
}

void ctrl_store(const struct ctrl_def *c, uint8_t *bytes, int64_t v)
{
	unsigned n = c->len > 4 ? 4 : c->len;

	for (unsigned i = 0; i < n; i++)
		bytes[i] = (uint8_t)(((uint64_t)v >> (8 * i)) & 0xff);
}

/* ---- Probe / commit ------------------------------------------------------- */

static const struct cam_format *find_format(uint8_t index)
{
	for (size_t i = 0; i < cam_n_formats; i++)
		if (cam_formats[i].index == index)
			return &cam_formats[i];
	return NULL;
}

static uint32_t payload_size(const struct cam_format *f,
			     const struct cam_frame *fr, uint32_t interval)
{
	uint64_t per_s, per_uframe;

	if (f->subtype == UVC_VS_FORMAT_MJPEG)
		return cam_vs_alt_maxpacket[CAM_VS_NUM_ALTS - 1];
	per_s = (uint64_t)fr->max_frame_size * 10000000u / interval;
	per_uframe = (per_s + 7999) / 8000 + 12;        /* + payload header */
	if (per_uframe > cam_vs_alt_maxpacket[CAM_VS_NUM_ALTS - 1])
		per_uframe = cam_vs_alt_maxpacket[CAM_VS_NUM_ALTS - 1];
	return (uint32_t)per_uframe;
}

/* Fill a 34-byte probe structure from a (possibly partial, possibly bogus)
 * request, the way firmware negotiates: keep what is supported, replace the
 * rest with defaults. */
static void negotiate_probe(uint8_t *out, const uint8_t *req, int req_len,
			    int use_max_interval)
{
	uint8_t in[CAM_PROBE_LEN] = { 0 };
	const struct cam_format *f;
	const struct cam_frame *fr;
	uint32_t interval, best;

	if (req && req_len > 0)
		memcpy(in, req, req_len > CAM_PROBE_LEN ? CAM_PROBE_LEN :
		       (size_t)req_len);

	f = find_format(in[2]);
	if (!f)
		f = &cam_formats[0];
	if (in[3] < 1 || in[3] > f->n_frames)
		in[3] = 1;
	fr = &f->frames[in[3] - 1];

	interval = get_le32(&in[4]);
	if (use_max_interval)
		interval = fr->intervals[fr->n_intervals - 1];
	best = fr->default_interval;
	if (interval) {
		uint32_t best_d = UINT32_MAX;

		for (uint8_t i = 0; i < fr->n_intervals; i++) {
			uint32_t iv = fr->intervals[i];
			uint32_t d = iv > interval ? iv - interval : interval - iv;

			if (d < best_d) {
				best_d = d;
				best = iv;
			}
		}
	}

	memset(out, 0, CAM_PROBE_LEN);
	set_le16(&out[0], get_le16(&in[0]));            /* bmHint */
	out[2] = f->index;
	out[3] = in[3];
	set_le32(&out[4], best);
	set_le16(&out[8], get_le16(&in[8]));            /* wKeyFrameRate */
	set_le16(&out[10], get_le16(&in[10]));          /* wPFrameRate */
	set_le16(&out[12], get_le16(&in[12]));          /* wCompQuality */
	set_le16(&out[14], get_le16(&in[14]));          /* wCompWindowSize */
	set_le16(&out[16], 50);                         /* wDelay, ms */
	set_le32(&out[18], fr->max_frame_size);
	set_le32(&out[22], payload_size(f, fr, best));
	set_le32(&out[26], CAM_CLOCK_HZ);
	out[30] = 0x03;                                 /* bmFramingInfo */
	out[31] = 1;                                    /* bPreferedVersion */
	out[32] = 1;                                    /* bMinVersion */
	out[33] = 1;                                    /* bMaxVersion */
}

static void negotiate_still(uint8_t *out, const uint8_t *req, int req_len)
{
	uint8_t in[CAM_STILL_PROBE_LEN] = { 0 };
	const struct cam_format *f;

	if (req && req_len > 0)
		memcpy(in, req, req_len > CAM_STILL_PROBE_LEN ?
		       CAM_STILL_PROBE_LEN : (size_t)req_len);
	f = find_format(in[0]);
	if (!f)
		f = &cam_formats[0];
	if (in[1] < 1 || in[1] > f->n_frames)
		in[1] = 1;
	memset(out, 0, CAM_STILL_PROBE_LEN);
	out[0] = f->index;
	out[1] = in[1];
	out[2] = f->subtype == UVC_VS_FORMAT_MJPEG ? 1 : 0;
	set_le32(&out[3], f->frames[in[1] - 1].max_frame_size);
	set_le32(&out[7], cam_vs_alt_maxpacket[CAM_VS_NUM_ALTS - 1]);
}

/* ---- State ---------------------------------------------------------------- */

void cam_state_reset(struct cam_state *st)
{
	st->last_error = UVC_ERR_NONE;
	negotiate_probe(st->probe, NULL, 0, 0);
	memcpy(st->commit, st->probe, sizeof(st->commit));
	negotiate_still(st->still_probe, NULL, 0);
	memcpy(st->still_commit, st->still_probe, sizeof(st->still_commit));
	st->still_trigger = 0;
	memset(st->ep_halted, 0, sizeof(st->ep_halted));
}

void cam_state_init(struct cam_state *st, const struct cam_descriptors *d)
{
	memset(st, 0, sizeof(*st));
	st->desc = d;
	for (size_t i = 0; i < cam_n_ctrls && i < CAM_MAX_CTRLS; i++)
		memcpy(st->cur[i], cam_ctrls[i].def, CTRL_MAX_LEN);
	cam_state_reset(st);
}

int cam_set_configuration(struct cam_state *st, uint8_t value)
{
	if (value != 0 && value != CAM_CONFIG_VALUE)
		return -1;
	st->configuration = value;
	memset(st->alt, 0, sizeof(st->alt));
	memset(st->ep_halted, 0, sizeof(st->ep_halted));
	return 0;
}

int cam_set_interface(struct cam_state *st, uint8_t intf, uint8_t alt)
{
	if (st->configuration == 0)
		return -1;
	if (intf == CAM_IF_CONTROL && alt == 0) {
		st->alt[intf] = 0;
		return 0;
	}
	if (intf == CAM_IF_STREAMING && alt < CAM_VS_NUM_ALTS) {
		st->alt[intf] = alt;
		st->ep_halted[0x10 | (CAM_EP_VIDEO & 0x0f)] = 0;
		return 0;
	}
	return -1;
}

static int ep_exists(const struct cam_state *st, uint8_t ep)
{
	if ((ep & 0x0f) == 0)
		return 1;
	if (st->configuration == 0)
		return 0;
	if (ep == CAM_EP_STATUS)
		return 1;
	if (ep == CAM_EP_VIDEO)
		return st->alt[CAM_IF_STREAMING] != 0;
	return 0;
}

static int ep_slot(uint8_t ep)
{
	return ((ep & 0x80) >> 3) | (ep & 0x0f);
}

/* ---- Standard requests ----------------------------------------------------- */

static int reply(uint8_t *in, size_t in_size, uint16_t wLength,
		 const void *data, size_t len)
{
	if (len > wLength)
		len = wLength;
	if (len > in_size)
		len = in_size;
	memcpy(in, data, len);
	return (int)len;
}

static struct req_result standard_request(struct cam_state *st,
					  const struct usb_setup *s,
					  uint8_t *in, size_t in_size)
{
	struct req_result r = { 0, REQ_STANDARD };
	uint8_t recip = s->bmRequestType & REQ_RECIP_MASK;
	uint8_t buf[256];

	switch (s->bRequest) {
	case USB_REQ_GET_STATUS:
		if (!(s->bmRequestType & REQ_DIR_IN))
			return STALL_STD;
		buf[0] = buf[1] = 0;                    /* bus powered */
		if (recip == REQ_RECIP_IFACE &&
		    (s->wIndex >= CAM_NUM_INTERFACES || !st->configuration))
			return STALL_STD;
		if (recip == REQ_RECIP_EP) {
			if (!ep_exists(st, (uint8_t)s->wIndex))
				return STALL_STD;
			buf[0] = st->ep_halted[ep_slot((uint8_t)s->wIndex)];
		} else if (recip > REQ_RECIP_EP) {
			return STALL_STD;
		}
		r.len = reply(in, in_size, s->wLength, buf, 2);
		return r;

	case USB_REQ_CLEAR_FEATURE:
	case USB_REQ_SET_FEATURE:
		/* No remote wakeup (bmAttributes 0x80) and no test modes: only
		 * ENDPOINT_HALT exists. */
		if (recip != REQ_RECIP_EP || s->wValue != FEATURE_ENDPOINT_HALT ||
		    !ep_exists(st, (uint8_t)s->wIndex))
			return STALL_STD;
		st->ep_halted[ep_slot((uint8_t)s->wIndex)] =
			s->bRequest == USB_REQ_SET_FEATURE;
		return r;

	case USB_REQ_SET_ADDRESS:
		return r;

	case USB_REQ_GET_DESCRIPTOR: {
		uint8_t type = (uint8_t)(s->wValue >> 8);
		uint8_t index = (uint8_t)(s->wValue & 0xff);
		int n;

		if (recip != REQ_RECIP_DEV || !(s->bmRequestType & REQ_DIR_IN))
			return STALL_STD;
		switch (type) {
		case USB_DT_DEVICE:
			r.len = reply(in, in_size, s->wLength, st->desc->device,
				      sizeof(st->desc->device));
			return r;
		case USB_DT_CONFIG:
			if (index != 0)
				return STALL_STD;
			r.len = reply(in, in_size, s->wLength, st->desc->config,
				      st->desc->config_len);
			return r;
		case USB_DT_STRING:
			n = cam_string_descriptor(st->desc, index, buf,
						  sizeof(buf));
			if (n < 0)
				return STALL_STD;
			r.len = reply(in, in_size, s->wLength, buf, (size_t)n);
			return r;
		case USB_DT_DEVICE_QUALIFIER:
			r.len = reply(in, in_size, s->wLength, st->desc->qualifier,
				      sizeof(st->desc->qualifier));
			return r;
		default:                /* BOS, other speed, ... */
			return STALL_STD;
		}
	}

	case USB_REQ_GET_CONFIGURATION:
		buf[0] = st->configuration;
		r.len = reply(in, in_size, s->wLength, buf, 1);
		return r;

	case USB_REQ_SET_CONFIGURATION:
		if (cam_set_configuration(st, (uint8_t)s->wValue) < 0)
			return STALL_STD;
		return r;

	case USB_REQ_GET_INTERFACE:
		if (!st->configuration || s->wIndex >= CAM_NUM_INTERFACES)
			return STALL_STD;
		buf[0] = st->alt[s->wIndex];
		r.len = reply(in, in_size, s->wLength, buf, 1);
		return r;

	case USB_REQ_SET_INTERFACE:
		if (s->wIndex > 0xff ||
		    cam_set_interface(st, (uint8_t)s->wIndex,
				      (uint8_t)s->wValue) < 0)
			return STALL_STD;
		return r;

	default:                        /* SET_DESCRIPTOR, SYNCH_FRAME, ... */
		return STALL_STD;
	}
}

/* ---- UVC class requests ---------------------------------------------------- */

static struct req_result uvc_fail(struct cam_state *st, enum req_kind kind,
				  enum uvc_error err)
{
	st->last_error = (uint8_t)err;
	return (struct req_result){ -1, kind };
}

static int is_get(uint8_t req)
{
	return req >= UVC_GET_CUR && req <= UVC_GET_DEF;
}

static struct req_result entity_request(struct cam_state *st,
					const struct usb_setup *s,
					const uint8_t *out, int out_len,
					uint8_t *in, size_t in_size)
{
	uint8_t unit = (uint8_t)(s->wIndex >> 8);
	uint8_t sel = (uint8_t)(s->wValue >> 8);
	enum req_kind kind = is_get(s->bRequest) ? REQ_CLASS_GET : REQ_CLASS_SET;
	const struct ctrl_def *c = cam_find_ctrl(unit, sel);
	struct req_result r = { 0, kind };
	uint8_t buf[CTRL_MAX_LEN];
	uint8_t *cur;

	if (!c) {
		int known_unit = unit == 0;

		for (size_t i = 0; i < cam_n_entities; i++)
			known_unit |= cam_entities[i].id == unit;
		return uvc_fail(st, kind, known_unit ? UVC_ERR_INVALID_CONTROL :
				UVC_ERR_INVALID_UNIT);
	}
	cur = st->cur[cam_ctrl_index(c)];

	switch (s->bRequest) {
	case UVC_GET_INFO:
		buf[0] = c->info;
		r.len = reply(in, in_size, s->wLength, buf, 1);
		break;
	case UVC_GET_LEN:
		set_le16(buf, c->len);
		r.len = reply(in, in_size, s->wLength, buf, 2);
		break;
	case UVC_GET_CUR:
		if (!(c->info & UVC_INFO_GET))
			return uvc_fail(st, kind, UVC_ERR_INVALID_REQUEST);
		if (unit == 0 && sel == 0x02) {
			/* Reading the error code does not change it. */
			r.len = reply(in, in_size, s->wLength, &st->last_error, 1);
			return r;
		}
		if (c->unit == CAM_ENTITY_EXTENSION && c->selector == 0x03) {
			st->frame_counter++;
			ctrl_store(c, cur, st->frame_counter);
		}
		r.len = reply(in, in_size, s->wLength, cur, c->len);
		break;
	case UVC_GET_MIN:
		r.len = reply(in, in_size, s->wLength, c->min, c->len);
		break;
	case UVC_GET_MAX:
		r.len = reply(in, in_size, s->wLength, c->max, c->len);
		break;
	case UVC_GET_RES:
		r.len = reply(in, in_size, s->wLength, c->res, c->len);
		break;
	case UVC_GET_DEF:
		r.len = reply(in, in_size, s->wLength, c->def, c->len);
		break;
	case UVC_SET_CUR:
		if (!(c->info & UVC_INFO_SET))
			return uvc_fail(st, kind, UVC_ERR_INVALID_REQUEST);
		if (out_len != c->len || s->wLength != c->len)
			return uvc_fail(st, kind, UVC_ERR_INVALID_REQUEST);
		if (c->flags & CTRL_BITMAP) {
			uint8_t v = out[0];

			if (v == 0 || (v & (v - 1)) || !(v & c->res[0]))
				return uvc_fail(st, kind, UVC_ERR_OUT_OF_RANGE);
		} else if (!(c->flags & CTRL_NO_RANGE)) {
			int64_t v = ctrl_value(c, out);
			int64_t lo = ctrl_value(c, c->min);
			int64_t hi = ctrl_value(c, c->max);

			if (!(c->flags & CTRL_SIGNED) && c->len == 4) {
				v &= 0xffffffff;
				lo &= 0xffffffff;
				hi &= 0xffffffff;
			}
			if (v < lo || v > hi)
				return uvc_fail(st, kind, UVC_ERR_OUT_OF_RANGE);
		}
		memcpy(cur, out, c->len);
		break;
	default:
		return uvc_fail(st, kind, UVC_ERR_INVALID_REQUEST);
	}
	st->last_error = UVC_ERR_NONE;
	return r;
}

static struct req_result streaming_request(struct cam_state *st,
					   const struct usb_setup *s,
					   const uint8_t *out, int out_len,
					   uint8_t *in, size_t in_size)
{
	uint8_t sel = (uint8_t)(s->wValue >> 8);
	enum req_kind kind = is_get(s->bRequest) ? REQ_CLASS_GET : REQ_CLASS_SET;
	struct req_result r = { 0, kind };
	uint8_t buf[CAM_PROBE_LEN];
	uint8_t len, *cur;
	int is_still;

	if ((s->wIndex >> 8) != 0)
		return uvc_fail(st, kind, UVC_ERR_INVALID_UNIT);

	switch (sel) {
	case VS_PROBE_CONTROL:
	case VS_COMMIT_CONTROL:
		len = CAM_PROBE_LEN;
		is_still = 0;
		cur = sel == VS_PROBE_CONTROL ? st->probe : st->commit;
		break;
	case VS_STILL_PROBE_CONTROL:
	case VS_STILL_COMMIT_CONTROL:
		len = CAM_STILL_PROBE_LEN;
		is_still = 1;
		cur = sel == VS_STILL_PROBE_CONTROL ? st->still_probe :
						      st->still_commit;
		break;
	case VS_STILL_IMAGE_TRIGGER_CONTROL:
		len = 1;
		is_still = 0;
		cur = &st->still_trigger;
		break;
	case VS_STREAM_ERROR_CODE_CONTROL:
		if (s->bRequest == UVC_SET_CUR)
			return uvc_fail(st, kind, UVC_ERR_INVALID_REQUEST);
		len = 1;
		is_still = 0;
		buf[0] = 0;
		cur = buf;
		break;
	default:
		return uvc_fail(st, kind, UVC_ERR_INVALID_CONTROL);
	}

	switch (s->bRequest) {
	case UVC_GET_INFO:
		buf[0] = sel == VS_STREAM_ERROR_CODE_CONTROL ? UVC_INFO_GET :
			 UVC_INFO_GET | UVC_INFO_SET;
		r.len = reply(in, in_size, s->wLength, buf, 1);
		break;
	case UVC_GET_LEN:
		set_le16(buf, len);
		r.len = reply(in, in_size, s->wLength, buf, 2);
		break;
	case UVC_GET_CUR:
		r.len = reply(in, in_size, s->wLength, cur, len);
		break;
	case UVC_GET_MIN:
	case UVC_GET_MAX:
	case UVC_GET_DEF:
	case UVC_GET_RES:
		if (len == 1) {
			buf[0] = s->bRequest == UVC_GET_MAX ? 3 :
				 s->bRequest == UVC_GET_RES ? 1 : 0;
		} else if (is_still) {
			negotiate_still(buf, NULL, 0);
		} else {
			negotiate_probe(buf, NULL, 0, s->bRequest == UVC_GET_MAX);
		}
		if (s->bRequest == UVC_GET_RES && len > 1)
			memset(buf, 0, len);
		r.len = reply(in, in_size, s->wLength, buf, len);
		break;
	case UVC_SET_CUR:
		if (len == CAM_PROBE_LEN) {
			/* UVC 1.0 hosts send 26 bytes, 1.1 hosts 34. */
			if (out_len < 26 || out_len > CAM_PROBE_LEN)
				return uvc_fail(st, kind, UVC_ERR_INVALID_REQUEST);
			if (sel == VS_COMMIT_CONTROL &&
			    (!find_format(out[2]) || out[3] < 1 ||
			     out[3] > find_format(out[2])->n_frames))
				return uvc_fail(st, kind, UVC_ERR_INVALID_VALUE);
			negotiate_probe(cur, out, out_len, 0);
		} else if (len == CAM_STILL_PROBE_LEN) {
			if (out_len != CAM_STILL_PROBE_LEN)
				return uvc_fail(st, kind, UVC_ERR_INVALID_REQUEST);
			negotiate_still(cur, out, out_len);
		} else {
			if (out_len != 1 || out[0] > 3)
				return uvc_fail(st, kind, UVC_ERR_OUT_OF_RANGE);
			cur[0] = out[0];
		}
		break;
	default:
		return uvc_fail(st, kind, UVC_ERR_INVALID_REQUEST);
	}
	st->last_error = UVC_ERR_NONE;
	return r;
}

struct req_result cam_control(struct cam_state *st, const struct usb_setup *s,
			      const uint8_t *out, int out_len,
			      uint8_t *in, size_t in_size)
{
	uint8_t type = s->bmRequestType & REQ_TYPE_MASK;
	uint8_t recip = s->bmRequestType & REQ_RECIP_MASK;
	int dir_in = !!(s->bmRequestType & REQ_DIR_IN);

	if (out_len < 0)
		out_len = 0;
	if (type == REQ_TYPE_STD)
		return standard_request(st, s, in, in_size);

	if (type != REQ_TYPE_CLASS || recip != REQ_RECIP_IFACE ||
	    st->configuration == 0)
		return (struct req_result){ -1, REQ_OTHER };
	/* The direction bit must agree with the request code. */
	if (dir_in != is_get(s->bRequest) ||
	    (!dir_in && s->bRequest != UVC_SET_CUR))
		return uvc_fail(st, REQ_OTHER, UVC_ERR_INVALID_REQUEST);

	switch (s->wIndex & 0xff) {
	case CAM_IF_CONTROL:
		return entity_request(st, s, out, out_len, in, in_size);
	case CAM_IF_STREAMING:
		return streaming_request(st, s, out, out_len, in, in_size);
	default:
		return (struct req_result){ -1, REQ_OTHER };
	}
}
