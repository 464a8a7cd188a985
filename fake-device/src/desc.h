/* SPDX-License-Identifier: MIT */
/*
 * Descriptor tables of the fake UVC 1.1 high-speed camera.
 *
 * Everything the guest can learn about the camera (USB descriptors, UVC
 * entities, the controls each entity exposes and their ranges) is described
 * here as constant tables; desc.c serializes them the way QEMU's hw/usb
 * device models do (usb_desc_*), computing wTotalLength.
 */
#ifndef FAKE_UVC_DESC_H
#define FAKE_UVC_DESC_H

#include <stddef.h>
#include <stdint.h>

/* ---- USB / UVC constants ------------------------------------------------ */
#define USB_DT_DEVICE            0x01
#define USB_DT_CONFIG            0x02
#define USB_DT_STRING            0x03
#define USB_DT_INTERFACE         0x04
#define USB_DT_ENDPOINT          0x05
#define USB_DT_DEVICE_QUALIFIER  0x06
#define USB_DT_OTHER_SPEED       0x07
#define USB_DT_IAD               0x0b
#define USB_DT_BOS               0x0f
#define USB_DT_CS_INTERFACE      0x24
#define USB_DT_CS_ENDPOINT       0x25

#define UVC_CC_VIDEO             0x0e
#define UVC_SC_VIDEOCONTROL      0x01
#define UVC_SC_VIDEOSTREAMING    0x02
#define UVC_SC_VIDEO_INTERFACE_COLLECTION 0x03

#define UVC_VC_HEADER            0x01
#define UVC_VC_INPUT_TERMINAL    0x02
#define UVC_VC_OUTPUT_TERMINAL   0x03
#define UVC_VC_PROCESSING_UNIT   0x05
#define UVC_VC_EXTENSION_UNIT    0x06
#define UVC_EP_INTERRUPT         0x03

#define UVC_VS_INPUT_HEADER      0x01
#define UVC_VS_STILL_IMAGE_FRAME 0x03
#define UVC_VS_FORMAT_UNCOMPRESSED 0x04
#define UVC_VS_FRAME_UNCOMPRESSED  0x05
#define UVC_VS_FORMAT_MJPEG      0x06
#define UVC_VS_FRAME_MJPEG       0x07
#define UVC_VS_COLORFORMAT       0x0d

#define UVC_ITT_CAMERA           0x0201
#define UVC_TT_STREAMING         0x0101

/* ---- The camera's identity and topology --------------------------------- */
#define CAM_VENDOR_ID            0x1209 /* pid.codes */
#define CAM_PRODUCT_ID           0x0001 /* pid.codes test PID */
#define CAM_BCD_DEVICE           0x0100
#define CAM_EP0_MAXPACKET        64

#define CAM_IF_CONTROL           0
#define CAM_IF_STREAMING         1
#define CAM_NUM_INTERFACES       2
#define CAM_CONFIG_VALUE         1

#define CAM_EP_STATUS            0x83   /* interrupt IN, VideoControl */
#define CAM_EP_STATUS_MAXPACKET  16
#define CAM_EP_STATUS_INTERVAL   1      /* 2^(1-1) microframes = 125 us */
#define CAM_EP_VIDEO             0x81   /* isochronous IN, VideoStreaming */
/* The video endpoint is polled every 2^(10-1) microframes = 64 ms, not
 * every microframe as a real camera's: the camera sends no frames, and a
 * guest that streams (the agent's status hold, harness/guest/hold.c, which
 * keeps 7.x's status URB running) would otherwise complete 8000 empty iso
 * packets a second, which costs a KASAN guest under TCG more than half of
 * its status-event rate; at 16 a second they cost nothing measurable. */
#define CAM_EP_VIDEO_INTERVAL    10
#define CAM_VS_NUM_ALTS          4      /* alt 0 (no bandwidth) + 3 */

#define CAM_ENTITY_CAMERA        1      /* input terminal  */
#define CAM_ENTITY_PROCESSING    2      /* processing unit */
#define CAM_ENTITY_EXTENSION     3      /* extension unit  */
#define CAM_ENTITY_OUTPUT        4      /* output terminal (streaming) */

