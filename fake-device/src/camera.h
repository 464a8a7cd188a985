/* SPDX-License-Identifier: MIT */
/*
 * State model of the fake camera: the answers to standard USB requests and
 * UVC class requests (GET_INFO/GET_LEN/GET_CUR/GET_MIN/GET_MAX/GET_RES/
 * GET_DEF/SET_CUR per control, probe/commit negotiation, request error code).
 * Pure functions over struct cam_state; no I/O.
 */
#ifndef FAKE_UVC_CAMERA_H
#define FAKE_UVC_CAMERA_H

#include <stddef.h>
#include <stdint.h>

#include "desc.h"

#define CAM_MAX_CTRLS 48

#define UVC_SET_CUR  0x01
#define UVC_GET_CUR  0x81
#define UVC_GET_MIN  0x82
#define UVC_GET_MAX  0x83
#define UVC_GET_RES  0x84
#define UVC_GET_LEN  0x85
#define UVC_GET_INFO 0x86
#define UVC_GET_DEF  0x87

/* bRequestErrorCode values (UVC 1.1, 4.2.1.2) */
enum uvc_error {
	UVC_ERR_NONE = 0x00,
	UVC_ERR_NOT_READY = 0x01,
	UVC_ERR_WRONG_STATE = 0x02,
	UVC_ERR_OUT_OF_RANGE = 0x04,
	UVC_ERR_INVALID_UNIT = 0x05,
	UVC_ERR_INVALID_CONTROL = 0x06,
	UVC_ERR_INVALID_REQUEST = 0x07,
	UVC_ERR_INVALID_VALUE = 0x08,
};

#define VS_PROBE_CONTROL              0x01
#define VS_COMMIT_CONTROL             0x02
#define VS_STILL_PROBE_CONTROL        0x03
#define VS_STILL_COMMIT_CONTROL       0x04
#define VS_STILL_IMAGE_TRIGGER_CONTROL 0x05
#define VS_STREAM_ERROR_CODE_CONTROL  0x06

struct usb_setup {
	uint8_t bmRequestType;
	uint8_t bRequest;
	uint16_t wValue;
	uint16_t wIndex;
	uint16_t wLength;
};

struct cam_state {
	const struct cam_descriptors *desc;
	uint8_t cur[CAM_MAX_CTRLS][CTRL_MAX_LEN];
	uint8_t last_error;            /* VC_REQUEST_ERROR_CODE_CONTROL */
	uint8_t probe[CAM_PROBE_LEN];
	uint8_t commit[CAM_PROBE_LEN];
	uint8_t still_probe[CAM_STILL_PROBE_LEN];
	uint8_t still_commit[CAM_STILL_PROBE_LEN];
	uint8_t still_trigger;
	uint8_t configuration;         /* 0 (address state) or 1 */
	uint8_t alt[CAM_NUM_INTERFACES];
	uint8_t ep_halted[32];
	uint32_t frame_counter;
};

/* What a request did, for the counters. */
enum req_kind {
	REQ_STANDARD,
	REQ_CLASS_GET,
	REQ_CLASS_SET,
	REQ_OTHER,
};

struct req_result {
	int len;                       /* bytes returned (IN); -1: STALL */
	enum req_kind kind;
};

void cam_state_init(struct cam_state *st, const struct cam_descriptors *d);

/* usbredir reset (USB port reset): like usbredirhost, which resets through
 * libusb, the configuration and alternate settings survive; probe/commit,
 * the request error code and endpoint halts go back to defaults.  Control
 * values survive too (uvcvideo restores them on reset_resume anyway). */
void cam_state_reset(struct cam_state *st);

/*
 * Handle one control transfer.  For IN requests the answer is written to
 * @in (at most min(wLength, in_size) bytes); for OUT requests @out holds
 * out_len bytes of data stage.  SET_CONFIGURATION and SET_INTERFACE are
 * applied here too; the caller re-sends endpoint info when they succeed.
 */
struct req_result cam_control(struct cam_state *st, const struct usb_setup *s,
			      const uint8_t *out, int out_len,
			      uint8_t *in, size_t in_size);

int cam_set_configuration(struct cam_state *st, uint8_t value);
int cam_set_interface(struct cam_state *st, uint8_t intf, uint8_t alt);

/* Index of @c in cam_ctrls (for cur[]). */
size_t cam_ctrl_index(const struct ctrl_def *c);

/* Helpers shared with the tests. */
int64_t ctrl_value(const struct ctrl_def *c, const uint8_t *bytes);
void ctrl_store(const struct ctrl_def *c, uint8_t *bytes, int64_t v);

#endif