#define CAM_UVC_VERSION          0x0110
#define CAM_CLOCK_HZ             48000000u
#define CAM_PROBE_LEN            34     /* UVC 1.1 probe/commit structure */
#define CAM_STILL_PROBE_LEN      11

/* Status packets stay shorter than wMaxPacketSize: a short packet ends the
 * guest's transfer whatever its URB, where QEMU's usb-redir joins a
 * full-size interrupt packet with the next one unless the URB is exactly
 * one packet long. */
#define CAM_STATUS_MAX_LEN       (CAM_EP_STATUS_MAXPACKET - 1)

/* ---- Video formats -------------------------------------------------------- */
struct cam_frame {
	uint16_t width, height;
	uint32_t max_frame_size;
	uint32_t default_interval;          /* 100 ns units */
	uint8_t n_intervals;
	uint32_t intervals[4];
};

struct cam_format {
	uint8_t index;                      /* bFormatIndex, 1-based */
	uint8_t subtype;                    /* UVC_VS_FORMAT_* */
	uint8_t n_frames;
	const struct cam_frame *frames;
};

extern const struct cam_format cam_formats[];
extern const size_t cam_n_formats;

/* Alternate settings of the streaming interface: wMaxPacketSize of 0x81. */
extern const uint16_t cam_vs_alt_maxpacket[CAM_VS_NUM_ALTS];

/* ---- Controls ----------------------------------------------------------- */
enum ctrl_flags {
	CTRL_SIGNED   = 1u << 0,  /* value is a signed little-endian integer */
	CTRL_BITMAP   = 1u << 1,  /* one bit of RES (e.g. AE mode) */
	CTRL_MAPPED   = 1u << 2,  /* uvcvideo maps it to a V4L2 control */
	CTRL_NO_RANGE = 1u << 3,  /* multi-field: no min/max check */
};

#define CTRL_MAX_LEN 8

struct ctrl_def {
	const char *name;
	uint8_t unit;               /* entity ID (0: the interface itself) */
	uint8_t selector;
	uint8_t len;                /* GET_LEN */
	uint8_t info;               /* GET_INFO bitmap */
	uint8_t flags;              /* enum ctrl_flags */
	uint8_t min[CTRL_MAX_LEN], max[CTRL_MAX_LEN];
	uint8_t res[CTRL_MAX_LEN], def[CTRL_MAX_LEN];
};

#define UVC_INFO_GET        0x01
#define UVC_INFO_SET        0x02
#define UVC_INFO_AUTOUPDATE 0x08
#define UVC_INFO_ASYNC      0x10    /* the set completes later: status packet */

extern const struct ctrl_def cam_ctrls[];
extern const size_t cam_n_ctrls;

/* The entities that carry controls, with their bmControls bitmaps as the
 * descriptors state them (tests check both agree with cam_ctrls). */
struct entity_def {
	uint8_t id;
	uint8_t subtype;            /* UVC_VC_* */
	const char *name;
};
extern const struct entity_def cam_entities[];
extern const size_t cam_n_entities;

/* ---- Serialized descriptors --------------------------------------------- */
#define CAM_CONFIG_MAX 1024

#define CAM_SERIAL_MAX 32
#define CAM_DEFAULT_SERIAL "DMAH-0001"

struct cam_descriptors {
	char serial[CAM_SERIAL_MAX + 1];    /* string 3; printable ASCII */
	uint8_t device[18];
	uint8_t qualifier[10];
	uint8_t config[CAM_CONFIG_MAX];
	size_t config_len;
};

/* Build the serialized descriptors with serial number @serial (NULL: the
 * default); returns 0, or -1 if a table overflows or the serial is not 1-32
 * printable ASCII characters. */
int cam_descriptors_build(struct cam_descriptors *d, const char *serial);

/* String descriptor @index (0 = language IDs) into @buf; returns its length,
 * or -1 if there is no such string. */
int cam_string_descriptor(const struct cam_descriptors *d, uint8_t index,
			  uint8_t *buf, size_t size);

/* Find a control; NULL if (unit, selector) is not implemented. */
const struct ctrl_def *cam_find_ctrl(uint8_t unit, uint8_t selector);

#endif
